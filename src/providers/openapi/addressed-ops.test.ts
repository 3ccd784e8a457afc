import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../test/support/recording-server.js';
import { deriveTypes } from './derive-types.js';
import { fillPathValues } from './shapes/irregular-ops.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// Two declarations for a resource whose operations take different parameters (Discourse's users,
// issue 12): `x-tend-path-values` fixes a path parameter of one operation (the list at
// /admin/users/list/{flag}.json with flag active), and `x-tend-key-fields` on a declared update
// fills its path from fields of the object as last read (PUT /u/{username}.json for a user read and
// deleted by id).

type Obj = Record<string, unknown>;
const ok = (schema: unknown = { type: 'object' }): Obj => ({
  '200': { description: 'ok', content: { 'application/json': { schema } } },
});
const body = (schema: unknown): Obj => ({ content: { 'application/json': { schema } } });
const pathParam = (name: string, type = 'string'): Obj => ({
  name,
  in: 'path',
  required: true,
  schema: { type },
});
const USER = {
  type: 'object',
  properties: {
    id: { type: 'integer', readOnly: true },
    username: { type: 'string' },
    name: { type: 'string' },
    email: { type: 'string' },
  },
};
const decl = (role: string): Obj => ({ 'x-tend-type': 'users', 'x-tend-op': role });

/** Discourse's users, as the corpus overlay declares them. */
function forum(change: (paths: Record<string, Record<string, Obj>>) => void = () => {}): Obj {
  const paths: Record<string, Record<string, Obj>> = {
    '/admin/users/list/{flag}.json': {
      get: {
        ...decl('list'),
        'x-tend-path-values': { flag: 'active' },
        'x-tend-pagination': { style: 'page', param: 'page', start: 1 },
        parameters: [
          { ...pathParam('flag'), schema: { type: 'string', enum: ['active', 'new', 'staff'] } },
        ],
        responses: ok({ type: 'array', items: USER }),
      },
    },
    '/users.json': {
      post: {
        ...decl('create'),
        'x-tend-id-field': 'user_id',
        'x-tend-identity': 'natural-key',
        'x-tend-natural-key': 'username',
        requestBody: body({
          type: 'object',
          required: ['username', 'email', 'name', 'password'],
          properties: {
            username: { type: 'string' },
            email: { type: 'string' },
            name: { type: 'string' },
            password: { type: 'string', writeOnly: true },
          },
        }),
        responses: ok({
          type: 'object',
          properties: { success: { type: 'boolean' }, user_id: { type: 'integer' } },
        }),
      },
    },
    '/admin/users/{id}.json': {
      get: { ...decl('read'), parameters: [pathParam('id', 'integer')], responses: ok(USER) },
      delete: { ...decl('delete'), parameters: [pathParam('id', 'integer')], responses: ok() },
    },
    '/u/{username}.json': {
      put: {
        ...decl('update'),
        'x-tend-key-fields': { username: 'username' },
        parameters: [pathParam('username')],
        requestBody: body({
          type: 'object',
          properties: { name: { type: 'string' }, email: { type: 'string' } },
        }),
        responses: ok({ type: 'object', properties: { success: { type: 'string' } } }),
      },
    },
  };
  change(paths);
  return { openapi: '3.1.0', info: { title: 'forum', version: '1' }, paths };
}

describe('x-tend-path-values: an operation that always takes one value for a path parameter', () => {
  const get = { get: { 'x-tend-path-values': { flag: 'active' } } };
  const cases: {
    name: string;
    paths: Record<string, Record<string, unknown>>;
    expected: string[];
    warning?: string;
  }[] = [
    {
      name: 'the value is written into the path, which stands for the document’s',
      paths: { '/users/list/{flag}.json': get },
      expected: ['/users/list/active.json'],
    },
    {
      name: 'the other methods and the path-level parameters stay on the document’s path',
      paths: {
        '/users/list/{flag}': {
          parameters: [pathParam('flag')],
          ...get,
          put: { description: 'x' },
        },
      },
      expected: ['/users/list/{flag}', '/users/list/active'],
    },
    {
      name: 'a value is URI-encoded; the parameters not named keep their place',
      paths: {
        '/orgs/{org}/list/{flag}': { get: { 'x-tend-path-values': { flag: 'a/b c' } } },
      },
      expected: ['/orgs/{org}/list/a%2Fb%20c'],
    },
    {
      name: 'a number is a value too',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': { flag: 2 } } } },
      expected: ['/users/list/2'],
    },
    {
      name: 'a path that has the same path for another method keeps it',
      paths: { '/users/list/{flag}': get, '/users/list/active': { put: { description: 'x' } } },
      expected: ['/users/list/active'],
    },
    {
      name: 'a path without parameters has nothing to fill',
      paths: { '/users/list': { get: { 'x-tend-path-values': { flag: 'active' } } } },
      expected: ['/users/list'],
      warning:
        'GET /users/list: x-tend-path-values names {flag}, which is not a parameter of the path (it has none); ignored',
    },
    {
      name: 'an empty mapping is refused',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': {} } } },
      expected: ['/users/list/{flag}'],
      warning:
        'GET /users/list/{flag}: x-tend-path-values must map path parameters to values ({flag: <value>}); ignored',
    },
    {
      name: 'a parameter the path does not have is refused',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': { kind: 'active' } } } },
      expected: ['/users/list/{flag}'],
      warning:
        'GET /users/list/{flag}: x-tend-path-values names {kind}, which is not a parameter of the path ({flag}); ignored',
    },
    {
      name: 'a value that is not a string or a number is refused',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': { flag: ['a'] } } } },
      expected: ['/users/list/{flag}'],
      warning:
        'GET /users/list/{flag}: x-tend-path-values gives {flag} ["a"]: a value must be a string or a number; ignored',
    },
    {
      name: 'an empty value is refused',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': { flag: '' } } } },
      expected: ['/users/list/{flag}'],
      warning: 'GET /users/list/{flag}: x-tend-path-values gives {flag} an empty value; ignored',
    },
    {
      name: 'not a mapping is refused, with the form to write',
      paths: { '/users/list/{flag}': { get: { 'x-tend-path-values': 'active' } } },
      expected: ['/users/list/{flag}'],
      warning:
        'GET /users/list/{flag}: x-tend-path-values must map path parameters to values ({flag: <value>}); ignored',
    },
    {
      name: 'a path the document already has with that operation is not overwritten',
      paths: { '/users/list/{flag}': get, '/users/list/active': { get: {} } },
      expected: ['/users/list/{flag}', '/users/list/active'],
      warning:
        'GET /users/list/{flag}: x-tend-path-values makes it GET /users/list/active, which the document already has; ignored',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const paths = structuredClone<Record<string, Record<string, unknown>>>(c.paths);
      const warnings: string[] = [];
      const moved: [string, string][] = [];
      fillPathValues(paths, warnings, (from, to) => moved.push([from, to]));
      expect(Object.keys(paths)).toEqual(c.expected);
      expect(warnings).toEqual(c.warning === undefined ? [] : [c.warning]);
      expect(moved.length).toBe(c.warning === undefined ? 1 : 0);
    });
  }

  it('takes the path-level parameters along, and keeps what the target path had', () => {
    const paths: Record<string, Record<string, unknown>> = {
      '/orgs/{org}/list/{flag}': {
        parameters: [pathParam('org'), pathParam('flag')],
        get: { 'x-tend-path-values': { flag: 'all' } },
      },
      '/orgs/{org}/list/all': { put: { description: 'kept' }, summary: 'its own' },
    };
    fillPathValues(paths, [], () => {});
    expect(paths['/orgs/{org}/list/all']).toEqual({
      put: { description: 'kept' },
      summary: 'its own',
      parameters: [pathParam('org'), pathParam('flag')],
      get: { 'x-tend-path-values': { flag: 'all' } },
    });
  });

  it('never changes the document it was given', () => {
    const doc = forum();
    const before = JSON.stringify(doc);
    deriveTypes(doc);
    expect(JSON.stringify(doc)).toBe(before);
  });
});

describe('a type read and deleted by id, listed with a fixed flag, updated by another field', () => {
  it('derives one type: each operation on its own path, the update filled from username', () => {
    const derived = deriveTypes(forum());
    expect(derived.warnings).toEqual([]);
    const t = derived.types.find((x) => x.info.name === 'users')!;
    expect(t.collectionPath).toBe('/admin/users');
    expect(t.itemPath).toBe('/admin/users/{id}');
    expect(t.operations.list.path).toBe('/admin/users/list/active.json');
    expect(t.operations.read.path).toBe('/admin/users/{id}.json');
    expect(t.operations.create.path).toBe('/users.json');
    expect(t.operations.update?.path).toBe('/u/{username}.json');
    expect(t.operations.update?.addressedBy).toEqual({ username: 'username' });
    expect(t.operations.delete?.path).toBe('/admin/users/{id}.json');
    expect(t.operations.read.addressedBy).toBeUndefined();
    expect(t.info.naturalKey).toBe('username');
    // Every path of the document is used or explained; the list's is used, not "unmapped".
    expect(derived.unmapped.map((u) => u.path)).not.toContain('/admin/users/list/{flag}.json');
  });

  const refused: {
    name: string;
    change: (p: Record<string, Record<string, Obj>>) => void;
    warning: string;
    /** The update's own declaration stays valid. */
    keeps?: boolean;
  }[] = [
    {
      name: 'a key field naming a parameter the path does not have',
      change: (p) =>
        void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = { login: 'username' }),
      warning:
        'x-tend-type users: PUT /u/{username}.json: x-tend-key-fields names {login}, which is not a parameter of the path; ignored',
    },
    {
      name: 'a key field that is not a field name',
      change: (p) => void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = { username: 3 }),
      warning:
        'x-tend-type users: PUT /u/{username}.json: x-tend-key-fields gives {username} 3: it must name a field of the object; ignored',
    },
    {
      name: 'a key field with an empty name',
      change: (p) =>
        void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = { username: '' }),
      warning:
        'x-tend-type users: PUT /u/{username}.json: x-tend-key-fields gives {username} "": it must name a field of the object; ignored',
    },
    {
      name: 'empty key fields',
      change: (p) => void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = {}),
      warning:
        'x-tend-type users: PUT /u/{username}.json: x-tend-key-fields on an update must map its path parameters to fields of the object ({username: <field>}); ignored',
    },
    {
      name: 'key fields that are not a mapping',
      change: (p) => void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = 'username'),
      warning:
        'x-tend-type users: PUT /u/{username}.json: x-tend-key-fields on an update must map its path parameters to fields of the object ({username: <field>}); ignored',
    },
    {
      name: 'a parameter neither declared nor above the id',
      change: (p) => {
        const put = p['/u/{username}.json']!['put']!;
        delete p['/u/{username}.json'];
        p['/u/{site}/{username}.json'] = { put };
      },
      warning:
        'x-tend-type users: PUT /u/{site}/{username}.json: its path parameters {site} are neither named in x-tend-key-fields nor parameters of /admin/users/{id} above the id; ignored',
    },
    {
      name: 'key fields on a read (Tend has only the id then)',
      change: (p) =>
        void (p['/admin/users/{id}.json']!['get']!['x-tend-key-fields'] = { id: 'id' }),
      warning:
        'x-tend-type users: GET /admin/users/{id}.json: x-tend-key-fields on an operation is taken only on the update (Tend reads and deletes an object by its id alone); ignored here',
      keeps: true,
    },
  ];
  for (const c of refused) {
    it(`says so for ${c.name}, and does not take the declaration`, () => {
      const derived = deriveTypes(forum(c.change));
      expect(derived.warnings).toContain(c.warning);
      const t = derived.types.find((x) => x.info.name === 'users');
      expect(t?.operations.read.addressedBy).toBeUndefined();
      if (c.keeps !== true) expect(t?.operations.update?.addressedBy).toBeUndefined();
    });
  }

  it('an update declared without key fields is not addressed by fields (its id fills the path)', () => {
    const derived = deriveTypes(
      forum((p) => {
        const put = p['/u/{username}.json']!['put']!;
        delete put['x-tend-key-fields'];
        delete p['/u/{username}.json'];
        p['/admin/users/{id}/profile.json'] = {
          put: { ...put, parameters: [pathParam('id', 'integer')] },
        };
      }),
    );
    const t = derived.types.find((x) => x.info.name === 'users')!;
    expect(t.operations.update?.path).toBe('/admin/users/{id}/profile.json');
    expect(t.operations.update?.addressedBy).toBeUndefined();
  });

  it('warns when the read object has no such field: the path could never be filled', () => {
    const derived = deriveTypes(
      forum(
        (p) => void (p['/u/{username}.json']!['put']!['x-tend-key-fields'] = { username: 'login' }),
      ),
    );
    expect(derived.warnings).toContain(
      'users: PUT /u/{username}.json takes {username} from the field login, which the object read has no property for; the update will fail unless the platform answers it',
    );
  });
});

describe('requests of a type on four paths, against a real server', () => {
  let server: RecordingServer;
  const users = new Map<number, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    users.clear();
    let next = 10;
    server.handle((req, res) => {
      const url = new URL(req.url, 'http://x');
      const sent = req.body ? (JSON.parse(req.body) as Obj) : {};
      if (req.method === 'GET' && url.pathname === '/admin/users/list/active.json') {
        // Two per page, 1-based (page 0 is page 1, as Discourse reads it); an empty page ends.
        const page = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
        return json(res, 200, [...users.values()].slice((page - 1) * 2, page * 2));
      }
      if (req.method === 'POST' && url.pathname === '/users.json') {
        const { password: _secret, ...rest } = sent;
        const made = { id: ++next, ...rest };
        users.set(made.id, made);
        return json(res, 200, { success: true, active: true, message: 'ok', user_id: made.id });
      }
      const byName = /^\/u\/([^/]+)\.json$/.exec(url.pathname);
      if (req.method === 'PUT' && byName) {
        const found = [...users.values()].find(
          (u) => u['username'] === decodeURIComponent(byName[1]!),
        );
        if (found === undefined) return json(res, 404, { errors: ['not found'] });
        Object.assign(found, sent);
        return json(res, 200, { success: 'OK', user: found });
      }
      const byId = /^\/admin\/users\/(\d+)\.json$/.exec(url.pathname);
      const found = byId ? users.get(Number(byId[1])) : undefined;
      if (found === undefined) return json(res, 404, { errors: ['not found'] });
      if (req.method === 'GET') return json(res, 200, found);
      if (req.method === 'DELETE') {
        users.delete(found['id'] as number);
        return json(res, 200, { deleted: true });
      }
      json(res, 405, {});
    });
  });

  const provider = async () =>
    createOpenApiProvider({
      name: 'forum',
      document: await prepareOpenApiDocument(forum(), 'inline'),
      endpoint: server.url,
      workspace: 'w',
    });

  it('lists every page of the fixed flag, creates, updates by username, deletes by id', async () => {
    for (const username of ['system', 'alice', 'bob']) {
      const id = users.size + 1;
      users.set(id, { id, username, name: username, email: `${username}@example.org` });
    }
    const p = await provider();
    const listed = await p.list('users');
    expect(listed.map((o) => o.fields['username'])).toEqual(['system', 'alice', 'bob']);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /admin/users/list/active.json?page=1',
      'GET /admin/users/list/active.json?page=2',
      'GET /admin/users/list/active.json?page=3',
    ]);
    server.clear();
    const created = await p.create(
      'users',
      { username: 'carol', email: 'c@example.org', name: 'Carol', password: 's3cret-pw' },
      { actor: { actor: 't' } },
    );
    expect(created.id).toBe('11');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /users.json',
      'GET /admin/users/11.json',
    ]);
    server.clear();
    await p.update(
      'users',
      '11',
      { username: 'carol', email: 'c@example.org', name: 'Carol C.' },
      created,
      { actor: { actor: 't' } },
    );
    expect(server.requests[0]!.method).toBe('PUT');
    expect(server.requests[0]!.url).toBe('/u/carol.json');
    expect(users.get(11)?.['name']).toBe('Carol C.');
    server.clear();
    await p.delete('users', '11', { actor: { actor: 't' } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /admin/users/11.json',
    ]);
    expect(users.has(11)).toBe(false);
  });

  it('addresses the update by the username as last read, not the one the change asks for', async () => {
    users.set(5, { id: 5, username: 'Dave Ops', name: 'Dave' });
    const p = await provider();
    const current = (await p.read('users', '5'))!;
    server.clear();
    await p.update('users', '5', { username: 'dave', name: 'Dave O.' }, current, {
      actor: { actor: 't' },
    });
    expect(server.requests[0]!.url).toBe('/u/Dave%20Ops.json');
  });

  it('says which field it lacks when the object as last read has no value there', async () => {
    users.set(6, { id: 6, name: 'nameless' });
    const p = await provider();
    const current = (await p.read('users', '6'))!;
    server.clear();
    await expect(
      p.update('users', '6', { username: 'x', name: 'y' }, current, { actor: { actor: 't' } }),
    ).rejects.toThrow(
      'users 6: PUT /u/{username}.json takes {username} from the field username, and the object as last read has no such field',
    );
    expect(server.requests).toEqual([]);
  });
});

describe('what inspect says of a list by a filter nobody declared', () => {
  const listBy = (schema: Obj): Obj => ({
    openapi: '3.1.0',
    info: { title: 'forum', version: '1' },
    paths: {
      '/admin/users/list/{flag}.json': {
        get: { parameters: [{ ...pathParam('flag'), schema }], responses: ok() },
      },
    },
  });
  const reasonOf = (doc: Obj) =>
    deriveTypes(doc).unmapped.find((u) => u.path === '/admin/users/list/{flag}.json')?.reason;

  it('names the values and what to declare when the parameter takes one of a few', () => {
    expect(reasonOf(listBy({ type: 'string', enum: ['active', 'new', 'staff'] }))).toBe(
      'GET only: read-only, nothing for Tend to manage; {flag} is one of active, new, staff: if one of them lists every object of a type, declare x-tend-type: <type>, x-tend-op: list and x-tend-path-values: {flag: <value>} on this GET',
    );
  });

  it('says only that it is read-only when the parameter is free (an id, a name)', () => {
    expect(reasonOf(listBy({ type: 'string' }))).toBe(
      'GET only: read-only, nothing for Tend to manage',
    );
    expect(reasonOf(listBy({ type: 'string', enum: ['only'] }))).toBe(
      'GET only: read-only, nothing for Tend to manage',
    );
  });
});
