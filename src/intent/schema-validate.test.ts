import { describe, expect, it } from 'vitest';
import type { ResourceTypeInfo } from '../core/index.js';
import { closeSchema } from './close-schema.js';
import { formatPath } from './positions.js';
import { createSpecValidator } from './schema-validate.js';

function info(
  schema: Record<string, unknown>,
  extra: Partial<ResourceTypeInfo> = {},
): ResourceTypeInfo {
  return {
    name: 't',
    schema,
    identity: 'marker',
    idField: 'id',
    createOnly: [],
    outputOnly: [],
    sensitive: [],
    lifecycle: 'annotations',
    idempotencyKey: false,
    ...extra,
  };
}

const base = { type: 'object', properties: { name: { type: 'string' } } };
const extra = { type: 'object', properties: { size: { type: 'integer' } } };

describe('createSpecValidator', () => {
  const cases: {
    name: string;
    reason: string;
    schema: Record<string, unknown>;
    spec: Record<string, unknown>;
    type?: Partial<ResourceTypeInfo>;
    want: string[];
  }[] = [
    {
      name: 'allOf accepts fields of every branch',
      reason: 'closing a branch alone would reject its siblings’ fields',
      schema: { allOf: [base, extra] },
      spec: { name: 'a', size: 1 },
      want: [],
    },
    {
      name: 'allOf rejects fields no branch declares',
      reason: 'the combination is closed with unevaluatedProperties',
      schema: { allOf: [base, extra] },
      spec: { name: 'a', colour: 'red' },
      want: [
        'schema.unknown_field spec.colour unknown field `colour` in spec; allowed fields: name, size.',
      ],
    },
    {
      name: 'allOf through local $refs',
      reason: 'a $defs entry used as an allOf branch stays open',
      schema: { $defs: { Base: base }, allOf: [{ $ref: '#/$defs/Base' }, extra] },
      spec: { name: 'a', size: 1 },
      want: [],
    },
    {
      name: 'oneOf alternatives',
      reason: 'each alternative is closed by the parent; the matching one counts',
      schema: {
        oneOf: [
          { ...base, required: ['name'] },
          { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        ],
      },
      spec: { id: 'x' },
      want: [],
    },
    {
      name: 'oneOf rejects fields of no alternative',
      reason: 'the parent closes the combination',
      schema: {
        oneOf: [
          { ...base, required: ['name'] },
          { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        ],
      },
      spec: { id: 'x', colour: 'red' },
      want: [
        'schema.unknown_field spec.colour unknown field `colour` in spec; allowed fields: id, name.',
      ],
    },
    {
      name: 'OpenAPI 3.0 nullable',
      reason: 'nullable: true means null is a valid value',
      schema: { type: 'object', properties: { note: { type: 'string', nullable: true } } },
      spec: { note: null },
      want: [],
    },
    {
      name: 'OpenAPI formats',
      reason: 'int64 and friends are not errors in the schema',
      schema: { type: 'object', properties: { n: { type: 'integer', format: 'int64' } } },
      spec: { n: 5 },
      want: [],
    },
    {
      name: 'standard formats are checked',
      reason: 'ajv-formats knows uri, ipv4, …',
      schema: { type: 'object', properties: { ip: { type: 'string', format: 'ipv4' } } },
      spec: { ip: 'nope' },
      want: ['schema.invalid spec.ip `spec.ip` must match format "ipv4"'],
    },
    {
      name: 'text with an embedded reference skips pattern checks',
      reason: 'the substituted text is known only after apply',
      schema: { type: 'object', properties: { url: { type: 'string', pattern: '^http' } } },
      spec: { url: '${sb.a/b.scheme}://x' },
      want: [],
    },
    {
      name: 'a whole reference in an integer field is not a type error',
      reason: 'a whole reference keeps the type of what it points at',
      schema: { type: 'object', properties: { size: { type: 'integer' } } },
      spec: { size: '${sb.a/b.size}' },
      want: [],
    },
    {
      name: 'a reference inside an object field exempts only that value',
      reason: 'other fields are still checked',
      schema: {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      },
      spec: { a: '${sb.a/b.n}', b: 'x' },
      want: ['schema.type spec.b `spec.b` must be integer, got string "x"'],
    },
    {
      name: 'a missing sensitive field is still required',
      reason: 'exemptions apply only to fields that are written',
      schema: { type: 'object', properties: { pw: { type: 'string' } }, required: ['pw'] },
      spec: {},
      type: { sensitive: ['pw'] },
      want: ['schema.required spec.pw missing required field `spec.pw`'],
    },
  ];
  it.each(cases)('$name', ({ reason, schema, spec, type, want }) => {
    const problems = createSpecValidator().validate(info(schema, type), spec);
    if ('unavailable' in problems) throw new Error(problems.unavailable);
    const got = problems.map((p) => `${p.code} ${formatPath(['spec', ...p.path])} ${p.message}`);
    expect(got, reason).toEqual(want);
  });

  it('validates recursive (cyclic) schemas', () => {
    const node: Record<string, unknown> = {
      type: 'object',
      properties: { name: { type: 'string' } },
    };
    (node.properties as Record<string, unknown>).child = node;
    const problems = createSpecValidator().validate(info(node), {
      child: { child: { name: 1, x: 1 } },
    });
    expect(problems).toEqual([
      expect.objectContaining({ code: 'schema.unknown_field', path: ['child', 'child', 'x'] }),
      expect.objectContaining({ code: 'schema.type', path: ['child', 'child', 'name'] }),
    ]);
  });

  it('says when a schema cannot be compiled', () => {
    const result = createSpecValidator().validate(
      info({ type: 'object', properties: { a: { $ref: '#/nope' } } }),
      {},
    );
    expect(result).toEqual({ unavailable: expect.stringContaining('#/nope') });
  });
});

describe('closeSchema', () => {
  it('closes object schemas on a copy and keeps what the author said', () => {
    const schema = {
      type: 'object',
      properties: {
        tags: { type: 'object', additionalProperties: { type: 'string' } },
        nested: {
          type: 'object',
          properties: { x: { type: 'number', exclusiveMinimum: true, minimum: 0 } },
        },
      },
    };
    const before = JSON.stringify(schema);
    expect(closeSchema(schema)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        tags: { type: 'object', additionalProperties: { type: 'string' } },
        nested: {
          type: 'object',
          additionalProperties: false,
          properties: { x: { type: 'number', exclusiveMinimum: 0 } },
        },
      },
    });
    expect(JSON.stringify(schema)).toBe(before);
  });

  it('turns cycles of dereferenced schemas into local $refs', () => {
    const node: Record<string, unknown> = {
      type: 'object',
      properties: { name: { type: 'string' } },
    };
    (node.properties as Record<string, unknown>).child = node;
    expect(closeSchema(node)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: { name: { type: 'string' }, child: { $ref: '#' } },
    });
  });
});
