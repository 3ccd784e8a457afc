import { describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import type { DerivedType } from './derive-types.js';
import { deriveTypes } from './derive-types.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { itemChangeBody } from './access/embedded.js';
import { composeId, fillPath, splitId } from './object-ids.js';
import { createOpenApiProvider } from './openapi-provider.js';

// Pieces of object access: ids of nested objects, the body of a sub-collection change, and answers
// that disagree with the document. The calls themselves are tested against real servers
// (openapi-provider.test.ts, powerdns.test.ts).

const RRSET = {
  type: 'object',
  required: ['name', 'type', 'ttl', 'changetype', 'records'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    ttl: { type: 'integer' },
    changetype: { type: 'string' },
    records: {
      type: 'array',
      items: { type: 'object', properties: { content: { type: 'string' } } },
    },
  },
};
const ZONE = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string' },
    rrsets: { type: 'array', items: RRSET },
  },
};
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });

const document = {
  openapi: '3.0.0',
  info: { title: 'dns', version: '1' },
  'x-tend-parent-values': { server_id: 'localhost' },
  paths: {
    '/servers/{server_id}/zones': {
      get: { responses: { '200': json({ type: 'array', items: ZONE }) } },
      post: { requestBody: json(ZONE), responses: { '201': json(ZONE) } },
    },
    '/servers/{server_id}/zones/{zone_id}': {
      get: { responses: { '200': json(ZONE) } },
      put: { requestBody: json(ZONE), responses: { '204': { description: 'ok' } } },
      patch: { requestBody: json(ZONE), responses: { '204': { description: 'ok' } } },
      delete: { responses: { '204': { description: 'ok' } } },
      'x-tend-embedded': [
        {
          type: 'rrsets',
          field: 'rrsets',
          key: ['name', 'type'],
          op: { field: 'changetype', replace: 'REPLACE', delete: 'DELETE' },
        },
      ],
    },
  },
};
const types = new Map(deriveTypes(document).types.map((t) => [t.info.name, t]));
const zones = types.get('zones')!;
const rrsets = types.get('rrsets')!;

describe('itemChangeBody', () => {
  const item = {
    zone_id: 'example.org.',
    name: 'www.example.org.',
    type: 'A',
    ttl: 300,
    records: [{ content: '192.0.2.1' }],
  };
  it('replaces one item: the whole item with its operation, without the parent field', () => {
    expect(itemChangeBody(rrsets, item, 'replace')).toEqual({
      rrsets: [
        {
          name: 'www.example.org.',
          type: 'A',
          ttl: 300,
          records: [{ content: '192.0.2.1' }],
          changetype: 'REPLACE',
        },
      ],
    });
  });
  it('deletes one item by its key only', () => {
    expect(itemChangeBody(rrsets, item, 'delete')).toEqual({
      rrsets: [{ name: 'www.example.org.', type: 'A', changetype: 'DELETE' }],
    });
  });
  it('refuses a type that is not a sub-collection', () => {
    expect(() => itemChangeBody(zones, item, 'replace')).toThrow('zones is not a sub-collection');
  });
});

describe('object ids', () => {
  it.each<{ name: string; t: DerivedType; scope: [string, string][]; own: string[]; id: string }>([
    {
      name: 'top-level type keeps the platform id',
      t: zones,
      scope: [],
      own: ['example.org.'],
      id: 'example.org.',
    },
    {
      name: 'sub-collection item: parent id and key, URI-encoded',
      t: rrsets,
      scope: [['zone_id', 'a/b.']],
      own: ['*.a/b.', 'A'],
      id: 'a%2Fb./*.a%2Fb./A',
    },
  ])('$name', ({ t, scope, own, id }) => {
    expect(composeId(t, new Map(scope), own)).toBe(id);
    const back = splitId(t, id);
    expect(back.own).toEqual(own);
    for (const [k, v] of scope) expect(back.scope.get(k)).toBe(v);
    expect(back.scope.get('server_id')).toBe('localhost');
  });

  it('refuses an id of the wrong shape, saying the expected one', () => {
    let err: unknown;
    try {
      splitId(rrsets, 'example.org./www.example.org.');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).message).toBe(
      '"example.org./www.example.org." is not an id of rrsets: expected zone_id/name/type, each part URI-encoded',
    );
  });

  it('fills a path template, encoding values, and names a missing parameter', () => {
    expect(
      fillPath(
        '/servers/{server_id}/zones/{zone_id}',
        new Map([
          ['server_id', 'localhost'],
          ['zone_id', 'a/b.'],
        ]),
      ),
    ).toBe('/servers/localhost/zones/a%2Fb.');
    expect(() => fillPath('/zones/{zone_id}', new Map())).toThrow(
      'no value for path parameter {zone_id} of /zones/{zone_id}',
    );
  });
});

describe('answers that disagree with the document', () => {
  const volume = {
    type: 'object',
    required: ['name', 'size'],
    properties: { name: { type: 'string' }, size: { type: 'integer' } },
  };
  const doc = {
    openapi: '3.0.0',
    info: { title: 'v', version: '1' },
    paths: {
      '/volumes': {
        get: { responses: { '200': json({ type: 'array', items: volume }) } },
        post: { requestBody: json(volume), responses: { '201': json(volume) } },
      },
      '/volumes/{name}': {
        get: { responses: { '200': json(volume) } },
        delete: { responses: { '204': { description: 'ok' } } },
      },
    },
  };
  /** A platform that answers GETs without `size`, and refuses POSTs in plain text. */
  const fakeFetch: typeof fetch = (_input, init) =>
    Promise.resolve(
      init?.method === 'POST'
        ? new Response('Conflict', { status: 409, headers: { 'content-type': 'text/plain' } })
        : new Response(JSON.stringify({ name: 'data' }), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
    );

  it('tolerates a missing required field with a warning, once', async () => {
    const p = createOpenApiProvider({
      name: 'v',
      document: await prepareOpenApiDocument(doc, 'inline'),
      endpoint: 'http://127.0.0.1:9',
      workspace: 'ws',
      fetch: fakeFetch,
    });
    expect((await p.read('volumes', 'data'))?.fields).toEqual({ name: 'data' });
    await p.read('volumes', 'data');
    expect(p.describe().warnings).toEqual([
      'volumes: GET /volumes/{name} answered without size, which the document marks required; tolerated',
    ]);
    let err: unknown;
    try {
      await p.create('volumes', { name: 'data', size: 1 }, { actor: { actor: 't' } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).message).toBe(
      'POST /volumes was refused by the platform (409): Conflict',
    );
  });
});
