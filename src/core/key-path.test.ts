import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatKeyPath, isNestedKeyPath, keyPathSegments, valueAtKeyPath } from './key-path.js';

describe('keyPathSegments', () => {
  it.each([
    { path: 'name', want: ['name'], reason: 'a top-level field is itself' },
    { path: 'spec.name', want: ['spec', 'name'], reason: 'a dot goes one level down' },
    { path: 'user.login', want: ['user', 'login'], reason: 'a membership names its user' },
    { path: 'a\\.b', want: ['a.b'], reason: 'an escaped dot is part of the field name' },
    { path: 'a\\\\.b', want: ['a\\', 'b'], reason: 'an escaped backslash, then a separator' },
    { path: 'a.', want: ['a', ''], reason: 'an empty last name is kept (it names no field)' },
    { path: 'a\\', want: ['a\\'], reason: 'a trailing backslash escapes nothing' },
  ])('$path: $reason', ({ path, want }) => {
    expect(keyPathSegments(path)).toEqual(want);
  });
});

describe('formatKeyPath', () => {
  it.each([
    { segments: ['name'], want: 'name', reason: 'a plain name is written as it is' },
    { segments: ['spec', 'name'], want: 'spec.name', reason: 'levels joined by dots' },
    { segments: ['a.b', 'c'], want: 'a\\.b.c', reason: 'a dot in a name is escaped' },
    { segments: ['a\\b'], want: 'a\\\\b', reason: 'a backslash in a name is escaped' },
  ])('$want: $reason', ({ segments, want }) => {
    expect(formatKeyPath(segments)).toBe(want);
  });

  it('round-trips any field names, dots and backslashes included', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', '.', '\\', 'é', ' ') });
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 5 }), (segments) => {
        expect(keyPathSegments(formatKeyPath(segments))).toEqual(segments);
      }),
    );
  });

  it('reads back the value written at any nested path', () => {
    const name = fc.string({ unit: fc.constantFrom('x', 'y', '.', '\\'), minLength: 1 });
    fc.assert(
      fc.property(fc.array(name, { minLength: 1, maxLength: 4 }), fc.string(), (segments, v) => {
        let obj: unknown = v;
        for (const s of [...segments].reverse()) obj = Object.fromEntries([[s, obj]]);
        expect(valueAtKeyPath(obj, formatKeyPath(segments))).toBe(v);
      }),
    );
  });
});

describe('valueAtKeyPath', () => {
  const app = { id: 'a1', spec: { name: 'web', region: 'ams' }, 'a.b': 1, list: [{ x: 1 }] };
  it.each([
    { path: 'id', want: 'a1', reason: 'a top-level field' },
    { path: 'spec.name', want: 'web', reason: 'a nested field' },
    { path: 'a\\.b', want: 1, reason: 'a top-level field whose name has a dot' },
    { path: 'a.b', want: undefined, reason: 'unescaped, the dot goes down into a missing a' },
    { path: 'spec.missing', want: undefined, reason: 'a missing nested field' },
    { path: 'id.x', want: undefined, reason: 'below a scalar there is nothing' },
    { path: 'list.0.x', want: 1, reason: 'a list is stepped into by index, as valueAt does' },
    { path: 'spec.constructor', want: undefined, reason: 'own properties only' },
  ])('$path: $reason', ({ path, want }) => {
    expect(valueAtKeyPath(app, path)).toBe(want);
  });

  it.each([
    { path: 'name', want: false },
    { path: 'spec.name', want: true },
    { path: 'a\\.b', want: false },
  ])('isNestedKeyPath($path) is $want', ({ path, want }) => {
    expect(isNestedKeyPath(path)).toBe(want);
  });
});
