import * as z from 'zod';
import type { Address, Motivation } from '../core/index.js';
import {
  ADDRESS_PATTERN,
  checkIntentWord,
  parseMotivation,
  TendError,
  violationCounts,
} from '../core/index.js';
import type {
  AppContext,
  FleetServe,
  HeldWorkspace,
  Readiness,
  JobKind,
  ServeLoop,
  StatusReport,
  TwinGraph,
} from '../app/index.js';
import {
  accept,
  announce,
  compliance,
  complianceView,
  readCompliance,
  applySavedPlan,
  drift,
  explain,
  history,
  lastSavedPlan,
  listAnnouncements,
  pauseResource,
  planView,
  readSavedPlan,
  readStatus,
  readTwinGraph,
  resumeResource,
  runAction,
  savePlan,
  SERVED_STATUS_OFFLINE,
  status,
  twinGraph,
} from '../app/index.js';
import type { WorkspaceSelection } from '../app/index.js';
// The views' schemas (zod) are shared with the MCP tools; only `tend serve` and `tend mcp` load them.
import {
  announceViewShape,
  complianceViewShape,
  explainViewShape,
  historyViewShape,
  jsonSchemaOf,
  jsonValue,
  open,
  planStepsShape,
  planViewShape,
  statusViewShape,
  workspace,
} from '../app/view-schemas.js';
import type { Caller, Role } from './auth.js';
import { allows } from './auth.js';
import type { EventHub } from './event-hub.js';
import type { Metrics } from './metrics.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = Readonly<Record<string, unknown>>;

/** What a handler is given: the validated input, the caller, and the server. */
export interface RouteInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly body: unknown;
  readonly caller: Caller | undefined;
  readonly server: ServerContext;
  readonly signal: AbortSignal;
}

/** A handler's answer: JSON with a status, or a Response of its own (SSE, metrics, the document). */
export type RouteResult =
  | {
      readonly status?: number;
      readonly body: unknown;
      readonly headers?: Readonly<Record<string, string>>;
    }
  | Response;

/** Everything the API works with. */
export interface ServerContext {
  readonly ctx: AppContext;
  readonly workspace: WorkspaceSelection;
  readonly hub: EventHub;
  readonly metrics: Metrics;
  /**
   * The workspace `tend serve` keeps loaded for reads (status, graph, pauses, orphans), loaded again
   * when the intent changes; absent, each such read loads the workspace for itself.
   */
  readonly held?: HeldWorkspace;
  /** The loop `tend serve` runs; absent, writes take the lease directly (409 when it is held). */
  readonly loop?: ServeLoop;
  /** How long a write waits for the workspace lease (ms; default 0: answer 409 at once). */
  readonly lockTimeoutMs?: number;
  readonly verifyTimeoutMs?: number;
  readonly version: string;
  /** Serve /metrics without a token. */
  readonly metricsPublic?: boolean;
  /** Whether the server can work now (`GET /readyz`: its store answers); absent: ready. */
  readonly ready?: () => Promise<Readiness>;
  /** `tend serve --fleet`: every registered workspace, under /workspaces/{workspace}/… */
  readonly fleet?: FleetServe;
  /** `tend serve --fleet`: the event hub of each workspace (its workers' events, its requests'). */
  readonly hubs?: (workspace: string) => EventHub;
  /**
   * A route of one workspace of a fleet: the writes that need its lease are queued as jobs for the
   * worker holding it (instead of `loop`/the lease here).
   */
  readonly jobs?: { readonly workspace: string; readonly fleet: FleetServe };
}

/**
 * One endpoint: its method and OpenAPI path, who may call it, the JSON Schemas that validate its
 * input (and document it), what it answers. The table is the API: the router, the OpenAPI
 * document and the auth-matrix test are all made from it.
 */
export interface Route {
  readonly method: 'get' | 'post' | 'delete';
  /** OpenAPI style: `/resources/{address}`; an `{address}` takes the rest of the path (it holds `/`). */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  /** The least role that may call it; `public`: no token needed. */
  readonly role: Role | 'public';
  readonly query?: Schema;
  readonly body?: Schema;
  /** The success answer's schema and status (default 200). */
  readonly response: Schema;
  readonly status?: number;
  /** The media type of the success answer (default application/json). */
  readonly produces?: string;
  /**
   * The server a request is handled with, from its path parameters (`tend serve --fleet`: the
   * workspace named in the path); absent, the server's own.
   */
  readonly scope?: (
    params: Readonly<Record<string, string>>,
    server: ServerContext,
  ) => Promise<ServerContext>;
  readonly handler: (input: RouteInput) => Promise<RouteResult>;
}

const str = { type: 'string', minLength: 1 } as const;
const strList = {
  anyOf: [str, { type: 'array', items: str }],
} as const;
const bool = { type: 'boolean' } as const;
/** Any JSON value (input): a strict client is told each JSON type, not a bare `{}`. */
const anyValue = jsonSchemaOf(jsonValue);
/** A mapping of any keys (input). */
const anyMapping = { type: 'object', additionalProperties: anyValue, description: 'a mapping' };
/** The core's address grammar (`parseAddress`): a name holds no `/`. */
const address = {
  type: 'string',
  pattern: ADDRESS_PATTERN,
  description: 'a resource address, provider.type/name',
} as const;

// ——— the answers' schemas (every one names its keys: /openapi.json has no bare object) ———
const ws = { workspace };
const pausedShape = {
  address: z.string(),
  by: z.string(),
  since: z.string(),
  reason: z.string().optional(),
};
const answers = {
  openapi: jsonSchemaOf({
    openapi: z.string(),
    info: open({ title: z.string(), version: z.string() }),
    paths: z.record(
      z.string(),
      z.record(
        z.enum(['get', 'post', 'delete']),
        open({ operationId: z.string(), summary: z.string() }),
      ),
    ),
  }),
  status: jsonSchemaOf(statusViewShape),
  graph: jsonSchemaOf({
    ...ws,
    nodes: z.array(
      open({
        address: z.string(),
        type: z.string(),
        origin: z.enum(['declared', 'removed']),
        state: z.string(),
        message: z.string().optional(),
        objectId: z.string().optional(),
        stateful: z.boolean(),
        paused: z.boolean(),
        violations: z
          .object({ count: z.number().int(), deny: z.number().int() })
          .optional()
          .describe('policy rules its observed object breaks (how many deny), when any'),
      }),
    ),
    edges: z.array(z.object({ from: z.string(), to: z.string() })),
    states: z.record(z.string(), z.number().int()).describe('how many nodes are in each state'),
  }),
  explain: jsonSchemaOf(explainViewShape),
  owners: jsonSchemaOf({
    address: z.string(),
    owners: z.array(z.object({ field: z.string(), owner: open({ kind: z.string() }) })),
  }),
  history: jsonSchemaOf(historyViewShape),
  compliance: jsonSchemaOf(complianceViewShape),
  drift: jsonSchemaOf({
    ...ws,
    fields: z.array(
      open({ address: z.string(), field: z.string(), declared: jsonValue, observed: jsonValue }),
    ),
    missing: z.array(open({ address: z.string(), reason: z.string() })),
    claims: z.array(open({ address: z.string(), field: z.string() })),
    warnings: z.array(z.string()),
    drifted: z.boolean(),
  }),
  orphans: jsonSchemaOf({
    orphans: planViewShape.orphans.unwrap(),
    duplicates: planViewShape.duplicates.unwrap(),
    platformError: z.string().optional(),
  }),
  plan: jsonSchemaOf({ id: z.string().describe('GET /plans/{id}, POST /apply'), ...planViewShape }),
  savedPlan: jsonSchemaOf({
    id: z.string(),
    workspace: z.string(),
    createdAt: z.string(),
    options: open({ approveDestroy: z.boolean(), prune: z.boolean() }),
    plan: open({
      steps: planStepsShape.steps,
      counts: planStepsShape.counts,
      gated: planStepsShape.gated,
      blastRadius: planStepsShape.blastRadius,
    }),
    destructive: planStepsShape.destructive,
  }),
  apply: jsonSchemaOf({
    ...ws,
    verdict: z.string(),
    applied: z.boolean(),
    plan: open({ steps: planStepsShape.steps, counts: planStepsShape.counts }),
    outcomes: z.record(z.string(), open({ state: z.string() })),
    recovered: z.number().int(),
    epoch: z.number().int(),
    refused: open({ code: z.string(), message: z.string() }).optional(),
  }),
  announcements: jsonSchemaOf({
    ...ws,
    at: z.string(),
    announcements: announceViewShape.announcements,
  }),
  announce: jsonSchemaOf(announceViewShape),
  accept: jsonSchemaOf({
    address: z.string(),
    field: z.string(),
    outcome: z.enum(['patched', 'unchanged', 'elsewhere']),
    value: jsonValue,
    file: z.string(),
    diff: z.string(),
    written: z.boolean(),
  }),
  action: jsonSchemaOf({
    ...ws,
    runId: z.string(),
    address: z.string(),
    action: z.string(),
    resumed: z.boolean(),
    state: z.enum(['done', 'failed', 'interrupted']),
    params: z.record(z.string(), z.string()),
    steps: z.array(open({ name: z.string() })),
    error: z.string().optional(),
    ledgerSeq: z.number().int().optional(),
    epoch: z.number().int(),
  }),
  pauses: jsonSchemaOf(z.array(open(pausedShape))),
  paused: jsonSchemaOf(pausedShape),
  resumed: jsonSchemaOf({ address: z.string(), resumed: z.literal(true) }),
};
const filterQuery: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    actor: strList,
    actorKind: strList,
    intent: strList,
    motivation: strList,
    address: strList,
    field: strList,
    source: strList,
    decision: strList,
    since: { type: 'string', description: 'an ISO time or a duration ago (2h)' },
    until: { type: 'string', description: 'an ISO time or a duration ago' },
    limit: { type: 'integer', minimum: 1, maximum: 10000, default: 50 },
  },
};

const list = (v: unknown): string[] | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? (v as string[]) : [v as string];

/** Only the defined keys of an object (exactOptionalPropertyTypes). */
function defined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** A write that needs the workspace lease: while the loop runs, it pauses for it. */
function exclusive<T>(server: ServerContext, work: () => Promise<T>): Promise<T> {
  return server.loop ? server.loop.exclusive(work) : work();
}

const who = (caller: Caller | undefined) => (caller ? `api:${caller.name}` : 'api');

/**
 * A write of a fleet's workspace, queued for the worker holding it: 202 with the job and its
 * Location, or — when `?wait=` seconds were asked and it ended by then — 200 with the ended job.
 */
async function queued(
  server: ServerContext,
  kind: JobKind,
  input: unknown,
  request: Pick<RouteInput, 'caller' | 'query' | 'signal'>,
): Promise<RouteResult> {
  const { fleet, workspace } = server.jobs!;
  const caller = request.caller;
  const by = caller ? `api:${caller.name} (${caller.role})` : 'api';
  let job = await fleet.submit(workspace, kind, input, by);
  const wait = request.query['wait'];
  if (typeof wait === 'number' && wait > 0) {
    job = await fleet.wait(workspace, job.id, wait * 1000, request.signal);
  }
  const ended = job.state !== 'queued' && job.state !== 'running';
  return {
    status: ended ? 200 : 202,
    body: job,
    headers: { location: `/workspaces/${workspace}/jobs/${job.id}` },
  };
}

/** `status`, from the workspace the server holds (else loaded for this request). */
function statusOf(server: ServerContext, offline: boolean): Promise<StatusReport> {
  return server.held
    ? server.held.read((opened) => readStatus(server.ctx, opened, offline))
    : status(server.ctx, { ...server.workspace, offline });
}

/** The compliance report, from the workspace the server holds (else loaded for this request). */
async function complianceOf(
  server: ServerContext,
  window: { since?: string; limit?: number },
): Promise<ReturnType<typeof complianceView>> {
  const answer = server.held
    ? await server.held.read((opened) => readCompliance(server.ctx, opened, window))
    : await compliance(server.ctx, { ...server.workspace, ...window });
  return complianceView(answer);
}

/** The twin graph, from the workspace the server holds (else loaded for this request). */
function graphOf(server: ServerContext): Promise<TwinGraph> {
  return server.held ? server.held.read(readTwinGraph) : twinGraph(server.ctx, server.workspace);
}

/** The routes of the API, in the order the document lists them. */
export const ROUTES: readonly Route[] = [
  {
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    summary: 'Whether the server answers (no token needed).',
    role: 'public',
    response: {
      type: 'object',
      required: ['ok'],
      properties: { ok: bool, version: { type: 'string' } },
    },
    handler: ({ server }) => Promise.resolve({ body: { ok: true, version: server.version } }),
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'ready',
    summary:
      'Whether the server can work now: its store answers (no token needed). 503 with the reason when not.',
    role: 'public',
    response: {
      type: 'object',
      required: ['ready'],
      properties: { ready: bool, reason: { type: 'string' } },
    },
    handler: async ({ server }) => {
      const r = server.ready ? await server.ready() : { ready: true };
      return { status: r.ready ? 200 : 503, body: r };
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'The OpenAPI 3.1 document of this API.',
    role: 'viewer',
    response: answers.openapi,
    // Filled in by the app (it needs the whole table).
    handler: () => Promise.resolve({ body: {} }),
  },
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics (text format).',
    role: 'viewer',
    produces: 'text/plain',
    response: { type: 'string' },
    handler: async ({ server }) => {
      // The open policy violations as the store holds them now (the last pass wrote them).
      if (server.held) {
        server.metrics.policyViolations(
          await server.held.read(async ({ ws }) =>
            violationCounts(await ws.store.listStatus(), ws.intent.policies ?? []),
          ),
        );
      }
      const m = await server.metrics.render();
      return new Response(m.text, { headers: { 'content-type': m.contentType } });
    },
  },
  {
    method: 'get',
    path: '/status',
    operationId: 'status',
    summary:
      "Each resource's state after the last pass, the providers, the lease, paused resources.",
    role: 'viewer',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        offline: {
          type: 'boolean',
          description:
            'true (the default): what Tend knows, without contacting the platform; false: also read the platform (orphans, duplicates, replaces in progress)',
        },
      },
    },
    response: answers.status,
    handler: async ({ server, query }) => ({
      body: await statusOf(
        server,
        typeof query['offline'] === 'boolean' ? query['offline'] : SERVED_STATUS_OFFLINE,
      ),
    }),
  },
  {
    method: 'get',
    path: '/graph',
    operationId: 'graph',
    summary: 'The twin as a graph: resources (with status), references between them.',
    role: 'viewer',
    response: answers.graph,
    handler: async ({ server }) => ({ body: await graphOf(server) }),
  },
  {
    method: 'get',
    path: '/resources/{address}',
    operationId: 'resource',
    summary:
      'One resource field by field: declared, observed, owner, ledger entries, decisions (tend explain).',
    role: 'viewer',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        field: { type: 'string', minLength: 1 },
        limit: { type: 'integer', minimum: 1, maximum: 1000 },
      },
    },
    response: answers.explain,
    handler: async ({ server, params, query }) => ({
      body: await explain(server.ctx, {
        ...server.workspace,
        target: query['field']
          ? `${params['address']}.${query['field'] as string}`
          : params['address']!,
        ...(query['limit'] !== undefined ? { limit: query['limit'] as number } : {}),
      }),
    }),
  },
  {
    method: 'get',
    path: '/resources/{address}/owners',
    operationId: 'owners',
    summary: "Who owns each field of a resource (the intent, or an actor's claim).",
    role: 'viewer',
    response: answers.owners,
    handler: async ({ server, params }) => {
      const r = await explain(server.ctx, {
        ...server.workspace,
        target: params['address']!,
        limit: 1,
      });
      return {
        body: {
          address: r.address,
          owners: r.fields.map((f) => ({ field: f.field, owner: f.owner })),
        },
      };
    },
  },
  {
    method: 'get',
    path: '/compliance',
    operationId: 'compliance',
    summary:
      'The compliance report (a PolicyReport): every open policy violation and failing check on what the platform holds, with the change that introduced it, and the recent verdicts.',
    role: 'viewer',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        since: {
          type: 'string',
          description: 'verdicts at or after this ISO time, or this long ago (default 7d)',
        },
        limit: { type: 'integer', minimum: 0, maximum: 10000, default: 50 },
      },
    },
    response: answers.compliance,
    handler: async ({ server, query }) => ({
      body: await complianceOf(
        server,
        defined({
          since: query['since'] as string | undefined,
          limit: query['limit'] as number | undefined,
        }),
      ),
    }),
  },
  {
    method: 'get',
    path: '/history',
    operationId: 'history',
    summary: 'Ledger entries (changes with actor, intent, motivation, decision), filtered.',
    role: 'viewer',
    query: filterQuery,
    response: answers.history,
    handler: async ({ server, query }) => ({
      body: await history(
        server.ctx,
        defined({
          ...server.workspace,
          limit: (query['limit'] as number | undefined) ?? 50,
          actor: list(query['actor']),
          actorKind: list(query['actorKind']),
          intent: list(query['intent']),
          motivation: list(query['motivation']),
          address: list(query['address']),
          field: list(query['field']),
          source: list(query['source']),
          decision: list(query['decision']),
          since: query['since'] as string | undefined,
          until: query['until'] as string | undefined,
        }),
      ),
    }),
  },
  {
    method: 'get',
    path: '/drift',
    operationId: 'drift',
    summary:
      'Drifted declared fields with who changed them and what the policy decides (reads the platform).',
    role: 'viewer',
    response: answers.drift,
    handler: async ({ server }) => ({ body: await drift(server.ctx, server.workspace) }),
  },
  {
    method: 'get',
    path: '/orphans',
    operationId: 'orphans',
    summary: "Objects carrying this workspace's marker that nothing declares (reads the platform).",
    role: 'viewer',
    response: answers.orphans,
    handler: async ({ server }) => {
      const r = await statusOf(server, false);
      return {
        body: {
          orphans: r.orphans ?? [],
          duplicates: r.duplicates ?? [],
          ...(r.platformError ? { platformError: r.platformError } : {}),
        },
      };
    },
  },
  {
    method: 'post',
    path: '/plan',
    operationId: 'plan',
    summary: 'Plan and save the plan (a changeset): its id, steps and blast radius.',
    role: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        approveDestroy: { ...bool, default: false },
        prune: { ...bool, default: true },
        targets: { type: 'array', items: address },
      },
    },
    status: 201,
    response: answers.plan,
    handler: async ({ server, body }) => {
      const b = (body ?? {}) as { approveDestroy?: boolean; prune?: boolean; targets?: Address[] };
      const r = await savePlan(server.ctx, {
        ...server.workspace,
        approveDestroy: b.approveDestroy === true,
        prune: b.prune !== false,
        ...(b.targets ? { targets: b.targets } : {}),
        report: server.hub.publish,
      });
      // The plan as `tend plan --json` and the MCP `plan` tool give it, with the saved plan's id.
      return { status: 201, body: { id: r.id, ...planView(r) } };
    },
  },
  {
    method: 'get',
    path: '/plans/last',
    operationId: 'lastPlan',
    summary: 'The last saved plan.',
    role: 'viewer',
    response: answers.savedPlan,
    handler: async ({ server }) => {
      const p = await lastSavedPlan(server.workspace);
      if (!p) {
        throw new TendError('plan.not_found', 'no plan was saved yet', {
          hint: 'make one with POST /plan',
        });
      }
      return { body: p };
    },
  },
  {
    method: 'get',
    path: '/plans/{id}',
    operationId: 'savedPlan',
    summary: 'A saved plan by id.',
    role: 'viewer',
    response: answers.savedPlan,
    handler: async ({ server, params }) => ({
      body: await readSavedPlan(server.workspace, params['id']!),
    }),
  },
  {
    method: 'post',
    path: '/apply',
    operationId: 'apply',
    summary:
      'Carry out a saved plan exactly (or refuse it when anything it was computed from changed). Replaces and deletes need the admin role and approveDestroy.',
    role: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['plan'],
      properties: {
        plan: { type: 'string', minLength: 1, description: 'the id POST /plan returned' },
        approveDestroy: { ...bool, default: false },
      },
    },
    response: answers.apply,
    handler: async ({ server, body, caller, signal, query }) => {
      const b = body as { plan: string; approveDestroy?: boolean };
      const saved = await readSavedPlan(server.workspace, b.plan);
      if (saved.destructive.length > 0) {
        if (caller && !allows(caller.role, 'admin')) {
          throw new TendError(
            'auth.forbidden',
            `the plan replaces or deletes ${saved.destructive.join(', ')}: applying it needs the admin role`,
            { hint: 'ask an admin, or plan without the destructive change' },
          );
        }
        if (b.approveDestroy !== true) {
          throw new TendError(
            'apply.approval_required',
            `the plan replaces or deletes ${saved.destructive.join(', ')}: pass "approveDestroy": true to carry it out`,
          );
        }
      }
      if (server.jobs) return queued(server, 'apply', { plan: b.plan }, { caller, query, signal });
      const report = await exclusive(server, () =>
        applySavedPlan(server.ctx, {
          ...server.workspace,
          id: b.plan,
          runChecks: true,
          verifyTimeoutMs: server.verifyTimeoutMs ?? 15_000,
          lockTimeoutMs: server.lockTimeoutMs ?? 0,
          command: `tend serve (apply by ${who(caller)})`,
          report: server.hub.publish,
          signal,
        }),
      );
      return { body: report };
    },
  },
  {
    method: 'get',
    path: '/announcements',
    operationId: 'announcements',
    summary: 'Announcements (active ones, or all with all=true).',
    role: 'viewer',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: { address, all: bool },
    },
    response: answers.announcements,
    handler: async ({ server, query }) => ({
      body: await listAnnouncements(server.ctx, {
        ...server.workspace,
        ...(query['address'] ? { address: query['address'] as Address } : {}),
        all: query['all'] === true,
      }),
    }),
  },
  {
    method: 'post',
    path: '/announcements',
    operationId: 'announce',
    summary: 'An actor declares a change it makes, with intent, motivation and TTL.',
    role: 'operator',
    body: { anyOf: [anyMapping, { type: 'array', items: anyMapping, minItems: 1 }] },
    status: 201,
    response: answers.announce,
    handler: async ({ server, body }) => ({
      status: 201,
      body: await announce(server.ctx, { ...server.workspace, input: body }),
    }),
  },
  {
    method: 'post',
    path: '/accept',
    operationId: 'accept',
    summary:
      'The YAML patch that takes an observed value into the intent; written only with write=true.',
    role: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['address', 'field'],
      properties: { address, field: str, value: anyValue, write: { ...bool, default: false } },
    },
    response: answers.accept,
    handler: async ({ server, body }) => {
      const b = body as { address: string; field: string; value?: unknown; write?: boolean };
      return {
        body: await accept(server.ctx, {
          ...server.workspace,
          address: b.address,
          field: b.field,
          ...('value' in b ? { value: b.value } : {}),
          write: b.write === true,
        }),
      };
    },
  },
  {
    method: 'post',
    path: '/actions',
    operationId: 'action',
    summary: 'Run a Day-2 action on a resource (durable, journaled).',
    role: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['address', 'action'],
      properties: {
        address,
        action: str,
        params: {
          type: 'object',
          additionalProperties: {
            anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }],
          },
        },
        intent: str,
        motivation: str,
      },
    },
    response: answers.action,
    handler: async ({ server, body, caller, signal, query }) => {
      const b = body as {
        address: string;
        action: string;
        params?: Record<string, string | number | boolean>;
        intent?: string;
        motivation?: string;
      };
      const problems: string[] = [];
      let motivation: Motivation | undefined;
      if (b.intent !== undefined) {
        const i = checkIntentWord(b.intent);
        if (!i.ok) problems.push(`body.intent: ${i.error}`);
      }
      if (b.motivation !== undefined) {
        const m = parseMotivation(b.motivation, server.ctx.clock.now());
        if (m.ok) motivation = m.value;
        else problems.push(`body.motivation: ${m.error}`);
      }
      if (problems.length > 0) {
        throw new TendError('action.invalid_params', problems.join('; '), {
          hint: 'nothing was run',
        });
      }
      const params = Object.entries(b.params ?? {}).map(([k, v]) => `${k}=${String(v)}`);
      const actor = {
        actor: who(caller),
        actorKind: 'human' as const,
        ...(b.intent ? { intent: b.intent } : {}),
        ...(motivation ? { motivation } : {}),
      };
      if (server.jobs) {
        const input = { address: b.address, action: b.action, params, actor };
        return queued(server, 'action', input, { caller, query, signal });
      }
      const report = await exclusive(server, () =>
        runAction(server.ctx, {
          ...server.workspace,
          address: b.address,
          action: b.action,
          params,
          actor,
          lockTimeoutMs: server.lockTimeoutMs ?? 0,
          command: `tend serve (action by ${who(caller)})`,
          signal,
        }),
      );
      return { body: report };
    },
  },
  {
    method: 'get',
    path: '/pauses',
    operationId: 'pauses',
    summary: 'Resources whose reconciling is stopped.',
    role: 'viewer',
    response: answers.pauses,
    handler: async ({ server }) => ({
      body: (await statusOf(server, true)).paused,
    }),
  },
  {
    method: 'post',
    path: '/pauses',
    operationId: 'pause',
    summary: 'Stop reconciling a resource (passes leave it alone until it is resumed).',
    role: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['address'],
      properties: { address, reason: { type: 'string', maxLength: 500 } },
    },
    status: 201,
    response: answers.paused,
    handler: async ({ server, body, caller }) => {
      const b = body as { address: string; reason?: string };
      const r = await pauseResource(server.ctx, {
        ...server.workspace,
        address: b.address,
        by: who(caller),
        ...(b.reason ? { reason: b.reason } : {}),
      });
      return { status: 201, body: r.paused.find((p) => p.address === b.address) };
    },
  },
  {
    method: 'get',
    path: '/pauses/{address}',
    operationId: 'paused',
    summary: 'One stopped resource.',
    role: 'viewer',
    response: answers.paused,
    handler: async ({ server, params }) => {
      const r = await statusOf(server, true);
      const p = r.paused.find((x) => x.address === params['address']);
      if (!p) {
        throw new TendError('pause.not_found', `${params['address']} is not paused`);
      }
      return { body: p };
    },
  },
  {
    method: 'delete',
    path: '/pauses/{address}',
    operationId: 'resume',
    summary: 'Resume reconciling a resource.',
    role: 'operator',
    response: answers.resumed,
    handler: async ({ server, params }) => {
      const r = await resumeResource(server.ctx, {
        ...server.workspace,
        address: params['address']!,
      });
      if (!r.changed) {
        throw new TendError('pause.not_found', `${params['address']} is not paused`);
      }
      return { body: { address: params['address'], resumed: true } };
    },
  },
  {
    method: 'post',
    path: '/lifecycle/evaluate',
    operationId: 'evaluateLifecycle',
    summary:
      "Tend's own lifecycle endpoint: whether going from current to desired is no change, an update or a replace.",
    role: 'viewer',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'current', 'desired'],
      properties: { type: str, current: anyMapping, desired: anyMapping },
    },
    response: {
      type: 'object',
      required: ['action', 'fields', 'reason'],
      properties: {
        action: { enum: ['none', 'update', 'replace'] },
        fields: { type: 'array', items: { type: 'string' } },
        reason: { type: 'string' },
      },
    },
    handler: ({ body }) => Promise.resolve({ body: evaluateLifecycle(body as LifecycleInput) }),
  },
  {
    method: 'get',
    path: '/events',
    operationId: 'events',
    summary: 'Server-Sent Events: every engine and application event as it happens.',
    role: 'viewer',
    produces: 'text/event-stream',
    response: { type: 'string' },
    // Filled in by the app (it streams).
    handler: () => Promise.resolve({ body: {} }),
  },
];

interface LifecycleInput {
  readonly type: string;
  readonly current: Record<string, unknown>;
  readonly desired: Record<string, unknown>;
}

/**
 * The lifecycle of this API's own objects: a pause is identified by its address, so another address
 * is another object (replace); anything else it has (the reason) cannot be edited either, since a
 * pause has no update operation: a replace too. Unknown types are a 400.
 */
export function evaluateLifecycle(input: LifecycleInput): {
  action: 'none' | 'update' | 'replace';
  fields: string[];
  reason: string;
} {
  if (input.type !== 'pauses') {
    throw new TendError('lifecycle.unknown_type', `type ${input.type} is not one of this API's`, {
      hint: 'known: pauses',
    });
  }
  const fields = ['address', 'reason'].filter(
    (f) =>
      f in input.desired && JSON.stringify(input.desired[f]) !== JSON.stringify(input.current[f]),
  );
  return fields.length === 0
    ? { action: 'none', fields: [], reason: 'nothing differs' }
    : {
        action: 'replace',
        fields,
        reason: `a pause cannot change in place (${fields.join(', ')}): resume it and pause again`,
      };
}
