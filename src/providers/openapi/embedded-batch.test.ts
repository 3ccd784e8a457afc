import { describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import { commonHeaders, mergedChangeBody } from './access/embedded.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// Item changes of one parent (PowerDNS rrsets of one zone) made at the same moment go out as one
// PATCH; the reads that follow share one GET. Against an in-memory zone server behind a fake fetch
// that applies a PATCH whole, as PowerDNS does.

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

interface Rrset {
  name: string;
  type: string;
  ttl?: number;
  records?: { content: string }[];
}

/** A zone server: what it holds, every request it got, and a switch to refuse PATCHes. */
function zoneServer() {
  const zones = new Map<string, Rrset[]>([['example.org.', []]]);
  const requests: { method: string; path: string; body?: unknown; headers: Headers }[] = [];
  let refuse: { status: number; text: string } | undefined;
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    requests.push({ method, path: url.pathname, body, headers: new Headers(init?.headers) });
    await Promise.resolve();
    const id = decodeURIComponent(url.pathname.split('/')[2] ?? '');
    const zone = zones.get(id);
    const answer = (status: number, value?: unknown) =>
      new Response(value === undefined ? null : JSON.stringify(value), {
        status,
        headers: { 'content-type': 'application/json' },
      });
    if (!zone) return answer(404, { error: 'Could not find domain' });
    if (method === 'GET') return answer(200, { id, name: id, rrsets: zone });
    if (method === 'PATCH') {
      if (refuse) {
        return new Response(refuse.text, {
          status: refuse.status,
          headers: { 'content-type': 'text/plain' },
        });
      }
      // Applied whole: every change, or none.
      for (const c of (body as { rrsets: (Rrset & { changetype: string })[] }).rrsets) {
        const at = zone.findIndex((r) => r.name === c.name && r.type === c.type);
        if (at >= 0) zone.splice(at, 1);
        if (c.changetype === 'REPLACE') {
          const { changetype: _, ...rr } = c;
          zone.push(rr);
        }
      }
      return answer(204);
    }
    return answer(405);
  };
  return {
    zones,
    requests,
    fetch,
    refuse: (r: { status: number; text: string } | undefined) => (refuse = r),
    count: (method: string) => requests.filter((r) => r.method === method).length,
  };
}

async function provider(fetch: typeof globalThis.fetch) {
  return createOpenApiProvider({
    name: 'dns',
    document: await prepareOpenApiDocument(document, 'inline'),
    endpoint: 'http://127.0.0.1:9',
    workspace: 'ws',
    concurrency: 1,
    maxAttempts: 1,
    fetch,
  });
}

const rr = (i: number, ttl = 300) => ({
  zone_id: 'example.org.',
  name: `h${i}.example.org.`,
  type: 'A',
  ttl,
  records: [{ content: `192.0.2.${i}` }],
});
const actor = (motivation: string) => ({ actor: { actor: 'tend', motivation } });

describe('item changes of one parent, batched', () => {
  it('sends the creates made at the same moment as one PATCH, and their read-backs share one GET', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, i) => p.create('rrsets', rr(i), actor('create'))),
    );
    expect(server.count('PATCH')).toBe(1);
    expect(server.count('GET')).toBe(1);
    expect(created.map((o) => o.id)).toEqual(
      Array.from({ length: 50 }, (_, i) => `example.org./h${i}.example.org./A`),
    );
    expect(created[7]!.fields).toMatchObject({ name: 'h7.example.org.', ttl: 300 });
    expect(server.zones.get('example.org.')).toHaveLength(50);
    // Verifying each one afterwards: still one GET for all of them.
    const read = await Promise.all(created.map((o) => p.read('rrsets', o.id)));
    expect(read.every((o) => o !== undefined)).toBe(true);
    expect(server.count('GET')).toBe(2);
  });

  it('carries creates, updates and deletes together, with only the attribution headers they share', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    const [a, b] = await Promise.all([
      p.create('rrsets', rr(1), actor('create')),
      p.create('rrsets', rr(2), actor('create')),
    ]);
    server.requests.splice(0);
    await Promise.all([
      p.create('rrsets', rr(3), actor('create')),
      p.update('rrsets', a.id, { ttl: 60 }, a, actor('drift')),
      p.delete('rrsets', b.id, actor('removed-from-intent')),
    ]);
    const patches = server.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(1);
    expect(patches[0]!.body).toEqual({
      rrsets: [
        { ...withoutZone(rr(3)), changetype: 'REPLACE' },
        { ...withoutZone(rr(1)), ttl: 60, changetype: 'REPLACE' },
        { name: 'h2.example.org.', type: 'A', changetype: 'DELETE' },
      ],
    });
    expect(patches[0]!.headers.get('x-tend-actor')).toBe('tend');
    expect(patches[0]!.headers.get('x-tend-motivation')).toBeNull();
    expect(server.zones.get('example.org.')!.map((r) => [r.name, r.ttl])).toEqual([
      ['h3.example.org.', 300],
      ['h1.example.org.', 60],
    ]);
  });

  it('never puts two changes of one item in one request: the second goes in the next', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    await Promise.all([
      p.create('rrsets', rr(1, 100), actor('create')),
      p.create('rrsets', rr(1, 200), actor('create')),
    ]);
    expect(server.count('PATCH')).toBe(2);
    expect(server.zones.get('example.org.')!.map((r) => r.ttl)).toEqual([200]);
  });

  it('a change made while a batch is in flight goes out with the next one', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    const first = p.create('rrsets', rr(1), actor('create'));
    // Once the first PATCH is on its way, three more arrive: they share the second.
    while (server.count('PATCH') === 0) await new Promise((r) => setImmediate(r));
    const more = [2, 3, 4].map((i) => p.create('rrsets', rr(i), actor('create')));
    await Promise.all([first, ...more]);
    expect(server.count('PATCH')).toBe(2);
    expect(
      (server.requests.filter((r) => r.method === 'PATCH')[1]!.body as { rrsets: unknown[] })
        .rrsets,
    ).toHaveLength(3);
  });

  it('a refused batch fails every change it carried, each saying none was made', async () => {
    const server = zoneServer();
    server.refuse({ status: 422, text: 'RRset h2.example.org. IN A: bad record' });
    const p = await provider(server.fetch);
    const results = await Promise.allSettled(
      [1, 2, 3].map((i) => p.create('rrsets', rr(i), actor('create'))),
    );
    expect(server.count('PATCH')).toBe(1);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      const err = (r as PromiseRejectedResult).reason as TendError;
      expect(err).toBeInstanceOf(TendError);
      expect(err.code).toBe('platform.refused');
      expect(err.message).toBe(
        'PATCH /zones/example.org. was refused by the platform (422): RRset h2.example.org. IN A: bad record (one PATCH /zones/example.org. for 3 changes of this parent; the platform applies it whole, so none of the 3 changes it carried was made); if this change needs a replacement, declare the field create-only (x-tend-immutable) in an overlay; Tend never guesses a replace',
      );
    }
    expect(server.zones.get('example.org.')).toEqual([]);
  });

  it('one change alone keeps the platform message as it is', async () => {
    const server = zoneServer();
    server.refuse({ status: 422, text: 'bad record' });
    const p = await provider(server.fetch);
    await expect(p.create('rrsets', rr(1), actor('create'))).rejects.toThrow(
      /^PATCH \/zones\/example\.org\. was refused by the platform \(422\): bad record; if this change/,
    );
  });

  it('a parent gone: its deletes succeed (nothing left to delete), its creates fail', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    const [a] = await Promise.all([p.create('rrsets', rr(1), actor('create'))]);
    server.zones.delete('example.org.');
    const [del, create] = await Promise.allSettled([
      p.delete('rrsets', a.id, actor('removed-from-intent')),
      p.create('rrsets', rr(2), actor('create')),
    ]);
    expect(del.status).toBe('fulfilled');
    expect(create.status).toBe('rejected');
    expect(((create as PromiseRejectedResult).reason as TendError).code).toBe('http.not_found');
  });

  it('a change whose signal aborted before its batch left is not sent', async () => {
    const server = zoneServer();
    const p = await provider(server.fetch);
    const stop = new AbortController();
    const cancelled = p.create('rrsets', rr(1), { ...actor('create'), signal: stop.signal });
    const kept = p.create('rrsets', rr(2), actor('create'));
    stop.abort(new Error('stopping'));
    await expect(cancelled).rejects.toThrow('stopping');
    await kept;
    expect(server.requests.find((r) => r.method === 'PATCH')?.body).toEqual({
      rrsets: [{ ...withoutZone(rr(2)), changetype: 'REPLACE' }],
    });
  });
});

describe('mergedChangeBody', () => {
  it.each([
    { name: 'nothing', bodies: [], merged: {} },
    {
      name: 'one field, items in order',
      bodies: [{ rrsets: [{ a: 1 }] }, { rrsets: [{ b: 2 }, { c: 3 }] }],
      merged: { rrsets: [{ a: 1 }, { b: 2 }, { c: 3 }] },
    },
    {
      name: 'two fields of one parent',
      bodies: [{ rrsets: [{ a: 1 }] }, { comments: [{ b: 2 }] }],
      merged: { rrsets: [{ a: 1 }], comments: [{ b: 2 }] },
    },
  ])('$name', ({ bodies, merged }) => {
    expect(mergedChangeBody(bodies)).toEqual(merged);
  });
});

describe('commonHeaders', () => {
  it.each<{ name: string; all: Record<string, string>[]; common: Record<string, string> }>([
    { name: 'none', all: [], common: {} },
    { name: 'one', all: [{ a: '1' }], common: { a: '1' } },
    {
      name: 'only what every change carries with the same value',
      all: [
        { 'X-Tend-Actor': 'tend', 'X-Tend-Motivation': 'create' },
        { 'X-Tend-Actor': 'tend', 'X-Tend-Motivation': 'drift' },
        { 'X-Tend-Actor': 'tend' },
      ],
      common: { 'X-Tend-Actor': 'tend' },
    },
  ])('$name', ({ all, common }) => {
    expect(commonHeaders(all)).toEqual(common);
  });
});

function withoutZone(r: ReturnType<typeof rr>): Omit<ReturnType<typeof rr>, 'zone_id'> {
  const { zone_id: _, ...rest } = r;
  return rest;
}
