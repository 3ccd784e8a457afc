import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';

// Inverted verbs (collection-put.ts): created by PUT on the collection, changed by POST on the item.
// Each case is a small document of our own; the PUT is the create only when its body is one object
// and it answers the object the item GET reads (or, answering no JSON, its body holds the listed
// objects' fields) — a PUT that replaces the whole list is no create.

type Obj = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...json(schema) } });
const WIDGET = {
  type: 'object',
  properties: {
    id: { type: 'string', readOnly: true },
    name: { type: 'string', description: 'Unique per account' },
    color: { type: 'string' },
  },
};
const NEW_WIDGET = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' }, color: { type: 'string' } },
};
const CHANGE = { type: 'object', properties: { color: { type: 'string' } } };
const param = { name: 'widgetId', in: 'path', required: true, schema: { type: 'string' } };

interface Options {
  /** The collection PUT's request body and answers. */
  putBody?: unknown;
  putAnswers?: Obj;
  /** Another POST on the collection. */
  post?: Obj;
  itemDelete?: boolean;
}

function doc(o: Options = {}): Obj {
  return {
    openapi: '3.0.3',
    info: { title: 'widgets', version: '1' },
    paths: {
      '/widgets': {
        get: { responses: ok({ type: 'array', items: WIDGET }) },
        put: {
          requestBody: json(o.putBody ?? NEW_WIDGET),
          responses: o.putAnswers ?? ok(WIDGET),
        },
        ...(o.post ? { post: o.post } : {}),
      },
      '/widgets/{widgetId}': {
        parameters: [param],
        get: { responses: ok(WIDGET) },
        post: { requestBody: json(CHANGE), responses: ok(WIDGET) },
        ...(o.itemDelete === false
          ? {}
          : { delete: { responses: { '204': { description: 'x' } } } }),
      },
    },
  };
}

interface Case {
  name: string;
  doc: Obj;
  /** The create and update, as sent; null when no type is made. */
  want: { create: string; update: string; assigned: string } | null;
}

const cases: Case[] = [
  {
    name: 'a PUT of one object answering the item schema creates; the item POST updates',
    doc: doc(),
    want: {
      create: 'PUT /widgets',
      update: 'POST /widgets/{widgetId}',
      assigned:
        'inferred: PUT /widgets creates one object (its body is one object, and it answers the same schema as GET /widgets/{widgetId})',
    },
  },
  {
    name: 'an answer equal to the item schema but written again counts too',
    doc: doc({ putAnswers: { '201': { description: 'made', ...json({ ...WIDGET }) } } }),
    want: {
      create: 'PUT /widgets',
      update: 'POST /widgets/{widgetId}',
      assigned:
        'inferred: PUT /widgets creates one object (its body is one object, and it answers an equal schema as GET /widgets/{widgetId})',
    },
  },
  // Not a create.
  {
    name: 'a PUT of a list replaces the collection: no create',
    doc: doc({
      putBody: { type: 'array', items: NEW_WIDGET },
      putAnswers: ok({ type: 'array', items: WIDGET }),
    }),
    want: null,
  },
  {
    name: 'a PUT answering no JSON whose fields the listed objects hold creates (decided by the body)',
    doc: doc({ putAnswers: { '204': { description: 'done' } } }),
    want: {
      create: 'PUT /widgets',
      update: 'POST /widgets/{widgetId}',
      assigned:
        'inferred: PUT /widgets creates one object (its body is one object, and it answers no JSON, and the objects GET /widgets/{widgetId} reads hold its fields)',
    },
  },
  {
    name: 'a PUT answering no JSON whose required field the objects do not hold: no create',
    doc: doc({
      putAnswers: { '204': { description: 'done' } },
      putBody: {
        ...NEW_WIDGET,
        required: ['name', 'owner'],
        properties: { ...NEW_WIDGET.properties, owner: { type: 'string' } },
      },
    }),
    want: null,
  },
  {
    name: 'a PUT answering no JSON whose fields are mostly not the objects’: no create',
    doc: doc({
      putAnswers: { '204': { description: 'done' } },
      putBody: {
        type: 'object',
        properties: {
          color: { type: 'string' },
          order: { type: 'array' },
          mode: { type: 'string' },
        },
      },
    }),
    want: null,
  },

  {
    name: 'a PUT answering another object is no create of these',
    doc: doc({ putAnswers: ok({ type: 'object', properties: { job: { type: 'string' } } }) }),
    want: null,
  },
  {
    name: 'without a DELETE on the item the PUT is not taken',
    doc: doc({ itemDelete: false }),
    want: null,
  },
];

describe('created by PUT on the collection', () => {
  it.each(cases)('$name', ({ doc: d, want }) => {
    const got = deriveTypes(d);
    const t = got.types.find((x) => x.info.name === 'widgets');
    if (want === null) {
      expect(t).toBeUndefined();
      return;
    }
    expect(t, JSON.stringify(got.unmapped)).toBeDefined();
    const ops = t!.operations;
    expect(`${ops.create.method} ${ops.create.path}`).toBe(want.create);
    expect(ops.update && `${ops.update.method} ${ops.update.path}`).toBe(want.update);
    expect(ops.create.assigned).toBe(want.assigned);
    expect(t!.writableFields).toEqual(['name', 'color']);
  });

  it('a collection with a POST of its own keeps it: the PUT is left alone', () => {
    const post = { requestBody: json(NEW_WIDGET), responses: { '201': json(WIDGET) } };
    const t = deriveTypes(doc({ post })).types.find((x) => x.info.name === 'widgets')!;
    expect(`${t.operations.create.method} ${t.operations.create.path}`).toBe('POST /widgets');
    expect(t.operations.create.assigned).toBeUndefined();
  });
});
