import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import type { CreateQuery } from './create-query.js';
import { createQueryOf, splitCreate } from './create-query.js';
import { deriveTypes } from '../derive-types.js';
import { inspectOpenApi } from '../inspect.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';
import { overlaySkeleton } from '../overlay-skeleton.js';

// Creates whose fields travel in the query string, and an array body as one field (create-query.ts):
// Docker's plugins, `POST /plugins/pull?remote=…&name=…` with the accepted privileges as the body.

type Obj = Record<string, unknown>;
const q = (name: string, required = false, extra: Obj = {}): Obj => ({
  name,
  in: 'query',
  ...(required ? { required: true } : {}),
  schema: { type: 'string' },
  ...extra,
});
const PRIVILEGES = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      Name: { type: 'string' },
      Description: { type: 'string' },
      Value: { type: 'array', items: { type: 'string' } },
    },
  },
};
const READ_FIELDS = ['Id', 'Name', 'Enabled', 'Settings', 'PluginReference', 'Config'];

describe('which query parameters and bodies of a create are fields', () => {
  const cases: {
    name: string;
    params: Obj[];
    op?: Obj;
    body?: unknown;
    readFields?: string[];
    want: Omit<CreateQuery, 'skipped'> | undefined;
    skipped?: string[];
    required?: string[];
    writeOnly?: string[];
    warning?: string;
  }[] = [
    {
      name: 'Docker plugins: a required parameter is a field; one named like a read field (case aside) is only noted',
      params: [q('remote', true), q('name'), { name: 'X-Registry-Auth', in: 'header' }],
      op: { 'x-codegen-request-body-name': 'body' },
      body: PRIVILEGES,
      want: {
        params: [{ param: 'remote', field: 'remote', readBack: false, why: 'required' }],
        bodyField: 'body',
      },
      skipped: [
        'name: optional; the read has Name: if it holds this value, declare x-tend-query-fields: {name: Name}',
      ],
      required: ['remote'],
      writeOnly: ['body', 'remote'],
    },
    {
      name: 'the overlay names the array body and the pairing of each parameter',
      params: [q('remote', true), q('name')],
      op: {
        'x-tend-body-field': 'privileges',
        'x-tend-query-fields': { remote: 'PluginReference', name: 'Name' },
      },
      body: PRIVILEGES,
      want: {
        params: [
          { param: 'remote', field: 'PluginReference', readBack: true, why: 'x-tend-query-fields' },
          { param: 'name', field: 'Name', readBack: true, why: 'x-tend-query-fields' },
        ],
        bodyField: 'privileges',
      },
      skipped: [],
      required: ['PluginReference'],
      writeOnly: ['privileges'],
    },
    {
      name: 'a declaration replaces the inference: a parameter it leaves out is not a field',
      params: [q('remote', true), q('name')],
      op: { 'x-tend-query-fields': { name: 'Name' } },
      body: PRIVILEGES,
      want: {
        params: [{ param: 'name', field: 'Name', readBack: true, why: 'x-tend-query-fields' }],
        bodyField: 'body',
      },
      skipped: ['remote: not in x-tend-query-fields'],
    },
    {
      name: 'an optional parameter the read answers under exactly its name is a field, read back',
      params: [q('name')],
      body: { type: 'object', properties: { Labels: { type: 'object' } } },
      readFields: ['name', 'Labels'],
      want: {
        params: [
          { param: 'name', field: 'name', readBack: true, why: 'the read answers it as name' },
        ],
      },
      skipped: [],
      writeOnly: [],
    },
    {
      name: 'an optional parameter the read does not answer is no field; inspect says what to declare',
      params: [q('dry_run')],
      body: { type: 'object', properties: { Name: { type: 'string' } } },
      want: { params: [] },
      skipped: [
        'dry_run: optional, and the read has no field of that name; if it is one, declare x-tend-query-fields',
      ],
    },
    {
      name: 'a parameter the object body has already stays in the body (PowerDNS ?rrsets=true)',
      params: [q('rrsets', false, { schema: { type: 'boolean' } })],
      body: { type: 'object', properties: { rrsets: { type: 'array' } } },
      readFields: ['rrsets'],
      want: { params: [] },
      skipped: ['rrsets: the body has a field rrsets already'],
    },
    {
      name: 'two read fields that differ only by case: ambiguous, so a required one keeps its name',
      params: [q('name', true)],
      body: { type: 'object', properties: { Labels: { type: 'object' } } },
      readFields: ['Name', 'NAME'],
      want: { params: [{ param: 'name', field: 'name', readBack: false, why: 'required' }] },
      skipped: [],
      required: ['name'],
      writeOnly: ['name'],
    },
    {
      name: 'a create with no query parameters and an object body: nothing to say',
      params: [],
      body: { type: 'object', properties: { Name: { type: 'string' } } },
      want: undefined,
    },
    {
      name: 'x-tend-body-field on an object body is ignored, with a warning',
      params: [],
      op: { 'x-tend-body-field': 'privileges' },
      body: { type: 'object', properties: { Name: { type: 'string' } } },
      want: undefined,
      warning:
        "plugins: POST /plugins/pull: x-tend-body-field names privileges, but the body is not an array (its fields are the type's fields already); ignored",
    },
    {
      name: 'x-tend-body-field that is not a name is ignored, with a warning',
      params: [],
      op: { 'x-tend-body-field': 3 },
      body: PRIVILEGES,
      want: { params: [], bodyField: 'body' },
      skipped: [],
      warning:
        'plugins: POST /plugins/pull: x-tend-body-field must be a field name (the field holding the array body); ignored',
    },
    {
      name: 'x-tend-query-fields naming a parameter the create does not have is ignored, with a warning',
      params: [q('remote', true)],
      op: { 'x-tend-query-fields': { tag: 'Tag' } },
      body: PRIVILEGES,
      want: { params: [], bodyField: 'body' },
      skipped: ['remote: not in x-tend-query-fields'],
      warning:
        'plugins: POST /plugins/pull: x-tend-query-fields names tag, which is not a query parameter of the create (it has remote); ignored',
    },
    {
      name: 'x-tend-query-fields with a value that is not a field name is ignored, with a warning',
      params: [q('remote', true)],
      op: { 'x-tend-query-fields': { remote: true } },
      body: PRIVILEGES,
      want: { params: [], bodyField: 'body' },
      skipped: [],
      warning:
        'plugins: POST /plugins/pull: x-tend-query-fields: remote must name the field holding its value; ignored',
    },
    {
      name: 'x-tend-query-fields that is not a map is ignored, with a warning (and inference runs)',
      params: [q('remote', true)],
      op: { 'x-tend-query-fields': 'remote' },
      body: PRIVILEGES,
      want: {
        params: [{ param: 'remote', field: 'remote', readBack: false, why: 'required' }],
        bodyField: 'body',
      },
      skipped: [],
      warning:
        'plugins: POST /plugins/pull: x-tend-query-fields must map each query parameter to the field holding it ({name: Name}); ignored',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const warnings: string[] = [];
      const got = createQueryOf({
        typeName: 'plugins',
        where: 'POST /plugins/pull',
        pathItem: {},
        op: { parameters: c.params, ...c.op },
        body: c.body as Obj | undefined,
        readFields: c.readFields ?? READ_FIELDS,
        warnings,
      });
      if (c.want === undefined) {
        expect(got.query).toBeUndefined();
        expect(got.schema).toBe(c.body);
      } else {
        expect(got.query).toEqual({ ...c.want, skipped: c.skipped ?? [] });
      }
      expect(warnings).toEqual(c.warning !== undefined ? [c.warning] : []);
      const props = (got.schema?.['properties'] ?? {}) as Record<string, Obj>;
      if (c.required !== undefined) expect(got.schema?.['required']).toEqual(c.required);
      if (c.writeOnly !== undefined) {
        expect(Object.keys(props).filter((k) => props[k]!['writeOnly'] === true)).toEqual(
          c.writeOnly,
        );
      }
    });
  }

  it('a create without a body sends its query fields alone', () => {
    const got = createQueryOf({
      typeName: 'tokens',
      where: 'POST /tokens',
      pathItem: { parameters: [q('name', true)] },
      op: {},
      body: undefined,
      readFields: ['name'],
      warnings: [],
    });
    expect(got.query).toEqual({
      params: [
        { param: 'name', field: 'name', readBack: true, why: 'the read answers it as name' },
      ],
      skipped: [],
      noBody: true,
    });
    expect(got.schema).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
  });
});

describe('what a create sends where', () => {
  const plugin: CreateQuery = {
    params: [
      { param: 'remote', field: 'remote', readBack: false, why: 'required' },
      { param: 'name', field: 'Name', readBack: true, why: 'x' },
    ],
    bodyField: 'privileges',
    skipped: [],
  };
  const cases: {
    name: string;
    query: CreateQuery | undefined;
    fields: Obj;
    want: { query?: Record<string, string>; body: unknown };
  }[] = [
    {
      name: 'no query fields: the fields are the body',
      query: undefined,
      fields: { Name: 'a' },
      want: { body: { Name: 'a' } },
    },
    {
      name: 'query fields by their parameter names, the array field as the body',
      query: plugin,
      fields: { remote: 'vieux/sshfs', Name: 'sshfs:latest', privileges: [{ Name: 'network' }] },
      want: {
        query: { remote: 'vieux/sshfs', name: 'sshfs:latest' },
        body: [{ Name: 'network' }],
      },
    },
    {
      name: 'a field without a value is not sent; no array, no body',
      query: plugin,
      fields: { remote: 'vieux/sshfs', Name: null },
      want: { query: { remote: 'vieux/sshfs' }, body: undefined },
    },
    {
      name: 'query fields next to an object body leave it; a non-text value is sent as JSON',
      query: {
        params: [{ param: 'force', field: 'force', readBack: false, why: 'required' }],
        skipped: [],
      },
      fields: { force: true, Labels: { a: 'b' } },
      want: { query: { force: 'true' }, body: { Labels: { a: 'b' } } },
    },
    {
      name: 'a create without a body sends none',
      query: {
        params: [{ param: 'name', field: 'name', readBack: true, why: 'required' }],
        skipped: [],
        noBody: true,
      },
      fields: { name: 'x' },
      want: { query: { name: 'x' }, body: undefined },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(splitCreate(c.query, c.fields)).toEqual(c.want);
    });
  }
});

const ok = (schema?: unknown) => ({
  '200': {
    description: 'ok',
    ...(schema !== undefined ? { content: { 'application/json': { schema } } } : {}),
  },
});
const nameParam = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
const PLUGIN = {
  type: 'object',
  required: ['Name', 'Enabled'],
  properties: {
    Id: { type: 'string' },
    Name: { type: 'string' },
    Enabled: { type: 'boolean' },
    PluginReference: { type: 'string' },
  },
};
const decl = (role: string) => ({ 'x-tend-type': 'plugins', 'x-tend-op': role });

/** Docker's plugin operations, as the corpus overlay declares them (overlays/docker-engine.yaml). */
function engine(create: Obj = {}): Obj {
  return {
    openapi: '3.0.0',
    info: { title: 'engine', version: '1' },
    paths: {
      '/plugins': { get: { ...decl('list'), responses: ok({ type: 'array', items: PLUGIN }) } },
      '/plugins/pull': {
        post: {
          ...decl('create'),
          'x-tend-identity': 'natural-key',
          'x-tend-natural-key': 'Name',
          'x-codegen-request-body-name': 'body',
          'x-tend-query-fields': { remote: 'remote', name: 'Name' },
          parameters: [
            q('remote', true),
            q('name'),
            { name: 'X-Registry-Auth', in: 'header', schema: { type: 'string' } },
          ],
          requestBody: { content: { 'application/json': { schema: PRIVILEGES } } },
          responses: { '204': { description: 'no error' } },
          ...create,
        },
      },
      '/plugins/{name}/json': {
        get: { ...decl('read'), parameters: [nameParam], responses: ok(PLUGIN) },
      },
      '/plugins/{name}': {
        delete: { ...decl('delete'), parameters: [nameParam], responses: ok(PLUGIN) },
      },
    },
  };
}

describe('Docker plugins, derived and inspected', () => {
  it('is one type keyed by Name, with the query fields and the array body as fields', () => {
    const derived = deriveTypes(engine({ 'x-tend-body-field': 'privileges' }));
    expect(derived.warnings).toEqual([]);
    const t = derived.types.find((x) => x.info.name === 'plugins')!;
    expect(t.operations.create.path).toBe('/plugins/pull');
    expect(t.writableFields).toEqual(['privileges', 'remote', 'Name']);
    expect(t.info.identity).toBe('natural-key');
    expect(t.info.idField).toBe('Name');
    expect(t.writeOnly).toEqual(['privileges', 'remote']);
    expect(t.info.createOnly).toEqual(['privileges', 'remote', 'Name']);
    expect(t.createQuery?.bodyField).toBe('privileges');
  });

  it('inspect shows the query fields; the skeleton writes them for the overlay', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tend-create-query-')), 'engine.json');
    // Without the declaration: what inference finds, and what inspect says of the rest.
    writeFileSync(file, JSON.stringify(engine({ 'x-tend-query-fields': undefined })));
    const report = await inspectOpenApi(file);
    const t = report.types.find((x) => x.name === 'plugins')!;
    expect(t.createQuery).toEqual({
      query: [{ param: 'remote', field: 'remote', readBack: false, why: 'required' }],
      bodyField: 'body',
      skipped: [
        'name: optional; the read has Name: if it holds this value, declare x-tend-query-fields: {name: Name}',
      ],
    });
    const skeleton = overlaySkeleton(report);
    expect(skeleton).toContain(
      '# x-tend-query-fields: { remote: remote } # as found: sent in the query (parameter: field)',
    );
    expect(skeleton).toContain(
      '# x-tend-body-field: body # as found: the field holding the array body',
    );
  });
});

describe('Docker plugins against a real server: the query and the body sent', () => {
  let server: RecordingServer;
  const plugins = new Map<string, Obj>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    plugins.clear();
    server.handle((req, res) => {
      const url = new URL(req.url, 'http://x');
      if (req.method === 'GET' && url.pathname === '/plugins') {
        return json(res, 200, [...plugins.values()]);
      }
      if (req.method === 'POST' && url.pathname === '/plugins/pull') {
        const remote = url.searchParams.get('remote');
        if (remote === null) return json(res, 400, { message: 'remote is required' });
        // As the document says: "The `:latest` tag is optional, and is used as the default".
        const given = url.searchParams.get('name') ?? remote;
        const name = given.includes(':') ? given : `${given}:latest`;
        plugins.set(name, { Id: `id-${plugins.size + 1}`, Name: name, Enabled: false });
        res.writeHead(204).end();
        return;
      }
      const m = /^\/plugins\/([^/]+)(\/json)?$/.exec(url.pathname);
      const found = m ? plugins.get(decodeURIComponent(m[1]!)) : undefined;
      if (found === undefined) return json(res, 404, { message: 'plugin is not installed' });
      if (req.method === 'GET' && m![2] === '/json') return json(res, 200, found);
      if (req.method === 'DELETE' && m![2] === undefined) {
        plugins.delete(found['Name'] as string);
        return json(res, 200, found);
      }
      json(res, 405, {});
    });
  });

  it('pulls with remote and name in the query and the privileges as the body; lists; deletes by name', async () => {
    const p = createOpenApiProvider({
      name: 'docker',
      document: await prepareOpenApiDocument(
        engine({ 'x-tend-body-field': 'privileges' }),
        'inline',
      ),
      endpoint: server.url,
      workspace: 'w',
    });
    const privileges = [{ Name: 'network', Description: '', Value: ['host'] }];
    const created = await p.create(
      'plugins',
      { remote: 'vieux/sshfs', Name: 'sshfs&co:latest', privileges },
      { actor: { actor: 't' } },
    );
    expect(created.id).toBe('sshfs&co:latest');
    expect(created.fields['Name']).toBe('sshfs&co:latest');
    const pull = server.requests[0]!;
    expect(`${pull.method} ${pull.url}`).toBe(
      'POST /plugins/pull?remote=vieux%2Fsshfs&name=sshfs%26co%3Alatest',
    );
    expect(pull.headers['content-type']).toBe('application/json');
    expect(JSON.parse(pull.body)).toEqual(privileges);
    expect(server.requests.slice(1).map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /plugins/sshfs%26co%3Alatest/json',
    ]);

    server.clear();
    const listed = await p.list('plugins');
    expect(listed.map((o) => [o.id, o.fields['Name']])).toEqual([
      ['sshfs&co:latest', 'sshfs&co:latest'],
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /plugins']);

    server.clear();
    await p.delete('plugins', 'sshfs&co:latest', { actor: { actor: 't' } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /plugins/sshfs%26co%3Alatest',
    ]);
    expect(plugins.size).toBe(0);
  });
});

/** A user created by `POST /users?password=…`: the query parameter `pw` as `param` says. */
function users(param: Obj, readExtra: Obj = {}): Obj {
  const USER = {
    type: 'object',
    properties: { id: { type: 'integer', readOnly: true }, name: { type: 'string' }, ...readExtra },
  };
  return {
    openapi: '3.0.0',
    info: { title: 'accounts', version: '1' },
    paths: {
      '/users': {
        get: { responses: ok({ type: 'array', items: USER }) },
        post: {
          parameters: [{ name: 'pw', in: 'query', required: true, ...param }],
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: USER.properties.name },
                },
              },
            },
          },
          responses: {
            '201': { description: 'created', content: { 'application/json': { schema: USER } } },
          },
        },
      },
      '/users/{name}': {
        get: { responses: ok(USER) },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

describe('a secret the create sends in its query string', () => {
  const cases: { name: string; param: Obj; readExtra?: Obj; sensitive: boolean }[] = [
    {
      name: 'x-tend-sensitive on the parameter itself makes its field secret',
      param: { 'x-tend-sensitive': true, schema: { type: 'string' } },
      sensitive: true,
    },
    {
      name: 'x-tend-sensitive in the parameter’s schema',
      param: { schema: { type: 'string', 'x-tend-sensitive': true } },
      sensitive: true,
    },
    {
      name: 'a password format the read never answers: write-only, so secret',
      param: { schema: { type: 'string', format: 'password' } },
      sensitive: true,
    },
    {
      name: 'x-ms-secret on the parameter (Azure’s spelling)',
      param: { 'x-ms-secret': true, schema: { type: 'string' } },
      sensitive: true,
    },
    {
      name: 'a plain required parameter is no secret',
      param: { schema: { type: 'string' } },
      sensitive: false,
    },
    {
      name: 'x-tend-sensitive: false says it is none',
      param: { 'x-tend-sensitive': false, schema: { type: 'string' } },
      sensitive: false,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const derived = deriveTypes(users(c.param, c.readExtra));
      expect(derived.warnings).toEqual([]);
      const t = derived.types.find((x) => x.info.name === 'users')!;
      expect(t.createQuery?.params.map((p) => p.param)).toEqual(['pw']);
      expect(t.info.sensitive).toEqual(c.sensitive ? ['pw'] : []);
      const file = join(mkdtempSync(join(tmpdir(), 'tend-create-query-')), 'accounts.json');
      writeFileSync(file, JSON.stringify(users(c.param, c.readExtra)));
      const inspected = (await inspectOpenApi(file)).types.find((x) => x.name === 'users')!;
      if (c.sensitive) {
        expect(inspected.sensitiveInQuery).toEqual([{ param: 'pw', field: 'pw' }]);
      } else {
        expect(inspected).not.toHaveProperty('sensitiveInQuery');
      }
    });
  }

  it('names the field, not only the parameter, when a declaration renames it', async () => {
    const doc = users({ 'x-tend-sensitive': true, schema: { type: 'string' } });
    const post = (doc['paths'] as Record<string, Record<string, Obj>>)['/users']!['post']!;
    post['x-tend-query-fields'] = { pw: 'password' };
    const file = join(mkdtempSync(join(tmpdir(), 'tend-create-query-')), 'accounts.json');
    writeFileSync(file, JSON.stringify(doc));
    const inspected = (await inspectOpenApi(file)).types.find((x) => x.name === 'users')!;
    expect(inspected.sensitive).toEqual(['password']);
    expect(inspected.sensitiveInQuery).toEqual([{ param: 'pw', field: 'password' }]);
  });
});

describe('a secret in the create’s query string, against a real server', () => {
  let server: RecordingServer;
  const SECRET = 'query-secret/7&x=y ü';
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());

  // Without a redactor: the error's own text must not carry the query, whatever the platform says.
  it.each([
    [422, 'platform.refused', 'POST /users was refused by the platform (422): too weak'],
    [400, 'platform.invalid', 'POST /users was rejected as invalid (400): too weak'],
    [500, 'platform.unavailable', 'POST /users: the platform failed (500): too weak'],
  ])('a %i names the create by method and path only', async (status, code, message) => {
    server.clear();
    server.handle((_req, res) => json(res, status, { message: 'too weak' }));
    const p = createOpenApiProvider({
      name: 'acct',
      document: await prepareOpenApiDocument(
        users({ 'x-tend-sensitive': true, schema: { type: 'string' } }),
        'inline',
      ),
      endpoint: server.url,
      workspace: 'w',
      maxAttempts: 1,
    });
    const err = await p
      .create('users', { name: 'alice', pw: SECRET }, { actor: { actor: 't' } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ code });
    expect((err as Error).message).toContain(message);
    const sent = server.requests.find((r) => r.method === 'POST')!;
    expect(new URL(sent.url, 'http://x').searchParams.get('pw')).toBe(SECRET);
    for (const form of [SECRET, encodeURIComponent(SECRET), 'query-secret']) {
      expect(JSON.stringify({ message: (err as Error).message, err })).not.toContain(form);
    }
  });
});
