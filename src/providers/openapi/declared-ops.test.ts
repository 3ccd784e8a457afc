import { describe, expect, it } from 'vitest';
import { deriveTypes } from './derive-types.js';

// Irregular paths assembled into one type by the overlay (x-tend-type + x-tend-op on the item's GET
// and DELETE), and where the ids are (x-tend-id-field) and which objects are gone
// (x-tend-absent-when) — the shape of Alertmanager's silences, in miniature.

type Obj = Record<string, unknown>;
const json = (schema: Obj) => ({ content: { 'application/json': { schema } } });
const BODY = { type: 'object', properties: { comment: { type: 'string' } } };
const READ = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    comment: { type: 'string' },
    status: { type: 'object', properties: { state: { type: 'string' } } },
  },
};

function doc(get: Obj, del: Obj, extra: { post?: Obj; read?: Obj } = {}): Obj {
  const read = extra.read ?? READ;
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/silences': {
        get: {
          responses: { '200': { description: 'ok', ...json({ type: 'array', items: read }) } },
        },
        post: {
          requestBody: json(BODY),
          responses: {
            '200': {
              description: 'ok',
              ...json({ type: 'object', properties: { silenceID: { type: 'string' } } }),
            },
          },
          ...extra.post,
        },
      },
      '/silence/{silenceID}': {
        get: { responses: { '200': { description: 'ok', ...json(read) } }, ...get },
        delete: { responses: { '200': { description: 'ok' } }, ...del },
      },
    },
  };
}

const READ_OP = { 'x-tend-type': 'silences', 'x-tend-op': 'read' };
const DELETE_OP = { 'x-tend-type': 'silences', 'x-tend-op': 'delete' };

describe('types assembled from irregular paths', () => {
  it('pairs /silences with /silence/{silenceID} when its GET and DELETE say so', () => {
    const got = deriveTypes(doc(READ_OP, DELETE_OP));
    expect(got.warnings).toEqual([]);
    expect(got.types.map((t) => [t.info.name, t.collectionPath, t.itemPath, t.idParam])).toEqual([
      ['silences', '/silences', '/silence/{silenceID}', 'silenceID'],
    ]);
    expect(got.types[0]!.info).toMatchObject({ idField: 'id', markerField: 'comment' });
    expect(got.unmapped).toEqual([]);
  });

  it.each([
    ['only the GET says so', READ_OP, {}],
    ['the DELETE names another type', READ_OP, { ...DELETE_OP, 'x-tend-type': 'other' }],
    ['the ops are swapped', { ...READ_OP, 'x-tend-op': 'delete' }, DELETE_OP],
  ])('does not pair them when %s', (_name, get, del) => {
    const got = deriveTypes(doc(get, del));
    expect(got.types).toEqual([]);
    expect(got.unmapped.map((u) => u.path).sort()).toEqual(['/silence/{silenceID}', '/silences']);
  });

  it('takes the create answer id from x-tend-id-field on the POST, and the absent states from the read schema', () => {
    const got = deriveTypes(
      doc(READ_OP, DELETE_OP, {
        post: { 'x-tend-id-field': 'silenceID' },
        read: { ...READ, 'x-tend-absent-when': { field: 'status.state', in: ['expired'] } },
      }),
    );
    expect(got.warnings).toEqual([]);
    expect(got.types[0]).toMatchObject({
      createIdField: 'silenceID',
      absentWhen: [{ field: 'status.state', in: ['expired'] }],
    });
  });

  it('reads the id field of read objects from x-tend-id-field on the read schema', () => {
    const read = {
      type: 'object',
      properties: { uid: { type: 'string' }, id: { type: 'integer' }, comment: { type: 'string' } },
      'x-tend-id-field': 'uid',
    };
    const got = deriveTypes(doc(READ_OP, DELETE_OP, { read }));
    expect(got.types[0]!.info.idField).toBe('uid');
  });

  it('warns about an x-tend-id-field the create answer does not have', () => {
    const got = deriveTypes(doc(READ_OP, DELETE_OP, { post: { 'x-tend-id-field': 'uuid' } }));
    expect(got.warnings).toEqual([
      'silences: x-tend-id-field on POST /silences names uuid, which is not a field of it; ignored',
    ]);
    expect(got.types[0]!.createIdField).toBeUndefined();
  });
});
