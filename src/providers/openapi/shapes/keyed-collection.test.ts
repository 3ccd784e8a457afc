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

// A path ending in a parameter that lists and creates, its items one level below (issue 27: "a
// collection whose path ends in a parameter and whose items are one level below, when sibling paths
// at the same depth are actions or sub-resources of the item"). A feature-flag service of our own:
// `GET`/`POST /flags/{projectKey}`, one flag at `/flags/{projectKey}/{flagKey}`.

const FLAG = {
  type: 'object',
  properties: {
    key: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
  },
};
const NEW_FLAG = { ...FLAG, required: ['key', 'name'] };
const FLAGS = { type: 'object', properties: { items: { type: 'array', items: FLAG } } };

/** The flag service; each argument replaces or adds operations or paths (undefined removes one). */
function flags(collection: Obj = {}, more: Obj = {}): Obj {
  const all: Obj = {
    '/flags/{projectKey}': {
      get: { responses: ok(FLAGS) },
      post: { requestBody: body(NEW_FLAG), responses: { '201': body(FLAG) } },
      ...collection,
    },
    '/flags/{projectKey}/{flagKey}': {
      get: { responses: ok(FLAG) },
      patch: { requestBody: body(FLAG), responses: ok(FLAG) },
      delete: gone,
    },
    // The item's action and its sub-resource: below the item, as the rule wants.
    '/flags/{projectKey}/{flagKey}/copy': { post: { responses: ok(FLAG) } },
    '/flags/{projectKey}/{flagKey}/dependents': {
      get: { responses: ok({ type: 'array', items: FLAG }) },
    },
    ...more,
  };
  for (const [k, v] of Object.entries(all)) if (v === undefined) delete all[k];
  return { openapi: '3.0.0', info: { title: 'flags', version: '1' }, paths: all };
}

describe('a path ending in a parameter that lists and creates the objects one level below', () => {
  const OTHER = { type: 'object', properties: { status: { type: 'string' } } };
  const cases: { name: string; doc: Obj; keyed: boolean }[] = [
    {
      name: 'GET lists, POST makes what the item path reads, actions and sub-resources below the item',
      doc: flags(),
      keyed: true,
    },
    {
      name: 'a sub-resource of the item named by another parameter is still below the item',
      doc: flags(
        {},
        { '/flags/{projectKey}/{key}/targets/{env}': { get: { responses: ok(OTHER) } } },
      ),
      keyed: true,
    },
    {
      name: 'the list wrapped or bare alike (a bare array)',
      doc: flags({ get: { responses: ok({ type: 'array', items: FLAG }) } }),
      keyed: true,
    },
    {
      name: 'not when something deletes the path: it is an item',
      doc: flags({ delete: gone }),
      keyed: false,
    },
    {
      name: 'not when something changes the path in place (PATCH): it is an item',
      doc: flags({ patch: { requestBody: body(OTHER), responses: ok(OTHER) } }),
      keyed: false,
    },
    {
      name: 'not when the path above creates: the path is that collection’s item',
      doc: flags(
        {},
        {
          '/flags': {
            get: { responses: ok({ type: 'array', items: OTHER }) },
            post: { requestBody: body(OTHER), responses: ok(OTHER) },
          },
        },
      ),
      keyed: false,
    },
    {
      name: 'not when the POST answers something else than the item (an action on an object)',
      doc: flags({ post: { responses: ok(OTHER) } }),
      keyed: false,
    },
    {
      name: 'not when the POST answers an object that only looks alike (a field more)',
      doc: flags({
        post: {
          requestBody: body(NEW_FLAG),
          responses: ok({ ...FLAG, properties: { ...FLAG.properties, extra: { type: 'string' } } }),
        },
      }),
      keyed: false,
    },
    {
      name: 'not when the GET answers one object, not a list (the path reads an object)',
      doc: flags({ get: { responses: ok(OTHER) } }),
      keyed: false,
    },
    {
      name: 'not when the GET answers the object the POST makes (read and update of an object)',
      doc: flags({ get: { responses: ok(FLAG) } }),
      keyed: false,
    },
    {
      name: 'not when the item below has no DELETE',
      doc: flags({}, { '/flags/{projectKey}/{flagKey}': { get: { responses: ok(FLAG) } } }),
      keyed: false,
    },
    {
      name: 'not when a sibling sits beside the item (the path is an object with parts)',
      doc: flags({}, { '/flags/{projectKey}/summary': { get: { responses: ok(OTHER) } } }),
      keyed: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const doc = JSON.parse(JSON.stringify(c.doc)) as Obj;
      const all = paths(doc);
      const found = keyedCollection('/flags/{projectKey}', all['/flags/{projectKey}']!, all, [
        '/flags/{projectKey}/{flagKey}',
      ]);
      expect(isObjectFound(found)).toBe(c.keyed);
      const t = deriveTypes(doc).types.find((x) => x.collectionPath === '/flags/{projectKey}');
      expect(t !== undefined).toBe(c.keyed);
    });
  }

  it('is a plain type: listed and created at the path, the rest at the item, scoped by the provider', () => {
    const derived = deriveTypes(flags());
    const t = derived.types.find((x) => x.info.name === 'flags')!;
    expect(t.operations.list).toMatchObject({ method: 'GET', path: '/flags/{projectKey}' });
    expect(t.operations.create).toMatchObject({ method: 'POST', path: '/flags/{projectKey}' });
    expect(t.operations.read.path).toBe('/flags/{projectKey}/{flagKey}');
    expect(t.operations.update).toMatchObject({ method: 'PATCH' });
    expect(t.operations.delete?.path).toBe('/flags/{projectKey}/{flagKey}');
    expect(t.params).toEqual([{ kind: 'provider', param: 'projectKey' }]);
    expect(t.listShape).toEqual({ kind: 'wrapped', field: 'items' });
    // The item's action and sub-resource are reported as such, not as collections.
    expect(derived.unmapped.map((u) => u.path).sort()).toEqual([
      '/flags/{projectKey}/{flagKey}/copy',
      '/flags/{projectKey}/{flagKey}/dependents',
    ]);
  });
});

describe('writes of a type listed and created at a path ending in a parameter, against a real server', () => {
  let server: RecordingServer;
  const stored = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    stored.clear();
    server.handle((req, res) => {
      const m = /^\/flags\/web(?:\/([^/?]+))?$/.exec(req.url);
      if (!m) return json(res, 404, { error: 'no' });
      const key = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
      if (key === undefined && req.method === 'GET') {
        return json(res, 200, { items: [...stored.values()] });
      }
      if (key === undefined && req.method === 'POST') {
        const sent = JSON.parse(req.body || '{}') as Obj;
        stored.set(String(sent['key']), sent);
        return json(res, 201, sent);
      }
      const flag = key === undefined ? undefined : stored.get(key);
      if (flag === undefined) return json(res, 404, {});
      if (req.method === 'GET') return json(res, 200, flag);
      if (req.method === 'PATCH') {
        Object.assign(flag, JSON.parse(req.body || '{}') as Obj);
        return json(res, 200, flag);
      }
      if (req.method === 'DELETE') {
        stored.delete(key!);
        res.writeHead(204).end();
        return;
      }
      json(res, 405, {});
    });
  });

  it('creates and lists at the path, changes and deletes one level below', async () => {
    const p = createOpenApiProvider({
      name: 'ff',
      document: await prepareOpenApiDocument(flags(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
      parameters: { projectKey: 'web' },
    });
    const actor = { actor: { actor: 't' } };
    const created = await p.create('flags', { key: 'beta', name: 'Beta' }, actor);
    expect(created.id).toBe('beta');
    expect((await p.list('flags')).map((o) => o.id)).toEqual(['beta']);
    await p.update('flags', 'beta', { name: 'Beta 2' }, created, actor);
    await p.delete('flags', 'beta', actor);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /flags/web',
      'GET /flags/web',
      'GET /flags/web/beta',
      'PATCH /flags/web/beta',
      'DELETE /flags/web/beta',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ key: 'beta', name: 'Beta' });
    expect(JSON.parse(server.requests[3]!.body)).toEqual({ name: 'Beta 2' });
  });
});
