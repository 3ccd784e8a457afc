import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../test/support/recording-server.js';
import { TendError } from '../../core/index.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// Envelopes and pagination at run time, against a real HTTP server on 127.0.0.1: every page style
// followed to the end, a platform that repeats its cursor stopped, the bound enforced, a next link
// to another origin refused; answers wrapped for list, read and create unwrapped.

type Obj = Record<string, unknown>;

const THING: Obj = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string', description: 'unique' },
  },
};
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });

/** A document with `/things` whose list answer has the schema, parameters and extras given. */
function document(list: { schema: unknown; params?: Obj[]; headers?: Obj; extra?: Obj }): Obj {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        get: {
          ...(list.params ? { parameters: list.params } : {}),
          responses: {
            '200': {
              description: 'ok',
              ...body(list.schema),
              ...(list.headers ? { headers: list.headers } : {}),
            },
          },
          ...list.extra,
        },
        post: {
          requestBody: body(THING),
          responses: {
            '201': { description: 'ok', ...body({ type: 'object', properties: { thing: THING } }) },
          },
        },
      },
      '/things/{id}': {
        get: {
          responses: {
            '200': { description: 'ok', ...body({ type: 'object', properties: { thing: THING } }) },
          },
        },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

const q = (name: string) => ({ name, in: 'query', schema: { type: 'string' } });
const items = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from) }, (_, i) => ({
    id: `t${from + i}`,
    name: `n${from + i}`,
  }));

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(() => server.clear());

async function provider(doc: Obj, endpoint = `${server.url}/api`) {
  return createOpenApiProvider({
    name: 'p',
    document: await prepareOpenApiDocument(doc, 'inline'),
    endpoint,
    workspace: 'ws',
    maxAttempts: 1,
  });
}

const query = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);
const ids = (os: { id: string }[]) => os.map((o) => o.id);

describe('pagination, followed against a real server', () => {
  it('page and per_page: until a short page', async () => {
    server.handle((req, res) => {
      const { page, per_page } = query(req.url);
      const n = Number(page);
      json(
        res,
        200,
        n <= 2 ? items((n - 1) * Number(per_page), n * Number(per_page)) : items(200, 201),
      );
    });
    const p = await provider(
      document({
        schema: { type: 'array', items: THING },
        params: [q('page'), { ...q('per_page'), schema: { type: 'integer', maximum: 2 } }],
      }),
    );
    expect(ids(await p.list('things'))).toEqual(['t0', 't1', 't2', 't3', 't200']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/things?page=1&per_page=2',
      '/api/things?page=2&per_page=2',
      '/api/things?page=3&per_page=2',
    ]);
  });

  it('a size the platform caps lower without saying so: followed to an empty page, nothing dropped', async () => {
    server.handle((req, res) => {
      const n = Number(query(req.url)['page']);
      json(res, 200, n <= 3 ? items((n - 1) * 2, n * 2) : []);
    });
    const p = await provider(
      document({ schema: { type: 'array', items: THING }, params: [q('page'), q('per_page')] }),
    );
    expect(ids(await p.list('things'))).toHaveLength(6);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/things?page=1&per_page=100',
      '/api/things?page=2&per_page=100',
      '/api/things?page=3&per_page=100',
      '/api/things?page=4&per_page=100',
    ]);
  });

  it('offset and limit: until an empty page when no size is sent', async () => {
    server.handle((req, res) => {
      const offset = Number(query(req.url)['offset']);
      json(res, 200, { items: offset < 6 ? items(offset, offset + 3) : [] });
    });
    const p = await provider(
      document({
        schema: { type: 'object', properties: { items: { type: 'array', items: THING } } },
        params: [q('offset')],
      }),
    );
    expect(ids(await p.list('things'))).toHaveLength(6);
    expect(server.requests.map((r) => query(r.url)['offset'])).toEqual(['0', '3', '6']);
  });

  it('a cursor in the body, in an envelope with paging metadata', async () => {
    server.handle((req, res) => {
      const c = query(req.url)['cursor'];
      if (c === undefined) json(res, 200, { data: items(0, 2), next_cursor: 'abc' });
      else if (c === 'abc') json(res, 200, { data: items(2, 3), next_cursor: null });
      else json(res, 400, { error: 'bad cursor' });
    });
    const p = await provider(
      document({
        schema: {
          type: 'object',
          properties: { data: { type: 'array', items: THING }, next_cursor: { type: 'string' } },
        },
        params: [q('cursor')],
      }),
    );
    expect(ids(await p.list('things'))).toEqual(['t0', 't1', 't2']);
    expect(server.requests.map((r) => r.url)).toEqual(['/api/things', '/api/things?cursor=abc']);
  });

  it('a Link header, relative and absolute, below the endpoint', async () => {
    server.handle((req, res) => {
      const page = query(req.url)['p'];
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (page === undefined)
        headers['link'] = '</api/things?p=2>; rel="next", </api/things?p=9>; rel="last"';
      if (page === '2') headers['link'] = `<${server.url}/api/things?p=3>; rel="next"`;
      res
        .writeHead(200, headers)
        .end(JSON.stringify(items(Number(page ?? 1) * 10, Number(page ?? 1) * 10 + 1)));
    });
    const p = await provider(
      document({
        schema: { type: 'array', items: THING },
        headers: { Link: { schema: { type: 'string' } } },
      }),
    );
    expect(ids(await p.list('things'))).toEqual(['t10', 't20', 't30']);
  });

  it('a next URL in the body', async () => {
    server.handle((req, res) => {
      const after = query(req.url)['after'];
      json(res, 200, {
        results: items(after ? 5 : 0, after ? 6 : 1),
        next: after ? null : `${server.url}/api/things?after=t0`,
      });
    });
    const p = await provider(
      document({
        schema: {
          type: 'object',
          properties: { results: { type: 'array', items: THING }, next: { type: 'string' } },
        },
      }),
    );
    expect(ids(await p.list('things'))).toEqual(['t0', 't5']);
  });

  it('a platform that sends the same cursor again is stopped, naming the type', async () => {
    server.handle((_req, res) =>
      json(res, 200, {
        data: items(0, 1).map((x, i) => ({ ...x, id: `${Date.now()}-${i}-${Math.random()}` })),
        next_cursor: 'same',
      }),
    );
    const p = await provider(
      document({
        schema: {
          type: 'object',
          properties: { data: { type: 'array', items: THING }, next_cursor: { type: 'string' } },
        },
        params: [q('cursor')],
      }),
    );
    const err = await p.list('things').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('provider.pagination_loop');
    expect((err as TendError).message).toBe(
      'listing things: the platform sent the cursor {"cursor":"same"} again; stopped, since following it would never end. Its paging does not work as inferred: declare x-tend-pagination on the list operation in an overlay (tend providers inspect shows what was inferred)',
    );
    expect(server.requests).toHaveLength(2);
  });

  it('a platform that ignores the page parameter is stopped', async () => {
    server.handle((_req, res) => json(res, 200, items(0, 3)));
    const p = await provider(
      document({ schema: { type: 'array', items: THING }, params: [q('page')] }),
    );
    const err = (await p.list('things').catch((e: unknown) => e)) as TendError;
    expect(err.code).toBe('provider.pagination_loop');
    expect(err.message).toContain('listing things: the platform sent the same page twice in a row');
  });

  it('past the bound on pages: an error saying how to raise it', async () => {
    server.handle((req, res) => {
      const n = Number(query(req.url)['cursor'] ?? 0);
      json(res, 200, { data: items(n, n + 1), next_cursor: String(n + 1) });
    });
    const p = await provider(
      document({
        schema: { type: 'object', properties: { data: { type: 'array', items: THING } } },
        extra: {
          'x-tend-pagination': {
            style: 'cursor',
            param: 'cursor',
            next: 'next_cursor',
            maxPages: 3,
          },
        },
      }),
    );
    const err = (await p.list('things').catch((e: unknown) => e)) as TendError;
    expect(err.code).toBe('provider.pagination_bound');
    expect(err.message).toBe(
      'listing things: more than 3 pages, past the bound Tend follows a list to; if that many are real, raise it with x-tend-pagination: {…, maxPages: <n>} on the list operation',
    );
    expect(server.requests).toHaveLength(3);
  });

  it('past the bound on items', async () => {
    server.handle((_req, res) => json(res, 200, items(0, 5)));
    const p = await provider(
      document({
        schema: { type: 'array', items: THING },
        extra: { 'x-tend-pagination': { style: 'link', maxItems: 4 } },
      }),
    );
    const err = (await p.list('things').catch((e: unknown) => e)) as TendError;
    expect(err.code).toBe('provider.pagination_bound');
    expect(err.message).toContain('listing things: more than 4 objects');
  });

  it('refuses a next link to another origin, or outside the endpoint, sending nothing there', async () => {
    for (const next of ['http://127.0.0.2:9/api/things?p=2', '/other/things?p=2']) {
      server.handle((_req, res) => json(res, 200, { results: items(0, 1), next }));
      const p = await provider(
        document({
          schema: {
            type: 'object',
            properties: { results: { type: 'array', items: THING }, next: { type: 'string' } },
          },
        }),
      );
      const err = (await p.list('things').catch((e: unknown) => e)) as TendError;
      expect(err.code).toBe('provider.bad_response');
      expect(err.message).toMatch(
        /^listing things: the next page link leads to .*, outside the endpoint .*\/api; Tend does not follow it/,
      );
    }
  });
});

describe('envelopes, read from a real server', () => {
  const doc = document({
    schema: {
      type: 'object',
      properties: { things: { type: 'array', items: THING }, meta: { type: 'object' } },
    },
  });

  it('list, read and create answers are unwrapped', async () => {
    server.handle((req, res) => {
      if (req.method === 'POST') json(res, 201, { thing: { id: 't9', name: 'new' } });
      else if (req.url === '/api/things') json(res, 200, { things: items(0, 2), meta: {} });
      else json(res, 200, { thing: { id: 't1', name: 'n1' } });
    });
    const p = await provider(doc);
    expect(ids(await p.list('things'))).toEqual(['t0', 't1']);
    expect((await p.read('things', 't1'))?.fields).toEqual({ id: 't1', name: 'n1' });
    const created = await p.create(
      'things',
      { name: 'new' },
      { actor: { actor: 'tend', intent: '', motivation: '' } },
    );
    expect(created).toMatchObject({ id: 't9', fields: { id: 't9', name: 'new' } });
    expect(p.describe().warnings).toEqual([]);
  });

  it('an answer without its envelope is read as the object, with a warning once', async () => {
    server.handle((_req, res) => json(res, 200, { id: 't1', name: 'n1' }));
    const p = await provider(doc);
    expect((await p.read('things', 't1'))?.fields).toEqual({ id: 't1', name: 'n1' });
    await p.read('things', 't1');
    expect(p.describe().warnings).toEqual([
      'things: GET /things/{id} answered without the envelope thing the document leads Tend to expect; the answer is read as the object itself',
    ]);
  });
});

describe('provider parameters, against a real server', () => {
  const nested = (): Obj => {
    const d = document({ schema: { type: 'array', items: THING } });
    const paths = d['paths'] as Record<string, unknown>;
    return {
      ...d,
      paths: {
        '/realms/{realm}/things': paths['/things'],
        '/realms/{realm}/things/{id}': paths['/things/{id}'],
      },
    };
  };

  it('fills the path with the value the Provider document gives', async () => {
    server.handle((_req, res) => json(res, 200, items(0, 1)));
    const p = createOpenApiProvider({
      name: 'kc',
      document: await prepareOpenApiDocument(nested(), 'inline'),
      endpoint: server.url,
      workspace: 'ws',
      parameters: { realm: 'a b' },
    });
    expect(ids(await p.list('things'))).toEqual(['t0']);
    expect(server.requests.map((r) => r.url)).toEqual(['/realms/a%20b/things']);
    expect(p.describe().warnings).toEqual([]);
  });

  it('without a value the type is not offered, and calling it says what to add', async () => {
    const p = createOpenApiProvider({
      name: 'kc',
      document: await prepareOpenApiDocument(nested(), 'inline'),
      endpoint: server.url,
      workspace: 'ws',
      parameters: { realms: 'typo' },
    });
    expect(p.describe().types).toEqual([]);
    expect(p.describe().warnings).toEqual([
      'provider kc: parameters.realms is not a path parameter any type needs a value for; ignored',
      'provider kc: type things is not available: its paths need {realm}; give it a value with parameters: {realm: <value>} in the Provider document',
    ]);
    const err = (await p.list('things').catch((e: unknown) => e)) as TendError;
    expect(err.code).toBe('provider.missing_parameter');
    expect(err.message).toBe('provider kc: type "things" lives under {realm}, which has no value');
    expect(err.hint).toBe('add parameters: {realm: <value>} to the Provider document kc');
    expect(server.requests).toEqual([]);
  });
});

describe('operations off the plain paths, against a real server', () => {
  const C: Obj = {
    type: 'object',
    required: ['name'],
    properties: {
      id: { type: 'string', readOnly: true },
      name: { type: 'string', description: 'Unique name.' },
    },
  };
  const ok = (schema: unknown) => ({ '200': { description: 'ok', ...body(schema) } });
  const docker: Obj = {
    openapi: '3.0.3',
    info: { title: 'engine', version: '1' },
    paths: {
      '/containers/create': {
        post: {
          requestBody: body(C),
          responses: {
            '201': {
              description: 'ok',
              ...body({ type: 'object', properties: { id: { type: 'string' } } }),
            },
          },
        },
      },
      '/containers/json': { get: { responses: ok({ type: 'array', items: C }) } },
      '/containers/{id}/json': { get: { responses: ok(C) } },
      '/containers/{id}': { delete: { responses: { '204': { description: 'gone' } } } },
      '/containers/{id}/update': {
        post: {
          'x-tend-type': 'containers',
          'x-tend-op': 'update',
          requestBody: body(C),
          responses: ok({}),
        },
      },
    },
  };

  it('creates, lists, reads, updates and deletes where the document says', async () => {
    server.handle((req, res) => {
      if (req.method === 'POST' && req.url === '/containers/create') json(res, 201, { id: 'c1' });
      else if (req.method === 'POST') json(res, 200, {});
      else if (req.method === 'DELETE') res.writeHead(204).end();
      else if (req.url === '/containers/json') json(res, 200, [{ id: 'c1', name: 'web' }]);
      else json(res, 200, { id: 'c1', name: 'web' });
    });
    const p = await provider(docker, server.url);
    const actor = { actor: { actor: 'tend', intent: '', motivation: '' } };
    const created = await p.create('containers', { name: 'web' }, actor);
    expect(created.id).toBe('c1');
    expect(ids(await p.list('containers'))).toEqual(['c1']);
    await p.update('containers', 'c1', { name: 'web2' }, created, actor);
    await p.delete('containers', 'c1', actor);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /containers/create',
      'GET /containers/json',
      'POST /containers/c1/update',
      'GET /containers/c1/json',
      'DELETE /containers/c1',
    ]);
  });
});
