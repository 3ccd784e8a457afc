import { describe, expect, it } from 'vitest';
import { deriveTypes } from './derive-types.js';

// Inference from documents as they are written: envelopes, pagination, natural keys from unique
// names, provider parameters, irregular create/list/read paths. Each rule with a small document.

type Obj = Record<string, unknown>;

const THING: Obj = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string' },
    size: { type: 'integer' },
  },
};
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown, extra: Obj = {}) => ({
  '200': { description: 'ok', ...json(schema), ...extra },
});

interface Options {
  body?: Obj;
  read?: unknown;
  list?: unknown;
  created?: unknown;
  listParams?: Obj[];
  listHeaders?: Obj;
  listExtra?: Obj;
  itemExtra?: Obj;
  postExtra?: Obj;
  param?: string;
  paramDescription?: string;
}

/** `/things` and `/things/{id}`, complete, with the schemas and extras given. */
function things(o: Options = {}, base = '/things'): Record<string, Obj> {
  const body = o.body ?? THING;
  const read = o.read ?? body;
  const param = o.param ?? 'id';
  return {
    [base]: {
      get: {
        ...(o.listParams ? { parameters: o.listParams } : {}),
        responses: ok(
          o.list ?? { type: 'array', items: read },
          o.listHeaders ? { headers: o.listHeaders } : {},
        ),
        ...o.listExtra,
      },
      post: {
        requestBody: json(body),
        responses: { '201': { description: 'created', ...json(o.created ?? read) } },
        ...o.postExtra,
      },
    },
    [`${base}/{${param}}`]: {
      parameters: [
        {
          name: param,
          in: 'path',
          required: true,
          schema: { type: 'string' },
          ...(o.paramDescription ? { description: o.paramDescription } : {}),
        },
      ],
      get: { responses: ok(read), ...o.itemExtra },
      patch: { requestBody: json(body), responses: ok(read) },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  };
}

const doc = (paths: Obj, extra: Obj = {}): Obj => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths,
  ...extra,
});
const q = (name: string, schema: Obj = { type: 'string' }) => ({ name, in: 'query', schema });

interface Case {
  name: string;
  doc: Obj;
  want: Obj;
  warnings?: string[];
}

const envelopes: Case[] = [
  {
    name: 'GET item wrapped in a property named after the type',
    doc: doc(things({ read: { type: 'object', properties: { thing: THING } } })),
    want: {
      envelope: { read: 'thing', create: 'thing' },
      readSchema: { properties: { name: {} } },
    },
  },
  {
    name: 'the only property, an object, is a wrapper whatever its name',
    doc: doc(things({ read: { type: 'object', properties: { payload: THING } } })),
    want: { envelope: { read: 'payload' } },
  },
  {
    name: '`data` next to metadata',
    doc: doc(
      things({
        read: {
          type: 'object',
          properties: { data: THING, meta: { type: 'object', properties: { v: {} } } },
        },
      }),
    ),
    want: { envelope: { read: 'data' } },
  },
  {
    name: 'no wrapper: a property the create body also has is a field',
    doc: doc(
      things({
        body: { type: 'object', properties: { spec: THING } },
      }),
    ),
    want: { envelope: undefined },
  },
  {
    name: 'no wrapper: two object properties, neither named like one',
    doc: doc(things({ read: { type: 'object', properties: { a: THING, b: THING } } })),
    want: { envelope: undefined },
  },
  {
    name: 'declared on the operations',
    doc: doc(
      things({
        read: { type: 'object', properties: { a: THING, b: THING } },
        itemExtra: { 'x-tend-envelope': 'a' },
        postExtra: { 'x-tend-envelope': 'b' },
      }),
    ),
    want: { envelope: { read: 'a', create: 'b' } },
  },
  {
    name: 'declared false: not wrapped, whatever it looks like',
    doc: doc(
      things({
        read: { type: 'object', properties: { thing: THING } },
        itemExtra: { 'x-tend-envelope': false },
        postExtra: { 'x-tend-envelope': 'none' },
      }),
    ),
    want: { envelope: undefined },
  },
  {
    name: 'a list in `data` with a next cursor',
    doc: doc(
      things({
        list: {
          type: 'object',
          properties: {
            data: { type: 'array', items: THING },
            links: { type: 'array' },
            next_cursor: { type: 'string' },
          },
        },
      }),
    ),
    want: { listShape: { kind: 'wrapped', field: 'data' } },
  },
  {
    name: 'a list one level down (HAL)',
    doc: doc(
      things({
        list: {
          type: 'object',
          properties: {
            _embedded: { type: 'object', properties: { things: { type: 'array', items: THING } } },
            total: { type: 'integer' },
          },
        },
      }),
    ),
    want: { listShape: { kind: 'wrapped', field: '_embedded.things' } },
  },
  {
    name: 'a list envelope declared with a dotted path',
    doc: doc(
      things({
        list: { type: 'object' },
        listExtra: { 'x-tend-envelope': 'result.items' },
      }),
    ),
    want: { listShape: { kind: 'wrapped', field: 'result.items', declared: true } },
  },
  {
    name: 'a bad envelope declaration',
    doc: doc(
      things({ itemExtra: { 'x-tend-envelope': 'a b' }, listExtra: { 'x-tend-envelope': 3 } }),
    ),
    want: { envelope: undefined, listShape: { kind: 'array' } },
    warnings: [
      'things: GET /things/{id}: x-tend-envelope must be the name (or dotted path) of the property wrapping the answer, or false, not "a b"; ignored',
      'things: GET /things: x-tend-envelope must be the name (or dotted path) of the property wrapping the answer, or false, not 3; ignored',
    ],
  },
];

const BOUNDS = { maxPages: 1000, maxItems: 100000 };
const pagination: Case[] = [
  {
    name: 'a Link response header',
    doc: doc(
      things({ listParams: [q('page')], listHeaders: { Link: { schema: { type: 'string' } } } }),
    ),
    want: { pagination: { style: 'link', ...BOUNDS } },
  },
  {
    name: 'a next URL in the body',
    doc: doc(
      things({
        list: {
          type: 'object',
          properties: {
            results: { type: 'array', items: THING },
            next: { type: 'string', format: 'uri' },
          },
        },
      }),
    ),
    want: { pagination: { style: 'next', next: 'next', ...BOUNDS } },
  },
  {
    name: 'a HAL next link',
    doc: doc(
      things({
        list: {
          type: 'object',
          properties: {
            items: { type: 'array', items: THING },
            _links: {
              type: 'object',
              properties: { next: { type: 'object', properties: { href: { type: 'string' } } } },
            },
          },
        },
      }),
    ),
    want: { pagination: { style: 'next', next: '_links.next.href' } },
  },
  {
    name: 'a cursor parameter and a next cursor in the body',
    doc: doc(
      things({
        listParams: [q('cursor'), q('limit', { type: 'integer', maximum: 50 })],
        list: {
          type: 'object',
          properties: { data: { type: 'array', items: THING }, next_cursor: { type: 'string' } },
        },
      }),
    ),
    want: { pagination: { style: 'cursor', param: 'cursor', next: 'next_cursor', ...BOUNDS } },
  },
  {
    name: 'a page token in a metadata object',
    doc: doc(
      things({
        listParams: [q('page_token')],
        list: {
          type: 'object',
          properties: {
            items: { type: 'array', items: THING },
            meta: { type: 'object', properties: { next_page_token: { type: 'string' } } },
          },
        },
      }),
    ),
    want: { pagination: { style: 'cursor', param: 'page_token', next: 'meta.next_page_token' } },
  },
  {
    name: 'page and per_page, the size capped by its maximum',
    doc: doc(
      things({
        listParams: [
          q('page', { type: 'integer' }),
          q('per_page', { type: 'integer', maximum: 50 }),
        ],
      }),
    ),
    want: {
      pagination: { style: 'page', param: 'page', sizeParam: 'per_page', size: 50, start: 1 },
    },
  },
  {
    name: 'a page number from 0',
    doc: doc(things({ listParams: [q('page', { type: 'integer', minimum: 0 })] })),
    want: { pagination: { style: 'page', param: 'page', start: 0 } },
  },
  {
    name: 'offset and limit',
    doc: doc(
      things({ listParams: [q('offset', { type: 'integer' }), q('limit', { type: 'integer' })] }),
    ),
    want: { pagination: { style: 'offset', param: 'offset', sizeParam: 'limit', size: 100 } },
  },
  {
    name: 'no sign of paging',
    doc: doc(things({ listParams: [q('name')] })),
    want: { pagination: undefined, paginationNote: undefined },
  },
  {
    name: 'a cursor parameter without a next field: not followed, and said so',
    doc: doc(things({ listParams: [q('cursor')] })),
    want: {
      pagination: undefined,
      paginationNote:
        'the list takes a cursor parameter, but its answer has no field that looks like the next cursor; declare x-tend-pagination: {style: cursor, param: cursor, next: <field>}',
    },
  },
  {
    name: 'declared, with bounds',
    doc: doc(
      things({
        listExtra: {
          'x-tend-pagination': {
            style: 'cursor',
            param: 'after',
            next: 'paging.next',
            maxPages: 5,
            maxItems: 10,
          },
        },
      }),
    ),
    want: {
      pagination: {
        style: 'cursor',
        param: 'after',
        next: 'paging.next',
        maxPages: 5,
        maxItems: 10,
      },
    },
  },
  {
    name: 'declared none, though the parameters look paged',
    doc: doc(things({ listParams: [q('page')], listExtra: { 'x-tend-pagination': 'none' } })),
    want: { pagination: undefined },
  },
];

const badPagination: [unknown, string][] = [
  [
    'page',
    'x-tend-pagination must be a mapping with a style (page, offset, cursor, link, next), or none',
  ],
  [
    { style: 'pages' },
    'x-tend-pagination.style must be one of page, offset, cursor, link, next, not "pages"',
  ],
  [
    { style: 'cursor' },
    'x-tend-pagination with style cursor needs next: the response field holding the next cursor (e.g. next_cursor or meta.next)',
  ],
  [
    { style: 'cursor', next: 'a..b' },
    'x-tend-pagination.next must be a field name or dotted path, not "a..b"',
  ],
  [
    { style: 'page', param: 'p age' },
    'x-tend-pagination.param must be a query parameter name, not "p age"',
  ],
  [{ style: 'page', size: 0 }, 'x-tend-pagination.size must be a positive integer, not 0'],
  [{ style: 'page', start: -1 }, 'x-tend-pagination.start must be 0 or a positive integer, not -1'],
  [{ style: 'link', maxPages: 0 }, 'x-tend-pagination.maxPages must be a positive integer, not 0'],
  [
    { style: 'link', maxItems: 'many' },
    'x-tend-pagination.maxItems must be a positive integer, not "many"',
  ],
];

const identities: Case[] = [
  {
    name: 'a required name the item parameter is named after',
    doc: doc(things({ param: 'thing_name' })),
    want: {
      info: { identity: 'natural-key', naturalKey: 'name' },
      identityWhy:
        'natural key name: a required field of the create body, and the item path parameter {thing_name} is named after it',
    },
  },
  {
    name: 'a required name the item parameter is described as',
    doc: doc(
      things({
        param: 'repo',
        paramDescription: 'The name of the repository. Not case sensitive.',
      }),
    ),
    want: { info: { identity: 'natural-key', naturalKey: 'name' } },
  },
  {
    name: 'a required name documented unique',
    doc: doc(
      things({
        body: {
          ...THING,
          properties: {
            ...(THING['properties'] as Obj),
            name: { type: 'string', description: 'Name of the thing. Must be unique per project.' },
          },
        },
      }),
    ),
    want: {
      info: { identity: 'natural-key', naturalKey: 'name' },
      identityWhy:
        'natural key name: a required field of the create body that its description says is unique',
    },
  },
  {
    name: "a name-like field in another case (Docker's Name), the item parameter named after it",
    doc: doc(
      things({
        param: 'name',
        body: { type: 'object', required: ['Name'], properties: { Name: { type: 'string' } } },
      }),
    ),
    want: { info: { identity: 'natural-key', naturalKey: 'Name' } },
  },
  {
    name: 'a name documented as not unique is no key',
    doc: doc(
      things({
        body: {
          ...THING,
          properties: {
            ...(THING['properties'] as Obj),
            name: { type: 'string', description: 'A display name; it does not need to be unique.' },
          },
        },
      }),
    ),
    want: { info: { identity: null } },
  },
  {
    name: 'a required display name alone is no key, and the reason says what to declare',
    doc: doc(things()),
    want: {
      info: {
        identity: null,
        identityReason:
          'no natural key ({id} is not a required writable field of the create body; name is required on create but the document does not say it is unique (a display name may repeat); if the platform refuses a second object with the same name, declare x-tend-identity: natural-key and x-tend-natural-key: name), no place for a marker (a tags or labels map or list, a description or comment text; name another with x-tend-marker), and no Idempotency-Key header on POST /things; declare x-tend-identity in an overlay',
      },
    },
  },
  {
    name: 'an optional item parameter field that is an id is no key, and the reason says what to declare',
    doc: doc(
      things({
        param: 'thing_id',
        body: { type: 'object', properties: { thing_id: { type: 'string' } } },
      }),
    ),
    want: {
      info: {
        identity: null,
        identityReason:
          'no natural key ({thing_id} is not a required writable field of the create body; {thing_id} is a field of the create body but optional, so the platform might choose it; if the platform requires it, declare x-tend-identity: natural-key and x-tend-natural-key: thing_id), no place for a marker (a tags or labels map or list, a description or comment text; name another with x-tend-marker), and no Idempotency-Key header on POST /things; declare x-tend-identity in an overlay',
      },
    },
  },
  {
    name: 'an optional name documented unique is a key, which Tend requires',
    doc: doc(
      things({
        body: { type: 'object', properties: { name: { type: 'string', description: 'unique' } } },
      }),
    ),
    want: {
      info: { identity: 'natural-key', naturalKey: 'name', schema: { required: ['name'] } },
      identityWhy:
        'natural key name: a field of the create body (optional in the document; Tend requires it) that its description says is unique',
    },
  },
  {
    name: 'an optional name not documented unique is no key',
    doc: doc(
      things({
        body: { type: 'object', properties: { name: { type: 'string', description: 'A name' } } },
      }),
    ),
    want: { info: { identity: null } },
  },
];

const nested: Case[] = [
  {
    name: 'a parameter no managed type gives is a provider parameter',
    doc: doc(things({}, '/admin/realms/{realm}/clients')),
    want: {
      collectionPath: '/admin/realms/{realm}/clients',
      params: [{ kind: 'provider', param: 'realm' }],
      parentFields: [],
    },
  },
  {
    name: 'the root collection is named after its item parameter',
    doc: doc({
      '/': things({}, '/x')['/x'],
      '/{realm}': things({}, '/x')['/x/{id}'],
    }),
    want: { info: { name: 'realms' }, collectionPath: '/', itemPath: '/{realm}' },
  },
];

/** Docker's containers: create, list and read off the plain paths. */
const DOCKER = {
  '/containers/create': {
    post: {
      requestBody: json(THING),
      responses: {
        '201': {
          description: 'ok',
          ...json({ type: 'object', properties: { Id: { type: 'string' } } }),
        },
      },
    },
  },
  '/containers/json': { get: { responses: ok({ type: 'array', items: THING }) } },
  '/containers/{id}/json': { get: { responses: ok(THING) } },
  '/containers/{id}': { delete: { responses: { '204': { description: 'gone' } } } },
  '/containers/{id}/update': { post: { requestBody: json(THING), responses: ok({}) } },
};

const irregular: Case[] = [
  {
    name: 'POST <c>/create, GET <c>/json and GET <c>/{id}/json are inferred',
    doc: doc(DOCKER),
    want: {
      info: { name: 'containers' },
      collectionPath: '/containers',
      itemPath: '/containers/{id}',
      operations: {
        list: {
          method: 'GET',
          path: '/containers/json',
          assigned: 'inferred: GET /containers/json lists /containers',
        },
        create: {
          method: 'POST',
          path: '/containers/create',
          assigned: 'inferred: POST /containers/create creates /containers',
        },
        read: { method: 'GET', path: '/containers/{id}/json' },
        delete: { method: 'DELETE', path: '/containers/{id}' },
      },
    },
  },
  {
    name: 'x-tend-type + x-tend-op assemble a type, update through POST',
    doc: doc({
      ...DOCKER,
      '/containers/{id}/update': {
        post: {
          ...DOCKER['/containers/{id}/update'].post,
          'x-tend-type': 'containers',
          'x-tend-op': 'update',
        },
      },
    }),
    want: {
      operations: {
        update: { method: 'POST', path: '/containers/{id}/update', assigned: 'x-tend-op update' },
      },
    },
  },
  {
    name: 'declared operations under other names',
    doc: doc({
      '/v2/make-widget': {
        post: {
          'x-tend-type': 'widgets',
          'x-tend-op': 'create',
          requestBody: json(THING),
          responses: ok(THING),
        },
      },
      '/v2/all-widgets': {
        get: {
          'x-tend-type': 'widgets',
          'x-tend-op': 'list',
          responses: ok({ type: 'array', items: THING }),
        },
      },
      '/v2/widget/{wid}': {
        get: { 'x-tend-type': 'widgets', 'x-tend-op': 'read', responses: ok(THING) },
        delete: {
          'x-tend-type': 'widgets',
          'x-tend-op': 'delete',
          responses: { '204': { description: 'gone' } },
        },
      },
    }),
    want: {
      info: { name: 'widgets' },
      collectionPath: '/v2/widget',
      operations: {
        create: { path: '/v2/make-widget' },
        list: { path: '/v2/all-widgets' },
        read: { path: '/v2/widget/{wid}' },
      },
    },
  },
];

function only(d: Obj): Obj {
  const derived = deriveTypes(d);
  expect(derived.types).toHaveLength(1);
  return derived.types[0] as unknown as Obj;
}

describe('inference from real-world shapes', () => {
  it.each([...envelopes, ...pagination, ...identities, ...nested, ...irregular])('$name', (c) => {
    const derived = deriveTypes(c.doc);
    expect(derived.types).toHaveLength(1);
    const t = derived.types[0] as unknown as Obj;
    for (const [k, v] of Object.entries(c.want)) {
      if (v === undefined) expect(t[k], k).toBeUndefined();
      else expect(t[k], k).toMatchObject(v as Obj);
    }
    for (const w of c.warnings ?? []) expect(derived.warnings).toContain(w);
  });

  it.each(badPagination)('a bad x-tend-pagination %j is a warning: %s', (value, message) => {
    const d = doc(things({ listParams: [q('page')], listExtra: { 'x-tend-pagination': value } }));
    const derived = deriveTypes(d);
    expect(derived.warnings).toEqual([`things: ${message}; the list is read as inferred`]);
    // What is inferred still holds.
    expect(derived.types[0]?.pagination).toMatchObject({ style: 'page' });
  });

  it.each([
    [
      { 'x-tend-op': 'replace', 'x-tend-type': 'things' },
      'POST /things/make: x-tend-op must be one of list, create, read, update, delete, not "replace"; ignored',
    ],
    [
      { 'x-tend-op': 'create' },
      'POST /things/make: x-tend-op needs x-tend-type naming the type (letters, digits, - and _), not undefined; ignored',
    ],
    [
      { 'x-tend-op': 'create', 'x-tend-type': 'a b' },
      'POST /things/make: x-tend-op needs x-tend-type naming the type (letters, digits, - and _), not "a b"; ignored',
    ],
  ])('a bad x-tend-op is a warning: %j', (extra, message) => {
    const d = doc({
      ...things(),
      '/things/make': { post: { ...extra, requestBody: json(THING), responses: ok(THING) } },
    });
    expect(deriveTypes(d).warnings).toContain(message);
  });

  it('an item operation declared on a path without a parameter is a warning', () => {
    const d = doc({
      ...things(),
      '/things/current': {
        get: { 'x-tend-type': 'things', 'x-tend-op': 'read', responses: ok(THING) },
      },
    });
    expect(deriveTypes(d).warnings).toContain(
      "x-tend-type things: GET /things/current is declared as read, but an item operation needs the object's id as a path parameter; ignored",
    );
  });

  it('the paths moved onto a type are not reported as unmanaged; an update through POST is not guessed', () => {
    const derived = deriveTypes(doc(DOCKER));
    expect(derived.types[0]?.operations.update).toBeUndefined();
    expect(derived.unmapped.map((u) => u.path)).toEqual(['/containers/{id}/update']);
  });

  it('a clash of names without a parent is qualified by the nearest name in the path', () => {
    const derived = deriveTypes(
      doc({ ...things({}, '/user/keys'), ...things({}, '/repos/{owner}/{repo}/keys') }),
    );
    expect(derived.types.map((t) => t.info.name)).toEqual(['keys', 'repos-keys']);
  });

  it('does not touch the document', () => {
    const d = doc(DOCKER);
    const before = JSON.stringify(d);
    only(d);
    expect(JSON.stringify(d)).toBe(before);
  });
});
