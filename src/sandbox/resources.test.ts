import { beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, type SandboxOptions } from './app.js';
import { sandboxClient, type SandboxClient, type SandboxReply } from './client.js';

function fresh(options: SandboxOptions = {}) {
  const sandbox = createSandbox(options);
  return { sandbox, api: sandboxClient(sandbox.app) };
}

async function created(
  api: SandboxClient,
  path: string,
  body: unknown,
): Promise<SandboxReply['body']> {
  const reply = await api.post(path, body);
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body;
}

/** A network and an instance on it, for types that reference them. */
async function base(api: SandboxClient) {
  const network = await created(api, '/networks', { name: 'main', cidr: '10.0.0.0/24' });
  const instance = await created(api, '/instances', {
    name: 'web',
    network_id: network.id,
    image: 'debian-12',
  });
  return { network: network.id as string, instance: instance.id as string };
}

type Deps = Awaited<ReturnType<typeof base>>;

describe('CRUD for every type', () => {
  const cases: {
    type: string;
    reason: string;
    create: (d: Deps) => Record<string, unknown>;
    expectCreated: Record<string, unknown>;
    idPattern: RegExp;
    patch: Record<string, unknown>;
  }[] = [
    {
      type: 'networks',
      reason: 'server id, status available',
      create: () => ({ name: 'n2', cidr: '10.9.0.0/16', tags: { env: 'dev' } }),
      expectCreated: { name: 'n2', cidr: '10.9.0.0/16', tags: { env: 'dev' }, status: 'available' },
      idPattern: /^net-[0-9a-f]{8}$/,
      patch: { name: 'renamed' },
    },
    {
      type: 'instances',
      reason: 'size defaults to small; private ip from the network block',
      create: (d) => ({ name: 'db', network_id: d.network, image: 'debian-12' }),
      expectCreated: { size: 'small', status: 'running', private_ip: '10.0.0.2' },
      idPattern: /^i-[0-9a-f]{8}$/,
      patch: { size: 'large' },
    },
    {
      type: 'volumes',
      reason: 'attached to an instance',
      create: (d) => ({ name: 'data', instance_id: d.instance, size: 10 }),
      expectCreated: { size: 10, status: 'attached' },
      idPattern: /^vol-[0-9a-f]{8}$/,
      patch: { size: 20 },
    },
    {
      type: 'buckets',
      reason: 'the name is the identity; versioning defaults to false',
      create: () => ({ name: 'logs.example' }),
      expectCreated: { name: 'logs.example', versioning: false },
      idPattern: /^logs\.example$/,
      patch: { versioning: true },
    },
    {
      type: 'services',
      reason: 'replicas default to 1, status running',
      create: (d) => ({ name: 'api', image: 'nginx:1', network_id: d.network }),
      expectCreated: { replicas: 1, status: 'running' },
      idPattern: /^svc-[0-9a-f]{8}$/,
      patch: { replicas: 3 },
    },
  ];

  for (const c of cases) {
    it(`${c.type}: create, list, read, patch, put, delete (${c.reason})`, async () => {
      const { api } = fresh();
      const deps = await base(api);
      const object = await created(api, `/${c.type}`, c.create(deps));
      const id = (c.type === 'buckets' ? object.name : object.id) as string;
      expect(id).toMatch(c.idPattern);
      expect(object).toMatchObject(c.expectCreated);
      expect(Date.parse(object.created_at)).not.toBeNaN();

      const list = await api.get(`/${c.type}`);
      expect(list.status).toBe(200);
      expect(list.body).toContainEqual(object);
      expect((await api.get(`/${c.type}/${id}`)).body).toEqual(object);

      const patched = await api.patch(`/${c.type}/${id}`, c.patch);
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual({ ...object, ...c.patch });

      // GET-modify-PUT: read-only fields sent back are ignored.
      const put = await api.put(`/${c.type}/${id}`, { ...patched.body, tags: { team: 'x' } });
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ ...patched.body, tags: { team: 'x' } });

      expect((await api.delete(`/${c.type}/${id}`)).status).toBe(204);
      const gone = await api.get(`/${c.type}/${id}`);
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe('not_found');
      expect((await api.delete(`/${c.type}/${id}`)).status).toBe(404);
    });
  }

  it('PUT resets omitted optional fields to their defaults and removes omitted tags', async () => {
    const { api } = fresh();
    const { network } = await base(api);
    const svc = await created(api, '/services', {
      name: 'a',
      image: 'x',
      replicas: 5,
      network_id: network,
      tags: { a: 'b' },
    });
    const put = await api.put(`/services/${svc.id}`, { name: 'a', image: 'y' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      ...svc,
      image: 'y',
      replicas: 1,
      network_id: undefined,
      tags: undefined,
    });
    expect(put.body).not.toHaveProperty('network_id');
  });

  it('PATCH replaces tags as a whole and ignores read-only fields', async () => {
    const { api } = fresh();
    const net = await created(api, '/networks', {
      name: 'n',
      cidr: '10.0.0.0/24',
      tags: { a: '1', b: '2' },
    });
    const reply = await api.patch(`/networks/${net.id}`, {
      tags: { c: '3' },
      id: 'net-ffffffff',
      status: 'gone',
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...net, tags: { c: '3' } });
  });

  it('services with zero replicas are stopped', async () => {
    const { api } = fresh();
    const svc = await created(api, '/services', { name: 'a', image: 'x', replicas: 0 });
    expect(svc.status).toBe('stopped');
    expect((await api.patch(`/services/${svc.id}`, { replicas: 2 })).body.status).toBe('running');
  });

  it('allocates private IPs from the network block and refuses when it is full', async () => {
    const { api } = fresh();
    const net = await created(api, '/networks', { name: 'tiny', cidr: '192.168.7.0/30' });
    const one = { name: 'i', network_id: net.id, image: 'x' };
    expect((await created(api, '/instances', one)).private_ip).toBe('192.168.7.1');
    expect((await created(api, '/instances', one)).private_ip).toBe('192.168.7.2');
    const full = await api.post('/instances', one);
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ code: 'network_full', field: 'network_id' });
    expect(full.body.message).toBe(
      `network ${net.id} has no free address left: use a network with a larger block`,
    );
  });

  it('moving an instance to another network allocates an address there', async () => {
    const { api } = fresh();
    const { instance } = await base(api);
    const other = await created(api, '/networks', { name: 'b', cidr: '172.16.0.0/16' });
    const moved = await api.patch(`/instances/${instance}`, { network_id: other.id });
    expect(moved.body.private_ip).toBe('172.16.0.1');
  });
});

describe('request validation', () => {
  let api: SandboxClient;
  let deps: Deps;
  beforeEach(async () => {
    api = fresh().api;
    deps = await base(api);
  });

  const cases: {
    name: string;
    reason: string;
    method?: 'POST' | 'PATCH';
    path: string | ((d: Deps) => string);
    body: unknown;
    field?: string;
    message: unknown;
  }[] = [
    {
      name: 'unknown field',
      reason: 'request schemas have additionalProperties: false',
      path: '/networks',
      body: { name: 'n', cidr: '10.0.0.0/8', colour: 'red' },
      field: 'colour',
      message: 'unknown field "colour": networks has no such field',
    },
    {
      name: 'unknown field in a patch',
      reason: 'patches are checked too',
      method: 'PATCH',
      path: (d) => `/networks/${d.network}`,
      body: { mtu: 9000 },
      field: 'mtu',
      message: 'unknown field "mtu": networks has no such field',
    },
    {
      name: 'enum',
      reason: 'size is small, medium or large',
      path: '/instances',
      body: (d: Deps) => ({ name: 'i', network_id: d.network, image: 'x', size: 'huge' }),
      field: 'size',
      message: 'size must be one of "small", "medium", "large"',
    },
    {
      name: 'missing required',
      reason: 'cidr is required',
      path: '/networks',
      body: { name: 'n' },
      field: 'cidr',
      message: 'missing required field "cidr"',
    },
    {
      name: 'bucket name pattern',
      reason: 'upper case and underscores are not allowed',
      path: '/buckets',
      body: { name: 'Bad_Name' },
      field: 'name',
      message: 'name must match the pattern ^[a-z0-9][a-z0-9.-]{2,62}$',
    },
    {
      name: 'cidr pattern',
      reason: 'a prefix above 32 is not IPv4',
      path: '/networks',
      body: { name: 'n', cidr: '10.0.0.0/33' },
      field: 'cidr',
      message: expect.stringMatching(/^cidr must match the pattern /),
    },
    {
      name: 'integer type',
      reason: 'size is an integer, not a string',
      path: '/volumes',
      body: (d: Deps) => ({ name: 'v', instance_id: d.instance, size: '10' }),
      field: 'size',
      message: 'size must be integer',
    },
    {
      name: 'maximum',
      reason: 'volumes are at most 16384 GiB',
      path: '/volumes',
      body: (d: Deps) => ({ name: 'v', instance_id: d.instance, size: 20000 }),
      field: 'size',
      message: 'size must be <= 16384',
    },
    {
      name: 'name length',
      reason: 'names are 1 to 63 characters',
      path: '/networks',
      body: { name: '', cidr: '10.0.0.0/8' },
      field: 'name',
      message: 'name must NOT have fewer than 1 characters',
    },
    {
      name: 'too long, quoted back',
      reason: 'like many platforms, the sandbox echoes a value that is too long, secret or not',
      path: '/instances',
      body: (d: Deps) => ({
        name: 'i',
        network_id: d.network,
        image: 'x',
        admin_password: `${'p'.repeat(72)}"!`,
      }),
      field: 'admin_password',
      message: `admin_password must be at most 72 characters, got ${JSON.stringify(`${'p'.repeat(72)}"!`)}`,
    },
    {
      name: 'tag values are strings',
      reason: 'tags map strings to strings',
      path: '/networks',
      body: { name: 'n', cidr: '10.0.0.0/8', tags: { owner: 7 } },
      field: 'tags.owner',
      message: 'tags.owner must be string',
    },
    {
      name: 'not JSON',
      reason: 'bodies are JSON',
      path: '/networks',
      body: '{name:',
      message: 'the request body is not valid JSON',
    },
    {
      name: 'not an object',
      reason: 'bodies are objects',
      path: '/networks',
      body: [{ name: 'n' }],
      message: 'the request body must be a JSON object',
    },
  ];

  for (const c of cases) {
    it(`${c.name} → 400 (${c.reason})`, async () => {
      const path = typeof c.path === 'function' ? c.path(deps) : c.path;
      const body = typeof c.body === 'function' ? (c.body as (d: Deps) => unknown)(deps) : c.body;
      const reply = await api.call(c.method ?? 'POST', path, body);
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({
        code: 'invalid',
        message: c.message,
        ...(c.field ? { field: c.field } : {}),
      });
    });
  }

  it('refuses an empty Idempotency-Key', async () => {
    const reply = await api.post(
      '/networks',
      { name: 'n', cidr: '10.0.0.0/8' },
      { headers: { 'Idempotency-Key': '' } },
    );
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe('Idempotency-Key must be 1 to 255 characters');
  });

  it('answers unknown routes with a JSON 404', async () => {
    const reply = await api.get('/databases');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ code: 'not_found', message: 'no route GET /databases' });
  });
});

describe('references and dependents', () => {
  it.each([
    {
      name: 'instance on a missing network',
      path: '/instances',
      body: { name: 'i', network_id: 'net-00000000', image: 'x' },
      field: 'network_id',
      message: 'network_id: no network "net-00000000" exists: create it first or fix the id',
    },
    {
      name: 'volume on a missing instance',
      path: '/volumes',
      body: { name: 'v', instance_id: 'i-00000000', size: 1 },
      field: 'instance_id',
      message: 'instance_id: no instance "i-00000000" exists: create it first or fix the id',
    },
    {
      name: 'service on a missing network',
      path: '/services',
      body: { name: 's', image: 'x', network_id: 'net-00000000' },
      field: 'network_id',
      message: 'network_id: no network "net-00000000" exists: create it first or fix the id',
    },
  ])('$name → 422 invalid_reference', async ({ path, body, field, message }) => {
    const { api, sandbox } = fresh();
    const reply = await api.post(path, body);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({ code: 'invalid_reference', field, message });
    expect(sandbox.state.all()).toEqual([]);
  });

  it('refuses a patch pointing at a missing network', async () => {
    const { api } = fresh();
    const { instance } = await base(api);
    const reply = await api.patch(`/instances/${instance}`, { network_id: 'net-12345678' });
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe('invalid_reference');
  });

  it('refuses to delete what others reference, then deletes once they are gone', async () => {
    const { api } = fresh();
    const { network, instance } = await base(api);
    const volume = await created(api, '/volumes', { name: 'v', instance_id: instance, size: 1 });
    const service = await created(api, '/services', { name: 's', image: 'x', network_id: network });

    const net = await api.delete(`/networks/${network}`);
    expect(net.status).toBe(409);
    expect(net.body).toEqual({
      code: 'has_dependents',
      message: `network ${network} is still used by instances/${instance}, services/${service.id}: delete or move those first`,
    });
    const inst = await api.delete(`/instances/${instance}`);
    expect(inst.status).toBe(409);
    expect(inst.body.message).toContain(`volumes/${volume.id}`);

    expect((await api.delete(`/volumes/${volume.id}`)).status).toBe(204);
    expect((await api.delete(`/instances/${instance}`)).status).toBe(204);
    expect((await api.delete(`/services/${service.id}`)).status).toBe(204);
    expect((await api.delete(`/networks/${network}`)).status).toBe(204);
  });

  it('refuses a second bucket with the same name', async () => {
    const { api } = fresh();
    await created(api, '/buckets', { name: 'assets' });
    const again = await api.post('/buckets', { name: 'assets', versioning: true });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      code: 'already_exists',
      field: 'name',
      message: 'a bucket named "assets" already exists: choose another name',
    });
  });
});

describe('changes that need a replace are refused in place', () => {
  it('create-only fields: cidr by PATCH, image by PUT, bucket name by PUT', async () => {
    const { api } = fresh();
    const { network, instance } = await base(api);
    const cidr = await api.patch(`/networks/${network}`, { cidr: '10.1.0.0/24' });
    expect(cidr.status).toBe(409);
    expect(cidr.body).toEqual({
      code: 'immutable_field',
      field: 'cidr',
      message: 'cidr cannot change after create: replace the network',
    });
    // The same value is not a change.
    expect((await api.patch(`/networks/${network}`, { cidr: '10.0.0.0/24' })).status).toBe(200);

    const current = (await api.get(`/instances/${instance}`)).body;
    const image = await api.put(`/instances/${instance}`, { ...current, image: 'ubuntu' });
    expect(image.status).toBe(409);
    expect(image.body).toEqual({
      code: 'immutable_field',
      field: 'image',
      message: 'image cannot change after create: replace the instance',
    });

    await created(api, '/buckets', { name: 'b-one' });
    const rename = await api.put('/buckets/b-one', { name: 'b-two' });
    expect(rename.status).toBe(409);
    expect(rename.body.code).toBe('immutable_field');
  });

  it('volumes grow in place but never shrink, by PATCH or PUT', async () => {
    const { api } = fresh();
    const { instance } = await base(api);
    const vol = await created(api, '/volumes', { name: 'v', instance_id: instance, size: 10 });
    const shrink = {
      code: 'shrink_not_supported',
      field: 'size',
      message: 'volumes cannot shrink in place: replace the volume',
    };
    const patch = await api.patch(`/volumes/${vol.id}`, { size: 5 });
    expect(patch.status).toBe(409);
    expect(patch.body).toEqual(shrink);
    const put = await api.put(`/volumes/${vol.id}`, { ...vol, size: 5 });
    expect(put.status).toBe(409);
    expect(put.body).toEqual(shrink);
    const grow = await api.patch(`/volumes/${vol.id}`, { size: 50 });
    expect(grow.status).toBe(200);
    expect(grow.body.size).toBe(50);
  });
});

describe('idempotency keys', () => {
  const body = { name: 'n', cidr: '10.0.0.0/16' };
  const key = { headers: { 'Idempotency-Key': 'op-1' } };

  it('a replay returns the first object and creates nothing', async () => {
    const { api, sandbox } = fresh();
    const first = await api.post('/networks', body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    const replay = await api.post('/networks', body, key);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(sandbox.state.list('networks')).toHaveLength(1);
    // Without a key, the same body is a new object.
    expect((await api.post('/networks', body)).body.id).not.toBe(first.body.id);
  });

  it('the same key with another body or type → 422 idempotency_key_reused', async () => {
    const { api, sandbox } = fresh();
    await api.post('/networks', body, key);
    const message =
      'Idempotency-Key "op-1" was already used for a different request: use a new key for a new create';
    const other = await api.post('/networks', { ...body, name: 'm' }, key);
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ code: 'idempotency_key_reused', message });
    const otherType = await api.post('/buckets', { name: 'abc' }, key);
    expect(otherType.status).toBe(422);
    expect(sandbox.state.all()).toHaveLength(1);
  });

  it('a key whose create failed can be used again', async () => {
    const { api } = fresh();
    const instance = { name: 'i', network_id: 'net-00000000', image: 'x' };
    expect((await api.post('/instances', instance, key)).status).toBe(422);
    const net = await created(api, '/networks', body);
    expect((await api.post('/instances', { ...instance, network_id: net.id }, key)).status).toBe(
      201,
    );
  });
});

describe('secrets', () => {
  it('admin_password is accepted but never returned, audited or stored in clear', async () => {
    const { api, sandbox } = fresh();
    const { network } = await base(api);
    const secret = 'hunter2-very-secret';
    const texts: string[] = [];
    const record = <T extends { body: unknown }>(reply: T): T => {
      texts.push(JSON.stringify(reply.body));
      return reply;
    };
    const made = record(
      await api.post('/instances', {
        name: 'db',
        network_id: network,
        image: 'x',
        admin_password: secret,
      }),
    );
    expect(made.status).toBe(201);
    expect(made.body).not.toHaveProperty('admin_password');
    const id = made.body.id as string;
    record(await api.get(`/instances/${id}`));
    record(await api.get('/instances'));
    record(await api.patch(`/instances/${id}`, { admin_password: `${secret}-2` }));
    record(await api.put(`/instances/${id}`, { name: 'db', network_id: network, image: 'x' }));
    record(await api.get('/audit'));
    record(await api.get('/_sandbox/objects'));
    texts.push(JSON.stringify(sandbox.state.snapshot()));
    for (const text of texts) expect(text).not.toContain(secret);

    const stored = sandbox.state.get('instances', id)?.fields.admin_password;
    expect(stored).toMatch(/^sha256:[0-9a-f]{64}$/);
    const audit = (await api.get('/audit')).body.entries as { after: object | null }[];
    expect(audit.filter((e) => e.after && 'admin_password' in e.after)).toEqual([]);
  });

  it('a rotation is an update; a PUT without the password keeps it', async () => {
    const { api, sandbox } = fresh();
    const { network } = await base(api);
    const inst = await created(api, '/instances', {
      name: 'db',
      network_id: network,
      image: 'x',
      admin_password: 'a',
    });
    const digest = () => sandbox.state.get('instances', inst.id)?.fields.admin_password;
    const first = digest();
    await api.patch(`/instances/${inst.id}`, { admin_password: 'b' });
    const second = digest();
    expect(second).not.toBe(first);
    await api.put(`/instances/${inst.id}`, inst);
    expect(digest()).toBe(second);
  });
});

describe('auth', () => {
  const apiKey = 'k3y-that-must-not-leak';

  const key = { headers: { 'X-API-Key': apiKey } };

  it('API routes need X-API-Key; the document does not', async () => {
    const { api } = fresh({ apiKey });
    const none = await api.get('/networks');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      code: 'unauthorized',
      message: 'missing or wrong X-API-Key header',
    });
    expect((await api.get('/networks', { headers: { 'X-API-Key': 'wrong' } })).status).toBe(401);
    expect((await api.get('/networks', key)).status).toBe(200);
    expect((await api.get('/openapi.json')).status).toBe(200);
    expect((await api.get('/_sandbox/stats', key)).body.byStatus).toEqual({ '401': 2, '200': 1 });
  });

  it('the /_sandbox/* admin routes need it too, and do nothing without it', async () => {
    const { api, sandbox } = fresh({ apiKey });
    expect((await api.post('/networks', { name: 'n', cidr: '10.0.0.0/24' }, key)).status).toBe(201);
    const wrong = { headers: { 'X-API-Key': 'wrong' } };
    for (const [method, path, body] of [
      ['GET', '/_sandbox/objects', undefined],
      ['GET', '/_sandbox/stats', undefined],
      ['GET', '/_sandbox/faults', undefined],
      ['PUT', '/_sandbox/faults', { errorRate: 1 }],
      ['POST', '/_sandbox/reset', undefined],
    ] as const) {
      for (const options of [{}, wrong]) {
        const reply = await api.call(method, path, body, options);
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.body).toEqual({
          code: 'unauthorized',
          message: 'missing or wrong X-API-Key header',
        });
      }
    }
    expect(sandbox.state.list('networks')).toHaveLength(1);
    expect(sandbox.getFaults().errorRate).toBe(0);
    expect((await api.get('/_sandbox/objects', key)).body.objects).toHaveLength(1);
    expect((await api.post('/_sandbox/reset', undefined, key)).status).toBe(204);
    expect(sandbox.state.list('networks')).toHaveLength(0);
  });

  it('without an api key nothing is required', async () => {
    const { api } = fresh();
    expect((await api.get('/networks')).status).toBe(200);
  });
});

describe('eventual consistency (fake clock)', () => {
  it('a new object is missing from reads for the window, yet can be patched and deleted', async () => {
    let now = 1_000_000;
    const { api, sandbox } = fresh({ now: () => now, faults: { eventualConsistencyMs: 5000 } });
    const net = await created(api, '/networks', { name: 'n', cidr: '10.0.0.0/24' });
    expect(net.created_at).toBe(new Date(1_000_000).toISOString());
    expect((await api.get(`/networks/${net.id}`)).status).toBe(404);
    expect((await api.get('/networks')).body).toEqual([]);
    expect((await api.get('/_sandbox/objects')).body.objects).toMatchObject([
      { id: net.id, visible: false },
    ]);
    expect((await api.patch(`/networks/${net.id}`, { name: 'm' })).status).toBe(200);

    now += 4999;
    expect((await api.get(`/networks/${net.id}`)).status).toBe(404);
    now += 1;
    expect((await api.get(`/networks/${net.id}`)).body.name).toBe('m');
    expect((await api.get('/networks')).body).toHaveLength(1);

    const late = await created(api, '/networks', { name: 'late', cidr: '10.1.0.0/24' });
    expect((await api.delete(`/networks/${late.id}`)).status).toBe(204);
    expect(sandbox.state.list('networks')).toHaveLength(1);
  });
});
