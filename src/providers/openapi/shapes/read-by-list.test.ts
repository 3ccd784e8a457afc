import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../../test/support/recording-server.js';
import { deriveTypes } from '../derive-types.js';
import { inspectOpenApi } from '../inspect.js';
import { prepareOpenApiDocument } from '../document/load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';
import { isCheckOnlyGet, pickListed } from './read-by-list.js';

// Reading one object through the list when the item path has no GET: when the rule applies (and
// when it does not), what inspect says, and the read against a real HTTP server on 127.0.0.1.

type Obj = Record<string, unknown>;

const THING: Obj = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string', description: 'unique' },
    size: { type: 'integer' },
  },
};
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const q = (name: string) => ({ name, in: 'query', schema: { type: 'string' } });

/** `/things` and `/things/{id}` with the operations given (a list GET unless `list: false`). */
function document(o: {
  item: string[];
  list?: false;
  listSchema?: unknown;
  listParams?: Obj[];
}): Obj {
  const collection: Obj = {
    post: {
      requestBody: body(THING),
      responses: { '201': { description: 'ok', ...body(THING) } },
    },
  };
  if (o.list !== false) {
    collection['get'] = {
      operationId: 'listThings',
      ...(o.listParams ? { parameters: o.listParams } : {}),
      responses: {
        '200': { description: 'ok', ...body(o.listSchema ?? { type: 'array', items: THING }) },
      },
    };
  }
  const item: Obj = {};
  for (const m of o.item) {
    if (m === 'GET') item['get'] = { responses: { '200': { description: 'ok', ...body(THING) } } };
    if (m === 'DELETE') item['delete'] = { responses: { '204': { description: 'gone' } } };
    if (m === 'PUT' || m === 'PATCH') {
      item[m.toLowerCase()] = {
        requestBody: body(THING),
        responses: { '200': { description: 'ok', ...body(THING) } },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: { '/things': collection, '/things/{id}': item },
  };
}

const REASON = 'inferred: no GET on /things/{id}; one object is read from the list';

describe('deriving a type read from its list', () => {
  const cases: { name: string; doc: Obj; want: Obj }[] = [
    {
      name: 'DELETE but no GET on the item path: read from the list',
      doc: document({ item: ['DELETE'] }),
      want: {
        types: [
          {
            info: { name: 'things', idField: 'id' },
            readByList: REASON,
            operations: {
              list: { method: 'GET', path: '/things' },
              read: { method: 'GET', path: '/things', assigned: REASON },
              delete: { method: 'DELETE', path: '/things/{id}' },
            },
            readSchema: { properties: { size: { type: 'integer' } } },
          },
        ],
        unmapped: [],
      },
    },
    {
      name: 'PUT and DELETE, no GET: read from the list, updated by PUT',
      doc: document({ item: ['PUT', 'DELETE'] }),
      want: {
        types: [
          {
            readByList: REASON,
            operations: { update: { method: 'PUT', path: '/things/{id}' } },
          },
        ],
      },
    },
    {
      name: 'an enveloped list: the entry schema is the array items inside the envelope',
      doc: document({
        item: ['DELETE'],
        listSchema: { type: 'object', properties: { data: { type: 'array', items: THING } } },
      }),
      want: {
        types: [
          {
            readByList: REASON,
            listShape: { kind: 'wrapped', field: 'data' },
            readSchema: { properties: { name: { type: 'string' } } },
          },
        ],
      },
    },
    {
      name: 'a real GET on the item path wins',
      doc: document({ item: ['GET', 'DELETE'] }),
      want: {
        types: [{ operations: { read: { method: 'GET', path: '/things/{id}' } } }],
      },
    },
    {
      name: 'no list GET: not mapped',
      doc: document({ item: ['DELETE'], list: false }),
      want: {
        types: [],
        unmapped: [
          { path: '/things', reason: 'no GET on /things: Tend cannot list these objects' },
          { path: '/things/{id}' },
        ],
      },
    },
  ];
  it.each(cases)('$name', ({ doc, want }) => {
    expect(deriveTypes(doc)).toMatchObject(want);
  });

  it('a real GET leaves no readByList', () => {
    expect(deriveTypes(document({ item: ['GET', 'DELETE'] })).types[0]).not.toHaveProperty(
      'readByList',
    );
  });

  it('inspect shows the read as the list GET, with why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tend-read-by-list-'));
    try {
      const file = join(dir, 'things.json');
      await writeFile(file, JSON.stringify(document({ item: ['DELETE'] })));
      const report = await inspectOpenApi(file);
      expect(report.types[0]).toMatchObject({
        operations: { read: { method: 'GET', path: '/things', assigned: REASON } },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('isCheckOnlyGet', () => {
  const get = (responses: Obj) => ({ responses });
  it.each([
    {
      why: 'only a 204 without a body: a check (GitHub collaborators)',
      op: get({ '204': { description: 'is a collaborator' }, '404': { description: 'no' } }),
      want: true,
    },
    {
      why: 'a 200 with the object: a read',
      op: get({ '200': { description: 'ok', ...body(THING) } }),
      want: false,
    },
    {
      why: 'a 200 and a 204: may answer the object',
      op: get({ '200': { description: 'ok', ...body(THING) }, '204': { description: 'none' } }),
      want: false,
    },
    {
      why: 'a 204 that declares content is not a plain check',
      op: get({ '204': { description: 'odd', ...body(THING) } }),
      want: false,
    },
    {
      why: 'no success answer at all: nothing to say',
      op: get({ '404': { description: 'no' } }),
      want: false,
    },
    { why: 'no operation', op: undefined, want: false },
  ])('$why', ({ op, want }) => {
    expect(isCheckOnlyGet(op)).toBe(want);
  });

  it('an item created at its address whose GET is a check is read from the list', () => {
    const user = {
      type: 'object',
      properties: { login: { type: 'string' }, id: { type: 'integer', readOnly: true } },
    };
    const got = deriveTypes({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/repos/{repo}/collaborators': {
          get: {
            responses: { '200': { description: 'ok', ...body({ type: 'array', items: user }) } },
          },
        },
        '/repos/{repo}/collaborators/{username}': {
          get: { responses: { '204': { description: 'is one' }, '404': { description: 'no' } } },
          put: {
            operationId: 'addCollaborator',
            requestBody: body({
              type: 'object',
              properties: { permission: { type: 'string' } },
              'x-tend-id-field': 'login',
            }),
            responses: { '204': { description: 'added' } },
          },
          delete: { responses: { '204': { description: 'gone' } } },
        },
      },
    });
    const t = got.types.find((x) => x.info.name === 'collaborators');
    if (t === undefined) expect.fail(JSON.stringify(got.unmapped));
    expect(t.operations.read).toMatchObject({
      method: 'GET',
      path: '/repos/{repo}/collaborators',
      assigned:
        'inferred: GET /repos/{repo}/collaborators/{username} answers 204 with no object (a check that it exists); one object is read from the list',
    });
    expect(t.info.idField).toBe('login');
    expect(t.info.identity).toBe('natural-key');
  });
});

describe('pickListed', () => {
  const items = [{ id: 7, name: 'a' }, { id: '8', name: 'b' }, 'junk', null, { name: 'c' }];
  it.each([
    { id: '7', want: 'a', why: 'a number id compared as text' },
    { id: '8', want: 'b', why: 'a string id' },
    { id: '9', want: undefined, why: 'none has it' },
    { id: '', want: undefined, why: 'an entry without the field is not an empty id' },
  ])('$id: $why', ({ id, want }) => {
    expect(pickListed(items, 'id', id)?.['name']).toBe(want);
  });
  it('an object or array id never matches its text', () => {
    expect(pickListed([{ id: { a: 1 } }, { id: ['x'] }], 'id', 'x')).toBeUndefined();
  });
});

describe('reading one object from the list, against a real server', () => {
  let server: RecordingServer;
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(() => server.clear());

  const provider = async (doc: Obj) =>
    createOpenApiProvider({
      name: 'p',
      document: await prepareOpenApiDocument(doc, 'inline'),
      endpoint: `${server.url}/api`,
      workspace: 'ws',
      maxAttempts: 1,
    });

  it('found: the entry with the id, from one GET of the list', async () => {
    server.handle((_req, res) =>
      json(res, 200, [
        { id: 't1', name: 'one', size: 1 },
        { id: 't2', name: 'two', size: 2 },
      ]),
    );
    const p = await provider(document({ item: ['DELETE'] }));
    const o = await p.read('things', 't2');
    expect(o).toMatchObject({ id: 't2', fields: { name: 'two', size: 2 } });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/things']);
  });

  it('absent: no entry has the id', async () => {
    server.handle((_req, res) => json(res, 200, [{ id: 't1', name: 'one' }]));
    const p = await provider(document({ item: ['DELETE'] }));
    expect(await p.read('things', 't9')).toBeUndefined();
  });

  it('absent: the list itself answers 404', async () => {
    server.handle((_req, res) => json(res, 404, { message: 'no such thing' }));
    const p = await provider(document({ item: ['DELETE'] }));
    expect(await p.read('things', 't1')).toBeUndefined();
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/things']);
  });

  it('a paginated, enveloped list: pages followed until the object', async () => {
    server.handle((req, res) => {
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      const at = (n: number) => ({ id: `t${n}`, name: `n${n}` });
      json(res, 200, { data: page === 1 ? [at(1), at(2)] : page === 2 ? [at(3)] : [] });
    });
    const p = await provider(
      document({
        item: ['DELETE'],
        listSchema: { type: 'object', properties: { data: { type: 'array', items: THING } } },
        listParams: [q('page'), { ...q('per_page'), schema: { type: 'integer', maximum: 2 } }],
      }),
    );
    expect(await p.read('things', 't3')).toMatchObject({ id: 't3', fields: { name: 'n3' } });
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/things?page=1&per_page=2',
      '/api/things?page=2&per_page=2',
    ]);
  });

  it('a list that is not a list: the error names the list GET', async () => {
    server.handle((_req, res) => json(res, 200, { surprise: true }));
    const p = await provider(document({ item: ['DELETE'] }));
    await expect(p.read('things', 't1')).rejects.toThrow(/GET \/api\/things|GET \/things/);
  });

  it('listing does not read each entry again (no list per entry)', async () => {
    server.handle((_req, res) => json(res, 200, [{ id: 't1' }, { id: 't2' }]));
    const p = await provider(document({ item: ['DELETE'] }));
    expect(await p.list('things')).toHaveLength(2);
    expect(server.requests).toHaveLength(1);
  });
});
