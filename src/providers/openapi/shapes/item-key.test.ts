import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes, type DerivedType } from '../derive-types.js';
import { inspectOpenApi } from '../inspect.js';
import { compositeItemPath, itemKeyParts } from './item-key.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { composeId, splitId } from '../object-ids.js';
import { createOpenApiProvider } from '../openapi-provider.js';
import { pickListedByKey } from './read-by-list.js';

// Objects addressed by several path parameters together (item-key.ts): which item path is theirs,
// which field holds each parameter, the identity, ids that encode and decode back, and the calls
// against a real HTTP server on 127.0.0.1.

type Obj = Record<string, unknown>;
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const gone = { responses: { '204': { description: 'gone' } } };
const BUCKET: Obj = {
  type: 'object',
  required: ['cluster', 'label'],
  properties: {
    cluster: { type: 'string', description: 'The ID of the cluster' },
    label: { type: 'string', description: 'The name for this bucket' },
    acl: { type: 'string' },
  },
};

/** Linode's shape: `/buckets` (list, create), `/buckets/{clusterId}` (GET), `/buckets/{clusterId}/{bucket}`. */
function bucketsDoc(o: { schema?: Obj; item?: Obj; listing?: boolean } = {}): Obj {
  const schema = o.schema ?? BUCKET;
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/buckets': {
        get: {
          responses: { '200': { description: 'ok', ...body({ type: 'array', items: schema }) } },
        },
        post: {
          requestBody: body(schema),
          responses: { '200': { description: 'ok', ...body(schema) } },
        },
      },
      ...(o.listing === false
        ? {}
        : {
            '/buckets/{clusterId}': {
              get: {
                responses: {
                  '200': { description: 'ok', ...body({ type: 'array', items: schema }) },
                },
              },
            },
          }),
      '/buckets/{clusterId}/{bucket}': {
        get: { responses: { '200': { description: 'ok', ...body(schema) } } },
        delete: gone,
        ...o.item,
      },
    },
  };
}

describe('compositeItemPath', () => {
  const paths = (ps: Record<string, string[]>): Record<string, Obj> =>
    Object.fromEntries(
      Object.entries(ps).map(([p, ms]) => [
        p,
        Object.fromEntries(ms.map((m) => [m.toLowerCase(), { responses: {} }])),
      ]),
    );
  const cases: {
    name: string;
    reason: string;
    collection: string;
    paths: Record<string, string[]>;
    want: { path: string; params: string[] } | undefined;
  }[] = [
    {
      name: 'two parameters with a DELETE',
      reason: 'PowerDNS autoprimaries: the only item path is two parameters deep',
      collection: '/autoprimaries',
      paths: { '/autoprimaries': ['GET', 'POST'], '/autoprimaries/{ip}/{nameserver}': ['DELETE'] },
      want: { path: '/autoprimaries/{ip}/{nameserver}', params: ['ip', 'nameserver'] },
    },
    {
      name: 'a listing one parameter deep, the item two deep',
      reason:
        "Linode buckets: /buckets/{clusterId} is a GET-only listing, not the object's address",
      collection: '/buckets',
      paths: {
        '/buckets': ['GET', 'POST'],
        '/buckets/{clusterId}': ['GET'],
        '/buckets/{clusterId}/{bucket}': ['GET', 'DELETE'],
      },
      want: { path: '/buckets/{clusterId}/{bucket}', params: ['clusterId', 'bucket'] },
    },
    {
      name: 'the shallowest deep item path wins',
      reason: 'a path three parameters deep is below the two-parameter one',
      collection: '/a',
      paths: { '/a': ['GET', 'POST'], '/a/{x}/{y}/{z}': ['DELETE'], '/a/{x}/{y}': ['DELETE'] },
      want: { path: '/a/{x}/{y}', params: ['x', 'y'] },
    },
    {
      name: 'a plain item path with DELETE',
      reason: '/a/{id} is the address; a deeper path is something else',
      collection: '/a',
      paths: { '/a': ['GET', 'POST'], '/a/{id}': ['DELETE'], '/a/{id}/{sub}': ['DELETE'] },
      want: undefined,
    },
    {
      name: 'no DELETE two parameters deep',
      reason: 'nothing removes one object there: not the objects',
      collection: '/a',
      paths: { '/a': ['GET', 'POST'], '/a/{x}/{y}': ['GET'] },
      want: undefined,
    },
    {
      name: 'a static segment in between',
      reason: '/a/{x}/things/{y} is a nested collection, not a key of two parameters',
      collection: '/a',
      paths: { '/a': ['GET', 'POST'], '/a/{x}/things/{y}': ['DELETE'] },
      want: undefined,
    },
    {
      name: 'another collection with the same prefix',
      reason: '/ab/{x}/{y} is not below /a',
      collection: '/a',
      paths: { '/a': ['GET', 'POST'], '/ab/{x}/{y}': ['DELETE'] },
      want: undefined,
    },
  ];
  it.each(cases)('$name', (c) => {
    expect(compositeItemPath(c.collection, paths(c.paths))).toEqual(c.want);
  });
});

describe('itemKeyParts', () => {
  const base = {
    typeName: 'buckets',
    collectionPath: '/buckets',
    itemPath: '/buckets/{clusterId}/{bucket}',
    params: ['clusterId', 'bucket'],
    declared: undefined as unknown,
    readFields: ['cluster', 'label', 'acl', 'id'],
    createFields: ['cluster', 'label', 'acl'],
    hasNested: undefined as ((path: string) => boolean) | undefined,
  };
  const cases: {
    name: string;
    reason: string;
    input: Partial<typeof base>;
    want: string[] | string;
  }[] = [
    {
      name: 'id suffix and the objects’ name-like field',
      reason: '{clusterId} is held by cluster, {bucket} (a bucket) by its label',
      input: {},
      want: ['clusterId=cluster', 'bucket=label'],
    },
    {
      name: 'fields named like the parameters',
      reason: 'PowerDNS autoprimaries: ip and nameserver',
      input: {
        itemPath: '/autoprimaries/{ip}/{nameserver}',
        collectionPath: '/autoprimaries',
        params: ['ip', 'nameserver'],
        readFields: ['ip', 'nameserver', 'account'],
        createFields: ['ip', 'nameserver', 'account'],
      },
      want: ['ip=ip', 'nameserver=nameserver'],
    },
    {
      name: 'declared in an overlay',
      reason: 'x-tend-key-fields wins over inference',
      input: { declared: { bucket: 'acl' } },
      want: ['clusterId=cluster', 'bucket=acl'],
    },
    {
      name: 'no field holds a parameter',
      reason: 'a parameter no rule maps: the reason says what to declare',
      input: { readFields: ['label'], createFields: ['label'] },
      want: 'no field of the objects holds {clusterId} (none is named like it, and it is not a name-like field both the create body and the read object have); name it with x-tend-key-fields: {clusterId: <field>} on /buckets/{clusterId}/{bucket}',
    },
    {
      name: 'a field the create does not send',
      reason: 'a key the platform assigns is not chosen by the create: not the address’ field',
      input: { createFields: ['label'] },
      want: 'no field of the objects holds {clusterId} (none is named like it, and it is not a name-like field both the create body and the read object have); name it with x-tend-key-fields: {clusterId: <field>} on /buckets/{clusterId}/{bucket}',
    },
    {
      name: 'a declaration naming an unknown field',
      reason: 'the overlay is checked against the schemas',
      input: { declared: { bucket: 'nope' } },
      want: 'x-tend-key-fields on /buckets/{clusterId}/{bucket} names "nope" for {bucket}, which is not a field (or a dotted path to one) both the create body and the read object have',
    },
    {
      name: 'a declared nested field',
      reason: 'a key path both the create body and the read object have (meta.label)',
      input: { declared: { bucket: 'meta.label' }, hasNested: (p: string) => p === 'meta.label' },
      want: ['clusterId=cluster', 'bucket=meta.label'],
    },
    {
      name: 'a declared nested field the schemas lack',
      reason: 'a key path is checked like a field',
      input: { declared: { bucket: 'meta.nope' }, hasNested: (p: string) => p === 'meta.label' },
      want: 'x-tend-key-fields on /buckets/{clusterId}/{bucket} names "meta.nope" for {bucket}, which is not a field (or a dotted path to one) both the create body and the read object have',
    },
    {
      name: 'a nested path without a checker',
      reason: 'nothing below the top level is known to exist',
      input: { declared: { bucket: 'meta.label' } },
      want: 'x-tend-key-fields on /buckets/{clusterId}/{bucket} names "meta.label" for {bucket}, which is not a field (or a dotted path to one) both the create body and the read object have',
    },
    {
      name: 'a declaration naming an unknown parameter',
      reason: 'a typo in the parameter name is an error, not ignored',
      input: { declared: { buckets: 'label' } },
      want: 'x-tend-key-fields on /buckets/{clusterId}/{bucket} names {buckets}, which is not one of its own parameters ({clusterId}, {bucket})',
    },
    {
      name: 'a declaration that is not a mapping',
      reason: 'x-tend-key-fields maps parameters to fields',
      input: { declared: ['cluster', 'label'] },
      want: 'x-tend-key-fields on /buckets/{clusterId}/{bucket} must map each path parameter to a field ({clusterId: <field>, …})',
    },
    {
      name: 'two parameters held by one field',
      reason: 'an id of two parts from one field cannot address the object',
      input: { declared: { clusterId: 'label' } },
      want: 'two parameters of /buckets/{clusterId}/{bucket} would be held by the same field label; name each with x-tend-key-fields',
    },
  ];
  it.each(cases)('$name', (c) => {
    const got = itemKeyParts({ ...base, ...c.input });
    if (typeof c.want === 'string') expect(got).toEqual({ reason: c.want });
    else if ('reason' in got) expect.fail(got.reason);
    else expect(got.parts.map((p) => `${p.param}=${p.field}`)).toEqual(c.want);
  });
});

describe('a type addressed by several parameters', () => {
  const buckets = (doc: Obj): DerivedType => {
    const got = deriveTypes(doc);
    const t = got.types.find((x) => x.info.name === 'buckets');
    if (t === undefined) expect.fail(JSON.stringify(got.unmapped));
    return t;
  };

  it('is derived with its key, a natural-key identity and the listing explained', () => {
    const got = deriveTypes(bucketsDoc());
    const t = got.types.find((x) => x.info.name === 'buckets')!;
    expect(t.itemPath).toBe('/buckets/{clusterId}/{bucket}');
    expect(t.itemKey?.map((k) => k.field)).toEqual(['cluster', 'label']);
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.naturalKeyFields).toEqual(['cluster', 'label']);
    expect(t.info.naturalKey).toBeUndefined(); // one field alone would confuse objects
    expect(t.operations.delete?.path).toBe('/buckets/{clusterId}/{bucket}');
    expect(got.unmapped).toContainEqual({
      path: '/buckets/{clusterId}',
      reason:
        'a list of the "buckets" objects that share {clusterId}; "buckets" lists them all at /buckets and addresses one at /buckets/{clusterId}/{bucket}',
    });
  });

  it('an overlay’s x-tend-identity wins over the key', () => {
    const schema = {
      ...BUCKET,
      properties: {
        ...(BUCKET['properties'] as Obj),
        tags: { type: 'array', items: { type: 'string' } },
      },
      'x-tend-identity': 'marker',
    };
    const t = buckets(bucketsDoc({ schema }));
    expect(t.info.identity).toBe('marker');
    expect(t.itemKey?.map((k) => k.field)).toEqual(['cluster', 'label']);
  });

  it('inspect shows each parameter, its field and why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tend-item-key-'));
    const file = join(dir, 'buckets.json');
    await writeFile(file, JSON.stringify(bucketsDoc()));
    const report = await inspectOpenApi(file).finally(() =>
      rm(dir, { recursive: true, force: true }),
    );
    const t = report.types.find((x) => x.name === 'buckets')!;
    expect(t.itemKey).toEqual([
      { param: 'clusterId', field: 'cluster', why: '{clusterId} without its id suffix' },
      {
        param: 'bucket',
        field: 'label',
        why: '{bucket} names one of the buckets objects, by its label',
      },
    ]);
    expect(t.naturalKey).toEqual(['cluster', 'label']);
  });

  it('ids: every part encoded, decoded back, whatever the values hold', () => {
    const t = buckets(bucketsDoc());
    fc.assert(
      fc.property(fc.string(), fc.string(), (cluster, label) => {
        const id = composeId(t, new Map(), [cluster, label]);
        expect(id.split('/')).toHaveLength(2);
        expect(splitId(t, id).own).toEqual([cluster, label]);
      }),
    );
  });

  it('an id of the wrong shape is refused with what was expected', () => {
    const t = buckets(bucketsDoc());
    expect(() => splitId(t, 'only-one')).toThrow(
      '"only-one" is not an id of buckets: expected clusterId/bucket, each part URI-encoded',
    );
    expect(() => splitId(t, 'a/%E0%A4%A')).toThrow(
      '"a/%E0%A4%A" is not an id of buckets: a part is not URI-encoded',
    );
  });

  it('pickListedByKey matches every key field, as text', () => {
    const items = [
      { cluster: 'us-east-1', label: 'b' },
      { cluster: 'eu-1', label: 'b' },
      { cluster: 'eu-1', label: 7 },
    ];
    expect(pickListedByKey(items, ['cluster', 'label'], ['eu-1', 'b'])).toBe(items[1]);
    expect(pickListedByKey(items, ['cluster', 'label'], ['eu-1', '7'])).toBe(items[2]);
    expect(pickListedByKey(items, ['cluster', 'label'], ['us-east-1', 'x'])).toBeUndefined();
    expect(pickListedByKey(items, ['cluster', 'label'], ['eu-1'])).toBeUndefined();
  });
});

describe('calls for a type addressed by several parameters, against a real server', () => {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(() => server.clear());
  const ACTOR = { actor: 'tend' };
  const provider = async (doc: Obj) =>
    createOpenApiProvider({
      name: 'p',
      document: await prepareOpenApiDocument(doc, 'inline'),
      endpoint: `${server.url}/api`,
      workspace: 'ws',
      maxAttempts: 1,
    });
  const calls = () => server.requests.map((r) => `${r.method} ${r.url}`);

  it('list: each object’s id is its key values, encoded', async () => {
    server.handle((_req, res) => json(res, 200, [{ cluster: 'us/east', label: 'a b', acl: 'x' }]));
    const p = await provider(bucketsDoc());
    const all = await p.list('buckets');
    expect(all.map((o) => o.id)).toEqual(['us%2Feast/a%20b']);
  });

  it('read, update and delete fill both parameters from the id', async () => {
    server.handle((req, res) =>
      req.method === 'DELETE'
        ? json(res, 204, undefined)
        : json(res, 200, { cluster: 'us/east', label: 'a b', acl: 'y' }),
    );
    const p = await provider(
      bucketsDoc({
        item: {
          patch: {
            requestBody: body(BUCKET),
            responses: { '200': { description: 'ok', ...body(BUCKET) } },
          },
        },
      }),
    );
    const got = await p.read('buckets', 'us%2Feast/a%20b');
    expect(got).toMatchObject({
      id: 'us%2Feast/a%20b',
      fields: { cluster: 'us/east', label: 'a b' },
    });
    await p.update('buckets', 'us%2Feast/a%20b', { acl: 'y' }, got!, { actor: ACTOR });
    await p.delete('buckets', 'us%2Feast/a%20b', { actor: ACTOR });
    expect(calls()).toEqual([
      'GET /api/buckets/us%2Feast/a%20b',
      'PATCH /api/buckets/us%2Feast/a%20b',
      'DELETE /api/buckets/us%2Feast/a%20b',
    ]);
  });

  it('create: an answer without the object is read back at the address the key names', async () => {
    server.handle((req, res) =>
      req.method === 'POST'
        ? json(res, 200, {})
        : json(res, 200, { cluster: 'eu-1', label: 'logs', acl: 'private' }),
    );
    const p = await provider(bucketsDoc());
    const created = await p.create(
      'buckets',
      { cluster: 'eu-1', label: 'logs', acl: 'private' },
      { actor: ACTOR },
    );
    expect(created.id).toBe('eu-1/logs');
    expect(calls()).toEqual(['POST /api/buckets', 'GET /api/buckets/eu-1/logs']);
  });

  it('without a GET on the item, one object is read from the list by every key field', async () => {
    server.handle((_req, res) =>
      json(res, 200, [
        { ip: '192.0.2.1', nameserver: 'ns1.example.', account: 'a' },
        { ip: '192.0.2.1', nameserver: 'ns2.example.', account: 'b' },
      ]),
    );
    const schema = {
      type: 'object',
      properties: {
        ip: { type: 'string' },
        nameserver: { type: 'string' },
        account: { type: 'string' },
      },
    };
    const p = await provider({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/autoprimaries': {
          get: {
            responses: { '200': { description: 'ok', ...body({ type: 'array', items: schema }) } },
          },
          post: { requestBody: body(schema), responses: { '201': { description: 'ok' } } },
        },
        '/autoprimaries/{ip}/{nameserver}': { delete: gone },
      },
    });
    const got = await p.read('autoprimaries', '192.0.2.1/ns2.example.');
    expect(got?.fields['account']).toBe('b');
    expect(await p.read('autoprimaries', '192.0.2.1/ns3.example.')).toBeUndefined();
    expect(calls()).toEqual(['GET /api/autoprimaries', 'GET /api/autoprimaries']);
  });
  it('below a parent, with the parent parameter renamed apart from a body field (LXD volumes)', async () => {
    const pool = {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' } },
    };
    const volume = {
      type: 'object',
      properties: { name: { type: 'string' }, type: { type: 'string' }, size: { type: 'string' } },
    };
    const arrayOf = (items: Obj) => ({
      responses: { '200': { description: 'ok', ...body({ type: 'array', items }) } },
    });
    const one = (schema: Obj) => ({ responses: { '200': { description: 'ok', ...body(schema) } } });
    server.handle((req, res) => {
      if (req.url === '/api/pools') return json(res, 200, [{ name: 'p1' }]);
      if (req.url === '/api/pools/p1/volumes') {
        return json(res, 200, [{ name: 'v 1', type: 'custom', size: '1GiB' }]);
      }
      return json(res, 200, { name: 'v 1', type: 'custom', size: '2GiB' });
    });
    const p = await provider({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/pools': { get: arrayOf(pool), post: { requestBody: body(pool), responses: {} } },
        '/pools/{name}': { get: one(pool), delete: gone },
        '/pools/{name}/volumes': {
          get: arrayOf(volume),
          post: { requestBody: body(volume), responses: {} },
        },
        '/pools/{name}/volumes/{type}/{volume}': { get: one(volume), delete: gone },
      },
    });
    const t = p.describe().types.find((x) => x.name === 'volumes')!;
    expect(t.naturalKeyFields).toEqual(['pool_name', 'type', 'name']);
    const [listedVolume] = await p.list('volumes');
    expect(listedVolume?.id).toBe('p1/custom/v%201');
    expect(listedVolume?.fields).toMatchObject({ pool_name: 'p1', name: 'v 1', type: 'custom' });
    server.clear();
    expect(await p.read('volumes', 'p1/custom/v%201')).toMatchObject({
      fields: { size: '2GiB' },
    });
    expect(calls()).toEqual(['GET /api/pools/p1/volumes/custom/v%201']);
  });
});
