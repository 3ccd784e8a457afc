import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext, HeldWorkspace, ProviderFactory, Readiness } from '../app/index.js';
import {
  acquireWorkspaceLease,
  defaultContext,
  holdWorkspace,
  openWorkspace,
  storeReadiness,
} from '../app/index.js';
import { Redactor } from '../core/index.js';
import { deriveTypes, loadOpenApiDocument } from '../providers/index.js';
import { copyExample } from '../../test/support/cli.js';
import type { SandboxHandle } from '../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../test/support/sandbox-process.js';
import type { Hono } from 'hono';
import type { Role } from './auth.js';
import { readTokens } from './auth.js';
import { app, statusOf } from './app.js';
import type { Listening } from './listen.js';
import { listen } from './listen.js';
import { EventHub } from './event-hub.js';
import { Metrics } from './metrics.js';
import { ROUTES } from './routes.js';

// The HTTP API in-process (app.request(), no port) over the quickstart intent and a real sandbox:
// the auth matrix (every route of the table × no token, a wrong one and each role), request
// validation messages, a plan saved and applied by id, destructive approval, stop/resume of a
// resource, the lease held by another writer (409), SSE, the OpenAPI document in Tend's own loader.

const PASSWORD = 'server-test-admin-password';
const TOKENS = {
  viewer: 'viewer-token-0123456789abcdef',
  operator: 'operator-token-0123456789abcdef',
  admin: 'admin-token-0123456789abcdef0123',
} as const;

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let ctx: AppContext;
let api: Hono;
let hub: EventHub;
let held: HeldWorkspace;
/** Loads of the workspace the server holds (each connects the provider once). */
let loads = 0;
const logs: Record<string, unknown>[] = [];

let listening: Listening;

function call(
  method: string,
  path: string,
  options: { role?: Role | 'none' | 'wrong'; body?: unknown; raw?: string; port?: boolean } = {},
): Promise<Response> {
  const role = options.role ?? 'admin';
  const headers: Record<string, string> = {};
  if (role === 'wrong') headers['authorization'] = 'Bearer not-a-token-this-server-knows';
  else if (role !== 'none') headers['authorization'] = `Bearer ${TOKENS[role]}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const init = { method: method.toUpperCase(), headers, ...(body !== undefined ? { body } : {}) };
  // The same app, in-process (app.request(), no port) or over a real port (fetch).
  return options.port
    ? fetch(`${listening.url}${path}`, init)
    : Promise.resolve(api.request(path, init));
}

async function json<T = Record<string, unknown>>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

beforeAll(async () => {
  sandbox = await startSandboxInProcess({ port: 0 });
  ex = copyExample('quickstart', sandbox.url);
  const redactor = new Redactor();
  ctx = defaultContext({
    env: { ...process.env, QUICKSTART_ADMIN_PASSWORD: PASSWORD },
    redactor,
    notice: () => {},
  });
  const tokens = readTokens(
    JSON.stringify(
      (Object.keys(TOKENS) as Role[]).map((role) => ({
        token: TOKENS[role],
        role,
        name: `${role}-1`,
      })),
    ),
    'test tokens',
    {},
    redactor,
  );
  hub = new EventHub(() => new Date());
  // As `tend serve` does: reads come from one workspace kept loaded; its loads are counted.
  const counted = new Map<string, ProviderFactory>(
    [...ctx.providers].map(([type, connect]) => [
      type,
      (request) => {
        loads++;
        return connect(request);
      },
    ]),
  );
  held = holdWorkspace({ ...ctx, providers: counted }, { dir: ex.dir });
  api = app({
    ctx,
    workspace: { dir: ex.dir },
    held,
    hub,
    metrics: new Metrics(),
    version: '0.0.0-test',
    tokens,
    verifyTimeoutMs: 5000,
    log: (e) => logs.push(e),
  });
  listening = await listen(api, '127.0.0.1', 0);
}, 60_000);

afterAll(async () => {
  await listening.close();
  await held.close();
  await sandbox.stop();
  ex.cleanup();
});

/** A path with its parameters filled in (an address with its slash encoded, as a client sends it). */
function concrete(path: string): string {
  return path
    .replace('{address}', encodeURIComponent('sb.services/api'))
    .replace('{id}', '20260101T000000000Z-00000000');
}

describe(
  'the auth matrix: every route × no token, a wrong token, each role',
  { timeout: 120_000 },
  () => {
    const callers = ['none', 'wrong', 'viewer', 'operator', 'admin'] as const;
    const rank = { viewer: 0, operator: 1, admin: 2 } as const;
    const cases = ROUTES.flatMap((route) =>
      callers.flatMap((caller) =>
        [false, true].map((port) => ({
          name: `${route.method.toUpperCase()} ${route.path} as ${caller} (${port ? 'real port' : 'in-process'})`,
          route,
          caller,
          port,
          want:
            route.role === 'public'
              ? 'allowed'
              : caller === 'none' || caller === 'wrong'
                ? 401
                : rank[caller] >= rank[route.role]
                  ? 'allowed'
                  : 403,
        })),
      ),
    );

    it.each(cases)('$name', async ({ route, caller, want, port }) => {
      // A body the schema refuses keeps an allowed write from doing anything (400): authorisation is
      // decided before validation, so a denied caller still gets 401/403.
      const r = await call(route.method, concrete(route.path), {
        role: caller,
        port,
        ...(route.body ? { body: { notAField: true } } : {}),
      });
      if (want === 'allowed') {
        expect([401, 403]).not.toContain(r.status);
        // The event stream never ends: its body is not read.
        if (route.operationId === 'events') await r.body?.cancel();
        else {
          const text = await r.text();
          expect(r.status, text).toBeLessThan(500);
          expect(text).not.toContain('route.not_found');
        }
      } else {
        expect(r.status).toBe(want);
        const body = await json<{ error: { code: string; message: string } }>(r);
        expect(body.error.code).toBe(want === 401 ? 'auth.unauthorized' : 'auth.forbidden');
        if (want === 403) expect(body.error.message).toContain(`needs the ${route.role} role`);
        if (caller === 'wrong')
          expect(body.error.message).toBe('the bearer token is not one this server knows');
        if (caller === 'none') expect(body.error.message).toBe('a bearer token is required');
      }
    });
  },
);

describe('request validation', () => {
  const cases = [
    {
      name: 'a body of the wrong type',
      method: 'post',
      path: '/plan',
      body: { targets: 'sb.services/api' },
      message: 'body.targets: must be array',
    },
    {
      name: 'a missing required field',
      method: 'post',
      path: '/apply',
      body: {},
      message: 'body.plan: is required',
    },
    {
      name: 'an unknown property',
      method: 'post',
      path: '/accept',
      body: { address: 'sb.services/api', field: 'replicas', writ: true },
      message: 'body: unknown property writ',
    },
    {
      name: 'an address that is not one',
      method: 'post',
      path: '/pauses',
      body: { address: 'api' },
      message: 'body.address: is not an address: write provider.type/name',
    },
    {
      // The core's grammar (parseAddress): the HTTP pattern used to take a `/` in a name.
      name: 'an address whose name holds a /',
      method: 'post',
      path: '/pauses',
      body: { address: 'sb.services/api/v2' },
      message:
        'body.address: is not an address: write provider.type/name (lower-case letters, digits, - and _; a name holds no /), e.g. sb.services/api',
    },
    {
      name: 'a query out of range',
      method: 'get',
      path: '/history?limit=0',
      message: 'query.limit: must be >= 1',
    },
    {
      name: 'an unknown query key',
      method: 'get',
      path: '/graph?x=1',
      message: 'query: this endpoint takes no query',
    },
    {
      name: 'a body that is not JSON',
      method: 'post',
      path: '/plan',
      raw: '{',
      message: 'the body is not JSON',
    },
    {
      name: 'no body where one is required',
      method: 'post',
      path: '/apply',
      raw: '',
      message: 'body: a JSON body is required',
    },
    {
      name: 'a saved plan id that is not one',
      method: 'get',
      path: '/plans/..%2F..%2Fetc',
      message: 'is not a saved plan id',
    },
    {
      name: 'a history filter that is not a time',
      method: 'get',
      path: '/history?since=yesterday',
      message: '"yesterday" is neither an ISO time nor a duration',
    },
    {
      name: 'a compliance window that is not a time',
      method: 'get',
      path: '/compliance?since=yesterday',
      message: '--since "yesterday" is neither an ISO time nor a duration',
    },
    {
      name: 'a compliance query with an unknown key',
      method: 'get',
      path: '/compliance?policy=x',
      message: 'policy',
    },
  ];
  it.each(cases)('$name: 400 saying what is wrong', async (c) => {
    const r = await call(c.method, c.path, {
      ...(c.body !== undefined ? { body: c.body } : {}),
      ...(c.raw !== undefined ? { raw: c.raw } : {}),
    });
    const body = await json<{ error: { code: string; message: string } }>(r);
    expect(r.status, JSON.stringify(body)).toBe(400);
    expect(body.error.message).toContain(c.message);
  });

  it('an unknown route is a 404 with a JSON error', async () => {
    const r = await call('get', '/nope');
    expect(r.status).toBe(404);
    expect((await json<{ error: { code: string } }>(r)).error.code).toBe('route.not_found');
  });

  it('an unknown resource is a 404 with near matches', async () => {
    const r = await call('get', `/resources/${encodeURIComponent('sb.services/apj')}`);
    const body = await json<{ error: { code: string; message: string } }>(r);
    expect(r.status).toBe(404);
    expect(body.error.message).toContain('sb.services/api');
  });
});

describe('GET /compliance', () => {
  it('answers a viewer with the PolicyReport of the workspace', async () => {
    const r = await call('get', '/compliance?since=1d&limit=5', { role: 'viewer' });
    const body = await json<{ kind: string; summary: Record<string, number>; results: unknown[] }>(
      r,
    );
    expect(r.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      apiVersion: 'wgpolicyk8s.io/v1alpha2',
      kind: 'PolicyReport',
      scope: { kind: 'Workspace' },
      summary: { fail: 0, warn: 0, error: 0 },
    });
    expect(Array.isArray(body.results)).toBe(true);
  });

  it('refuses a caller without a token: 401', async () => {
    const r = await call('get', '/compliance', { role: 'none' });
    expect(r.status).toBe(401);
    expect((await json<{ error: { code: string } }>(r)).error.code).toBe('auth.unauthorized');
  });
});

describe('plan, apply, graph, stop and resume', { timeout: 120_000 }, () => {
  it('POST /plan saves a plan with its blast radius; POST /apply carries out exactly that plan', async () => {
    const planned = await call('post', '/plan', { role: 'operator', body: {} });
    const p = await json<{
      id: string;
      steps: { kind: string }[];
      destructive: string[];
      blastRadius: string[];
    }>(planned);
    expect(planned.status).toBe(201);
    expect(p.id).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{8}$/);
    expect(p.steps.filter((s) => s.kind === 'create')).toHaveLength(5);
    expect(p.destructive).toEqual([]);
    expect(p.blastRadius).toEqual([]);
    const last = await json<{ id: string }>(await call('get', '/plans/last', { role: 'viewer' }));
    expect(last.id).toBe(p.id);
    const applied = await call('post', '/apply', { role: 'operator', body: { plan: p.id } });
    const a = await json<{ verdict: string; applied: boolean }>(applied);
    expect(applied.status, JSON.stringify(a)).toBe(200);
    expect(a.verdict).toBe('ok');
    // The same plan again: what it was computed from has changed; refused, nothing sent.
    const again = await json<{ verdict: string }>(
      await call('post', '/apply', { role: 'operator', body: { plan: p.id } }),
    );
    expect(again.verdict).toBe('refused');
  });

  it('GET /graph: every resource with its status, and the references as edges', async () => {
    const g = await json<{
      nodes: { address: string; state: string }[];
      edges: { from: string; to: string }[];
    }>(await call('get', '/graph', { role: 'viewer' }));
    expect(g.nodes.map((n) => n.address).sort()).toEqual([
      'sb.buckets/assets',
      'sb.instances/web',
      'sb.networks/main',
      'sb.services/api',
      'sb.volumes/data',
    ]);
    expect(g.nodes.every((n) => n.state === 'converged')).toBe(true);
    expect(g.edges).toContainEqual({ from: 'sb.services/api', to: 'sb.networks/main' });
    expect(g.edges).toContainEqual({ from: 'sb.volumes/data', to: 'sb.instances/web' });
  });

  it('GET /resources/{address}: declared and observed per field, with owners; the secret never shown', async () => {
    const r = await call('get', `/resources/${encodeURIComponent('sb.instances/web')}`, {
      role: 'viewer',
    });
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(text).not.toContain(PASSWORD);
    const body = JSON.parse(text) as {
      fields: { field: string; observed?: unknown; owner: { kind: string } }[];
    };
    expect(body.fields.find((f) => f.field === 'size')).toMatchObject({
      observed: 'small',
      owner: { kind: 'intent' },
    });
    const owners = await json<{ owners: { field: string }[] }>(
      await call('get', `/resources/sb.instances/web/owners`, { role: 'viewer' }),
    );
    expect(owners.owners.map((o) => o.field)).toContain('size');
  });

  it('a stopped resource is left alone by a pass (its drift not corrected) until resumed', async () => {
    const paused = await call('post', '/pauses', {
      role: 'operator',
      body: { address: 'sb.services/api', reason: 'load test' },
    });
    expect(paused.status).toBe(201);
    expect(await json(paused)).toMatchObject({
      address: 'sb.services/api',
      by: 'api:operator-1',
      reason: 'load test',
    });
    const service = (await sandbox.objects()).find((o) => o.type === 'services')!;
    const changed = await fetch(`${sandbox.url}/services/${service.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-tend-actor': 'oncall' },
      body: JSON.stringify({ replicas: 7 }),
    });
    expect(changed.status).toBe(200);
    const held = await json<{ steps: { address: string; kind: string }[] }>(
      await call('post', '/plan', { role: 'operator', body: {} }),
    );
    expect(held.steps.find((s) => s.address === 'sb.services/api')).toBeUndefined();
    const st = await json<{ paused: { address: string }[] }>(
      await call('get', '/status', { role: 'viewer' }),
    );
    expect(st.paused.map((p) => p.address)).toEqual(['sb.services/api']);

    const resumed = await call('delete', `/pauses/${encodeURIComponent('sb.services/api')}`, {
      role: 'operator',
    });
    expect(resumed.status).toBe(200);
    const again = await call('delete', `/pauses/${encodeURIComponent('sb.services/api')}`, {
      role: 'operator',
    });
    expect(again.status).toBe(404);
    const fixed = await json<{ steps: { address: string; kind: string }[] }>(
      await call('post', '/plan', { role: 'operator', body: {} }),
    );
    expect(fixed.steps.find((s) => s.address === 'sb.services/api')?.kind).toBe('update');
  });

  it('pausing a resource the intent does not declare is a 404 with near matches', async () => {
    const r = await call('post', '/pauses', {
      role: 'operator',
      body: { address: 'sb.services/apx' },
    });
    const body = await json<{ error: { message: string } }>(r);
    expect(r.status).toBe(404);
    expect(body.error.message).toBe(
      'sb.services/apx is not a resource the intent declares; did you mean sb.services/api?',
    );
  });

  it('a destructive plan needs the admin role and an explicit approval', async () => {
    ex.write(
      'app.yaml',
      ex
        .read('app.yaml')
        .replace(/---\nkind: Resource\ntype: sb.buckets[\s\S]*?versioning: true\n/, ''),
    );
    const p = await json<{ id: string; destructive: string[] }>(
      await call('post', '/plan', { role: 'operator', body: {} }),
    );
    expect(p.destructive).toEqual(['sb.buckets/assets']);
    const asOperator = await call('post', '/apply', { role: 'operator', body: { plan: p.id } });
    expect(asOperator.status).toBe(403);
    expect((await json<{ error: { message: string } }>(asOperator)).error.message).toContain(
      'needs the admin role',
    );
    const unapproved = await call('post', '/apply', { role: 'admin', body: { plan: p.id } });
    expect(unapproved.status).toBe(400);
    expect((await json<{ error: { code: string } }>(unapproved)).error.code).toBe(
      'apply.approval_required',
    );
    const approved = await json<{ verdict: string }>(
      await call('post', '/apply', { role: 'admin', body: { plan: p.id, approveDestroy: true } }),
    );
    expect(approved.verdict).toBe('ok');
    expect((await sandbox.objects()).some((o) => o.type === 'buckets')).toBe(false);
  });

  it('a write while another writer holds the workspace is a 409 naming the holder', async () => {
    const p = await json<{ id: string }>(
      await call('post', '/plan', { role: 'operator', body: {} }),
    );
    const { ws } = await openWorkspace(ctx, { dir: ex.dir });
    const other = { ...ctx, process: { ...ctx.process, pid: process.pid } };
    const lease = await acquireWorkspaceLease(other, ws, { command: 'tend run', waitMs: 0 });
    try {
      const r = await call('post', '/apply', { role: 'operator', body: { plan: p.id } });
      const body = await json<{ error: { code: string; message: string } }>(r);
      expect(r.status).toBe(409);
      expect(body.error.code).toBe('workspace.locked');
      expect(body.error.message).toContain(`held by \`tend run\` (pid ${process.pid}`);
    } finally {
      await lease.release();
      await ws.close();
    }
  });
});

describe(
  'reads from the workspace the server holds (issue 25, item 9)',
  { timeout: 60_000 },
  () => {
    type Status = { resources: { address: string }[] };
    const addresses = async () =>
      (await json<Status>(await call('get', '/status', { role: 'viewer' }))).resources.map(
        (r) => r.address,
      );

    it('many reads at once load the workspace at most once, and every one answers 200', async () => {
      await call('get', '/status', { role: 'viewer' });
      const before = loads;
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          call('get', ['/status', '/graph', '/pauses'][i % 3]!, { role: 'viewer', port: true }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
      expect(loads - before).toBeLessThanOrEqual(1);
    });

    it('an intent edit is seen by the next reads; a broken intent is a 422, not loaded again per read, until fixed', async () => {
      ex.write(
        'extra.yaml',
        'kind: Resource\ntype: sb.buckets\nname: logs\nspec:\n  name: tend-held-logs\n',
      );
      await expect.poll(addresses, { timeout: 10_000 }).toContain('sb.buckets/logs');
      const graph = await json<{ nodes: { address: string; state: string }[] }>(
        await call('get', '/graph', { role: 'viewer' }),
      );
      expect(graph.nodes.find((n) => n.address === 'sb.buckets/logs')?.state).toBe('pending');

      ex.write('extra.yaml', 'kind: Resourse\nname: x\n');
      await expect
        .poll(async () => (await call('get', '/status', { role: 'viewer' })).status, {
          timeout: 10_000,
        })
        .toBe(422);
      const before = loads;
      for (let i = 0; i < 5; i++) {
        const r = await call('get', '/graph', { role: 'viewer' });
        expect(r.status).toBe(422);
        expect((await json<{ error: { code: string } }>(r)).error.code).toBe('intent.invalid');
      }
      expect(loads).toBe(before);

      rmSync(join(ex.dir, 'extra.yaml'));
      await expect.poll(addresses, { timeout: 10_000 }).not.toContain('sb.buckets/logs');
      expect((await call('get', '/status', { role: 'viewer' })).status).toBe(200);
    });
  },
);

describe('events, documents and logs', { timeout: 60_000 }, () => {
  it('GET /events streams the events of a plan made after it connected', async () => {
    const r = await call('get', '/events', { role: 'viewer' });
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const planned = call('post', '/plan', { role: 'operator', body: {} });
    while (!/event: plan\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    await planned;
    expect(text).toContain('event: ready');
    expect(text).toMatch(/event: pass-start\ndata: \{"time":"[^"]+","kind":"pass-start"/);
    expect(text).toContain('event: plan');
  });

  it("GET /openapi.json is an OpenAPI 3.1 document Tend's own loader reads without errors", async () => {
    const r = await call('get', '/openapi.json', { role: 'viewer' });
    const doc = await json(r);
    expect(doc['openapi']).toBe('3.1.0');
    const dir = mkdtempSync(join(tmpdir(), 'tend-api-doc-'));
    try {
      writeFileSync(join(dir, 'tend.openapi.json'), JSON.stringify(doc));
      const loaded = await loadOpenApiDocument(join(dir, 'tend.openapi.json'));
      expect(loaded.warnings).toEqual([]);
      const derived = deriveTypes(loaded.document);
      expect(
        derived.lifecycle?.path ?? (loaded.document['x-tend-lifecycle'] as { path: string }).path,
      ).toBe('/lifecycle/evaluate');
      expect(derived.types.map((t) => t.info.name)).toContain('pauses');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Every route of the table is in it, with its operation id.
    const paths = doc['paths'] as Record<string, Record<string, { operationId: string }>>;
    for (const route of ROUTES)
      expect(paths[route.path]?.[route.method]?.operationId).toBe(route.operationId);
  });

  it('the lifecycle endpoint says a changed pause is a replace, and refuses an unknown type', async () => {
    const replace = await json(
      await call('post', '/lifecycle/evaluate', {
        role: 'viewer',
        body: {
          type: 'pauses',
          current: { address: 'a/b', reason: 'x' },
          desired: { address: 'a/b', reason: 'y' },
        },
      }),
    );
    expect(replace).toMatchObject({ action: 'replace', fields: ['reason'] });
    const none = await json(
      await call('post', '/lifecycle/evaluate', {
        role: 'viewer',
        body: { type: 'pauses', current: { address: 'a/b' }, desired: { address: 'a/b' } },
      }),
    );
    expect(none).toMatchObject({ action: 'none', fields: [] });
    const unknown = await call('post', '/lifecycle/evaluate', {
      role: 'viewer',
      body: { type: 'things', current: {}, desired: {} },
    });
    expect(unknown.status).toBe(400);
  });

  it('request logs name the caller, never the token', () => {
    const text = JSON.stringify(logs);
    expect(logs.length).toBeGreaterThan(10);
    for (const t of Object.values(TOKENS)) expect(text).not.toContain(t);
    expect(text).not.toContain(PASSWORD);
    expect(logs).toContainEqual(
      expect.objectContaining({
        kind: 'request',
        route: '/graph',
        status: 200,
        caller: 'viewer-1',
      }),
    );
  });
});

describe('token lists', () => {
  const cases = [
    {
      name: 'not a list',
      text: '{ token: x }',
      message: 'must be a list of { token, role, name }',
    },
    { name: 'not YAML', text: '[ {', message: 'is neither YAML nor JSON' },
    {
      name: 'an unknown role',
      text: '[{ token: aaaaaaaaaaaaaaaaaaaa, role: root, name: a }]',
      message: 'entry 1: role must be one of viewer, operator, admin',
    },
    {
      name: 'no token',
      text: '[{ role: admin, name: a }]',
      message: 'entry 1: token or tokenFromEnv is required',
    },
    {
      name: 'a short token',
      text: '[{ token: short, role: admin, name: a }]',
      message: 'entry 1: the token is shorter than 16 characters',
    },
    {
      name: 'an unset variable',
      text: '[{ tokenFromEnv: TEND_TEST_UNSET, role: admin, name: a }]',
      message: 'entry 1: the environment variable TEND_TEST_UNSET (tokenFromEnv) is not set',
    },
    {
      name: 'a duplicate name',
      text: '[{ token: aaaaaaaaaaaaaaaaaaaa, role: admin, name: a }, { token: bbbbbbbbbbbbbbbbbbbb, role: viewer, name: a }]',
      message: 'entry 2: name a is used twice',
    },
    {
      name: 'an unknown key',
      text: '[{ token: aaaaaaaaaaaaaaaaaaaa, role: admin, name: a, scope: all }]',
      message: 'entry 1: unknown key scope',
    },
  ];
  it.each(cases)('$name: $message', ({ text, message }) => {
    expect(() => readTokens(text, 'tokens.yaml', {}, new Redactor())).toThrow(message);
  });

  it('a token from the environment is registered with the redactor, and never in the error', () => {
    const redactor = new Redactor();
    const secret = 'short1';
    let message = '';
    try {
      readTokens(
        '[{ tokenFromEnv: T, role: admin, name: a }]',
        'tokens.yaml',
        { T: secret },
        redactor,
      );
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('shorter than 16');
    expect(message).not.toContain(secret);
    expect(redactor.text(`x ${secret} y`)).toBe('x «redacted» y');
  });
});

describe('error codes become statuses in one place', () => {
  const cases: [string, number][] = [
    ['auth.unauthorized', 401],
    ['auth.forbidden', 403],
    ['workspace.locked', 409],
    ['intent.invalid', 422],
    ['plan.not_found', 404],
    ['explain.unknown_address', 404],
    ['pause.unknown_address', 404],
    ['request.invalid', 400],
    ['history.bad_filter', 400],
    ['announce.invalid', 400],
    ['apply.approval_required', 400],
    ['plan.bad_id', 400],
    ['platform.unavailable', 500],
    ['internal', 500],
  ];
  it.each(cases)('%s → %i', (code, status) => {
    expect(statusOf(code)).toBe(status);
  });
});

describe('GET /readyz', () => {
  const withReady = (ready: () => Promise<Readiness>) =>
    app({
      ctx,
      workspace: { dir: ex.dir },
      held,
      hub,
      metrics: new Metrics(),
      version: '0.0.0-test',
      tokens: [],
      ready,
    });

  it('answers 200 without a token when the store answers', async () => {
    const r = await withReady(() => storeReadiness(held)).request('/readyz');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ready: true });
  });

  it('answers 503 with the reason when the store does not', async () => {
    // A PostgreSQL store nobody listens for (port 1): connecting is refused.
    const closed = holdWorkspace(ctx, { dir: ex.dir, store: 'postgres://tend@127.0.0.1:1/tend' });
    try {
      const r = await withReady(() => storeReadiness(closed)).request('/readyz');
      expect(r.status).toBe(503);
      const body = await json<{ ready: boolean; reason: string }>(r);
      expect(body.ready).toBe(false);
      expect(body.reason).toMatch(/^the store: /);
      expect(body.reason).toContain('127.0.0.1:1');
    } finally {
      await closed.close();
    }
  });
});
