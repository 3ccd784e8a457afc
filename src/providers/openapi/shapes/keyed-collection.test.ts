import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes } from '../derive-types.js';
import { keyedCollection } from './keyed-collection.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';

// Collections whose path ends in a parameter (keyed-collection.ts): Bitbucket's shape, where
// `GET /repositories/{workspace}` lists and `POST /repositories/{workspace}/{repo_slug}` creates at
// the address its creator names.

type Obj = Record<string, unknown>;
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema?: unknown) => ({
  '200': { description: 'ok', ...(schema !== undefined ? body(schema) : {}) },
});
const gone = { responses: { '204': { description: 'gone' } } };

const REPO = {
  type: 'object',
  properties: {
    uuid: { type: 'string', readOnly: true },
    slug: { type: 'string', readOnly: true },
    is_private: { type: 'boolean' },
  },
};
const LIST = { type: 'object', properties: { values: { type: 'array', items: REPO } } };

/** A forge like Bitbucket's; each argument replaces or adds operations of one path. */
function forge(collection: Obj = {}, item: Obj = {}, itemParam = 'repo_slug'): Obj {
  return {
    openapi: '3.0.0',
    info: { title: 'forge', version: '1' },
    paths: {
      '/repositories': { get: { summary: 'List public repositories', responses: ok(LIST) } },
      '/repositories/{workspace}': {
        get: { summary: 'List repositories in a workspace', responses: ok(LIST) },
        ...collection,
      },
      [`/repositories/{workspace}/{${itemParam}}`]: {
        get: { summary: 'Get a repository', responses: ok(REPO) },
        post: { summary: 'Create a repository', requestBody: body(REPO), responses: ok(REPO) },
        put: { summary: 'Update a repository', requestBody: body(REPO), responses: ok(REPO) },
        delete: { summary: 'Delete a repository', ...gone },
        ...item,
      },
    },
  };
}

const isObjectFound = (x: unknown): boolean => typeof x === 'object' && x !== null;
const paths = (doc: Obj) => doc['paths'] as Record<string, Record<string, unknown>>;

describe('a collection whose path ends in a parameter', () => {
  const cases: {
    name: string;
    doc: Obj;
    keyed: boolean;
    /** What inspect says of the path when it is not one. */
    reason?: string;
  }[] = [
    {
      name: 'a GET-only path with a creating item below it is the collection of those objects',
      doc: forge(),
      keyed: true,
    },
    {
      name: 'a path that something deletes is an item, not a collection',
      doc: forge({ delete: { summary: 'Delete a workspace', ...gone } }),
      keyed: false,
      reason:
        'no collection path /repositories/{workspace} with POST for this item path (path parameter {workspace} above it has no value)',
    },
    {
      name: 'an item POST that does not say it creates is no create',
      doc: forge({}, { post: { summary: 'Fork it', responses: ok(REPO) } }),
      keyed: false,
      reason:
        'GET /repositories/{workspace} lists these objects, but nothing creates them: it has no POST, and POST /repositories/{workspace}/{repo_slug} or PUT /repositories/{workspace}/{repo_slug} does not say it creates (its operationId or summary); if it does, declare it with x-tend-type and x-tend-op: create',
    },
    {
      name: 'an item parameter that looks like an id the platform assigns is no key a creator chooses',
      doc: forge({}, {}, 'repo_id'),
      keyed: false,
      reason:
        'GET /repositories/{workspace} lists these objects, but nothing creates them: it has no POST, POST /repositories/{workspace}/{repo_id} creates, but {repo_id} looks like an id the platform assigns, not a name its creator chooses; if the creator names it, declare the operation with x-tend-type and x-tend-op: create',
    },
    {
      name: 'an item path without DELETE is not complete',
      doc: forge({}, { delete: undefined }),
      keyed: false,
      reason:
        'GET /repositories/{workspace} lists these objects, but nothing creates them: it has no POST, and no item path below it with GET, DELETE and a PUT or POST that creates',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const doc = JSON.parse(JSON.stringify(c.doc)) as Obj;
      const all = paths(doc);
      const item = Object.keys(all).find((p) => p.split('/').length === 4)!;
      const found = keyedCollection(
        '/repositories/{workspace}',
        all['/repositories/{workspace}']!,
        all,
        [item],
      );
      expect(isObjectFound(found)).toBe(c.keyed);
      const derived = deriveTypes(doc);
      const t = derived.types.find((x) => x.collectionPath === '/repositories/{workspace}');
      expect(t !== undefined).toBe(c.keyed);
      if (c.reason !== undefined) {
        const why = derived.unmapped.find((u) => u.path === item)?.reason;
        expect(why).toBe(c.reason);
      }
    });
  }

  it('is named after its last named segment, created at its item path, scoped by the provider', () => {
    const t = deriveTypes(forge()).types[0]!;
    expect(t.info.name).toBe('repositories');
    expect(t.collectionPath).toBe('/repositories/{workspace}');
    expect(t.operations.list.path).toBe('/repositories/{workspace}');
    expect(t.operations.create).toMatchObject({
      method: 'POST',
      path: '/repositories/{workspace}/{repo_slug}',
    });
    expect(t.params).toEqual([{ kind: 'provider', param: 'workspace' }]);
    expect(t.createAtItem).toEqual({ param: 'repo_slug', inBody: false });
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.idField).toBe('slug');
  });

  it('leaves the path above it (/repositories, GET only) as read-only', () => {
    const derived = deriveTypes(forge());
    expect(derived.unmapped.find((u) => u.path === '/repositories')?.reason).toBe(
      'GET only: read-only, nothing for Tend to manage',
    );
  });
});

describe('writes of a type listed at a path ending in a parameter, against a real server', () => {
  let server: RecordingServer;
  const repos = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    repos.clear();
    server.handle((req, res) => {
      const m = /^\/repositories\/ws(?:\/([^/?]+))?$/.exec(req.url);
      if (!m) return json(res, 404, { error: 'no' });
      const slug = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
      if (slug === undefined) return json(res, 200, { values: [...repos.values()] });
      if (req.method === 'POST') {
        const sent = JSON.parse(req.body || '{}') as Obj;
        const repo = { uuid: `{${slug}-uuid}`, slug, ...sent };
        repos.set(slug, repo);
        return json(res, 201, repo);
      }
      const repo = repos.get(slug);
      if (req.method === 'GET') return repo ? json(res, 200, repo) : json(res, 404, {});
      if (req.method === 'DELETE') {
        repos.delete(slug);
        res.writeHead(204).end();
        return;
      }
      json(res, 405, {});
    });
  });

  it('creates with POST on the item path, lists at the collection, deletes at the item', async () => {
    const p = createOpenApiProvider({
      name: 'bb',
      document: await prepareOpenApiDocument(forge(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
      parameters: { workspace: 'ws' },
    });
    const created = await p.create(
      'repositories',
      { repo_slug: 'infra', is_private: true },
      { actor: { actor: 't' } },
    );
    expect(created.id).toBe('infra');
    const listed = await p.list('repositories');
    expect(listed.map((o) => [o.id, o.fields['repo_slug']])).toEqual([['infra', 'infra']]);
    await p.delete('repositories', 'infra', { actor: { actor: 't' } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /repositories/ws/infra',
      'GET /repositories/ws',
      'DELETE /repositories/ws/infra',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ is_private: true });
  });
});
