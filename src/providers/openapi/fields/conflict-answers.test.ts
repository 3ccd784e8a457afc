import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';

// A create that refuses a second object with the same value (conflict-answers.ts): the answer the
// document declares for it is the evidence of a natural key. Each case is a small document of our
// own: `/widgets` + `/widgets/{widgetId}` (or below a parent `/projects/{key}`), its POST answering
// what the case gives. A bare 409, a refusal of something else, or a field Tend cannot key by
// alone give no key: a wrong natural key adopts someone else's object.

type Obj = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...json(schema) } });
const str = (): Obj => ({ type: 'string' });
const object = (properties: Obj, required: string[] = []): Obj => ({
  type: 'object',
  required,
  properties,
});
const param = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

/** One collection at `collection` with the POST answers given, and its item path. */
function doc(body: Obj, answers: Obj, collection = '/widgets'): Obj {
  const read = object({ id: { type: 'string', readOnly: true }, ...(body['properties'] as Obj) });
  const above = [...collection.matchAll(/\{([^{}]+)\}/g)].map((m) => param(m[1]!));
  const parent: Obj =
    above.length === 0
      ? {}
      : {
          '/projects': {
            get: { responses: ok({ type: 'array', items: object({ key: str() }) }) },
            post: {
              requestBody: json(object({ key: str() }, ['key'])),
              responses: { '201': json(object({ key: str() })) },
            },
          },
          '/projects/{key}': {
            parameters: [param('key')],
            get: { responses: ok(object({ key: str() })) },
            delete: { responses: { '204': { description: 'gone' } } },
          },
        };
  return {
    openapi: '3.1.0',
    info: { title: 'widgets', version: '1' },
    paths: {
      ...parent,
      [collection]: {
        ...(above.length > 0 ? { parameters: above } : {}),
        get: { responses: ok({ type: 'array', items: read }) },
        post: {
          requestBody: json(body),
          responses: { '201': { description: 'created', ...json(read) }, ...answers },
        },
      },
      [`${collection}/{widgetId}`]: {
        parameters: [...above, param('widgetId')],
        get: { responses: ok(read) },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

const answer = (description: string) => ({ description });

interface Case {
  name: string;
  doc: Obj;
  /** The natural key's fields (parents' first), or null for no identity. */
  key: string[] | null;
  /** A part of the evidence (why), or of the reason for no identity. */
  why: string;
}

const cases: Case[] = [
  {
    name: 'a 409 "already exists" naming no field: the one required name-like field',
    doc: doc(object({ name: str(), color: str() }, ['name']), {
      '409': answer('A widget of that kind already exists.'),
    }),
    key: ['name'],
    why: 'natural key name: the one required name-like field of the create body, and POST /widgets answers 409 "A widget of that kind already exists."',
  },
  {
    name: 'a 409 naming the field ("with the provided hostname"), not a name-like one',
    doc: doc(object({ hostname: str(), public_key: str(), name: str() }, ['hostname', 'name']), {
      '409': answer('A widget with the provided hostname already exists.'),
    }),
    key: ['hostname'],
    why: 'natural key hostname: a required field of the create body, and POST /widgets answers 409 "A widget with the provided hostname already exists."',
  },
  {
    name: 'a 422 "has already been taken" naming an optional slug (Tend then requires it)',
    doc: doc(object({ slug: str(), title: str() }, ['title']), {
      '422': answer('Validation failed: slug has already been taken'),
    }),
    key: ['slug'],
    why: 'natural key slug: a field of the create body (optional in the document; Tend requires it), and POST /widgets answers 422 "Validation failed: slug has already been taken"',
  },
  {
    name: 'a 400 that says "is already in use" among other refusals',
    doc: doc(object({ key: str(), value: str() }, ['key', 'value']), {
      '400': answer('The request is invalid, or the key is already in use'),
    }),
    key: ['key'],
    why: 'answers 400 "The request is invalid, or the key is already in use"',
  },
  {
    name: 'a 400 "duplicate" naming nothing, the name required',
    doc: doc(object({ name: str() }, ['name']), { '400': answer('Duplicate entry') }),
    key: ['name'],
    why: 'answers 400 "Duplicate entry"',
  },
  {
    name: 'below a parent: the parent stays the scope and the name is the key',
    doc: doc(
      object({ name: str(), note: str() }, ['name']),
      { '409': answer('A widget with this name already exists in the project') },
      '/projects/{key}/widgets',
    ),
    key: ['key', 'name'],
    why: 'POST /projects/{key}/widgets answers 409 "A widget with this name already exists in the project"',
  },
  // No key.
  {
    name: 'a bare 409 ("Conflict") is no evidence: the reason says what to declare',
    doc: doc(object({ name: str() }, ['name']), { '409': answer('Conflict') }),
    key: null,
    why: 'name is required on create but the document does not say it is unique (a display name may repeat); if the platform refuses a second object with the same name, declare x-tend-identity: natural-key and x-tend-natural-key: name; POST /widgets may answer 409 without saying why: if that is a second object with the same value of a field, declare that field',
  },
  {
    name: 'an empty 409 is no evidence either',
    doc: doc(object({ name: str() }, ['name']), { '409': answer('') }),
    key: null,
    why: 'may answer 409 without saying why',
  },
  {
    name: 'a 409 for something else ("already in progress") is no evidence, nor a hint',
    doc: doc(object({ name: str() }, ['name']), {
      '409': answer('An import is already in progress for this account'),
    }),
    key: null,
    why: 'name is required on create but the document does not say it is unique',
  },
  {
    name: 'a 409 for something else ("already in progress") is no evidence',
    doc: doc(object({ name: str() }, ['name']), {
      '409': answer('An import is already in progress for this account'),
    }),
    key: null,
    why: 'no natural key',
  },
  {
    name: 'a 422 without the words of a duplicate is no evidence',
    doc: doc(object({ name: str() }, ['name']), { '422': answer('Validation failed') }),
    key: null,
    why: 'name is required on create but the document does not say it is unique',
  },
  {
    name: 'a refusal naming no field, with two required name-like fields: no guess',
    doc: doc(object({ name: str(), slug: str() }, ['name', 'slug']), {
      '409': answer('This widget already exists.'),
    }),
    key: null,
    why: 'POST /widgets answers 409 "This widget already exists.", but names no field of the create body Tend could key by',
  },
  {
    name: 'a refusal naming two fields: the key may be their pair, not one of them',
    doc: doc(object({ name: str(), region: str() }, ['name', 'region']), {
      '409': answer('A widget with the same name already exists for region'),
    }),
    key: null,
    why: 'naming name and region: the key may be their pair',
  },
  {
    name: "a refusal naming the parent's parameter: the scope is never the key alone",
    doc: doc(
      object({ key: str(), name: str() }, ['key', 'name']),
      { '409': answer('A widget with the provided key already exists') },
      '/projects/{key}/widgets',
    ),
    key: null,
    why: "naming key, which Tend cannot key by alone (an id, or the parent's parameter: the key's scope)",
  },
  {
    name: "the parent's parameter repeated in the body is no key, even described as unique",
    doc: doc(
      object(
        { key: { type: 'string', description: 'The unique key of the project' }, note: str() },
        ['key'],
      ),
      {},
      '/projects/{key}/widgets',
    ),
    key: null,
    why: 'no natural key',
  },
  {
    name: 'a refusal naming an id field is not taken for the name',
    doc: doc(object({ external_id: str(), name: str() }, ['external_id', 'name']), {
      '409': answer('A widget with this external_id already exists'),
    }),
    key: null,
    why: 'naming external_id',
  },
  {
    name: 'a 500 saying "already exists" is not read (a server error, not a declared refusal)',
    doc: doc(object({ name: str() }, ['name']), {
      '500': answer('network already exists'),
    }),
    key: null,
    why: 'no natural key',
  },
];

describe('natural keys from a create that refuses a duplicate', () => {
  it.each(cases)('$name', ({ doc: d, key, why }) => {
    const derived = deriveTypes(d);
    const t = derived.types.find((x) => x.info.name === 'widgets');
    expect(t, JSON.stringify(derived.unmapped)).toBeDefined();
    if (key === null) {
      expect(t!.info.identity).toBeNull();
      expect(t!.info.identityReason).toContain(why);
    } else {
      expect(t!.info.identity).toBe('natural-key');
      expect(t!.keyFields).toEqual(key);
      expect(t!.identityWhy).toContain(why);
      // The key becomes required: the creator gives it, the platform never chooses it.
      expect(t!.info.schema['required']).toContain(key.at(-1));
    }
  });
});
