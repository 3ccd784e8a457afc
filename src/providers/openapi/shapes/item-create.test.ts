import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { TendError } from '../../../core/index.js';
import { deriveTypes } from '../derive-types.js';
import {
  itemCreateChoice,
  keyFieldInRead,
  looksAssigned,
  saysCreate,
  settleParentClash,
  wordsOf,
} from './item-create.js';
import type { PathParam } from './item-create.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';
import { objectView } from '../fields/schema-view.js';

// Objects created at their own item path, and child create bodies that repeat a parent path
// parameter (item-create.ts): the rules on small hand-written documents, then the writes against a
// real HTTP server.

type Obj = Record<string, unknown>;
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema?: unknown) => ({
  '200': { description: 'ok', ...(schema !== undefined ? body(schema) : {}) },
});
const gone = { responses: { '204': { description: 'gone' } } };

const ENVIRONMENT_READ = {
  type: 'object',
  properties: {
    id: { type: 'integer', readOnly: true },
    name: { type: 'string', readOnly: true },
    wait_timer: { type: 'integer' },
  },
};
const ENVIRONMENT_WRITE = { type: 'object', properties: { wait_timer: { type: 'integer' } } };

/** GitHub's shape: environments listed in a wrapper, created and replaced by PUT on the item. */
function environments(put: Obj = {}, extraItem: Obj = {}): Obj {
  return {
    openapi: '3.0.0',
    info: { title: 'forge', version: '1' },
    paths: {
      '/repos/{owner}/{repo}/environments': {
        get: {
          responses: ok({
            type: 'object',
            properties: {
              total_count: { type: 'integer' },
              environments: { type: 'array', items: ENVIRONMENT_READ },
            },
          }),
        },
      },
      '/repos/{owner}/{repo}/environments/{environment_name}': {
        get: { responses: ok(ENVIRONMENT_READ) },
        put: {
          operationId: 'repos/create-or-update-environment',
          summary: 'Create or update an environment',
          requestBody: body(ENVIRONMENT_WRITE),
          responses: ok(ENVIRONMENT_READ),
          ...put,
        },
        delete: gone,
        ...extraItem,
      },
    },
  };
}

function only(doc: Obj) {
  const derived = deriveTypes(doc);
  return { derived, t: derived.types[0] };
}

describe('the words that say an operation creates', () => {
  it.each<[string, Obj, boolean]>([
    ['an operationId in camel case', { operationId: 'ResourceGroups_CreateOrUpdate' }, true],
    ['a summary', { summary: 'Add a user to the default reviewers' }, true],
    ['a slashed operationId', { operationId: 'repos/create-or-update-environment' }, true],
    ['an operationId that adds', { operationId: 'repoAddCollaborator' }, true],
    ['an update', { operationId: 'updateSnippet', summary: 'Update a snippet' }, false],
    ['a word that only contains create', { summary: 'Recreate the index' }, false],
    ['nothing said', {}, false],
    ['a description alone (not read: too long to trust)', { description: 'Creates it' }, false],
  ])('%s', (_what, op, says) => {
    expect(saysCreate(op)).toBe(says);
  });

  it('splits identifiers into lower-case words, never empty ones', () => {
    expect(wordsOf('ResourceGroups_CreateOrUpdate')).toEqual([
      'resource',
      'groups',
      'create',
      'or',
      'update',
    ]);
    expect(wordsOf('HTTPServerAdd')).toEqual(['http', 'server', 'add']);
    fc.assert(
      fc.property(fc.string(), (s) => {
        for (const w of wordsOf(s)) expect(w).toMatch(/^[a-z0-9]+$/);
      }),
    );
  });

  it.each<[string, boolean]>([
    ['id', true],
    ['volume_id', true],
    ['groupId', true],
    ['environment_uuid', true],
    ['environment_name', false],
    ['resourceGroupName', false],
    ['username', false],
    ['identity', false],
  ])('{%s} looks like an id the platform assigns: %s', (param, assigned) => {
    expect(looksAssigned(param)).toBe(assigned);
  });
});

describe('the field of a read object holding the item path parameter', () => {
  const view = (...fields: string[]) =>
    objectView({ type: 'object', properties: Object.fromEntries(fields.map((f) => [f, {}])) });
  const NAMES = ['name', 'slug', 'key', 'username', 'login', 'handle', 'code', 'identifier'];
  it.each<[string, string, string[], string | undefined, string?]>([
    ['a field of the same name', 'tagName', ['tagName', 'name'], 'tagName'],
    ['the name-like word it ends with', 'environment_name', ['id', 'name'], 'name'],
    ['whatever the case', 'resourceGroupName', ['id', 'Name'], 'Name'],
    [
      'the longest word it ends with',
      'target_username',
      ['uuid', 'username', 'display_name'],
      'username',
    ],
    ['spelled otherwise', 'username', ['id', 'user_name', 'name'], 'user_name'],
    [
      'an account handle is a login, not the display name (GitHub’s team members)',
      'username',
      ['name', 'email', 'login', 'id'],
      'login',
    ],
    ['an account handle, with another parent word', 'target_login', ['name', 'handle'], 'handle'],
    [
      'a handle field before the display name it ends with',
      'owner_username',
      ['name', 'login'],
      'login',
    ],
    ['an account with no handle field: the name it ends with', 'username', ['id', 'name'], 'name'],
    ['a word not at the end is no hint', 'repo_slug', ['name', 'full_name', 'uuid'], undefined],
    ['a parameter that is the word itself and no such field', 'name', ['id'], undefined],
    [
      'the description names it',
      'branch',
      ['name', 'protected'],
      'name',
      'The name of the branch.',
    ],
    [
      'the description says it is a handle (GitHub’s {username}: “The handle for the GitHub user account.”)',
      'account',
      ['name', 'login'],
      'login',
      'The handle for the GitHub user account.',
    ],
    [
      'a description naming no name-like word',
      'branch',
      ['name'],
      undefined,
      'The branch to protect.',
    ],
  ])('%s: {%s} in %j is %s', (_why, param, fields, want, description) => {
    expect(keyFieldInRead(param, view(...fields), NAMES, description)).toBe(want);
  });
});

describe('finding the create of a collection without POST on its item path', () => {
  const paths = (item: Obj): Record<string, Obj> => ({
    '/things': { get: { responses: ok() } },
    '/things/{thing_name}': { get: { responses: ok() }, delete: gone, ...item },
  });
  it.each<[string, Obj, string | { method: string }]>([
    ['a PUT that creates', { put: { summary: 'Create or update a thing' } }, { method: 'PUT' }],
    [
      'a POST that creates next to a PUT that updates (Bitbucket repositories)',
      { post: { summary: 'Create a thing' }, put: { summary: 'Update a thing' } },
      { method: 'POST' },
    ],
    [
      'a PUT that does not say it creates',
      { put: { summary: 'Update a thing' } },
      'no POST on /things: Tend cannot create these objects, and PUT /things/{thing_name} does not say it creates (its operationId or summary); if it does, declare it with x-tend-type and x-tend-op: create',
    ],
    [
      'no PUT or POST on the item',
      { patch: { summary: 'Create a thing' } },
      'no POST on /things: Tend cannot create these objects, nor a PUT or POST on /things/{thing_name}',
    ],
  ])('%s', (_what, item, want) => {
    const got = itemCreateChoice('/things', ['/things/{thing_name}'], paths(item));
    if (typeof want === 'string') expect(got).toBe(want);
    else expect(got).toMatchObject({ itemPath: '/things/{thing_name}', method: want.method });
  });

  it.each<[string, boolean, string | { method: string }]>([
    ['listable: read from the list', true, { method: 'PUT' }],
    [
      'not listable: no way to read one',
      false,
      'no POST on /tagNames: Tend cannot create these objects',
    ],
  ])('an item path without GET (Azure tag names), %s', (_what, listable, want) => {
    const got = itemCreateChoice(
      '/tagNames',
      ['/tagNames/{tagName}'],
      { '/tagNames/{tagName}': { put: { operationId: 'Tags_CreateOrUpdate' }, delete: gone } },
      listable,
    );
    if (typeof want === 'string') expect(got).toBe(want);
    else expect(got).toMatchObject({ itemPath: '/tagNames/{tagName}', method: want.method });
  });

  it('refuses an item parameter that looks like an id the platform assigns', () => {
    const got = itemCreateChoice('/things', ['/things/{thing_id}'], {
      '/things/{thing_id}': {
        get: { responses: ok() },
        put: { summary: 'Create a thing' },
        delete: gone,
      },
    });
    expect(got).toBe(
      'no POST on /things: Tend cannot create these objects; PUT /things/{thing_id} creates, but {thing_id} looks like an id the platform assigns, not a name its creator chooses; if the creator names it, declare the operation with x-tend-type and x-tend-op: create',
    );
  });
});

describe('deriving a type created at its item path', () => {
  it('makes the item path parameter a required, create-only natural key, sent in the path', () => {
    const { t } = only(environments());
    expect(t).toBeDefined();
    expect(t!.info.name).toBe('environments');
    expect(t!.operations.create).toMatchObject({
      method: 'PUT',
      path: '/repos/{owner}/{repo}/environments/{environment_name}',
      assigned: 'inferred: creates the object at its own address (the collection has no POST)',
    });
    expect(t!.operations.update).toMatchObject({ method: 'PUT' });
    expect(t!.createAtItem).toEqual({ param: 'environment_name', inBody: false });
    expect(t!.info.identity).toBe('natural-key');
    expect(t!.info.idField).toBe('name');
    expect(t!.keyFields).toEqual(['environment_name']);
    expect(t!.info.createOnly).toContain('environment_name');
    expect(objectView(t!.info.schema).required).toContain('environment_name');
    expect(t!.identityWhy).toBe(
      'natural key environment_name: PUT /repos/{owner}/{repo}/environments/{environment_name} creates the object at the address its creator names ({environment_name}), so a second create names the same object; listed objects carry it in name',
    );
  });

  it('updates with PATCH when the item offers one, else replaces with the same PUT', () => {
    const { t } = only(
      environments(
        {},
        { patch: { requestBody: body(ENVIRONMENT_WRITE), responses: ok(ENVIRONMENT_READ) } },
      ),
    );
    expect(t!.operations.update?.method).toBe('PATCH');
    expect(t!.operations.create.method).toBe('PUT');
  });

  it('takes a create without a request body: the name is all it says', () => {
    const doc = environments({ requestBody: undefined });
    const { t } = only(JSON.parse(JSON.stringify(doc)) as Obj);
    expect(Object.keys(objectView(t!.info.schema).properties)).toEqual(['environment_name']);
  });

  // The same query splitting as a create on the collection (create-query.ts): the parameters of the
  // create's own operation and of its own path (the item's), never the collection's.
  const region = (extra: Obj = {}): Obj => ({
    name: 'region',
    in: 'query',
    required: true,
    schema: { type: 'string' },
    ...extra,
  });
  it.each<[string, Obj, Obj, Obj, string[]]>([
    ['a required parameter of the PUT', { parameters: [region()] }, {}, {}, ['region']],
    [
      'a parameter of the item path, shared by its operations',
      {},
      { parameters: [region()] },
      {},
      ['region'],
    ],
    [
      'a parameter of the collection path is not the create’s',
      {},
      {},
      { parameters: [region()] },
      [],
    ],
    [
      'an optional parameter the read does not answer is not a field',
      { parameters: [region({ required: false })] },
      {},
      {},
      [],
    ],
  ])(
    'query fields of a create at the item path: %s',
    (_what, put, extraItem, extraCollection, want) => {
      const doc = environments(put, extraItem);
      const paths = doc['paths'] as Record<string, Obj>;
      Object.assign(paths['/repos/{owner}/{repo}/environments']!, extraCollection);
      const { derived, t } = only(doc);
      expect(derived.warnings).toEqual([]);
      expect(t!.createQuery?.params.map((p) => p.field) ?? []).toEqual(want);
      expect(Object.keys(objectView(t!.info.schema).properties)).toEqual([
        'environment_name',
        'wait_timer',
        ...want,
      ]);
      for (const f of want) expect(t!.info.createOnly).toContain(f);
    },
  );

  it('has no identity when listed objects carry no field holding the name, and says what to declare', () => {
    const read = { type: 'object', properties: { login: { type: 'string' } } };
    const doc = environments({ responses: ok(read) }, { get: { responses: ok(read) } });
    const { t } = only(doc);
    expect(t!.info.identity).toBeNull();
    expect(t!.info.identityReason).toBe(
      'PUT /repos/{owner}/{repo}/environments/{environment_name} creates the object at the address its creator names ({environment_name}), but the objects its GET returns have no field holding {environment_name}, so a listed object could not be matched to a declared one; name the field with x-tend-id-field on the read schema',
    );
    // The overlay names the field: the identity holds.
    const stated = environments(
      { responses: ok(read) },
      { get: { responses: ok({ ...read, 'x-tend-id-field': 'login' }) } },
    );
    const named = only(stated).t!;
    expect(named.info.identity).toBe('natural-key');
    expect(named.info.idField).toBe('login');
  });

  it('leaves a collection with a POST to the plain rule', () => {
    const doc = environments();
    (doc['paths'] as Record<string, Obj>)['/repos/{owner}/{repo}/environments']!['post'] = {
      requestBody: body({
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' } },
      }),
      responses: ok(ENVIRONMENT_READ),
    };
    const { t } = only(doc);
    expect(t!.operations.create).toEqual({
      method: 'POST',
      path: '/repos/{owner}/{repo}/environments',
      contentType: 'application/json',
    });
    expect(t!.createAtItem).toBeUndefined();
  });

  it('creates at the item path when an overlay declares the item PUT as the create', () => {
    const doc: Obj = {
      openapi: '3.0.0',
      info: { title: 'org', version: '1' },
      paths: {
        '/orgs/{org}/members': {
          get: {
            'x-tend-type': 'memberships',
            'x-tend-op': 'list',
            responses: ok({ type: 'array', items: ENVIRONMENT_READ }),
          },
        },
        '/orgs/{org}/memberships/{name}': {
          get: {
            'x-tend-type': 'memberships',
            'x-tend-op': 'read',
            responses: ok(ENVIRONMENT_READ),
          },
          put: {
            'x-tend-type': 'memberships',
            'x-tend-op': 'create',
            summary: 'Set organization membership for a user',
            requestBody: body(ENVIRONMENT_WRITE),
            responses: ok(ENVIRONMENT_READ),
          },
          delete: { 'x-tend-type': 'memberships', 'x-tend-op': 'delete', ...gone },
        },
      },
    };
    const { derived, t } = only(doc);
    expect(derived.warnings).toEqual([]);
    expect(t!.operations.list.path).toBe('/orgs/{org}/members');
    expect(t!.operations.create).toMatchObject({
      method: 'PUT',
      path: '/orgs/{org}/memberships/{name}',
    });
    expect(t!.createAtItem).toEqual({ param: 'name', inBody: false });
    expect(t!.info.identity).toBe('natural-key');
  });
});

describe('a child create body repeating a parent path parameter', () => {
  const parent = (p: string): PathParam => ({ kind: 'parent', param: p, type: 'parents' });
  it.each<{
    what: string;
    path: string;
    params: PathParam[];
    fields: string[];
    want: { params?: string[]; aliases?: Obj; inBody?: string[]; error?: string };
  }>([
    {
      what: 'the child’s own id: the parent’s field is renamed after the parent (Keycloak)',
      path: '/{realm}/clients/{id}/roles',
      params: [{ kind: 'provider', param: 'realm' }, parent('id')],
      fields: ['id', 'name', 'description'],
      want: { params: ['realm', 'client_id'], aliases: { client_id: 'id' }, inBody: [] },
    },
    {
      what: 'the child’s own name (LXD snapshots)',
      path: '/1.0/instances/{name}/snapshots',
      params: [parent('name')],
      fields: ['name', 'stateful'],
      want: { params: ['instance_name'], aliases: { instance_name: 'name' } },
    },
    {
      what: 'a field named after the parent is the parent’s value, sent in the body (Netlify)',
      path: '/sites/{site_id}/snippets',
      params: [parent('site_id')],
      fields: ['id', 'site_id', 'title'],
      want: { params: ['site_id'], aliases: {}, inBody: ['site_id'] },
    },
    {
      what: 'a parent collection of several words keeps them apart (LXD storage pools)',
      path: '/1.0/storage-pools/{name}/volumes/custom/{volume}/snapshots',
      params: [parent('name')],
      fields: ['name', 'expires_at'],
      want: { params: ['storage_pool_name'], aliases: { storage_pool_name: 'name' } },
    },
    {
      what: 'a taken new name falls back to parent_<param>',
      path: '/policies/{id}/rules',
      params: [parent('id')],
      fields: ['id', 'policy_id'],
      want: { params: ['parent_id'], aliases: { parent_id: 'id' } },
    },
    {
      what: 'a field that is neither the child’s own nor named after the parent is refused',
      path: '/zones/{target}/records',
      params: [parent('target')],
      fields: ['target', 'ttl'],
      want: {
        error:
          "the create body of /zones/{target}/records has a field target, which is also the path parameter {target} naming the parent; Tend cannot tell them apart (the field's name is neither the child's own, like id or name, nor named after the parent)",
      },
    },
    {
      what: 'every new name taken is refused',
      path: '/policies/{id}/rules',
      params: [parent('id')],
      fields: ['id', 'policy_id', 'parent_id'],
      want: {
        error:
          "the create body of /policies/{id}/rules has a field id, which is also the path parameter {id} naming the parent, and the names for the parent's field (policy_id, parent_id) are taken; Tend cannot tell them apart",
      },
    },
    {
      what: 'no clash: nothing changes',
      path: '/zones/{zone_id}/records',
      params: [parent('zone_id')],
      fields: ['name', 'ttl'],
      want: { params: ['zone_id'], aliases: {}, inBody: [] },
    },
  ])('$what', ({ path, params, fields, want }) => {
    const got = settleParentClash(path, params, fields);
    if (want.error !== undefined) {
      expect(got).toBe(want.error);
      return;
    }
    if (typeof got === 'string') throw new Error(got);
    if (want.params) expect(got.params.map((p) => p.param)).toEqual(want.params);
    if (want.aliases) expect(got.aliases).toEqual(want.aliases);
    if (want.inBody) expect(got.inBody).toEqual(want.inBody);
  });

  it('never renames a parent field onto a body field or another parameter', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom('id', 'name', 'client_id', 'parent_id', 'x', 'realm'), {
          minLength: 1,
        }),
        (fields) => {
          const got = settleParentClash(
            '/{realm}/clients/{id}/roles',
            [{ kind: 'provider', param: 'realm' }, parent('id')],
            fields,
          );
          if (typeof got === 'string') return;
          for (const field of Object.keys(got.aliases)) {
            expect(fields).not.toContain(field);
            expect(field).not.toBe('realm');
          }
        },
      ),
    );
  });
});

// --- the writes, against a real server -----------------------------------------------------------

describe('writes of objects created at their item path, against a real server', () => {
  let server: RecordingServer;
  const envs = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    envs.clear();
    // A platform like GitHub's environments: PUT /environments/{name} creates or replaces.
    server.handle((req, res) => {
      const m = /^\/repos\/o\/r\/environments(?:\/([^/?]+))?/.exec(req.url);
      if (!m) return json(res, 404, { message: 'no' });
      const name = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
      if (name === undefined) {
        return json(res, 200, { total_count: envs.size, environments: [...envs.values()] });
      }
      if (req.method === 'PUT') {
        const sent = JSON.parse(req.body || '{}') as Obj;
        const env = { id: 7, name, ...sent };
        envs.set(name, env);
        return json(res, 200, env);
      }
      if (req.method === 'GET') {
        const env = envs.get(name);
        return env ? json(res, 200, env) : json(res, 404, { message: 'Not Found' });
      }
      if (req.method === 'DELETE') {
        envs.delete(name);
        res.writeHead(204).end();
        return;
      }
      json(res, 405, {});
    });
  });

  const provider = async (doc: Obj) =>
    createOpenApiProvider({
      name: 'gh',
      document: await prepareOpenApiDocument(doc, 'inline'),
      endpoint: server.url,
      workspace: 'ws',
      parameters: { owner: 'o', repo: 'r' },
    });

  it('creates with PUT on the item path, the name in the path and not in the body', async () => {
    const p = await provider(environments());
    const created = await p.create(
      'environments',
      { environment_name: 'prod/eu', wait_timer: 5 },
      { actor: { actor: 't' } },
    );
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /repos/o/r/environments/prod%2Feu',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ wait_timer: 5 });
    expect(created.id).toBe('prod/eu');
    expect(created.fields).toMatchObject({ environment_name: 'prod/eu', name: 'prod/eu' });
  });

  it('sends the fields the create takes in its query string there, as a create on the collection does', async () => {
    const p = await provider(
      environments({
        parameters: [
          { name: 'region', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'dry_run', in: 'query', schema: { type: 'boolean' } },
        ],
      }),
    );
    const created = await p.create(
      'environments',
      { environment_name: 'prod', wait_timer: 5, region: 'eu west/1' },
      { actor: { actor: 't' } },
    );
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /repos/o/r/environments/prod?region=eu+west%2F1',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ wait_timer: 5 });
    expect(created.id).toBe('prod');
  });

  it('sends the idempotency key of the create where the PUT takes one, as a create on the collection does', async () => {
    const p = await provider(
      environments({
        parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } }],
      }),
    );
    expect(p.describe().types.find((x) => x.name === 'environments')?.idempotencyKey).toBe(true);
    await p.create(
      'environments',
      { environment_name: 'prod', wait_timer: 5 },
      { actor: { actor: 't' }, idempotencyKey: 'op-123' },
    );
    expect(server.requests[0]!.headers['idempotency-key']).toBe('op-123');
  });

  it('lists objects with their declared name, so a declared one is found again', async () => {
    envs.set('prod', { id: 1, name: 'prod', wait_timer: 5 });
    const p = await provider(environments());
    const listed = await p.list('environments');
    expect(listed.map((o) => [o.id, o.fields['environment_name']])).toEqual([['prod', 'prod']]);
  });

  it('reads the object back when the create answers with something else', async () => {
    // GitHub's secrets answer 201 {}: not the object.
    server.handle((req, res) => {
      if (req.method === 'PUT') return json(res, 201, {});
      return json(res, 200, { id: 9, name: 'prod', wait_timer: 3 });
    });
    const p = await provider(environments());
    const created = await p.create(
      'environments',
      { environment_name: 'prod', wait_timer: 3 },
      { actor: { actor: 't' } },
    );
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /repos/o/r/environments/prod',
      'GET /repos/o/r/environments/prod',
    ]);
    expect(created.id).toBe('prod');
  });

  it('replaces with the same PUT, without the name in the body', async () => {
    envs.set('prod', { id: 1, name: 'prod', wait_timer: 5 });
    const p = await provider(environments());
    const [current] = await p.list('environments');
    server.clear();
    await p.update('environments', 'prod', { wait_timer: 10 }, current!, { actor: { actor: 't' } });
    expect(server.requests[0]!.method).toBe('PUT');
    expect(server.requests[0]!.url).toBe('/repos/o/r/environments/prod');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ wait_timer: 10 });
  });

  it('refuses a create without the name, saying what to declare', async () => {
    const p = await provider(environments());
    let err: unknown;
    try {
      await p.create('environments', { wait_timer: 3 }, { actor: { actor: 't' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).message).toBe(
      'environments objects are created at /repos/{owner}/{repo}/environments/{environment_name}: declare environment_name, the name the object is created under',
    );
    expect(server.requests).toEqual([]);
  });
});

describe('writes of a child whose create body repeats a parent parameter, against a real server', () => {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => server.clear());

  const CHILD = {
    type: 'object',
    required: ['name'],
    properties: { id: { type: 'string' }, name: { type: 'string' }, site_id: { type: 'string' } },
  };
  const PARENT = {
    type: 'object',
    required: ['name'],
    properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } },
  };
  /** Parents at /{segment}/{param}, children at /{segment}/{param}/children/{child_name}. */
  const doc = (segment: string, param: string, child: Obj): Obj => ({
    openapi: '3.0.0',
    info: { title: 'nested', version: '1' },
    paths: {
      [`/${segment}`]: {
        get: { responses: ok({ type: 'array', items: PARENT }) },
        post: { requestBody: body(PARENT), responses: ok(PARENT) },
      },
      [`/${segment}/{${param}}`]: { get: { responses: ok(PARENT) }, delete: gone },
      [`/${segment}/{${param}}/children`]: {
        get: { responses: ok({ type: 'array', items: child }) },
        post: { requestBody: body(child), responses: { '201': { description: 'created' } } },
      },
      [`/${segment}/{${param}}/children/{name}`]: { get: { responses: ok(child) }, delete: gone },
    },
  });

  it('renames the parent field (client_id) and still fills the path’s {id} with it', async () => {
    const child = {
      type: 'object',
      required: ['name'],
      properties: { id: { type: 'string' }, name: { type: 'string' } },
    };
    server.handle((req, res) => {
      if (req.method === 'POST') return json(res, 201, { id: 'r-1', name: 'admin' });
      if (req.url === '/clients') return json(res, 200, [{ id: 'c-1', name: 'app' }]);
      return json(res, 200, [{ id: 'r-1', name: 'admin' }]);
    });
    const p = createOpenApiProvider({
      name: 'kc',
      document: await prepareOpenApiDocument(doc('clients', 'id', child), 'inline'),
      endpoint: server.url,
      workspace: 'ws',
    });
    const t = p.describe().types.find((x) => x.name === 'children')!;
    expect(t.parent).toEqual({ type: 'clients', field: 'client_id' });
    await p.create(
      'children',
      { client_id: 'c-1', id: 'r-1', name: 'admin' },
      { actor: { actor: 't' } },
    );
    expect(`${server.requests[0]!.method} ${server.requests[0]!.url}`).toBe(
      'POST /clients/c-1/children',
    );
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ id: 'r-1', name: 'admin' });
    server.clear();
    const listed = await p.list('children');
    expect(server.requests.map((r) => r.url)).toEqual(['/clients', '/clients/c-1/children']);
    expect(listed[0]!.fields).toMatchObject({ client_id: 'c-1', id: 'r-1', name: 'admin' });
  });

  it('sends a field named after the parent (site_id) with the parent’s value, in path and body', async () => {
    server.handle((req, res) => json(res, 201, { id: 's-1', name: 'x', site_id: 'abc' }));
    const p = createOpenApiProvider({
      name: 'nf',
      document: await prepareOpenApiDocument(doc('sites', 'site_id', CHILD), 'inline'),
      endpoint: server.url,
      workspace: 'ws',
    });
    await p.create('children', { site_id: 'abc', name: 'x' }, { actor: { actor: 't' } });
    expect(`${server.requests[0]!.method} ${server.requests[0]!.url}`).toBe(
      'POST /sites/abc/children',
    );
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ site_id: 'abc', name: 'x' });
  });
});

// --- singletons: one object per owner at a fixed path ---------------------------------------------

const PROTECTION = {
  type: 'object',
  properties: { enforce_admins: { type: 'boolean' }, url: { type: 'string', readOnly: true } },
};
/** GitHub's shape: branches listed (GET only), each with at most one protection. */
function protections(branchItem: Obj = { type: 'object', properties: { name: {} } }): Obj {
  return {
    openapi: '3.0.0',
    info: { title: 'forge', version: '1' },
    paths: {
      '/repos/{owner}/{repo}/branches': {
        get: { responses: ok({ type: 'array', items: branchItem }) },
      },
      '/repos/{owner}/{repo}/branches/{branch}/protection': {
        get: {
          parameters: [
            { name: 'branch', in: 'path', required: true, description: 'The name of the branch.' },
          ],
          responses: ok(PROTECTION),
        },
        put: {
          summary: 'Update branch protection',
          requestBody: body(PROTECTION),
          responses: ok(PROTECTION),
        },
        delete: gone,
      },
    },
  };
}

describe('deriving a singleton sub-resource', () => {
  it('is one object per owner: keyed by the owner, created and replaced by PUT, listed along the owners', () => {
    const { derived, t } = only(protections());
    expect(derived.warnings).toEqual([]);
    expect(t!.info.name).toBe('protection');
    expect(t!.collectionPath).toBe('/repos/{owner}/{repo}/branches/{branch}/protection');
    expect(t!.operations.list).toMatchObject({
      method: 'GET',
      path: '/repos/{owner}/{repo}/branches',
    });
    expect(t!.operations.create).toMatchObject({
      method: 'PUT',
      path: '/repos/{owner}/{repo}/branches/{branch}/protection',
    });
    expect(t!.operations.update?.method).toBe('PUT');
    expect(t!.singleton).toEqual({
      ownerKey: 'name',
      ownersPath: '/repos/{owner}/{repo}/branches',
    });
    expect(t!.info.identity).toBe('natural-key');
    expect(t!.info.idField).toBe('branch');
    expect(t!.keyFields).toEqual(['branch']);
    expect(t!.params.map((p) => p.param)).toEqual(['owner', 'repo']);
    expect(t!.identityWhy).toBe(
      'natural key branch: one object per {branch}, created and replaced by PUT /repos/{owner}/{repo}/branches/{branch}/protection and read there for every item of GET /repos/{owner}/{repo}/branches (its name); a second create writes the same object',
    );
  });

  it('is refused, saying why, when the owners’ list carries no field holding the owner’s key', () => {
    const { derived } = only(protections({ type: 'object', properties: { sha: {} } }));
    expect(derived.types).toEqual([]);
    expect(derived.unmapped).toContainEqual({
      path: '/repos/{owner}/{repo}/branches/{branch}/protection',
      reason:
        'GET, PUT and DELETE on /repos/{owner}/{repo}/branches/{branch}/protection: one object per {branch}, but the items of GET /repos/{owner}/{repo}/branches have no field holding {branch}, so Tend cannot list them; name the field with x-tend-id-field',
    });
  });

  it('is not an on/off switch whose GET answers 204 (a vote, a star)', () => {
    const doc = protections();
    const item = (doc['paths'] as Record<string, Obj>)[
      '/repos/{owner}/{repo}/branches/{branch}/protection'
    ]!;
    item['get'] = { responses: { '204': { description: 'voted' } } };
    expect(deriveTypes(doc).types).toEqual([]);
  });
});

describe('writes of a singleton, against a real server', () => {
  let server: RecordingServer;
  const protected_ = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer((req, res) => {
      if (req.url === '/repos/o/r/branches') {
        return json(res, 200, [{ name: 'main' }, { name: 'dev/x' }]);
      }
      const m = /^\/repos\/o\/r\/branches\/([^/]+)\/protection$/.exec(req.url);
      if (!m) return json(res, 404, { message: 'no' });
      const branch = decodeURIComponent(m[1]!);
      if (req.method === 'PUT') {
        const p = { ...(JSON.parse(req.body) as Obj), url: `u/${branch}` };
        protected_.set(branch, p);
        return json(res, 200, p);
      }
      if (req.method === 'DELETE') {
        protected_.delete(branch);
        res.writeHead(204).end();
        return;
      }
      const p = protected_.get(branch);
      return p ? json(res, 200, p) : json(res, 404, { message: 'Branch not protected' });
    });
  });
  afterAll(() => server.stop());

  it('lists the objects of every owner that has one, creates with PUT at the address, deletes', async () => {
    protected_.set('main', { enforce_admins: true, url: 'u/main' });
    const p = createOpenApiProvider({
      name: 'gh',
      document: await prepareOpenApiDocument(protections(), 'inline'),
      endpoint: server.url,
      workspace: 'ws',
      parameters: { owner: 'o', repo: 'r' },
    });
    const before = await p.list('protection');
    expect(before.map((o) => [o.id, o.fields['branch'], o.fields['enforce_admins']])).toEqual([
      ['main', 'main', true],
    ]);
    server.clear();
    const created = await p.create(
      'protection',
      { branch: 'dev/x', enforce_admins: false },
      { actor: { actor: 't' } },
    );
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'PUT /repos/o/r/branches/dev%2Fx/protection',
      'GET /repos/o/r/branches/dev%2Fx/protection',
    ]);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ enforce_admins: false });
    expect(created.id).toBe('dev/x');
    expect((await p.list('protection')).map((o) => o.id).sort()).toEqual(['dev/x', 'main']);
    await p.delete('protection', 'main', { actor: { actor: 't' } });
    expect((await p.list('protection')).map((o) => o.id)).toEqual(['dev/x']);
  });
});
