import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';

// Declared irregular operations (x-tend-type + x-tend-op) assembled into one type, where the ids
// are (x-tend-id-field) and which objects are gone (x-tend-absent-when) — the shape of
// Alertmanager's silences, in miniature. (These were declared-ops.test.ts: declared-ops.ts, which
// read only an item path's GET and DELETE, is now part of irregular-ops.ts.)

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

function doc(
  get: Obj,
  del: Obj,
  extra: { post?: Obj; read?: Obj; item?: string; collection?: Obj; paths?: Obj } = {},
): Obj {
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
        ...extra.collection,
      },
      [extra.item ?? '/silence/{silenceID}']: {
        get: { responses: { '200': { description: 'ok', ...json(read) } }, ...get },
        delete: { responses: { '200': { description: 'ok' } }, ...del },
      },
      ...extra.paths,
    },
  };
}

const READ_OP = { 'x-tend-type': 'silences', 'x-tend-op': 'read' };
const DELETE_OP = { 'x-tend-type': 'silences', 'x-tend-op': 'delete' };

describe('declared item operations go under the collection that is already the type', () => {
  it('pairs /silences with /silence/{silenceID} when its GET and DELETE say so', () => {
    const got = deriveTypes(doc(READ_OP, DELETE_OP));
    expect(got.warnings).toEqual([]);
    expect(got.types.map((t) => [t.info.name, t.collectionPath, t.itemPath, t.idParam])).toEqual([
      ['silences', '/silences', '/silences/{silenceID}', 'silenceID'],
    ]);
    const t = got.types[0]!;
    expect(t.operations.read).toMatchObject({
      method: 'GET',
      path: '/silence/{silenceID}',
      assigned: 'x-tend-op read',
    });
    expect(t.operations.delete).toMatchObject({
      method: 'DELETE',
      path: '/silence/{silenceID}',
      assigned: 'x-tend-op delete',
    });
    expect(t.info).toMatchObject({ idField: 'id', markerField: 'comment' });
    expect(got.unmapped).toEqual([]);
  });

  it('finds the collection by the x-tend-type on its path', () => {
    const op = { 'x-tend-type': 'quiet' };
    const got = deriveTypes(
      doc(
        { ...op, 'x-tend-op': 'read' },
        { ...op, 'x-tend-op': 'delete' },
        { collection: { 'x-tend-type': 'quiet' } },
      ),
    );
    expect(got.types.map((t) => [t.info.name, t.collectionPath, t.itemPath])).toEqual([
      ['quiet', '/silences', '/silences/{silenceID}'],
    ]);
  });

  it('takes the parameter names of the collection for a nested item path (by position)', () => {
    const d = doc(READ_OP, DELETE_OP, { item: '/a/{x}/silence/{silenceID}' });
    const paths = d['paths'] as Record<string, Obj>;
    paths['/a/{y}/silences'] = paths['/silences']!;
    delete paths['/silences'];
    const got = deriveTypes(d);
    expect(got.types.map((t) => [t.collectionPath, t.itemPath, t.operations.read.path])).toEqual([
      ['/a/{y}/silences', '/a/{y}/silences/{silenceID}', '/a/{y}/silence/{silenceID}'],
    ]);
  });

  it.each([
    ['the DELETE names another type', READ_OP, { ...DELETE_OP, 'x-tend-type': 'other' }],
    ['the ops are swapped', { ...READ_OP, 'x-tend-op': 'delete' }, DELETE_OP],
  ])('does not pair them when %s', (_name, get, del) => {
    const got = deriveTypes(doc(get, del));
    expect(got.types).toEqual([]);
    expect(got.unmapped.map((u) => u.path).sort()).toEqual(['/silence/{silenceID}', '/silences']);
  });

  it('pairs them by the singular rule when only the GET says so (the DELETE is inferred)', () => {
    const got = deriveTypes(doc(READ_OP, {}));
    expect(got.types).toHaveLength(1);
    expect(got.types[0]!.operations.read.assigned).toBe('x-tend-op read');
    expect(got.types[0]!.operations.delete?.assigned).toBe(
      'inferred: /silence/{silenceID} (singular) is the item path of /silences',
    );
  });

  it('falls back to the item path without its parameter when two collections could be the type', () => {
    const got = deriveTypes(
      doc(READ_OP, DELETE_OP, {
        paths: {
          '/b/silences': {
            post: { 'x-tend-type': 'silences', requestBody: json(BODY), responses: {} },
          },
        },
      }),
    );
    // /silences and /b/silences both name the type: neither is chosen, /silence has no list.
    expect(got.types.map((t) => t.collectionPath)).not.toContain('/silence');
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

  it('names the document path in a warning about a declared operation on a normalised path', () => {
    const got = deriveTypes({
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/things.json': { post: { 'x-tend-op': 'make', 'x-tend-type': 'things', responses: {} } },
      },
    });
    expect(got.warnings).toEqual([
      'POST /things.json: x-tend-op must be one of list, create, read, update, delete, not "make"; ignored',
    ]);
  });
});
