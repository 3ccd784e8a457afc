import { describe, expect, it } from 'vitest';
import { deriveTypes } from './derive-types.js';

type Obj = Record<string, unknown>;

const VOLUME_BODY: Obj = {
  type: 'object',
  required: ['name', 'size'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string' },
    size: { type: 'integer' },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

interface PairOptions {
  /** The item path parameter name. */
  param?: string;
  body?: Obj;
  /** The GET item response schema; defaults to the body. */
  read?: Obj;
  /** The list response schema; defaults to an array of the read schema. */
  list?: Obj;
  /** Methods on the item path; defaults to GET, PATCH, DELETE. */
  item?: string[];
  /** Methods on the collection path; defaults to GET, POST. */
  collection?: string[];
  postParameters?: Obj[];
  postExtra?: Obj;
}

const ok = (schema?: Obj) => ({
  '200': {
    description: 'ok',
    ...(schema ? { content: { 'application/json': { schema } } } : {}),
  },
});

/** A collection path and its item path, complete unless told otherwise. */
function pair(collectionPath: string, o: PairOptions = {}): Record<string, Obj> {
  const body = o.body ?? VOLUME_BODY;
  const read = o.read ?? body;
  const param = o.param ?? 'id';
  const collection: Obj = {};
  for (const m of o.collection ?? ['GET', 'POST']) {
    if (m === 'GET')
      collection['get'] = { responses: ok(o.list ?? { type: 'array', items: read }) };
    if (m === 'POST') {
      collection['post'] = {
        operationId: 'create',
        ...(o.postParameters ? { parameters: o.postParameters } : {}),
        requestBody: { content: { 'application/json': { schema: body } } },
        responses: {
          '201': { description: 'created', content: { 'application/json': { schema: read } } },
        },
        ...o.postExtra,
      };
    }
  }
  const item: Obj = {};
  for (const m of o.item ?? ['GET', 'PATCH', 'DELETE']) {
    if (m === 'GET') item['get'] = { responses: ok(read) };
    if (m === 'PATCH') {
      item['patch'] = {
        requestBody: { content: { 'application/merge-patch+json': { schema: body } } },
        responses: ok(read),
      };
    }
    if (m === 'PUT') {
      item['put'] = {
        requestBody: { content: { 'application/json': { schema: body } } },
        responses: ok(read),
      };
    }
    if (m === 'DELETE') item['delete'] = { responses: { '204': { description: 'gone' } } };
  }
  return { [collectionPath]: collection, [`${collectionPath}/{${param}}`]: item };
}

function doc(paths: Record<string, unknown>, extra: Obj = {}): Obj {
  return { openapi: '3.1.0', info: { title: 't', version: '1' }, paths, ...extra };
}

function body(properties: Obj, required: string[] = []): Obj {
  return { type: 'object', required, properties };
}

const TAGS = { type: 'object', additionalProperties: { type: 'string' } };
const IDEMPOTENCY = { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } };

interface Case {
  name: string;
  reason: string;
  doc: Obj;
  /** Compared with toMatchObject: arrays must match in length, objects only in the keys given. */
  want: Obj;
}

const cases: Case[] = [
  {
    name: 'complete pair',
    reason: 'POST+GET on /x and GET+DELETE on /x/{id} make a type named after /x',
    doc: doc(pair('/volumes')),
    want: {
      types: [
        {
          collectionPath: '/volumes',
          itemPath: '/volumes/{id}',
          idParam: 'id',
          listShape: { kind: 'array' },
          operations: {
            list: { method: 'GET', path: '/volumes' },
            read: { method: 'GET', path: '/volumes/{id}' },
            create: {
              method: 'POST',
              path: '/volumes',
              operationId: 'create',
              contentType: 'application/json',
            },
            update: {
              method: 'PATCH',
              path: '/volumes/{id}',
              contentType: 'application/merge-patch+json',
            },
            delete: { method: 'DELETE', path: '/volumes/{id}' },
          },
          writableFields: ['name', 'size', 'tags'],
          info: {
            name: 'volumes',
            idField: 'id',
            lifecycle: 'annotations',
            createOnly: [],
            identity: 'marker',
            markerField: 'tags',
            idempotencyKey: false,
          },
        },
      ],
      unmapped: [],
      warnings: [],
    },
  },
  {
    name: 'static prefix',
    reason: 'a versioned prefix is not nesting: the type is the last static segment',
    doc: doc(pair('/api/v1/volumes')),
    want: {
      types: [{ info: { name: 'volumes' }, itemPath: '/api/v1/volumes/{id}' }],
      unmapped: [],
    },
  },
  {
    name: 'PUT without PATCH',
    reason: 'PATCH is preferred, but PUT is the update when it is the only one',
    doc: doc(pair('/volumes', { item: ['GET', 'PUT', 'DELETE'] })),
    want: {
      types: [{ operations: { update: { method: 'PUT', contentType: 'application/json' } } }],
    },
  },
  {
    name: 'no PUT or PATCH',
    reason: 'without an update operation every writable field needs a replacement',
    doc: doc(pair('/volumes', { item: ['GET', 'DELETE'] })),
    want: { types: [{ info: { createOnly: ['name', 'size', 'tags'] } }] },
  },
  {
    name: 'missing DELETE, with an update',
    reason:
      'a type whose API offers no DELETE is managed (created, changed in place), never deleted: no delete operation, and the reason',
    doc: doc(pair('/volumes', { item: ['GET', 'PATCH'] })),
    want: {
      types: [
        {
          collectionPath: '/volumes',
          operations: { update: { method: 'PATCH' } },
          info: { name: 'volumes', noDelete: 'no DELETE on /volumes/{id}' },
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'missing DELETE and any update',
    reason: 'objects Tend could neither change nor remove are not managed; both paths say why',
    doc: doc(pair('/volumes', { item: ['GET'] })),
    want: {
      types: [],
      unmapped: [
        {
          path: '/volumes',
          reason:
            'no DELETE on /volumes/{id}, and no PATCH, PUT or update by POST there: Tend could create these objects but never change or remove them',
        },
        { path: '/volumes/{id}' },
      ],
    },
  },
  {
    name: 'missing DELETE, one parameter deeper there is one, and no field holds a parameter',
    reason:
      'the objects are named by two parameters (/buckets/{cluster}/{bucket}), but nothing in the object holds {cluster}: no type, and the reason says what to declare (item-key.ts)',
    doc: doc({
      ...pair('/buckets', { param: 'cluster', item: ['GET', 'PATCH'] }),
      '/buckets/{cluster}/{bucket}': {
        get: { responses: ok(VOLUME_BODY) },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    }),
    want: {
      types: [],
      unmapped: [
        {
          path: '/buckets',
          reason:
            'its objects are addressed by {cluster} and {bucket} together (/buckets/{cluster}/{bucket}), but no field of the objects holds {cluster} (none is named like it, and it is not a name-like field both the create body and the read object have); name it with x-tend-key-fields: {cluster: <field>} on /buckets/{cluster}/{bucket}',
        },
        { path: '/buckets/{cluster}' },
        { path: '/buckets/{cluster}/{bucket}' },
      ],
    },
  },
  {
    name: 'a form-encoded create body',
    reason:
      'an operation taking only application/x-www-form-urlencoded (Stripe) gives the fields from the form schema, and the writes are sent as forms',
    doc: doc({
      ...pair('/volumes', { item: ['GET', 'DELETE'] }),
      '/volumes': {
        get: { responses: ok({ type: 'array', items: VOLUME_BODY }) },
        post: {
          requestBody: {
            content: { 'application/x-www-form-urlencoded': { schema: VOLUME_BODY } },
          },
          responses: ok(VOLUME_BODY),
        },
      },
    }),
    want: {
      types: [
        {
          writableFields: ['name', 'size', 'tags'],
          operations: {
            create: { method: 'POST', contentType: 'application/x-www-form-urlencoded' },
          },
          info: { identity: 'marker', markerField: 'tags' },
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'a multipart-only create body',
    reason: 'file uploads are not sent: the type is unmapped with the media types it takes',
    doc: doc({
      ...pair('/volumes'),
      '/volumes': {
        get: { responses: ok({ type: 'array', items: VOLUME_BODY }) },
        post: {
          requestBody: { content: { 'multipart/form-data': { schema: VOLUME_BODY } } },
          responses: ok(VOLUME_BODY),
        },
      },
    }),
    want: {
      types: [],
      unmapped: [
        {
          path: '/volumes',
          reason:
            'POST /volumes takes only multipart/form-data: Tend does not send multipart bodies (file uploads), only JSON and application/x-www-form-urlencoded',
        },
        {},
      ],
    },
  },
  {
    name: 'update by POST on the item path',
    reason:
      'without PATCH or PUT, a POST on the item path taking the create fields and answering the object is a partial update; the create fields it does not take are create-only',
    doc: doc({
      ...pair('/volumes', { item: ['GET', 'DELETE'] }),
      '/volumes/{id}': {
        ...pair('/volumes', { item: ['GET', 'DELETE'] })['/volumes/{id}'],
        post: {
          requestBody: {
            content: {
              'application/x-www-form-urlencoded': {
                schema: { type: 'object', properties: { name: { type: 'string' }, tags: {} } },
              },
            },
          },
          responses: ok(VOLUME_BODY),
        },
      },
    }),
    want: {
      types: [
        {
          operations: {
            update: {
              method: 'POST',
              path: '/volumes/{id}',
              contentType: 'application/x-www-form-urlencoded',
            },
          },
          partialUpdate: true,
          updateFields: ['name', 'tags'],
          info: { createOnly: ['size'] },
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'an action by POST on the item path',
    reason:
      'a POST requiring arguments the create body does not have is an action, not the update: nothing changes in place',
    doc: doc({
      ...pair('/volumes', { item: ['GET', 'DELETE'] }),
      '/volumes/{id}': {
        ...pair('/volumes', { item: ['GET', 'DELETE'] })['/volumes/{id}'],
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['action'],
                  properties: { action: { type: 'string' }, name: { type: 'string' } },
                },
              },
            },
          },
          responses: ok(VOLUME_BODY),
        },
      },
    }),
    want: {
      types: [{ info: { createOnly: ['name', 'size', 'tags'] } }],
      unmapped: [],
    },
  },
  {
    name: 'missing item GET',
    reason: 'with DELETE on the item path, one object is read from the list (read-by-list.ts)',
    doc: doc(pair('/volumes', { item: ['DELETE'] })),
    want: {
      types: [
        {
          readByList: 'inferred: no GET on /volumes/{id}; one object is read from the list',
          operations: { read: { method: 'GET', path: '/volumes' } },
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'missing POST',
    reason: 'a read-only collection is not a managed type',
    doc: doc(pair('/servers', { collection: ['GET'] })),
    want: {
      types: [],
      unmapped: [
        {
          path: '/servers',
          reason:
            'no POST on /servers: Tend cannot create these objects, nor a PUT or POST on /servers/{id}',
        },
        {
          path: '/servers/{id}',
          reason:
            'no POST on /servers: Tend cannot create these objects, nor a PUT or POST on /servers/{id}',
        },
      ],
    },
  },
  {
    name: 'missing collection GET',
    reason: 'Tend must be able to list what exists',
    doc: doc(pair('/volumes', { collection: ['POST'] })),
    want: {
      types: [],
      unmapped: [{ reason: 'no GET on /volumes: Tend cannot list these objects' }, {}],
    },
  },
  {
    name: 'missing item path',
    reason: 'a POST-only endpoint (an action) has nothing to read back',
    doc: doc({ '/volumes': pair('/volumes')['/volumes'] }),
    want: {
      types: [],
      unmapped: [
        {
          path: '/volumes',
          reason: 'no item path /volumes/{id}: Tend cannot read or delete one object',
        },
      ],
    },
  },
  {
    name: 'item path without collection',
    reason: 'an orphan item path is listed with its own reason',
    doc: doc({ '/things/{id}': pair('/things')['/things/{id}'] }),
    want: {
      unmapped: [
        { path: '/things/{id}', reason: 'no collection path /things with POST for this item path' },
      ],
    },
  },
  {
    name: 'nested collection without a manageable parent',
    reason:
      'a parameter above the item that is neither fixed nor a parent id is a provider parameter: the Provider document gives its value',
    doc: doc(pair('/servers/{server}/zones')),
    want: {
      types: [
        {
          collectionPath: '/servers/{server}/zones',
          params: [{ kind: 'provider', param: 'server' }],
          parentFields: [],
          info: { name: 'zones', schema: { required: ['name', 'size'] } },
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'no request body schema',
    reason: 'without a create schema there is nothing to validate or send',
    doc: doc({
      ...pair('/volumes'),
      '/volumes': { get: { responses: ok({ type: 'array' }) }, post: { responses: ok() } },
    }),
    want: {
      types: [],
      unmapped: [
        {
          reason:
            'POST /volumes declares no request body: Tend cannot tell what to send; if it takes one, describe it in an overlay (requestBody with a JSON or form schema)',
        },
        {},
      ],
    },
  },
  {
    name: 'duplicate type name',
    reason: 'two collections named "volumes" by x-tend-type cannot both be it',
    doc: doc({
      ...pair('/a/volumes'),
      ...pair('/b/volumes'),
      '/a/volumes': { ...pair('/a/volumes')['/a/volumes'], 'x-tend-type': 'volumes' },
      '/b/volumes': { ...pair('/b/volumes')['/b/volumes'], 'x-tend-type': 'volumes' },
    }),
    want: {
      types: [{ collectionPath: '/a/volumes' }],
      unmapped: [
        {
          path: '/b/volumes',
          reason:
            'type name "volumes" is already taken by /a/volumes; name one of them with x-tend-type',
        },
        { path: '/b/volumes/{id}' },
      ],
    },
  },
  {
    name: 'invalid type name',
    reason: 'a type name must be usable in an address',
    doc: doc(pair('/vol.umes')),
    want: {
      types: [],
      unmapped: [
        {
          reason:
            '"vol.umes" cannot be a resource type name (letters, digits, - and _ only); name it with x-tend-type',
        },
        {},
      ],
    },
  },
  {
    name: 'other paths',
    reason: 'a path that is neither collection nor item is listed, never silently dropped',
    doc: doc({
      ...pair('/volumes'),
      '/health': { get: { responses: ok() } },
      '/login': { post: { responses: ok() } },
      '/volumes/{id}/resize': { post: { responses: ok() } },
    }),
    want: {
      types: [{}],
      unmapped: [
        { path: '/login', reason: 'no GET on /login: Tend cannot list these objects' },
        { path: '/health', reason: 'GET only: read-only, nothing for Tend to manage' },
        {
          path: '/volumes/{id}/resize',
          reason:
            'POST: an action or view of volumes objects, not a resource collection; Tend does not call it',
        },
      ],
    },
  },
  {
    name: 'readOnly stripped',
    reason:
      'read-only fields are observed only: not in the desired schema, not required, listed as outputOnly',
    doc: doc(
      pair('/networks', {
        body: body(
          {
            id: { type: 'string', readOnly: true },
            status: { type: 'string', readOnly: true },
            name: { type: 'string' },
          },
          ['name', 'status'],
        ),
      }),
    ),
    want: {
      types: [
        {
          info: {
            schema: {
              type: 'object',
              required: ['name'],
              properties: { name: { type: 'string' } },
            },
            outputOnly: ['id', 'status'],
          },
          writableFields: ['name'],
        },
      ],
    },
  },
  {
    name: 'outputOnly from the read schema',
    reason: 'fields only the read response declares read-only are output-only too',
    doc: doc(
      pair('/networks', {
        body: body({ name: { type: 'string' } }, ['name']),
        read: body({
          id: { type: 'string', readOnly: true },
          created_at: { type: 'string', readOnly: true },
          name: { type: 'string' },
        }),
      }),
    ),
    want: { types: [{ info: { outputOnly: ['id', 'created_at'], idField: 'id' } }] },
  },
  {
    name: 'sensitive detection',
    reason:
      'writeOnly+password, x-tend-sensitive and x-sensitive are secrets; writeOnly or password alone are not',
    doc: doc(
      pair('/instances', {
        body: body({
          name: { type: 'string' },
          admin_password: { type: 'string', writeOnly: true, format: 'password' },
          token: { type: 'string', 'x-tend-sensitive': true },
          key: { type: 'string', 'x-sensitive': true },
          seed: { type: 'string', writeOnly: true },
          hint: { type: 'string', format: 'password' },
        }),
      }),
    ),
    want: { types: [{ info: { sensitive: ['admin_password', 'token', 'key'] } }] },
  },
  {
    name: 'create-only annotations',
    reason:
      'each of x-tend-immutable, x-immutable, x-terraform-force-new makes a field create-only; false does not',
    doc: doc(
      pair('/networks', {
        body: body({
          a: { type: 'string', 'x-tend-immutable': true },
          b: { type: 'string', 'x-immutable': true },
          c: { type: 'string', 'x-terraform-force-new': true },
          d: { type: 'string', 'x-tend-immutable': false },
        }),
      }),
    ),
    want: { types: [{ info: { createOnly: ['a', 'b', 'c'] } }] },
  },
  {
    name: 'create-only from the read schema',
    reason: 'annotations found only on the read schema are merged in',
    doc: doc(
      pair('/networks', {
        body: body({ cidr: { type: 'string' }, name: { type: 'string', 'x-immutable': true } }),
        read: body({ id: { type: 'string' }, cidr: { type: 'string', 'x-tend-immutable': true } }),
      }),
    ),
    want: { types: [{ info: { createOnly: ['name', 'cidr'] } }] },
  },
  {
    name: 'allOf body',
    reason: 'composed schemas are merged so their fields and annotations are seen',
    doc: doc(
      pair('/networks', {
        body: {
          allOf: [
            body({ id: { type: 'string', readOnly: true }, name: { type: 'string' } }, ['name']),
            body({ cidr: { type: 'string', 'x-tend-immutable': true } }, ['cidr']),
          ],
        },
      }),
    ),
    want: {
      types: [
        {
          info: {
            schema: {
              type: 'object',
              required: ['name', 'cidr'],
              properties: { name: {}, cidr: {} },
            },
            createOnly: ['cidr'],
            outputOnly: ['id'],
          },
        },
      ],
    },
  },
  {
    name: 'identity: natural key',
    reason: 'the item path parameter names a required writable field: the name is the identity',
    doc: doc(
      pair('/buckets', {
        param: 'name',
        body: body({ name: { type: 'string' }, versioning: { type: 'boolean' }, tags: TAGS }, [
          'name',
        ]),
        postParameters: [IDEMPOTENCY],
      }),
    ),
    want: {
      types: [
        {
          idParam: 'name',
          info: {
            identity: 'natural-key',
            naturalKey: 'name',
            idField: 'name',
            markerField: 'tags',
            idempotencyKey: true,
          },
        },
      ],
    },
  },
  {
    name: 'identity: optional id key is not natural',
    reason:
      'an id the client may omit may be assigned by the platform, which may also ignore one it is sent',
    doc: doc(
      pair('/buckets', {
        param: 'bucket_id',
        body: body({ bucket_id: { type: 'string' }, tags: TAGS }),
      }),
    ),
    want: { types: [{ info: { identity: 'marker', idField: 'bucket_id' } }] },
  },
  {
    name: 'identity: optional name key is natural, and required',
    reason:
      'objects addressed by a name their creator gives: Tend requires it, so the platform never chooses it',
    doc: doc(
      pair('/buckets', { param: 'name', body: body({ name: { type: 'string' }, tags: TAGS }) }),
    ),
    want: {
      types: [
        {
          info: { identity: 'natural-key', idField: 'name', schema: { required: ['name'] } },
        },
      ],
    },
  },
  {
    name: 'identity: read-only key is not natural',
    reason: 'a server-assigned field cannot be chosen by the client',
    doc: doc(
      pair('/volumes', {
        body: body({ id: { type: 'string', readOnly: true }, tags: TAGS }, ['id']),
      }),
    ),
    want: { types: [{ info: { identity: 'marker' } }] },
  },
  {
    name: 'identity: labels marker',
    reason: 'labels is accepted as a marker field too',
    doc: doc(pair('/volumes', { body: body({ name: { type: 'string' }, labels: TAGS }) })),
    want: { types: [{ info: { identity: 'marker', markerField: 'labels' } }] },
  },
  {
    name: 'identity: marker and idempotency key',
    reason: 'a marker is preferred (it can be looked up), the idempotency key is still used',
    doc: doc(pair('/volumes', { postParameters: [IDEMPOTENCY] })),
    want: {
      types: [
        {
          info: { identity: 'marker', idempotencyKey: true },
          idempotencyHeader: 'Idempotency-Key',
        },
      ],
    },
  },
  {
    name: 'identity: server id',
    reason: 'without key or tags an Idempotency-Key header (any case) still makes creates safe',
    doc: doc(
      pair('/volumes', {
        body: body({ name: { type: 'string' } }),
        postParameters: [{ ...IDEMPOTENCY, name: 'idempotency-key' }],
      }),
    ),
    want: {
      types: [
        {
          info: { identity: 'server-id', idempotencyKey: true },
          idempotencyHeader: 'idempotency-key',
        },
      ],
    },
  },
  {
    name: 'identity: none',
    reason:
      'nothing identifies an object: creation is unsafe and the reason names every missing piece',
    doc: doc(
      pair('/volumes', {
        body: body({
          name: { type: 'string' },
          tags: { type: 'array', items: { type: 'object' } },
        }),
      }),
    ),
    want: {
      types: [
        {
          info: {
            identity: null,
            identityReason:
              'no natural key ({id} is not a required writable field of the create body), no place for a marker (a tags or labels map or list, a description or comment text; name another with x-tend-marker), and no Idempotency-Key header on POST /volumes; declare x-tend-identity in an overlay',
            idempotencyKey: false,
          },
        },
      ],
    },
  },
  {
    name: 'identity: explicit server-id',
    reason: 'x-tend-identity on the schema wins over inference',
    doc: doc(pair('/volumes', { body: { ...VOLUME_BODY, 'x-tend-identity': 'server-id' } })),
    want: {
      types: [
        {
          info: { identity: 'server-id', idempotencyKey: true },
          idempotencyHeader: 'Idempotency-Key',
        },
      ],
    },
  },
  {
    name: 'identity: explicit natural-key field',
    reason: 'x-tend-natural-key names the key when the path parameter is not a field',
    doc: doc(
      pair('/zones', {
        body: { ...VOLUME_BODY, 'x-tend-identity': 'natural-key', 'x-tend-natural-key': 'name' },
      }),
    ),
    want: { types: [{ info: { identity: 'natural-key', naturalKey: 'name' } }] },
  },
  {
    name: 'identity: explicit marker without tags',
    reason: 'an explicit strategy the API cannot honour gives no identity, with a reason',
    doc: doc(
      pair('/volumes', {
        body: body({ name: { type: 'string' } }),
        postExtra: { 'x-tend-identity': 'marker' },
      }),
    ),
    want: {
      types: [
        {
          info: {
            identity: null,
            identityReason:
              'x-tend-identity is marker, but the create body has no place for the marker (a tags or labels map or list, a description or comment text); name one with x-tend-marker',
          },
        },
      ],
    },
  },
  {
    name: 'identity: bad explicit value',
    reason: 'an unknown strategy is a warning and inference goes on',
    doc: doc(pair('/volumes', { body: { ...VOLUME_BODY, 'x-tend-identity': 'magic' } })),
    want: {
      types: [{ info: { identity: 'marker' } }],
      warnings: [
        'volumes: x-tend-identity must be one of natural-key, marker, server-id, not "magic"; inferring the identity instead',
      ],
    },
  },
  {
    name: 'idField falls back to the parameter',
    reason: 'without an id property the item path parameter names the id',
    doc: doc(
      pair('/things', { param: 'thing_id', body: body({ name: { type: 'string' }, tags: TAGS }) }),
    ),
    want: { types: [{ idParam: 'thing_id', info: { idField: 'thing_id' } }] },
  },
  {
    name: 'wrapped list',
    reason: 'a list response that wraps its array in an object is read through that field',
    doc: doc(
      pair('/volumes', {
        list: body({ data: { type: 'array', items: VOLUME_BODY }, total: { type: 'integer' } }),
      }),
    ),
    want: { types: [{ listShape: { kind: 'wrapped', field: 'data' } }] },
  },
  {
    name: 'lifecycle and audit extensions',
    reason: 'x-tend-lifecycle makes every type platform-evaluated; both paths are not types',
    doc: doc(
      {
        ...pair('/volumes'),
        '/lifecycle/evaluate': { post: { responses: ok() } },
        '/audit': { get: { responses: ok() } },
      },
      { 'x-tend-lifecycle': { path: '/lifecycle/evaluate' }, 'x-tend-audit': { path: '/audit' } },
    ),
    want: {
      types: [{ info: { lifecycle: 'platform' } }],
      unmapped: [],
      lifecycle: { path: '/lifecycle/evaluate' },
      audit: { path: '/audit' },
      warnings: [],
    },
  },
  {
    name: 'malformed extensions',
    reason: 'a malformed extension is a warning, never a crash',
    doc: doc(pair('/volumes'), {
      'x-tend-lifecycle': '/lifecycle',
      'x-tend-audit': { path: 'audit' },
    }),
    want: {
      types: [{ info: { lifecycle: 'annotations' } }],
      warnings: [
        'x-tend-lifecycle must be an object with a path starting with /; ignored',
        'x-tend-audit must be an object with a path starting with /; ignored',
      ],
    },
  },
  {
    name: 'consistent reads declared',
    reason: 'x-tend-consistent-reads: true on the root says reads see writes at once',
    doc: doc(pair('/volumes'), { 'x-tend-consistent-reads': true }),
    want: { consistentReads: true, warnings: [] },
  },
  {
    name: 'consistent reads not declared',
    reason: 'without the annotation the API may be eventually consistent',
    doc: doc(pair('/volumes')),
    want: { consistentReads: false, warnings: [] },
  },
  {
    name: 'consistent reads declared false',
    reason: 'false says what absence says, without a warning',
    doc: doc(pair('/volumes'), { 'x-tend-consistent-reads': false }),
    want: { consistentReads: false, warnings: [] },
  },
  ...(['yes', 1, { enabled: true }] as const).map((value) => ({
    name: `consistent reads malformed (${JSON.stringify(value)})`,
    reason: 'anything but a boolean is a warning and no promise: a wrong promise costs duplicates',
    doc: doc(pair('/volumes'), { 'x-tend-consistent-reads': value }),
    want: {
      consistentReads: false,
      warnings: [
        `x-tend-consistent-reads must be true or false, got ${JSON.stringify(value)}; ignored (reads are taken as eventually consistent)`,
      ],
    },
  })),
  {
    name: 'odd document',
    reason: 'paths that are not objects are warnings',
    doc: doc({ '/a': 'nonsense', '/b': null }),
    want: {
      types: [],
      unmapped: [],
      warnings: ['path /a is not an object; ignored', 'path /b is not an object; ignored'],
    },
  },
  {
    name: 'no paths',
    reason: 'a paths value of the wrong type is a warning',
    doc: { openapi: '3.1.0', paths: [] },
    want: {
      types: [],
      warnings: ['`paths` is not an object; the document offers no resource types'],
    },
  },
  {
    name: 'create-only: annotations of other tools',
    reason:
      'Terraform, Speakeasy, Azure (create without update), Google (IMMUTABLE behaviour or description) all mean create-only',
    doc: doc(
      pair('/networks', {
        body: body({
          a: { type: 'string', 'x-terraform-immutable': true },
          b: { type: 'string', 'x-speakeasy-param-force-new': true },
          c: { type: 'string', 'x-ms-mutability': ['create', 'read'] },
          d: { type: 'string', 'x-google-field-behavior': ['IMMUTABLE'] },
          e: { type: 'string', 'x-field-behavior': 'immutable' },
          f: { type: 'string', description: 'Immutable. The region of the network.' },
          g: { type: 'string', description: 'Set once: IMMUTABLE after creation.' },
          h: { type: 'string', 'x-ms-mutability': ['create', 'read', 'update'] },
          i: { type: 'string', description: 'This can be changed; it is not immutable.' },
        }),
      }),
    ),
    want: { types: [{ info: { createOnly: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] } }] },
  },
  {
    name: 'output-only: annotations of other tools',
    reason:
      'x-tend-output-only, Azure read-only mutability, Google OUTPUT_ONLY and "Output only." descriptions are set by the platform',
    doc: doc(
      pair('/networks', {
        body: body({
          name: { type: 'string' },
          a: { type: 'string', 'x-tend-output-only': true },
          b: { type: 'string', 'x-ms-mutability': ['read'] },
          c: { type: 'string', 'x-google-field-behavior': 'OUTPUT_ONLY' },
          d: { type: 'string', description: 'Output only. When it was made.' },
        }),
      }),
    ),
    want: {
      types: [{ info: { outputOnly: ['a', 'b', 'c', 'd'] }, writableFields: ['name'] }],
    },
  },
  {
    name: 'server-owned, write-only and x-ms-secret',
    reason:
      'server-owned fields are output-only and listed apart; writeOnly without password is sent, never compared; x-ms-secret is a secret',
    doc: doc(
      pair('/zones', {
        body: body({
          name: { type: 'string' },
          serial: { type: 'integer', 'x-tend-server-owned': true },
          nameservers: { type: 'array', items: { type: 'string' }, writeOnly: true },
          seed: { type: 'string', 'x-tend-write-only': true },
          secret: { type: 'string', 'x-ms-secret': true },
        }),
      }),
    ),
    want: {
      types: [
        {
          info: {
            outputOnly: ['serial'],
            serverOwned: ['serial'],
            writeOnly: ['nameservers', 'seed'],
            sensitive: ['secret'],
          },
          serverOwned: ['serial'],
          writeOnly: ['nameservers', 'seed'],
          writableFields: ['name', 'nameservers', 'seed', 'secret'],
        },
      ],
    },
  },
  {
    name: 'nested collection with a fixed parent',
    reason: 'x-tend-parent-values gives a singleton parent its value: the type is mapped',
    doc: doc(pair('/servers/{server_id}/zones'), {
      'x-tend-parent-values': { server_id: 'localhost' },
    }),
    want: {
      types: [
        {
          info: { name: 'zones' },
          params: [{ kind: 'fixed', param: 'server_id', value: 'localhost' }],
          parentFields: [],
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'nested collection under a parent type',
    reason:
      'a path parameter that is the id of another type becomes a required, create-only field of the child, and part of its natural key',
    doc: doc({
      ...pair('/zones', { body: body({ name: { type: 'string' } }, ['name']), param: 'name' }),
      ...pair('/zones/{zone}/records', {
        body: body({ name: { type: 'string' }, value: { type: 'string' } }, ['name']),
        param: 'name',
      }),
    }),
    want: {
      types: [
        { info: { name: 'zones' } },
        {
          info: {
            name: 'records',
            parent: { type: 'zones', field: 'zone' },
            identity: 'natural-key',
            naturalKeyFields: ['zone', 'name'],
            createOnly: ['zone'],
            schema: {
              properties: { zone: { type: 'string' }, name: {}, value: {} },
              required: ['zone', 'name'],
            },
          },
          params: [{ kind: 'parent', param: 'zone', type: 'zones' }],
          parentFields: ['zone'],
          keyFields: ['zone', 'name'],
        },
      ],
      unmapped: [],
    },
  },
  {
    name: 'nested name clash',
    reason: 'a nested type whose name is taken is named after its parent',
    doc: doc({
      ...pair('/zones', { param: 'zid' }),
      ...pair('/volumes'),
      ...pair('/zones/{zid}/volumes'),
    }),
    want: {
      types: [
        { info: { name: 'zones' } },
        { info: { name: 'volumes' } },
        { info: { name: 'zones-volumes' } },
      ],
    },
  },
  {
    name: 'x-tend-type and x-tend-ignore',
    reason: 'an overlay may name a type, or leave a collection alone with a reason',
    doc: doc({
      ...pair('/v1/vols'),
      ...pair('/v1/internal'),
      '/v1/vols': { ...pair('/v1/vols')['/v1/vols'], 'x-tend-type': 'volumes' },
      '/v1/internal': {
        ...pair('/v1/internal')['/v1/internal'],
        'x-tend-ignore': 'operators only',
      },
    }),
    want: {
      types: [{ info: { name: 'volumes' } }],
      unmapped: [
        { path: '/v1/internal', reason: 'ignored by x-tend-ignore: operators only' },
        { path: '/v1/internal/{id}', reason: 'ignored by x-tend-ignore: operators only' },
      ],
    },
  },
  {
    name: 'embedded sub-collection',
    reason:
      'x-tend-embedded makes the items of a parent array a type of their own, changed through the parent PATCH; the parent updates with PUT and loses the field',
    doc: doc(
      (() => {
        const paths = pair('/zones', {
          param: 'zone_id',
          item: ['GET', 'PUT', 'PATCH', 'DELETE'],
          body: body(
            {
              id: { type: 'string', readOnly: true },
              name: { type: 'string' },
              rrsets: {
                type: 'array',
                items: body(
                  {
                    name: { type: 'string' },
                    type: { type: 'string' },
                    ttl: { type: 'integer' },
                    changetype: { type: 'string' },
                  },
                  ['name', 'type', 'changetype'],
                ),
              },
            },
            ['name'],
          ),
        });
        paths['/zones/{zone_id}']!['x-tend-embedded'] = [
          {
            type: 'rrsets',
            field: 'rrsets',
            key: ['name', 'type'],
            op: { field: 'changetype', replace: 'REPLACE', delete: 'DELETE' },
          },
        ];
        return paths;
      })(),
    ),
    want: {
      types: [
        {
          info: { name: 'zones', schema: { properties: { name: {} } } },
          writableFields: ['name'],
          operations: { update: { method: 'PUT' } },
          embeddedFields: ['rrsets'],
        },
        {
          info: {
            name: 'rrsets',
            identity: 'natural-key',
            naturalKeyFields: ['zone_id', 'name', 'type'],
            createOnly: ['zone_id', 'name', 'type'],
            parent: { type: 'zones', field: 'zone_id' },
            schema: {
              properties: { zone_id: { type: 'string' }, name: {}, type: {}, ttl: {} },
              required: ['zone_id', 'name', 'type'],
            },
          },
          embedded: {
            parentType: 'zones',
            field: 'rrsets',
            key: ['name', 'type'],
            method: 'PATCH',
            op: { field: 'changetype', replace: 'REPLACE', delete: 'DELETE' },
          },
          operations: {
            create: { method: 'PATCH', path: '/zones/{zone_id}' },
            delete: { method: 'PATCH', path: '/zones/{zone_id}' },
          },
          writableFields: ['name', 'type', 'ttl'],
        },
      ],
      unmapped: [],
      warnings: [],
    },
  },
  {
    name: 'malformed embedded declarations',
    reason: 'a declaration Tend cannot use is a warning naming what is missing, never fatal',
    doc: doc(
      (() => {
        const paths = pair('/zones', { param: 'zone_id', item: ['GET', 'PUT', 'DELETE'] });
        paths['/zones/{zone_id}']!['x-tend-embedded'] = [
          { field: 'rrsets' },
          { field: 'rrsets', key: ['name'], method: 'POST' },
          { field: 'rrsets', key: ['name'] },
        ];
        return paths;
      })(),
    ),
    want: {
      types: [{ info: { name: 'zones' } }],
      warnings: [
        '/zones/{zone_id}: x-tend-embedded[0] needs key: the item fields that tell items apart; ignored',
        '/zones/{zone_id}: x-tend-embedded[1]: method must be PATCH or PUT; ignored',
        '/zones/{zone_id}: x-tend-embedded rrsets: the parent has no PATCH on /zones/{zone_id} to change items through',
      ],
    },
  },
  {
    name: 'unknown x-tend extension',
    reason: 'a typo in an overlay is a warning naming where it is',
    doc: doc({ ...pair('/volumes') }, { 'x-tend-parent-value': { a: 'b' } }),
    want: {
      types: [{}],
      warnings: [
        expect.stringMatching(
          /^unknown extension x-tend-parent-value \(at #\); Tend reads x-tend-lifecycle, /,
        ),
      ],
    },
  },
  {
    name: 'import exclusions',
    reason:
      'x-tend-import-exclude on the schema names objects the platform owns; one rule or a list, a single value or several; the desired schema carries the rules as read',
    doc: doc(
      pair('/volumes', {
        body: {
          ...VOLUME_BODY,
          'x-tend-import-exclude': {
            field: 'name',
            values: 'default',
            reason: 'the platform makes it',
          },
        },
      }),
    ),
    want: {
      types: [
        {
          importExclude: [{ field: 'name', values: ['default'], reason: 'the platform makes it' }],
          info: {
            schema: {
              'x-tend-import-exclude': [
                { field: 'name', values: ['default'], reason: 'the platform makes it' },
              ],
            },
          },
        },
      ],
      warnings: [],
    },
  },
  {
    name: 'malformed import exclusions',
    reason:
      'a rule without values, with values that are not scalars, or naming no field of the objects is a warning and left out; the others stay',
    doc: doc(
      pair('/volumes', {
        body: VOLUME_BODY,
        read: {
          ...VOLUME_BODY,
          'x-tend-import-exclude': [
            { field: 'size' },
            { field: 'name', values: [{ a: 1 }] },
            'name',
            { field: 'colour', values: ['red'] },
            { field: 'size', values: [0, 1] },
          ],
        },
      }),
    ),
    want: {
      types: [{ importExclude: [{ field: 'size', values: [0, 1] }] }],
      warnings: [
        ...[0, 1, 2].map(
          (i) =>
            `volumes: x-tend-import-exclude[${i}] must be {field, values, reason?}: a field name, the values (strings, numbers or booleans) that mark an object the platform owns, and why; ignored`,
        ),
        'volumes: x-tend-import-exclude names colour, which is not a field of its objects; ignored',
      ],
    },
  },
  {
    name: 'composite explicit natural key and an unknown normalisation',
    reason:
      'x-tend-natural-key may list several fields; x-tend-normalize names it does not know are warnings',
    doc: doc(
      pair('/keys', {
        body: {
          ...body({
            algorithm: { type: 'string', 'x-tend-normalize': ['uppercase', 'titlecase'] },
            flags: { type: 'integer' },
          }),
          'x-tend-identity': 'natural-key',
          'x-tend-natural-key': ['algorithm', 'flags'],
        },
      }),
    ),
    want: {
      types: [
        {
          info: {
            identity: 'natural-key',
            naturalKeyFields: ['algorithm', 'flags'],
            // A natural key must be declared: it is how Tend finds the object again.
            schema: { required: ['algorithm', 'flags'] },
          },
          keyFields: ['algorithm', 'flags'],
        },
      ],
      warnings: [
        'keys.algorithm: x-tend-normalize does not know titlecase; it offers lowercase, uppercase, trailing-dot, no-trailing-dot, sort, past-is-now, ip, and {by, at?, format: dns-rdata} or {by, at?, cases} keyed by a sibling field',
      ],
    },
  },
];

describe('deriveTypes', () => {
  it.each(cases)('$name: $reason', ({ doc, want }) => {
    expect(deriveTypes(doc)).toMatchObject(want);
  });

  it('gives no single-field natural key when the key has several fields', () => {
    // A name alone does not find a nested object (www A vs www AAAA, or the same name in two zones):
    // a consumer that matches on naturalKey alone must not match these types by one field.
    const composite = cases.filter((c) =>
      ['nested collection under a parent type', 'embedded sub-collection'].includes(c.name),
    );
    expect(composite).toHaveLength(2);
    for (const c of composite) {
      const nested = deriveTypes(c.doc).types.filter((t) => t.parentFields.length > 0);
      expect(nested.length).toBeGreaterThan(0);
      for (const t of nested) {
        expect(t.info.naturalKey).toBeUndefined();
        expect(t.info.naturalKeyFields?.length).toBeGreaterThan(1);
      }
    }
  });

  it('reads import exclusions on the items of an embedded sub-collection', () => {
    const embedded = cases.find((c) => c.name === 'embedded sub-collection')!;
    const d = structuredClone(embedded.doc) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, Obj> } } }>;
    };
    const zone = d.paths['/zones']!.post.requestBody.content['application/json']!['schema'] as {
      properties: { rrsets: { items: Obj } };
    };
    zone.properties.rrsets.items['x-tend-import-exclude'] = [{ field: 'type', values: ['SOA'] }];
    const got = deriveTypes(d);
    expect(got.warnings).toEqual([]);
    const [zones, rrsets] = got.types;
    expect(zones!.importExclude).toEqual([]);
    expect(zones!.info.schema).not.toHaveProperty('x-tend-import-exclude');
    expect(rrsets!.importExclude).toEqual([{ field: 'type', values: ['SOA'] }]);
    expect(rrsets!.info.schema['x-tend-import-exclude']).toEqual([
      { field: 'type', values: ['SOA'] },
    ]);
  });

  it('omits lifecycle and audit when the document declares none', () => {
    const got = deriveTypes(doc(pair('/volumes')));
    expect(got.lifecycle).toBeUndefined();
    expect(got.audit).toBeUndefined();
  });

  it('cuts recursive schemas into plain data with a warning', () => {
    const node: Obj = { type: 'object', properties: { name: { type: 'string' } } };
    (node['properties'] as Obj)['child'] = node;
    const got = deriveTypes(
      doc(
        pair('/trees', {
          body: { ...node, properties: { ...(node['properties'] as Obj), tags: TAGS } },
        }),
      ),
    );
    expect(() => JSON.stringify(got.types[0]!.info.schema)).not.toThrow();
    expect(got.warnings).toContain(
      'trees: the create schema is recursive at #/properties/child/properties/child; it is not checked below that point',
    );
  });

  it('does not mutate the document', () => {
    const d = doc(pair('/volumes'));
    const before = JSON.stringify(d);
    deriveTypes(d);
    expect(JSON.stringify(d)).toBe(before);
  });
});

describe('deriveTypes: operations a type does not have', () => {
  it('a type without DELETE has no delete operation', () => {
    const [t] = deriveTypes(doc(pair('/volumes', { item: ['GET', 'PATCH'] }))).types;
    expect(t?.operations).not.toHaveProperty('delete');
  });

  it('an action by POST on the item path is not the update', () => {
    const item = pair('/volumes', { item: ['GET', 'DELETE'] })['/volumes/{id}']!;
    const [t] = deriveTypes(
      doc({
        ...pair('/volumes', { item: ['GET', 'DELETE'] }),
        '/volumes/{id}': {
          ...item,
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['action'],
                    properties: { action: { type: 'string' } },
                  },
                },
              },
            },
            responses: ok(VOLUME_BODY),
          },
        },
      }),
    ).types;
    expect(t?.operations).not.toHaveProperty('update');
    expect(t?.partialUpdate).toBe(false);
  });
});
