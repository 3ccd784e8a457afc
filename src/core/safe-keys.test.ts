import { afterEach, describe, expect, it } from 'vitest';
import { TendError } from './errors.js';
import {
  assertNoForbiddenKeys,
  defineKey,
  forbiddenKeyPaths,
  formatDataPath,
  isForbiddenKey,
  mergeInto,
  nullRecord,
  ownValue,
  setKey,
  shapeProblems,
} from './safe-keys.js';

/** Parsed JSON keeps `__proto__` as an own key: exactly what hostile input looks like. */
const hostile = (text: string): Record<string, unknown> =>
  JSON.parse(text) as Record<string, unknown>;

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();
const pristine = prototypeKeys();
afterEach(() => {
  // Every test here tries to pollute; none may leave a trace on Object.prototype.
  expect(prototypeKeys()).toEqual(pristine);
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
});

describe('isForbiddenKey', () => {
  it.each([
    { key: '__proto__', want: true, reason: 'the accessor that sets an object prototype' },
    { key: 'constructor', want: true, reason: 'constructor.prototype reaches Object.prototype' },
    { key: 'prototype', want: true, reason: 'the second step of constructor.prototype' },
    { key: '__proto', want: false, reason: 'only the exact names' },
    { key: 'Constructor', want: false, reason: 'keys are case-sensitive' },
    { key: 'toString', want: false, reason: 'shadowing a method writes an own property only' },
    { key: 7, want: false, reason: 'numbers are array indexes' },
  ])('$key: $reason', ({ key, want }) => {
    expect(isForbiddenKey(key)).toBe(want);
  });
});

describe('setKey', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('refuses %s with input.forbidden_key', (k) => {
    const target: Record<string, unknown> = {};
    let err: unknown;
    try {
      setKey(target, k, { polluted: true }, 'the test input');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('input.forbidden_key');
    expect((err as TendError).message).toBe(
      `the key \`${k}\` in the test input is refused: it could reach an object's prototype`,
    );
    expect((err as TendError).hint).toMatch(/rename the key/);
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
  });

  it('writes any other key as an own property', () => {
    const target: Record<string, unknown> = {};
    setKey(target, 'toString', 1);
    expect(Object.keys(target)).toEqual(['toString']);
  });
});

describe('defineKey', () => {
  it('keeps __proto__ as plain data, never as the prototype', () => {
    const target: Record<string, unknown> = {};
    defineKey(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":true}}');
  });
});

describe('ownValue and nullRecord', () => {
  it('read only what was written', () => {
    expect(ownValue({}, 'constructor')).toBeUndefined();
    expect(ownValue({ a: 1 }, 'a')).toBe(1);
    const r = nullRecord<number>();
    expect(r['constructor']).toBeUndefined();
    expect('toString' in r).toBe(false);
  });
});

describe('mergeInto', () => {
  const cases: {
    name: string;
    reason: string;
    target: Record<string, unknown>;
    update: Record<string, unknown>;
    arrays?: 'append' | 'replace';
    want: Record<string, unknown>;
  }[] = [
    {
      name: 'objects merge recursively',
      reason: 'a nested update adds to what is there',
      target: { a: { b: 1 } },
      update: { a: { c: 2 } },
      want: { a: { b: 1, c: 2 } },
    },
    {
      name: 'scalars are replaced',
      reason: 'the update wins',
      target: { a: 1 },
      update: { a: 'x' },
      want: { a: 'x' },
    },
    {
      name: 'arrays are replaced by default',
      reason: 'a list is a value',
      target: { a: [1] },
      update: { a: [2] },
      want: { a: [2] },
    },
    {
      name: 'arrays are appended to when asked',
      reason: 'Overlay 1.0 appends',
      target: { a: [1] },
      update: { a: [2, 3] },
      arrays: 'append',
      want: { a: [1, 2, 3] },
    },
  ];
  it.each(cases)('$name: $reason', ({ target, update, arrays, want }) => {
    mergeInto(target, update, arrays ? { arrays } : {});
    expect(target).toEqual(want);
  });

  it.each([
    ['__proto__', '{"__proto__": {"polluted": true}}'],
    ['constructor', '{"constructor": {"prototype": {"polluted": true}}}'],
    ['prototype', '{"a": {"prototype": {"polluted": true}}}'],
  ])('refuses %s at any depth and writes nothing into a prototype', (key, text) => {
    const target: Record<string, unknown> = { a: {} };
    expect(() => mergeInto(target, hostile(text), { where: 'o.yaml' })).toThrow(
      `the key \`${key}\` in o.yaml is refused`,
    );
  });

  it('appends a list of 200,000 items without overflowing the stack', () => {
    const target = { a: [0] };
    mergeInto(target, { a: Array.from({ length: 200_000 }, (_, i) => i) }, { arrays: 'append' });
    expect(target.a).toHaveLength(200_001);
  });
});

describe('forbiddenKeyPaths', () => {
  it('finds every forbidden key with its path, in a cyclic graph too', () => {
    const doc = hostile(
      '{"a": [{"__proto__": 1}], "b": {"constructor": 2, "c": {"prototype": 3}}}',
    );
    (doc['b'] as Record<string, unknown>)['self'] = doc;
    expect(forbiddenKeyPaths(doc).map(formatDataPath)).toEqual([
      '$.a[0].__proto__',
      '$.b.constructor',
      '$.b.c.prototype',
    ]);
  });

  it('walks 100,000 levels without recursion', () => {
    let deep: unknown = hostile('{"__proto__": {}}');
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(forbiddenKeyPaths(deep)[0]).toHaveLength(100_001);
  });

  it('assertNoForbiddenKeys names the first one and where', () => {
    expect(() => assertNoForbiddenKeys(hostile('{"x": {"__proto__": {}}}'), 'a.json')).toThrow(
      "the key `__proto__` at $.x.__proto__ in a.json is refused: it could reach an object's prototype",
    );
    expect(() => assertNoForbiddenKeys({ a: [1, { b: null }] }, 'a.json')).not.toThrow();
  });
});

describe('shapeProblems', () => {
  const nest = (levels: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  };
  const cyclic: Record<string, unknown> = { a: {} };
  (cyclic['a'] as Record<string, unknown>)['back'] = cyclic;
  const shared = { leaf: nest(10) };
  let dag: unknown = shared;
  for (let i = 0; i < 60; i++) dag = { l: dag, r: dag };

  it.each([
    { name: 'plain data', reason: 'nothing to say', value: { a: [1, { b: 'c' }] }, want: [] },
    {
      name: '64 levels',
      reason: 'the limit itself is fine',
      value: nest(63),
      want: [],
    },
    {
      name: '65 levels',
      reason: 'deeper input is refused before walkers recurse into it',
      value: nest(65),
      want: [{ kind: 'too-deep', path: Array<string>(64).fill('a') }],
    },
    {
      name: 'a cycle',
      reason: 'a YAML alias inside its own anchor',
      value: cyclic,
      want: [{ kind: 'cycle', path: ['a', 'back'] }],
    },
    {
      name: 'a forbidden key',
      reason: 'reported at the key',
      value: hostile('{"a": [{"constructor": 1}]}'),
      want: [{ kind: 'forbidden-key', path: ['a', 0, 'constructor'] }],
    },
  ])('$name: $reason', ({ value, want }) => {
    expect(shapeProblems(value)).toEqual(want);
  });

  it('walks a shared node again only when it is reached deeper (2^60 paths, fast)', () => {
    const started = performance.now();
    const problems = shapeProblems(dag);
    expect(problems[0]?.kind).toBe('too-deep');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
