import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';

// A sub-collection with a create and item operations but no list, whose objects come back in the
// parent's read (embedded-list.ts): the parent's read lists them, its array the envelope. Each case
// is a small document of our own (a DNS service: zones and their records).

type Obj = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...json(schema) } });
const gone = { responses: { '204': { description: 'gone' } } };
const p = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const str = { type: 'string' };

const RECORD = {
  type: 'object',
  properties: {
    id: { type: 'string', readOnly: true },
    name: str,
    type: str,
    content: str,
  },
};
const NEW_RECORD = {
  type: 'object',
  required: ['name', 'type', 'content'],
  properties: { name: str, type: str, content: str, ttl: { type: 'integer' } },
};
const ZONE = {
  type: 'object',
  properties: { id: { type: 'string', readOnly: true }, name: str, records: {} as Obj },
};

interface Options {
  /** The zone read's `records` property (an array of RECORD by default). */
  records?: Obj;
  /** The embedding property's name (`records`). */
  field?: string;
  /** A GET on the records collection. */
  list?: boolean;
  /** The record's create body. */
  create?: Obj;
}

function doc(o: Options = {}): Obj {
  const zone = {
    ...ZONE,
    properties: {
      ...ZONE.properties,
      records: undefined,
      [o.field ?? 'records']: o.records ?? { type: 'array', items: RECORD },
    },
  };
  return {
    openapi: '3.0.3',
    info: { title: 'dns', version: '1' },
    paths: {
      '/zones': {
        get: { responses: ok({ type: 'array', items: zone }) },
        post: {
          requestBody: json({ type: 'object', required: ['name'], properties: { name: str } }),
          responses: { '201': json(zone) },
        },
      },
      '/zones/{zoneId}': { parameters: [p('zoneId')], get: { responses: ok(zone) }, delete: gone },
      '/zones/{zoneId}/records': {
        parameters: [p('zoneId')],
        ...(o.list ? { get: { responses: ok({ type: 'array', items: RECORD }) } } : {}),
        post: {
          requestBody: json(o.create ?? NEW_RECORD),
          responses: { '201': json(RECORD) },
        },
      },
      '/zones/{zoneId}/records/{recordId}': {
        parameters: [p('zoneId'), p('recordId')],
        get: { responses: ok(RECORD) },
        put: { requestBody: json(NEW_RECORD), responses: ok(RECORD) },
        delete: gone,
      },
    },
  };
}

describe('sub-collections listed through the parent read that embeds them', () => {
  it('lists records through GET /zones/{zoneId}, its records array the envelope', () => {
    const got = deriveTypes(doc());
    const records = got.types.find((t) => t.info.name === 'records');
    expect(records, JSON.stringify(got.unmapped)).toBeDefined();
    const ops = records!.operations;
    expect(`${ops.list.method} ${ops.list.path}`).toBe('GET /zones/{zoneId}');
    expect(ops.list.assigned).toBe(
      'inferred: GET /zones/{zoneId} lists /zones/{zoneId}/records (its records array holds the objects POST /zones/{zoneId}/records creates)',
    );
    expect(records!.listShape).toMatchObject({ kind: 'wrapped', field: 'records' });
    // Each record is still created, read, changed and deleted at its own paths, below its zone.
    expect(`${ops.create.method} ${ops.create.path}`).toBe('POST /zones/{zoneId}/records');
    expect(`${ops.read.method} ${ops.read.path}`).toBe('GET /zones/{zoneId}/records/{recordId}');
    expect(`${ops.delete?.method} ${ops.delete?.path}`).toBe(
      'DELETE /zones/{zoneId}/records/{recordId}',
    );
    expect(records!.info.parent).toEqual({ type: 'zones', field: 'zoneId' });
    // The zone keeps its own read, as the document has it.
    const zones = got.types.find((t) => t.info.name === 'zones')!;
    expect(zones.operations.read.assigned).toBeUndefined();
    expect(zones.listShape).toEqual({ kind: 'array' });
  });

  it('finds the array under another spelling of the segment (recordSets for record-sets)', () => {
    const d = doc({ field: 'recordSets' });
    const paths = d['paths'] as Obj;
    paths['/zones/{zoneId}/record-sets'] = paths['/zones/{zoneId}/records'];
    paths['/zones/{zoneId}/record-sets/{recordId}'] = paths['/zones/{zoneId}/records/{recordId}'];
    delete paths['/zones/{zoneId}/records'];
    delete paths['/zones/{zoneId}/records/{recordId}'];
    const t = deriveTypes(d).types.find((x) => x.info.name === 'record-sets');
    expect(t?.listShape).toMatchObject({ kind: 'wrapped', field: 'recordSets' });
  });

  it.each<[string, Options]>([
    ['the collection has a list of its own', { list: true }],
    ['the parent embeds no array of that name', { field: 'entries' }],
    ['the array holds strings, not objects', { records: { type: 'array', items: str } }],
    [
      'the embedded objects lack a field the create requires',
      {
        records: {
          type: 'array',
          items: { type: 'object', properties: { id: str, name: str, type: str } },
        },
      },
    ],
    [
      'the embedded objects carry no id the item path could take',
      {
        records: {
          type: 'array',
          items: { type: 'object', properties: { name: str, type: str, content: str } },
        },
      },
    ],
  ])('not when %s', (_, o) => {
    const got = deriveTypes(doc(o));
    const records = got.types.find((t) => t.info.name === 'records');
    if (o.list === true) {
      expect(records!.operations.list.path).toBe('/zones/{zoneId}/records');
    } else {
      expect(records).toBeUndefined();
      expect(got.unmapped.find((u) => u.path === '/zones/{zoneId}/records')?.reason).toContain(
        'no GET on /zones/{zoneId}/records',
      );
    }
  });
});
