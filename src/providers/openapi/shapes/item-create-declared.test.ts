import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes } from '../derive-types.js';
import type { RealOperation } from './irregular-ops.js';
import { createdAtItem, keyParamOf } from './item-create.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';

// A create at the item path that calls the item's parameter otherwise, under another API version
// (Vercel's secrets: POST /v2/secrets/{name}, GET /v3/secrets/{idOrName}), paired by an overlay's
// x-tend-op declarations (item-create.ts createdAtItem, keyParamOf).

type Obj = Record<string, unknown>;
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema?: unknown) => ({
  '200': { description: 'ok', ...(schema !== undefined ? body(schema) : {}) },
});
const param = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

const SECRET = {
  type: 'object',
  properties: {
    uid: { type: 'string', readOnly: true },
    name: { type: 'string' },
    value: { type: 'string', 'x-tend-sensitive': true },
  },
};
const op = (type: string, role: string) => ({ 'x-tend-type': type, 'x-tend-op': role });

/** Vercel's secrets, the operations declared as an overlay declares them (or not, `declare`). */
function secrets(declare = true): Obj {
  const d = (role: string) => (declare ? op('secrets', role) : {});
  return {
    openapi: '3.0.0',
    info: { title: 'hosting', version: '1' },
    paths: {
      '/v3/secrets': {
        get: {
          ...d('list'),
          responses: ok({
            type: 'object',
            properties: { secrets: { type: 'array', items: SECRET } },
          }),
        },
      },
      '/v2/secrets/{name}': {
        post: {
          ...d('create'),
          summary: 'Create a new secret',
          parameters: [param('name', 'Automatically added')],
          requestBody: body({
            type: 'object',
            required: ['name', 'value'],
            properties: {
              name: { type: 'string' },
              value: { type: 'string', 'x-tend-sensitive': true },
            },
          }),
          responses: ok(SECRET),
        },
      },
      '/v3/secrets/{idOrName}': {
        get: {
          ...d('read'),
          parameters: [param('idOrName', 'The name or the unique identifier of the secret')],
          responses: ok(SECRET),
        },
      },
      '/v2/secrets/{idOrName}': {
        delete: {
          ...d('delete'),
          parameters: [param('idOrName', 'The name or the unique identifier of the secret')],
          responses: { '200': { description: 'gone' } },
        },
      },
    },
  };
}

describe('a create at the item path under another version and parameter name', () => {
  const real = (method: RealOperation['method'], path: string): RealOperation => ({
    method,
    path,
    source: 'test',
  });
  const cases: {
    name: string;
    real: RealOperation | undefined;
    itemPath: string;
    atItem: boolean;
    key: string;
  }[] = [
    {
      name: 'the item path itself',
      real: real('PUT', '/envs/{env_name}'),
      itemPath: '/envs/{env_name}',
      atItem: true,
      key: 'env_name',
    },
    {
      name: 'the item path under a version segment merged away, the parameter named otherwise',
      real: real('POST', '/v2/secrets/{name}'),
      itemPath: '/secrets/{idOrName}',
      atItem: true,
      key: 'name',
    },
    {
      name: 'a POST on the collection is no create at the item',
      real: real('POST', '/v2/secrets'),
      itemPath: '/secrets/{idOrName}',
      atItem: false,
      key: 'idOrName',
    },
    {
      name: 'another resource under the version is not the item path',
      real: real('POST', '/v2/tokens/{name}'),
      itemPath: '/secrets/{idOrName}',
      atItem: false,
      key: 'name',
    },
    {
      name: 'a GET is no create',
      real: real('GET', '/secrets/{idOrName}'),
      itemPath: '/secrets/{idOrName}',
      atItem: false,
      key: 'idOrName',
    },
    {
      name: 'nothing recorded',
      real: undefined,
      itemPath: '/secrets/{idOrName}',
      atItem: false,
      key: 'idOrName',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(createdAtItem(c.real, c.itemPath)).toBe(c.atItem);
      expect(keyParamOf(c.real, c.itemPath)).toBe(c.key);
    });
  }

  it('is keyed by the create’s own parameter, sent in the path and the body', () => {
    const derived = deriveTypes(secrets());
    expect(derived.warnings).toEqual([]);
    const t = derived.types.find((x) => x.info.name === 'secrets')!;
    expect(t.operations.create).toMatchObject({ method: 'POST', path: '/v2/secrets/{name}' });
    expect(t.operations.read.path).toBe('/v3/secrets/{idOrName}');
    expect(t.operations.delete?.path).toBe('/v2/secrets/{idOrName}');
    expect(t.createAtItem).toEqual({ param: 'name', inBody: true });
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.idField).toBe('name');
    expect(t.info.sensitive).toEqual(['value']);
    expect(t.identityWhy).toBe(
      'natural key name: POST /v2/secrets/{name} creates the object at the address its creator names ({name}), so a second create names the same object; listed objects carry it in name',
    );
  });

  it('is not found without the declarations, and inspect says why', () => {
    const derived = deriveTypes(secrets(false));
    expect(derived.types).toEqual([]);
    expect(derived.unmapped.find((u) => u.path === '/v2/secrets/{name}')?.reason).toBe(
      'no POST on /secrets: Tend cannot create these objects, nor a PUT or POST on /secrets/{idOrName}',
    );
  });
});

describe('writes of a secret created at its own address, against a real server', () => {
  let server: RecordingServer;
  const store = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    store.clear();
    server.handle((req, res) => {
      const m = /^\/v(\d)\/secrets(?:\/([^/?]+))?$/.exec(req.url);
      if (!m) return json(res, 404, { error: 'no' });
      const key = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
      if (key === undefined) {
        return json(res, 200, {
          secrets: [...store.values()].map(({ value: _v, ...rest }) => rest),
        });
      }
      if (req.method === 'POST') {
        const sent = JSON.parse(req.body || '{}') as Obj;
        if (sent['name'] !== key) return json(res, 400, { error: 'name differs from the path' });
        store.set(key, { uid: `sec_${key}`, name: key, value: sent['value'] });
        return json(res, 200, { uid: `sec_${key}`, name: key });
      }
      const found = [...store.values()].find((s) => s['name'] === key || s['uid'] === key);
      if (req.method === 'GET') return found ? json(res, 200, found) : json(res, 404, {});
      if (req.method === 'DELETE' && found) {
        store.delete(found['name'] as string);
        return json(res, 200, {});
      }
      json(res, 404, {});
    });
  });

  it('creates at POST /v2/secrets/{name} with the name in the body, lists at v3, deletes at v2', async () => {
    const p = createOpenApiProvider({
      name: 'vercel',
      document: await prepareOpenApiDocument(secrets(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
    });
    const created = await p.create(
      'secrets',
      { name: 'api-key', value: 's3cret' },
      { actor: { actor: 't' } },
    );
    expect(created.id).toBe('api-key');
    expect(JSON.stringify(created.fields)).not.toContain('s3cret');
    const listed = await p.list('secrets');
    expect(listed.map((o) => o.id)).toEqual(['api-key']);
    await p.delete('secrets', 'api-key', { actor: { actor: 't' } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v2/secrets/api-key',
      'GET /v3/secrets',
      'DELETE /v2/secrets/api-key',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ name: 'api-key', value: 's3cret' });
    expect(store.size).toBe(0);
  });
});
