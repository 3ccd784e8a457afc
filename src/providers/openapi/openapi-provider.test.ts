import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Marker, ObservedObject, WriteContext } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { startSandbox } from '../../sandbox/index.js';
import type { RunningSandbox } from '../../sandbox/index.js';
import type { OpenApiDocument } from './document/load-document.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import type { OpenApiProvider, OpenApiProviderOptions } from './openapi-provider.js';
import { actorHeaders, createOpenApiProvider, loadOpenApiProvider } from './openapi-provider.js';

// Integration: the generic provider against the real sandbox platform, knowing nothing of it but the
// OpenAPI document the sandbox serves.

let sb: RunningSandbox;
let provider: OpenApiProvider;
let served: Record<string, unknown>;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, consistentReads: false });
  provider = await loadOpenApiProvider({
    name: 'sb',
    spec: `${sb.url}/openapi.json`,
    endpoint: sb.url,
    workspace: 'ws',
  });
  served = (await (await fetch(`${sb.url}/openapi.json`)).json()) as Record<string, unknown>;
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => {
  sb.sandbox.reset();
});

const marker = (name: string, op?: string): Marker => ({
  workspace: 'ws',
  address: `sb.${name}` as Address,
  ...(op ? { op } : {}),
});
const ACTOR = { actor: 'tend', intent: 'availability', motivation: 'incident INC-7' };
const ctx = (extra: Partial<WriteContext> = {}): WriteContext => ({ actor: ACTOR, ...extra });

interface OracleObject {
  type: string;
  id: string;
  visible: boolean;
  fields: Record<string, unknown>;
}
async function oracle(): Promise<OracleObject[]> {
  const r = await fetch(`${sb.url}/_sandbox/objects`);
  return ((await r.json()) as { objects: OracleObject[] }).objects;
}

/** A provider over the served document changed by `edit` (to exercise other document shapes). */
async function variant(
  edit: (doc: Record<string, unknown>) => void,
  extra: Partial<OpenApiProviderOptions> = {},
): Promise<OpenApiProvider> {
  const raw = structuredClone(served);
  edit(raw);
  const document: OpenApiDocument = await prepareOpenApiDocument(raw, 'variant');
  return createOpenApiProvider({
    name: 'sb',
    document,
    endpoint: sb.url,
    workspace: 'ws',
    ...extra,
  });
}

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected a failure');
}

async function network(name = 'main'): Promise<ObservedObject> {
  return provider.create(
    'networks',
    { name, cidr: '10.0.0.0/16' },
    ctx({ marker: marker(`networks/${name}`) }),
  );
}

describe('openapi provider on the sandbox: describe', () => {
  it('derives every sandbox type from the served document', () => {
    const d = provider.describe();
    expect(d.auditFeed).toBe(true);
    expect(d.warnings).toEqual([]);
    const byName = Object.fromEntries(d.types.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'buckets',
      'instances',
      'networks',
      'services',
      'volumes',
    ]);
    for (const t of d.types) {
      expect(t.lifecycle, t.name).toBe('platform');
      expect(t.idempotencyKey, t.name).toBe(true);
      expect(t.markerField, t.name).toBe('tags');
      expect(t.outputOnly, t.name).toContain('created_at');
    }
    expect(byName['buckets']).toMatchObject({
      identity: 'natural-key',
      naturalKey: 'name',
      idField: 'name',
    });
    for (const name of ['networks', 'instances', 'volumes', 'services']) {
      expect(byName[name], name).toMatchObject({ identity: 'marker', idField: 'id' });
      expect(byName[name]!.outputOnly, name).toContain('id');
    }
    expect(byName['networks']!.createOnly).toContain('cidr');
    expect(byName['instances']!.createOnly).toContain('image');
    expect(byName['volumes']!.createOnly).toEqual([]);
    expect(byName['instances']!.sensitive).toEqual(['admin_password']);
    expect(byName['instances']!.outputOnly).toEqual(
      expect.arrayContaining(['status', 'private_ip']),
    );
    // The desired-spec schema has no read-only fields.
    const schema = byName['networks']!.schema as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(schema.properties)).not.toContain('id');
    expect(Object.keys(schema.properties)).not.toContain('status');
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'cidr']));
  });

  it('derives the same types from the committed document file', async () => {
    const fromFile = await loadOpenApiProvider({
      name: 'sb',
      spec: new URL('../../sandbox/openapi.json', import.meta.url).pathname,
      endpoint: sb.url,
      workspace: 'ws',
    });
    expect(fromFile.describe()).toEqual(provider.describe());
  });

  it('names the known types for an unknown one', async () => {
    const e = await failure(provider.list('disks'));
    expect(e.code).toBe('provider.unknown_type');
    expect(e.message).toBe(
      'provider sb has no resource type "disks"; known types: networks, instances, volumes, buckets, services',
    );
  });
});

describe('openapi provider on the sandbox: CRUD', () => {
  it('creates with marker tags, reads, lists, updates and deletes', async () => {
    const created = await provider.create(
      'networks',
      { name: 'main', cidr: '10.0.0.0/16', tags: { team: 'web' } },
      ctx({ marker: marker('networks/main', 'op-1'), idempotencyKey: 'op-1' }),
    );
    expect(created.type).toBe('networks');
    expect(created.marker).toEqual(marker('networks/main', 'op-1'));
    expect(created.fields).toMatchObject({
      name: 'main',
      cidr: '10.0.0.0/16',
      status: expect.any(String),
    });

    const [stored] = await oracle();
    expect(stored).toMatchObject({
      type: 'networks',
      id: created.id,
      fields: {
        tags: {
          team: 'web',
          'tend.workspace': 'ws',
          'tend.address': 'sb.networks/main',
          'tend.op': 'op-1',
        },
      },
    });

    expect(await provider.read('networks', created.id)).toEqual(created);
    expect((await provider.list('networks')).map((o) => o.id)).toEqual([created.id]);

    // An update that declares tags keeps the marker, op included, though the new marker has no op.
    const updated = await provider.update(
      'networks',
      created.id,
      { name: 'main2', tags: { team: 'db' } },
      created,
      ctx({ marker: marker('networks/main') }),
    );
    expect(updated.fields).toMatchObject({ name: 'main2', tags: { team: 'db' } });
    expect(updated.marker).toEqual(marker('networks/main', 'op-1'));
    expect((await provider.read('networks', created.id))?.fields['name']).toBe('main2');

    await provider.delete('networks', created.id, ctx());
    expect(await provider.read('networks', created.id)).toBeUndefined();
    expect(await oracle()).toEqual([]);
  });

  it('replays an idempotent create instead of creating twice', async () => {
    const net = await network();
    const inst = await provider.create(
      'instances',
      {
        name: 'web',
        network_id: net.id,
        size: 'small',
        image: 'debian-12',
        admin_password: 'pw-secret',
      },
      ctx({ marker: marker('instances/web') }),
    );
    expect(inst.fields).not.toHaveProperty('admin_password');
    const volume = { name: 'data', instance_id: inst.id, size: 10 };
    const w = ctx({ marker: marker('volumes/data', 'op-v'), idempotencyKey: 'op-v' });
    const first = await provider.create('volumes', volume, w);
    const again = await provider.create('volumes', volume, w);
    expect(again.id).toBe(first.id);
    expect((await oracle()).filter((o) => o.type === 'volumes')).toHaveLength(1);
  });

  it('uses the name as the id of a natural-key type', async () => {
    const b = await provider.create(
      'buckets',
      { name: 'logs', versioning: true },
      ctx({ marker: marker('buckets/logs') }),
    );
    expect(b.id).toBe('logs');
    expect(b.marker).toEqual(marker('buckets/logs'));
    expect((await provider.read('buckets', 'logs'))?.fields['versioning']).toBe(true);
    const e = await failure(provider.create('buckets', { name: 'logs' }, ctx()));
    expect(e.code).toBe('platform.refused');
    expect(e.message).toMatch(
      /^POST \/buckets was refused by the platform \(409 already_exists\): /,
    );
  });

  it('deletes a missing object successfully', async () => {
    await expect(provider.delete('networks', 'net-nope', ctx())).resolves.toBeUndefined();
    await expect(provider.delete('buckets', 'nope', ctx())).resolves.toBeUndefined();
  });

  it('finds an object by its marker, and by op when given', async () => {
    const a = await provider.create(
      'networks',
      { name: 'a', cidr: '10.1.0.0/16' },
      ctx({ marker: marker('networks/a', 'op-a') }),
    );
    await provider.create(
      'networks',
      { name: 'b', cidr: '10.2.0.0/16' },
      ctx({ marker: marker('networks/b') }),
    );
    await provider.create(
      'networks',
      { name: 'c', cidr: '10.3.0.0/16' },
      ctx({ marker: { ...marker('networks/a'), workspace: 'other' } }),
    );
    expect((await provider.find!('networks', marker('networks/a')))?.id).toBe(a.id);
    expect((await provider.find!('networks', marker('networks/a', 'op-a')))?.id).toBe(a.id);
    expect(await provider.find!('networks', marker('networks/a', 'op-old'))).toBeUndefined();
    expect(await provider.find!('networks', marker('networks/zzz'))).toBeUndefined();
  });

  it('refuses an in-place change of a create-only field with the platform reason and a hint', async () => {
    const net = await network();
    const e = await failure(
      provider.update('networks', net.id, { cidr: '10.9.0.0/16' }, net, ctx()),
    );
    expect(e.code).toBe('platform.refused');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(
      new RegExp(
        `^PATCH /networks/${net.id} was refused by the platform \\(409 immutable_field\\): .*cidr`,
      ),
    );
    expect(e.message).toContain(
      'if this change needs a replacement, declare the field create-only (x-tend-immutable) in an overlay; Tend never guesses a replace',
    );
    expect(e.hint).toContain('x-tend-immutable');
  });
});

describe('openapi provider on the sandbox: answers that are not the object', () => {
  /** A fetch that sends to the sandbox but rewrites what POST answers. */
  const rewritePost =
    (answer: (real: Response, sent: string) => Promise<Response>): typeof fetch =>
    async (input, init) => {
      const real = await fetch(input, init);
      const url = input instanceof Request ? input.url : input.toString();
      return init?.method === 'POST' && !url.includes('/lifecycle')
        ? answer(real, typeof init.body === 'string' ? init.body : '')
        : real;
    };
  const empty = rewritePost(async (real) => {
    await real.arrayBuffer();
    return new Response(null, { status: 201 });
  });

  it('reads back a natural-key object by its name when the answer is empty', async () => {
    const p = await variant(() => {}, { fetch: empty });
    const b = await p.create('buckets', { name: 'logs' }, ctx({ marker: marker('buckets/logs') }));
    expect(b).toMatchObject({
      id: 'logs',
      fields: { name: 'logs', created_at: expect.any(String) },
    });
  });

  it('finds a marker object by its marker when the answer is empty', async () => {
    const p = await variant(() => {}, { fetch: empty });
    const net = await p.create(
      'networks',
      { name: 'n', cidr: '10.5.0.0/16' },
      ctx({ marker: marker('networks/n', 'op-n') }),
    );
    expect(net.fields).toMatchObject({ name: 'n', status: expect.any(String) });
    expect(net.marker).toEqual(marker('networks/n', 'op-n'));
  });

  it('reports a create it cannot confirm as outcome unknown', async () => {
    const p = await variant(() => {}, { fetch: empty });
    sb.sandbox.setFaults({ eventualConsistencyMs: 60_000 });
    const e = await failure(
      p.create(
        'networks',
        { name: 'n', cidr: '10.5.0.0/16' },
        ctx({ marker: marker('networks/n') }),
      ),
    );
    expect(e).toMatchObject({
      code: 'provider.create_unconfirmed',
      outcomeUnknown: true,
      retryable: true,
    });
    expect(e.message).toBe(
      'POST /networks succeeded but answered with no object carrying id, and the object could not be found; the journal will look it up',
    );
  });

  it('never keeps a sensitive field in an observed object, even when the platform echoes it', async () => {
    const echo = rewritePost(async (real, sent) => {
      const body = {
        ...((await real.json()) as object),
        admin_password: (JSON.parse(sent) as { admin_password?: string }).admin_password,
      };
      return new Response(JSON.stringify(body), {
        status: real.status,
        headers: { 'content-type': 'application/json' },
      });
    });
    const p = await variant(() => {}, { fetch: echo });
    const net = await p.create(
      'networks',
      { name: 'n', cidr: '10.5.0.0/16' },
      ctx({ marker: marker('networks/n') }),
    );
    const inst = await p.create(
      'instances',
      {
        name: 'web',
        network_id: net.id,
        size: 'small',
        image: 'debian-12',
        admin_password: 'pw-secret',
      },
      ctx({ marker: marker('instances/web') }),
    );
    expect(inst.fields['name']).toBe('web');
    expect(JSON.stringify(inst)).not.toContain('pw-secret');
  });
});

describe('openapi provider on the sandbox: lifecycle', () => {
  it('asks the platform: a volume grows in place and is replaced to shrink', async () => {
    const net = await network();
    const inst = await provider.create(
      'instances',
      { name: 'web', network_id: net.id, size: 'small', image: 'debian-12' },
      ctx({ marker: marker('instances/web') }),
    );
    const vol = await provider.create(
      'volumes',
      { name: 'data', instance_id: inst.id, size: 20 },
      ctx({ marker: marker('volumes/data') }),
    );
    expect(await provider.evaluate('volumes', vol, { size: 40 })).toMatchObject({
      action: 'update',
      fields: ['size'],
      source: 'platform',
    });
    expect(await provider.evaluate('volumes', vol, { size: 10 })).toMatchObject({
      action: 'replace',
      fields: ['size'],
      source: 'platform',
      reason: expect.any(String),
    });
    expect(await provider.evaluate('volumes', vol, { size: 20 })).toMatchObject({
      action: 'none',
      source: 'platform',
    });
    // Declared tags compare key by key: the marker tags the object carries are not a change.
    expect(await provider.evaluate('volumes', vol, { tags: {} })).toMatchObject({ action: 'none' });
    // And the platform refuses what it said needs a replacement.
    const e = await failure(provider.update('volumes', vol.id, { size: 10 }, vol, ctx()));
    expect(e.code).toBe('platform.refused');
    expect(e.message).toContain('409 shrink_not_supported');
  });

  it('falls back to annotations when the document has no lifecycle endpoint', async () => {
    const p = await variant((d) => delete d['x-tend-lifecycle']);
    expect(p.describe().types.every((t) => t.lifecycle === 'annotations')).toBe(true);
    const net = await network();
    expect(await p.evaluate('networks', net, { cidr: '10.9.0.0/16', name: 'x' })).toEqual({
      action: 'replace',
      fields: ['cidr'],
      source: 'annotation',
      reason: 'cidr is create-only (annotated in the OpenAPI document)',
    });
    expect(
      await p.evaluate('networks', net, { name: 'x', tags: { 'tend.workspace': 'ws' } }),
    ).toEqual({
      action: 'update',
      fields: ['name'],
      source: 'default',
    });
    expect(await p.evaluate('networks', net, { name: 'main', cidr: '10.0.0.0/16' })).toEqual({
      action: 'none',
      fields: [],
      source: 'default',
    });
  });

  it('never compares sensitive fields', async () => {
    const p = await variant((d) => delete d['x-tend-lifecycle']);
    const net = await network();
    const inst = await p.create(
      'instances',
      { name: 'web', network_id: net.id, size: 'small', image: 'debian-12', admin_password: 'pw' },
      ctx({ marker: marker('instances/web') }),
    );
    expect(await p.evaluate('instances', inst, { admin_password: 'other' })).toMatchObject({
      action: 'none',
    });
  });
});

describe('openapi provider on the sandbox: PUT', () => {
  it('updates with PUT when there is no PATCH: current writable fields overlaid by desired', async () => {
    const p = await variant((d) => {
      for (const [path, item] of Object.entries(
        d['paths'] as Record<string, Record<string, unknown>>,
      )) {
        if (path.includes('{')) delete item['patch'];
      }
    });
    expect(p.types.find((t) => t.info.name === 'services')?.operations.update?.method).toBe('PUT');
    const svc = await p.create(
      'services',
      { name: 'api', image: 'nginx:1', replicas: 2, tags: { team: 'web' } },
      ctx({ marker: marker('services/api', 'op-s') }),
    );
    const updated = await p.update(
      'services',
      svc.id,
      { replicas: 3 },
      svc,
      ctx({ marker: marker('services/api') }),
    );
    expect(updated.fields).toMatchObject({
      name: 'api',
      image: 'nginx:1',
      replicas: 3,
      tags: { team: 'web', 'tend.op': 'op-s', 'tend.address': 'sb.services/api' },
    });
  });
});

describe('openapi provider on the sandbox: audit feed', () => {
  it('returns attributed changes with the actor, intent and motivation it sent', async () => {
    const start = await provider.changes!(undefined);
    expect(start.changes).toEqual([]);
    const net = await network();
    await provider.update('networks', net.id, { name: 'renamed' }, net, ctx());
    await provider.delete('networks', net.id, ctx());
    const page = await provider.changes!(start.cursor);
    expect(
      page.changes.map((c) => [c.action, c.type, c.id, c.actor, c.intent, c.motivation]),
    ).toEqual([
      ['create', 'networks', net.id, 'tend', 'availability', 'incident INC-7'],
      ['update', 'networks', net.id, 'tend', 'availability', 'incident INC-7'],
      ['delete', 'networks', net.id, 'tend', 'availability', 'incident INC-7'],
    ]);
    expect(page.changes[0]).not.toHaveProperty('before');
    expect(page.changes[1]).toMatchObject({ before: { name: 'main' }, after: { name: 'renamed' } });
    expect(page.cursor).toBe(page.changes[2]!.cursor);
    const none = await provider.changes!(page.cursor, { waitMs: 30 });
    expect(none).toEqual({ changes: [], cursor: page.cursor });
  });

  it('long-polls until news arrives', async () => {
    const start = await provider.changes!(undefined);
    const polling = provider.changes!(start.cursor, { waitMs: 5_000 });
    await network();
    const page = await polling;
    expect(page.changes.map((c) => c.action)).toEqual(['create']);
  });

  it('omits the attribution headers that are empty', () => {
    expect(actorHeaders({ actor: 'hpa', intent: '', motivation: '  ' })).toEqual({
      'X-Tend-Actor': 'hpa',
    });
    expect(actorHeaders({ actor: 'ops', motivation: 'café — incident\n' })).toEqual({
      'X-Tend-Actor': 'ops',
      'X-Tend-Motivation': encodeURIComponent('café — incident\n'),
    });
  });
});

describe('openapi provider on the sandbox: faults', () => {
  it('reports a create whose answer never came as outcome unknown; the object is found by marker', async () => {
    const p = await variant(() => {}, { timeoutMs: 300 });
    sb.sandbox.setFaults({ timeoutAfterSuccessRate: 1, methods: ['POST'] });
    const e = await failure(
      p.create(
        'networks',
        { name: 'lost', cidr: '10.4.0.0/16' },
        ctx({ marker: marker('networks/lost', 'op-l'), idempotencyKey: 'op-l' }),
      ),
    );
    expect(e).toMatchObject({
      code: 'http.outcome_unknown',
      outcomeUnknown: true,
      retryable: true,
    });
    sb.sandbox.setFaults({ timeoutAfterSuccessRate: 0 });
    expect((await p.find!('networks', marker('networks/lost', 'op-l')))?.fields['name']).toBe(
      'lost',
    );
    expect(sb.sandbox.stats().creates).toBe(1);
  });

  it('retries a throttled read after Retry-After and gives up with the wait', async () => {
    // Sleeping moves the clock: the Retry-After pauses are exact.
    let now = 0;
    const delays: number[] = [];
    const sleep = (ms: number) => (delays.push(ms), (now += ms), Promise.resolve());
    const p = await variant(() => {}, { sleep, clock: () => now });
    sb.sandbox.setFaults({ rate429: 1, retryAfterSeconds: 2, methods: ['GET'] });
    const e = await failure(p.list('networks'));
    expect(e).toMatchObject({
      code: 'platform.throttled',
      retryable: true,
      retryAfterSeconds: 2,
      status: 429,
    });
    expect(e.message).toMatch(/^GET \/networks: throttled by the platform \(429/);
    expect(delays).toEqual([2000, 2000, 2000]);
  });

  it('retries a keyed create through 5xx without duplicating it', async () => {
    const p = await variant(() => {}, { sleep: () => Promise.resolve(), maxAttempts: 8 });
    sb.sandbox.setFaults({ errorRate: 0.5, seed: 7, methods: ['POST'] });
    for (let i = 0; i < 5; i++) {
      await p.create(
        'networks',
        { name: `n${i}`, cidr: `10.${i}.0.0/16` },
        ctx({ marker: marker(`networks/n${i}`), idempotencyKey: `op-${i}` }),
      );
    }
    expect(sb.sandbox.stats().faults.error).toBeGreaterThan(0);
    expect((await oracle()).filter((o) => o.type === 'networks')).toHaveLength(5);
  });

  it('returns the created object even when reads do not show it yet', async () => {
    sb.sandbox.setFaults({ eventualConsistencyMs: 60_000 });
    const net = await network('late');
    expect(net.fields['name']).toBe('late');
    expect(await provider.read('networks', net.id)).toBeUndefined();
  });
});

describe('openapi provider: auth', () => {
  let locked: RunningSandbox;
  beforeAll(async () => {
    locked = await startSandbox({ port: 0, apiKey: 'k-secret' });
  });
  afterAll(async () => {
    await locked.close();
  });

  it('sends the auth header and never shows it in errors', async () => {
    const base = {
      name: 'sb',
      spec: `${locked.url}/openapi.json`,
      endpoint: locked.url,
      workspace: 'ws',
    };
    const ok = await loadOpenApiProvider({
      ...base,
      auth: { header: 'X-API-Key', value: 'k-secret' },
    });
    expect(await ok.list('networks')).toEqual([]);
    const wrong = await loadOpenApiProvider({
      ...base,
      auth: { header: 'X-API-Key', value: 'k-wrong' },
    });
    const e = await failure(wrong.list('networks'));
    expect(e.code).toBe('platform.unauthorized');
    expect(e.message).toBe(
      "GET /networks: not authorized (401 unauthorized): missing or wrong X-API-Key header; check the provider's auth header and the secret it reads",
    );
    expect(JSON.stringify({ ...e.toJSON(), hint: e.hint })).not.toContain('k-wrong');
  });
});

describe('openapi provider on the sandbox: object versions', () => {
  // A platform reports an object's version through a field the document names with
  // x-tend-version-field, or through the ETag of a read. The sandbox has neither, so these cases add
  // them on the wire: a revision field in every network body, an ETag on every item GET.
  const onTheWire: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!url.pathname.startsWith('/networks') || (init?.method ?? 'GET') !== 'GET' || !res.ok) {
      return res;
    }
    const body = await res.json();
    const revise = (o: unknown) =>
      o !== null && typeof o === 'object'
        ? { ...o, revision: `r-${String((o as { cidr?: string }).cidr)}` }
        : o;
    const headers = new Headers(res.headers);
    headers.delete('content-length');
    const item = /^\/networks\/[^/]+$/.test(url.pathname);
    if (item) headers.set('etag', 'W/"e-1"');
    const revised = Array.isArray(body) ? body.map(revise) : item ? revise(body) : body;
    return new Response(JSON.stringify(revised), { status: res.status, headers });
  };
  const declareRevision = (doc: Record<string, unknown>, annotation: unknown = 'revision') => {
    const net = (doc['components'] as { schemas: Record<string, Record<string, unknown>> }).schemas[
      'Network'
    ]!;
    (net['properties'] as Record<string, unknown>)['revision'] = { type: 'string', readOnly: true };
    net['x-tend-version-field'] = annotation;
  };

  const CASES: {
    name: string;
    reason: string;
    declare: boolean;
    wire: boolean;
    want: { list: string | undefined; read: string | undefined };
  }[] = [
    {
      name: 'declared field',
      reason: 'x-tend-version-field names the field: list and read both report it',
      declare: true,
      wire: true,
      want: { list: 'r-10.0.0.0/16', read: 'r-10.0.0.0/16' },
    },
    {
      name: 'ETag only',
      reason: 'without a declared field a read reports its ETag; a list has no per-object ETag',
      declare: false,
      wire: true,
      want: { list: undefined, read: 'W/"e-1"' },
    },
    {
      name: 'neither',
      reason: 'a field called revision is not guessed to be a version, and no ETag means none',
      declare: false,
      wire: false,
      want: { list: undefined, read: undefined },
    },
  ];
  it.each(CASES)('$name: $reason', async ({ declare, wire, want }) => {
    const p = await variant(
      (doc) => (declare ? declareRevision(doc) : undefined),
      wire ? { fetch: onTheWire } : {},
    );
    const created = await network();
    const [listed] = await p.list('networks');
    const read = await p.read('networks', created.id);
    expect({ list: listed?.version, read: read?.version }).toEqual(want);
  });

  it('a malformed or dangling x-tend-version-field is a warning, never a guess', async () => {
    const bad = await variant((doc) => declareRevision(doc, 42));
    expect(bad.describe().warnings).toContain(
      'networks: x-tend-version-field must be a field name or dotted path, not 42; ignored',
    );
    const dangling = await variant((doc) => declareRevision(doc, 'meta.resourceVersion'));
    expect(dangling.describe().warnings).toContain(
      'networks: x-tend-version-field names meta.resourceVersion, but the read schema has no field meta; ignored',
    );
    expect(dangling.types.find((t) => t.info.name === 'networks')!.versionField).toBeUndefined();
  });
});

describe('openapi provider: keys that could reach a prototype (issue 10)', () => {
  it('refuses a document holding one, naming where', async () => {
    const err = await failure(
      variant((doc) => {
        const schemas = (doc['components'] as Record<string, Record<string, unknown>>)['schemas']!;
        schemas['Evil'] = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
      }),
    );
    expect(err.code).toBe('input.forbidden_key');
    expect(err.message).toBe(
      "the key `__proto__` at $.components.schemas.Evil.__proto__ in the OpenAPI document variant is refused: it could reach an object's prototype",
    );
  });

  it('refuses a platform answer holding one, before anything reads it', async () => {
    const answer =
      '{"items": [{"id": "net-1", "name": "a", "constructor": {"prototype": {"polluted": true}}}]}';
    const p = await variant(() => {}, {
      fetch: () =>
        Promise.resolve(
          new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } }),
        ),
    });
    const err = await failure(p.list('networks'));
    expect(err.code).toBe('input.forbidden_key');
    expect(err.message).toBe(
      "the key `constructor` at $.items[0].constructor in the answer to GET /networks is refused: it could reach an object's prototype",
    );
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
