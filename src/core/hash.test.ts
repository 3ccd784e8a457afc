import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, storedCanonicalJson } from './hash.js';

/** What the ledger hashed before `storedCanonicalJson`: write, parse back, sort. */
function roundTripped(value: unknown): string | undefined {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : canonicalJson(JSON.parse(text));
}

/** Values JSON.stringify treats specially, mixed into arbitrary data. */
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(-0),
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.date({ noInvalidDate: true }),
  fc.constant({ toJSON: () => ({ b: 1, a: [2, undefined] }) }),
  fc.constant({ toJSON: () => undefined }),
  fc.constant(new Map([['k', 1]])),
  fc.constant(Object.assign(Object.create(null) as object, { z: 1, a: 2 })),
  fc.constant(JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}') as unknown),
);

const data = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    odd,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 6 }), fc.nat().map(String), fc.constant('4294967295')),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

describe('storedCanonicalJson', () => {
  it.each([
    ['a plain object, keys sorted', { b: 1, a: 'x' }, '{"a":"x","b":1}'],
    ['undefined members dropped', { a: undefined, b: 1 }, '{"b":1}'],
    [
      'undefined, functions and symbols in arrays become null',
      [undefined, () => 1, Symbol('s')],
      '[null,null,null]',
    ],
    ['non-finite numbers become null', [Number.NaN, Number.NEGATIVE_INFINITY], '[null,null]'],
    ['-0 is 0', -0, '0'],
    ['a Date is its ISO text', new Date(0), '"1970-01-01T00:00:00.000Z"'],
    ['toJSON is called with the member name', { k: { toJSON: (key: string) => key } }, '{"k":"k"}'],
    ['boxed primitives are unboxed', [Object(1), Object('s'), Object(true)], '[1,"s",true]'],
    ['a top-level undefined is undefined', undefined, undefined],
    ['a top-level function is undefined', () => 1, undefined],
    [
      'array-index keys first, by value (as every object enumerates them)',
      { b: 1, '10': 1, '2': 1, '01': 1, '4294967294': 1, '4294967295': 1, a: 1 },
      '{"2":1,"10":1,"4294967294":1,"01":1,"4294967295":1,"a":1,"b":1}',
    ],
    ['nested keys are sorted too', { z: [{ y: 1, x: 2 }] }, '{"z":[{"x":2,"y":1}]}'],
  ])('%s', (_, value, expected) => {
    expect(storedCanonicalJson(value)).toBe(expected);
    expect(storedCanonicalJson(value)).toBe(roundTripped(value));
  });

  it('throws where JSON.stringify throws: a cycle, a bigint', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => storedCanonicalJson(cycle)).toThrow(/circular/i);
    expect(() => storedCanonicalJson({ n: 1n })).toThrow(/bigint/i);
  });

  it('writes a value shared twice (not a cycle) both times', () => {
    const shared = { a: 1 };
    expect(storedCanonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
  });

  it('is canonicalJson of the value as JSON.stringify writes it and JSON.parse reads it back', () => {
    fc.assert(
      fc.property(data, (value) => {
        expect(storedCanonicalJson(value)).toBe(roundTripped(value));
      }),
      { numRuns: 2000 },
    );
  });
});
