import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecordingServer } from '../../../test/support/recording-server.js';
import { json, startRecordingServer } from '../../../test/support/recording-server.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { createOpenApiProvider } from './openapi-provider.js';

// The requests Tend sends for two shapes inference now reads (decisions 0050 and 0053), against a
// real HTTP server that keeps objects: created by PUT on the collection (answering the object, or
// nothing) and changed by POST on the item (shapes/collection-put.ts); a sub-collection with no
// list, listed through the parent read that embeds it (shapes/embedded-list.ts).

type Obj = Record<string, unknown>;
const str = { type: 'string' };
const body = (schema: unknown): Obj => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown): Obj => ({ '200': { description: 'ok', ...body(schema) } });
const param = (name: string): Obj => ({ name, in: 'path', required: true, schema: str });
const gone = { responses: { '204': { description: 'gone' } } };

const WIDGET = {
  type: 'object',
  properties: { id: { type: 'string', readOnly: true }, name: str, color: str },
};
const GADGET = {
  type: 'object',
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string', description: 'The gadget name, unique per account' },
    size: str,
  },
};
const RECORD = {
  type: 'object',
  properties: { id: { type: 'string', readOnly: true }, name: str, content: str },
};
const ZONE = {
  type: 'object',
  properties: {
    id: { type: 'string', readOnly: true },
    name: str,
    records: { type: 'array', items: RECORD },
  },
};

/** Widgets (PUT creates, POST updates) and zones with records listed only inside a zone. */
const DOCUMENT: Obj = {
  openapi: '3.0.3',
  info: { title: 'shapes', version: '1' },
  paths: {
    '/widgets': {
      get: { responses: ok({ type: 'array', items: WIDGET }) },
      put: {
        requestBody: body({
          type: 'object',
          required: ['name'],
          properties: { name: str, color: str },
        }),
        responses: { '201': { description: 'made', ...body(WIDGET) } },
      },
    },
    '/widgets/{widgetId}': {
      parameters: [param('widgetId')],
      get: { responses: ok(WIDGET) },
      post: {
        requestBody: body({ type: 'object', properties: { color: str } }),
        responses: ok(WIDGET),
      },
      delete: gone,
    },
    // Created by a PUT that answers no JSON: the body decides (its fields are the gadget's).
    '/gadgets': {
      get: { responses: ok({ type: 'array', items: GADGET }) },
      put: {
        requestBody: body({
          type: 'object',
          required: ['name'],
          properties: { name: GADGET.properties.name, size: str },
        }),
        responses: { '204': { description: 'made' } },
      },
    },
    '/gadgets/{gadgetId}': {
      parameters: [param('gadgetId')],
      get: { responses: ok(GADGET) },
      delete: gone,
    },
    '/zones': {
      get: { responses: ok({ type: 'array', items: ZONE }) },
      post: {
        requestBody: body({ type: 'object', required: ['name'], properties: { name: str } }),
        responses: { '201': { description: 'made', ...body(ZONE) } },
      },
    },
    '/zones/{zoneId}': {
      parameters: [param('zoneId')],
      get: { responses: ok(ZONE) },
      delete: gone,
    },
    '/zones/{zoneId}/records': {
      parameters: [param('zoneId')],
      post: {
        requestBody: body({
          type: 'object',
          required: ['name', 'content'],
          properties: { name: str, content: str },
        }),
        responses: { '201': { description: 'made', ...body(RECORD) } },
      },
    },
    '/zones/{zoneId}/records/{recordId}': {
      parameters: [param('zoneId'), param('recordId')],
      get: { responses: ok(RECORD) },
      delete: gone,
    },
  },
};

describe('requests of the inferred shapes, against a real server', () => {
  let server: RecordingServer;
  const widgets = new Map<string, Obj>();
  const gadgets = new Map<string, Obj>();
  const zones = new Map<string, { id: string; name: string; records: Obj[] }>();
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    server.clear();
    widgets.clear();
    gadgets.clear();
    zones.clear();
    let next = 0;
    server.handle((req, res) => {
      const path = new URL(req.url, 'http://x').pathname;
      const sent = req.body ? (JSON.parse(req.body) as Obj) : {};
      if (path === '/widgets' && req.method === 'GET') return json(res, 200, [...widgets.values()]);
      if (path === '/gadgets' && req.method === 'GET') return json(res, 200, [...gadgets.values()]);
      if (path === '/gadgets' && req.method === 'PUT') {
        const made = { id: `g${++next}`, ...sent };
        gadgets.set(made.id, made);
        res.writeHead(204).end();
        return;
      }
      if (path === '/widgets' && req.method === 'PUT') {
        const made = { id: `w${++next}`, ...sent };
        widgets.set(made.id, made);
        return json(res, 201, made);
      }
      const w = /^\/widgets\/([^/]+)$/.exec(path);
      if (w) {
        const found = widgets.get(w[1]!);
        if (found === undefined) return json(res, 404, { error: 'no such widget' });
        if (req.method === 'POST') Object.assign(found, sent);
        if (req.method === 'DELETE') widgets.delete(w[1]!);
        return json(res, 200, found);
      }
      const z = /^\/zones\/([^/]+)$/.exec(path);
      if (path === '/zones' && req.method === 'GET') return json(res, 200, [...zones.values()]);
      if (z && req.method === 'GET') {
        const found = zones.get(z[1]!);
        return found ? json(res, 200, found) : json(res, 404, { error: 'no such zone' });
      }
      const r = /^\/zones\/([^/]+)\/records(?:\/([^/]+))?$/.exec(path);
      const zone = r ? zones.get(r[1]!) : undefined;
      if (r && zone && req.method === 'POST' && r[2] === undefined) {
        const made = { id: `r${++next}`, ...sent };
        zone.records.push(made);
        return json(res, 201, made);
      }
      if (r && zone && r[2] !== undefined) {
        const found = zone.records.find((x) => x['id'] === r[2]);
        if (found === undefined) return json(res, 404, { error: 'no such record' });
        if (req.method === 'DELETE') zone.records = zone.records.filter((x) => x !== found);
        return json(res, 200, found);
      }
      json(res, 405, {});
    });
  });

  const provider = async () =>
    createOpenApiProvider({
      name: 'shapes',
      document: await prepareOpenApiDocument(structuredClone(DOCUMENT), 'inline'),
      endpoint: server.url,
      workspace: 'w',
    });
  const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);
  const actor = { actor: { actor: 't' } };

  it('creates a widget by PUT on the collection and changes it by POST on the item', async () => {
    const p = await provider();
    const created = await p.create('widgets', { name: 'knob', color: 'red' }, actor);
    expect(created.id).toBe('w1');
    expect(sent()[0]).toBe('PUT /widgets');
    expect(JSON.parse(server.requests[0]!.body)).toMatchObject({ name: 'knob', color: 'red' });
    server.clear();
    await p.update('widgets', 'w1', { name: 'knob', color: 'blue' }, created, actor);
    expect(sent()[0]).toBe('POST /widgets/w1');
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ color: 'blue' });
    expect(widgets.get('w1')?.['color']).toBe('blue');
  });

  it('creates a gadget by a PUT answering nothing, and finds what it made by its name', async () => {
    const p = await provider();
    const created = await p.create('gadgets', { name: 'dial', size: 'l' }, actor);
    expect(sent()).toEqual(['PUT /gadgets', 'GET /gadgets']);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ name: 'dial', size: 'l' });
    expect(created.id).toBe('g1');
    expect(created.fields).toMatchObject({ name: 'dial', size: 'l' });
  });

  it('lists records by reading each zone, and creates and deletes them at their own paths', async () => {
    zones.set('z1', { id: 'z1', name: 'example.org', records: [] });
    zones.set('z2', {
      id: 'z2',
      name: 'example.net',
      records: [{ id: 'r9', name: 'www', content: '192.0.2.9' }],
    });
    const p = await provider();
    const created = await p.create(
      'records',
      { zoneId: 'z1', name: 'api', content: '192.0.2.1' },
      actor,
    );
    expect(sent()[0]).toBe('POST /zones/z1/records');
    server.clear();
    const listed = await p.list('records');
    expect(sent()).toContain('GET /zones/z1');
    expect(sent()).toContain('GET /zones/z2');
    expect(sent().filter((s) => s.includes('/records'))).toEqual([]);
    expect(listed.map((o) => [o.fields['zoneId'], o.fields['name']]).sort()).toEqual([
      ['z1', 'api'],
      ['z2', 'www'],
    ]);
    server.clear();
    await p.delete('records', created.id, actor);
    expect(sent()).toEqual([`DELETE /zones/z1/records/${created.id.split('/').at(-1)}`]);
  });
});
