import * as z from 'zod';
import { TendError } from '../core/index.js';
import { MAX_JOB_WAIT_S } from '../app/index.js';
import { jsonSchemaOf, jsonValue, open } from '../app/view-schemas.js';
import type { Route, Schema, ServerContext } from './routes.js';
import { ROUTES } from './routes.js';

// The API of `tend serve --fleet` (docs/api.md "A fleet", docs/fleet.md): made from the same route
// table as `tend serve [dir]`. The routes of one workspace are served under /workspaces/{workspace}/…
// (the workspace a registered one, else 404 `workspace.not_found`); the writes that need its lease
// (apply a saved plan, an action) answer with a job the worker holding it carries out.

/** The routes of the server itself, not of a workspace: served as they are. */
const SERVER_ROUTES: ReadonlySet<string> = new Set([
  'health',
  'ready',
  'openapi',
  'metrics',
  'evaluateLifecycle',
]);

/** The routes whose work needs the workspace's lease: a job for its holder in a fleet. */
const JOB_ROUTES: ReadonlySet<string> = new Set(['apply', 'action']);

const PREFIX = '/workspaces/{workspace}';

const jobShape = {
  id: z.string().describe('GET /workspaces/{workspace}/jobs/{id}'),
  workspace: z.string(),
  kind: z.enum(['apply', 'action']),
  input: jsonValue,
  requestedBy: z.string().describe('api:<token name> (<role>)'),
  state: z.enum(['queued', 'running', 'done', 'failed', 'interrupted']),
  result: jsonValue.optional().describe('what the apply or the action answers without a fleet'),
  error: open({ code: z.string(), message: z.string(), hint: z.string().optional() }).optional(),
  createdAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  epoch: z.number().int().optional().describe('the epoch of the lease it ran under'),
  worker: z.string().optional().describe('the worker that ran it'),
  note: z.string().optional().describe('why a queued job waits (nobody holds the workspace)'),
};
const jobSchema = jsonSchemaOf(jobShape);

/** A value or null, each its own branch (no type list: strict clients and generators take it). */
const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const text = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const object = (properties: Record<string, Schema>): Schema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});
/** `tend fleet status --json` (docs/fleet.md), which scripts rely on. */
const workspacesSchema: Schema = object({
  workers: {
    type: 'array',
    items: object({ id: text, host: text, pid: int, version: text, heartbeatAt: text }),
  },
  workspaces: {
    type: 'array',
    items: object({
      name: text,
      holder: orNull(object({ worker: orNull(text), host: text, pid: int })),
      epoch: orNull(int),
      lastPassAt: orNull(text),
      states: { type: 'object', additionalProperties: int },
    }),
  },
});

const waitQuery: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    wait: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_JOB_WAIT_S,
      description:
        'wait up to this many seconds for the job to end: 200 with the ended job, else 202 with the job as it stands',
    },
  },
};

/** The server of one registered workspace of the fleet: its selection, its hub, its jobs. */
async function workspaceScope(
  params: Readonly<Record<string, string>>,
  server: ServerContext,
): Promise<ServerContext> {
  const { fleet, hubs } = server;
  if (!fleet || !hubs) {
    throw new TendError('route.not_found', 'this server serves no fleet', {
      hint: 'tend serve --fleet serves /workspaces/{workspace}/…',
    });
  }
  const name = params['workspace']!;
  const selection = await fleet.selection(name);
  // Reads load the workspace per request from the shared store (no workspace is held here) and
  // there is no loop here: the workers run them.
  const { held: _held, loop: _loop, ...rest } = server;
  return { ...rest, workspace: selection, hub: hubs(name), jobs: { workspace: name, fleet } };
}

/** A workspace's route under /workspaces/{workspace}; a write that needs the lease answers a job. */
function underWorkspace(route: Route): Route {
  const job = JOB_ROUTES.has(route.operationId);
  return {
    ...route,
    path: `${PREFIX}${route.path}`,
    scope: workspaceScope,
    ...(job
      ? {
          summary: `${route.summary} In a fleet: queued as a job that the worker holding the workspace carries out once (202 with the job, Location: …/jobs/{id}; 200 with the ended job when it ends within ?wait= seconds).`,
          query: waitQuery,
          response: jobSchema,
          status: 202,
        }
      : {}),
  };
}

const workspacesRoute: Route = {
  method: 'get',
  path: '/workspaces',
  operationId: 'workspaces',
  summary:
    'The registered workspaces (holder, epoch, last pass, state counts) and the live workers, as tend fleet status --json.',
  role: 'viewer',
  response: workspacesSchema,
  handler: async ({ server }) => {
    if (!server.fleet) throw new TendError('route.not_found', 'this server serves no fleet');
    return { body: await server.fleet.status() };
  },
};

const jobRoute: Route = {
  method: 'get',
  path: `${PREFIX}/jobs/{id}`,
  operationId: 'job',
  summary: 'A job of the workspace: queued, running, done, failed or interrupted, with its result.',
  role: 'viewer',
  query: waitQuery,
  response: jobSchema,
  scope: workspaceScope,
  handler: async ({ server, params, query, signal }) => {
    const { fleet, workspace } = server.jobs!;
    const wait = query['wait'];
    const job =
      typeof wait === 'number' && wait > 0
        ? await fleet.wait(workspace, params['id']!, wait * 1000, signal)
        : await fleet.job(workspace, params['id']!);
    return { body: job };
  },
};

/**
 * The route table of `tend serve --fleet`: the server's own routes, GET /workspaces, every workspace
 * route of `routes` under /workspaces/{workspace}, and the jobs.
 */
export function fleetRoutes(routes: readonly Route[] = ROUTES): Route[] {
  return [
    ...routes.filter((r) => SERVER_ROUTES.has(r.operationId)),
    workspacesRoute,
    ...routes.filter((r) => !SERVER_ROUTES.has(r.operationId)).map(underWorkspace),
    jobRoute,
  ];
}
