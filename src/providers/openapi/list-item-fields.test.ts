import { describe, expect, it } from 'vitest';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';
import { itemOnlyCandidates } from './access/collection.js';

// Fields a list endpoint leaves out (PowerDNS lists zones without soa_edit_api, api_rectify, …) are
// read from the item endpoint, once per object and only when needed, so they never show as a
// perpetual diff.

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ZONE = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string' },
    kind: { type: 'string' },
    soa_edit_api: { type: 'string' },
    api_rectify: { type: 'boolean' },
    serial: { type: 'integer', 'x-tend-server-owned': true },
    nameservers: { type: 'array', items: { type: 'string' }, writeOnly: true },
    secret: { type: 'string', 'x-tend-sensitive': true },
    rrsets: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          type: { type: 'string' },
          changetype: { type: 'string' },
        },
      },
    },
  },
};
const document = {
  openapi: '3.0.0',
  info: { title: 'dns', version: '1' },
  paths: {
    '/zones': {
      get: { responses: { '200': json({ type: 'array', items: ZONE }) } },
      post: { requestBody: json(ZONE), responses: { '201': json(ZONE) } },
    },
    '/zones/{zone_id}': {
      get: { responses: { '200': json(ZONE) } },
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

type Zone = Record<string, unknown>;

/** A platform whose list omits some fields; `items` are the full objects, `listed` the entries. */
function platform(listed: Zone[], items: Map<string, Zone>) {
  const requests: string[] = [];
  const fetch: typeof globalThis.fetch = (input) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    requests.push(`GET ${decodeURIComponent(url.pathname)}`);
    const id = /^\/zones\/(.+)$/.exec(decodeURIComponent(url.pathname))?.[1];
    const body = id === undefined ? listed : items.get(id);
    return Promise.resolve(
      body === undefined
        ? new Response('{"error":"Not Found"}', {
            status: 404,
            headers: { 'content-type': 'application/json' },
          })
        : new Response(JSON.stringify(body), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          }),
    );
  };
  return { fetch, requests };
}

async function provider(fetch: typeof globalThis.fetch) {
  return createOpenApiProvider({
    name: 'dns',
    document: await prepareOpenApiDocument(document, 'inline'),
    endpoint: 'http://127.0.0.1:9',
    workspace: 'ws',
    fetch,
    maxAttempts: 1,
  });
}

const full = (name: string, extra: Zone = {}): Zone => ({
  id: name,
  name,
  kind: 'Native',
  soa_edit_api: 'DEFAULT',
  api_rectify: false,
  serial: 1,
  rrsets: [{ name, type: 'NS' }],
  ...extra,
});
const summary = (name: string): Zone => ({ id: name, name, kind: 'Native', serial: 1 });

describe('fields the list leaves out', () => {
  it('compares only fields the item GET returns and Tend compares', async () => {
    const p = await provider(platform([], new Map()).fetch);
    const zones = p.types.find((t) => t.info.name === 'zones')!;
    // Not id (output-only), serial (server-owned), nameservers (write-only), secret, rrsets.
    expect(itemOnlyCandidates(zones)).toEqual(['name', 'kind', 'soa_edit_api', 'api_rectify']);
  });

  it('reads an object whose list entry lacks a compared field, once, and the read wins', async () => {
    const items = new Map([
      ['a.', full('a.', { soa_edit_api: 'INCREASE' })],
      ['b.', full('b.')],
    ]);
    // b. is listed with every compared field: it is not read.
    const { fetch, requests } = platform(
      [summary('a.'), { ...full('b.'), rrsets: undefined }],
      items,
    );
    const p = await provider(fetch);
    const listed = await p.list('zones');
    expect(listed.map((o) => [o.id, o.fields['soa_edit_api'], o.fields['api_rectify']])).toEqual([
      ['a.', 'INCREASE', false],
      ['b.', 'DEFAULT', false],
    ]);
    expect(requests).toEqual(['GET /zones', 'GET /zones/a.']);
    // A sub-collection's items live in the zone's GET (they are not the zone's fields).
    expect(listed[0]!.fields['rrsets']).toBeUndefined();
  });

  it('listAnswered: the entries as the list answered them, none read again (what the probe checks a marker against)', async () => {
    const items = new Map([['a.', full('a.', { soa_edit_api: 'INCREASE' })]]);
    const { fetch, requests } = platform([summary('a.')], items);
    const p = await provider(fetch);
    const listed = await p.listAnswered('zones');
    expect(listed.map((o) => [o.id, o.fields['kind'], o.fields['soa_edit_api']])).toEqual([
      ['a.', 'Native', undefined],
    ]);
    expect(requests).toEqual(['GET /zones']);
  });

  it('leaves out an object that went away between the list and the read', async () => {
    const { fetch } = platform([summary('gone.'), summary('b.')], new Map([['b.', full('b.')]]));
    const p = await provider(fetch);
    expect((await p.list('zones')).map((o) => o.id)).toEqual(['b.']);
  });

  it('keeps an entry without an id as the list gave it (it is not addressable anyway)', async () => {
    const { fetch, requests } = platform([{ name: 'x.' }], new Map());
    const p = await provider(fetch);
    expect(await p.list('zones')).toEqual([]);
    expect(requests).toEqual(['GET /zones']);
  });

  it('lists a sub-collection with one read per parent: the parents are listed for their ids only', async () => {
    const items = new Map([
      ['a.', full('a.')],
      ['b.', full('b.')],
    ]);
    const { fetch, requests } = platform([summary('a.'), summary('b.')], items);
    const p = await provider(fetch);
    expect((await p.list('rrsets')).map((o) => o.id)).toEqual(['a./a./NS', 'b./b./NS']);
    expect(requests).toEqual(['GET /zones', 'GET /zones/a.', 'GET /zones/b.']);
  });
});
