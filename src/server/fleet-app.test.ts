import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext, FleetServe } from '../app/index.js';
import { addWorkspace, defaultContext, openFleetServe, removeWorkspace } from '../app/index.js';
import { Redactor, TendError } from '../core/index.js';
import type { FleetJobs } from '../store/index.js';
import { openFleetJobs } from '../store/index.js';
import { serviceIntent, sqlRows } from '../../test/support/fleet.js';
import type { PostgresHandle } from '../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../test/support/postgres.js';
import type { SandboxHandle } from '../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../test/support/sandbox-process.js';
import { app } from './app.js';
import { EventHub } from './event-hub.js';
import { fleetRoutes } from './fleet-routes.js';
import { Metrics } from './metrics.js';
import { openApiDocument } from './openapi.js';
import { vagueSchemas } from './openapi.test.js';

// `tend serve --fleet`'s API in-process (app.request(), no port) over a real PostgreSQL cluster and
// a sandbox, with no worker running: every registered workspace under /workspaces/{workspace}/…,
// GET /workspaces, reads from the shared store, announcements written from this node while another
// process holds the lease, writes that need the lease queued as jobs (and what a job says while
// nobody holds its workspace), every bad input's message, a worker's event on the workspace's SSE
// stream, the fleet's OpenAPI document. With CI=true a missing PostgreSQL fails the suite.

let server: PostgresHandle | undefined;
let sandbox: SandboxHandle;
let url: string;
let root: string;
let ctx: AppContext;
let fleet: FleetServe;
let publisher: FleetJobs;
let api: Hono;
const hubs = new Map<string, EventHub>();

const call = (method: string, path: string, body?: unknown): Promise<Response> =>
  Promise.resolve(
    api.request(path, {
      method,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
        : {}),
    }),
  );

async function error(r: Response): Promise<{ status: number; code: string; message: string }> {
  const b = (await r.json()) as { error: { code: string; message: string } };
  return { status: r.status, code: b.error.code, message: b.error.message };
}

describe.skipIf(POSTGRES.skip)(`tend serve --fleet, in-process${POSTGRES.note}`, () => {
  beforeAll(async () => {
    server = await startPostgres();
    await server.createDatabase('fleet_api');
    url = server.url('fleet_api');
    sandbox = await startSandboxInProcess({ port: 0 });
    root = mkdtempSync(join(tmpdir(), 'tend-fleet-api-'));
    ctx = defaultContext({ redactor: new Redactor() });
    for (const name of ['a', 'b']) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, 'intent.yaml'), serviceIntent(sandbox.url, name, 1));
      await addWorkspace(ctx, { store: url, name, dir: join(root, name) });
    }
    fleet = await openFleetServe(ctx, {
      store: url,
      onEvent: (n) => hubOf(n.workspace).publish({ ...n.event, worker: n.worker } as never),
    });
    publisher = await openFleetJobs(url);
    api = app({
      ctx,
      workspace: { dir: root },
      hub: new EventHub(() => new Date()),
      metrics: new Metrics(),
      version: '0.0.0-test',
      tokens: 'none',
      fleet,
      hubs: hubOf,
      routes: fleetRoutes(),
    });
  }, 120_000);
  const hubOf = (name: string): EventHub => {
    let hub = hubs.get(name);
    if (!hub) hubs.set(name, (hub = new EventHub(() => new Date())));
    return hub;
  };
  afterAll(async () => {
    await publisher?.close();
    await fleet?.close();
    await sandbox?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('GET /workspaces: every registered workspace as tend fleet status --json gives it', async () => {
    const r = await call('GET', '/workspaces');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      workers: [],
      deadWorkers: [],
      workspaces: [
        { name: 'a', holder: null, epoch: null, lastPassAt: null, states: {} },
        { name: 'b', holder: null, epoch: null, lastPassAt: null, states: {} },
      ],
    });
  });

  it('reads a registered workspace from the shared store; an unregistered name is a 404', async () => {
    // Registered but never run: nothing recorded to report (as on any shared store).
    expect(await error(await call('GET', '/workspaces/a/status'))).toMatchObject({
      status: 404,
      code: 'workspace.not_found',
      message: expect.stringMatching(/^workspace a \(from --workspace\) is not in the store/),
    });
    // Once its memory is in the store (a worker's first pass), this node reads it.
    await sqlRows(url, `INSERT INTO tend.workspaces (name, version) VALUES ('a', 1)`);
    const status = await call('GET', '/workspaces/a/status');
    expect(status.status, await status.clone().text()).toBe(200);
    expect(((await status.json()) as { workspace: { name: string } }).workspace.name).toBe('a');
    // The compliance report of a fleet's workspace, under its name.
    const report = await call('GET', '/workspaces/a/compliance');
    expect(report.status, await report.clone().text()).toBe(200);
    expect(await report.json()).toMatchObject({
      kind: 'PolicyReport',
      scope: { kind: 'Workspace', name: 'a' },
      results: [],
    });
    expect(await error(await call('GET', '/workspaces/nope/status'))).toEqual({
      status: 404,
      code: 'workspace.not_found',
      message: 'no workspace nope is registered in this fleet',
    });
    expect((await error(await call('GET', '/workspaces/nope/events'))).code).toBe(
      'workspace.not_found',
    );
    // The single-workspace routes are not served: a fleet has no default workspace.
    expect(await error(await call('GET', '/status'))).toMatchObject({
      status: 404,
      code: 'route.not_found',
    });
  });

  it('takes an announcement on any node, while a worker holds the lease (a store write without it)', async () => {
    await sqlRows(
      url,
      `INSERT INTO tend.leases (workspace, epoch, command, pid, host, started_at, acquired_at, expires_at, worker)
       VALUES ('b', 1, 'tend worker', 999999, 'elsewhere', '2026-01-01T00:00:00Z', now(), now() + interval '10 minutes', 'w-far')`,
    );
    const posted = await call('POST', '/workspaces/b/announcements', {
      address: 'sb.services/api',
      field: 'replicas',
      value: 3,
      actor: 'hpa',
      ttl: '1h',
    });
    expect(posted.status, await posted.clone().text()).toBe(201);
    const listed = await call('GET', '/workspaces/b/announcements');
    const body = (await listed.json()) as { announcements: { actor: string }[] };
    expect(body.announcements.map((a) => a.actor)).toEqual(['hpa']);
    // Not a's.
    const other = (await (await call('GET', '/workspaces/a/announcements')).json()) as {
      announcements: unknown[];
    };
    expect(other.announcements).toEqual([]);
  });

  it('queues a write that needs the lease as a job (202, Location), which says that nobody holds the workspace', async () => {
    const r = await call('POST', '/workspaces/a/actions', {
      address: 'sb.services/api',
      action: 'restart',
    });
    expect(r.status).toBe(202);
    const job = (await r.json()) as { id: string; state: string; note?: string; input: unknown };
    expect(r.headers.get('location')).toBe(`/workspaces/a/jobs/${job.id}`);
    expect(job).toMatchObject({
      workspace: 'a',
      kind: 'action',
      state: 'queued',
      requestedBy: 'api',
      input: {
        address: 'sb.services/api',
        action: 'restart',
        params: [],
        actor: { actor: 'api', actorKind: 'human' },
      },
    });
    expect(job.note).toBe(
      'nobody holds workspace a: the job waits until a worker takes it (tend fleet status shows the holders)',
    );
    const polled = await call('GET', `/workspaces/a/jobs/${job.id}`);
    expect(polled.status).toBe(200);
    expect(((await polled.json()) as { state: string }).state).toBe('queued');
    // Waiting for a job nobody carries out: 202 with the job as it stands, after the wait.
    const t0 = Date.now();
    const waited = await call('GET', `/workspaces/a/jobs/${job.id}?wait=1`);
    expect(waited.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    const applied = await call('POST', '/workspaces/a/actions?wait=1', {
      address: 'sb.services/api',
      action: 'restart',
    });
    expect(applied.status).toBe(202);
    // Another workspace's job is not found under this one; nor an unknown id.
    expect(await error(await call('GET', `/workspaces/b/jobs/${job.id}`))).toEqual({
      status: 404,
      code: 'job.not_found',
      message: `workspace b has no job ${job.id}`,
    });
    expect(await error(await call('GET', '/workspaces/a/jobs/job-none'))).toEqual({
      status: 404,
      code: 'job.not_found',
      message: 'workspace a has no job job-none',
    });
    expect(await error(await call('GET', `/workspaces/nope/jobs/${job.id}`))).toMatchObject({
      status: 404,
      code: 'workspace.not_found',
    });
  });

  it('refuses bad input with what is wrong: a wait too long, an unknown saved plan, an unknown workspace', async () => {
    expect(
      await error(
        await call('POST', '/workspaces/a/actions?wait=301', {
          address: 'sb.services/api',
          action: 'restart',
        }),
      ),
    ).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(
      (
        await error(
          await call('POST', '/workspaces/a/actions?wait=301', {
            address: 'sb.services/api',
            action: 'restart',
          }),
        )
      ).message,
    ).toMatch(/^query\.wait: /);
    expect(
      await error(
        await call('POST', '/workspaces/a/apply', { plan: '20260101T000000000Z-0123abcd' }),
      ),
    ).toEqual({
      status: 404,
      code: 'plan.not_found',
      message: 'no saved plan 20260101T000000000Z-0123abcd',
    });
    expect(
      await error(
        await call('POST', '/workspaces/nope/apply', { plan: '20260101T000000000Z-0123abcd' }),
      ),
    ).toMatchObject({ status: 404, code: 'workspace.not_found' });
    // Nothing was queued by a refused request.
    const rows = await sqlRows<{ n: number }>(
      url,
      `SELECT count(*)::int AS n FROM tend.jobs WHERE kind = 'apply'`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('streams the events a worker publishes for the workspace on its SSE stream, not another’s', async () => {
    const r = await call('GET', '/workspaces/a/events');
    expect(r.status).toBe(200);
    const reader = r.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (what: string) => {
      const end = Date.now() + 10_000;
      while (!text.includes(what)) {
        if (Date.now() > end) throw new Error(`no ${what} in ${text}`);
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    };
    await readUntil('event: ready');
    await publisher.publish({
      workspace: 'b',
      worker: 'w-1',
      event: { kind: 'pass-done', pass: 7, ms: 1, states: {} },
    });
    await publisher.publish({
      workspace: 'a',
      worker: 'w-1',
      event: { kind: 'pass-done', pass: 3, ms: 12, states: { converged: 1 } },
    });
    await readUntil('"pass":3');
    await reader.cancel();
    expect(text).toContain('event: pass-done');
    expect(text).toContain('"worker":"w-1"');
    expect(text).not.toContain('"pass":7');
  });

  it('documents the fleet’s routes from the same table: every workspace route under /workspaces/{workspace}', () => {
    const doc = openApiDocument(fleetRoutes(), '0.0.0-test');
    const paths = doc['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths).sort()).toEqual(
      [
        '/healthz',
        '/readyz',
        '/openapi.json',
        '/metrics',
        '/lifecycle/evaluate',
        '/workspaces',
        '/workspaces/{workspace}/status',
        '/workspaces/{workspace}/graph',
        '/workspaces/{workspace}/resources/{address}',
        '/workspaces/{workspace}/resources/{address}/owners',
        '/workspaces/{workspace}/compliance',
        '/workspaces/{workspace}/history',
        '/workspaces/{workspace}/drift',
        '/workspaces/{workspace}/orphans',
        '/workspaces/{workspace}/plan',
        '/workspaces/{workspace}/plans/last',
        '/workspaces/{workspace}/plans/{id}',
        '/workspaces/{workspace}/apply',
        '/workspaces/{workspace}/announcements',
        '/workspaces/{workspace}/accept',
        '/workspaces/{workspace}/actions',
        '/workspaces/{workspace}/pauses',
        '/workspaces/{workspace}/pauses/{address}',
        '/workspaces/{workspace}/events',
        '/workspaces/{workspace}/jobs/{id}',
      ].sort(),
    );
    const ops = Object.values(paths).flatMap((item) =>
      Object.values(item).map((op) => op['operationId'] as string),
    );
    expect(new Set(ops).size).toBe(ops.length);
    expect(Object.keys(paths['/workspaces/{workspace}/apply']!['post']!['responses']!)).toContain(
      '202',
    );
    const problems: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const responses = op['responses'] as Record<string, { content?: Record<string, unknown> }>;
        for (const [status, res] of Object.entries(responses)) {
          for (const media of Object.values(res.content ?? {})) {
            problems.push(
              ...vagueSchemas((media as { schema: unknown }).schema, `${method} ${path} ${status}`),
            );
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('answers a git workspace with what it cannot serve (501), not a made-up read', async () => {
    await addWorkspace(ctx, {
      store: url,
      name: 'g',
      git: { url: 'https://git.example.com/team/intent.git' },
    });
    try {
      expect(await error(await call('GET', '/workspaces/g/status'))).toEqual({
        status: 501,
        code: 'workspace.git_not_served',
        message:
          'workspace g follows a git repository (https://git.example.com/team/intent.git); tend serve --fleet serves directory workspaces only',
      });
      expect((await error(await call('GET', '/workspaces/g/history'))).code).toBe(
        'workspace.git_not_served',
      );
    } finally {
      await removeWorkspace(ctx, { store: url, name: 'g' });
    }
  });
});

describe('tend serve --fleet on anything but a shared store', () => {
  it('is refused with what to give instead', async () => {
    const e = await openFleetServe(defaultContext(), { store: '/tmp/nowhere/.tend/tend.db' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(TendError);
    expect({ code: (e as TendError).code, message: (e as TendError).message }).toEqual({
      code: 'fleet.shared-store-required',
      message: 'a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
    });
  });
});
