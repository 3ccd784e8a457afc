import { describe, expect, it } from 'vitest';
import { containsUnknown, findReferences, resolveReferences, type RefLookup } from './refs.js';

describe('findReferences', () => {
  const cases: { name: string; reason: string; value: unknown; refs: string[]; bad: string[] }[] = [
    {
      name: 'none',
      reason: 'plain values have no references',
      value: { a: 1, b: 'x' },
      refs: [],
      bad: [],
    },
    {
      name: 'whole-string',
      reason: 'a value that is exactly one reference',
      value: { network_id: '${sb.networks/main.id}' },
      refs: ['sb.networks/main id network_id'],
      bad: [],
    },
    {
      name: 'embedded and nested',
      reason: 'references inside text, arrays and objects are found with their location',
      value: {
        url: 'http://x/${sb.services/web.name}/ok',
        list: [{ id: '${sb.volumes/d-1.meta.size}' }],
      },
      refs: ['sb.services/web name url', 'sb.volumes/d-1 meta.size list.0.id'],
      bad: [],
    },
    {
      name: 'malformed',
      reason: 'an expression without a field path or with a bad address is reported, not ignored',
      value: { a: '${sb.networks/main}', b: '${nope}', c: '${Sb.x/y.id}' },
      refs: [],
      bad: ['${sb.networks/main} a', '${nope} b', '${Sb.x/y.id} c'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const got = findReferences(c.value);
      expect(got.refs.map((r) => `${r.target} ${r.path} ${r.at.join('.')}`)).toEqual(c.refs);
      expect(got.bad.map((b) => `${b.raw} ${b.at.join('.')}`)).toEqual(c.bad);
    });
  }
});

describe('resolveReferences', () => {
  const lookup: RefLookup = (target, path) =>
    target === 'sb.networks/main' && path === 'id'
      ? { value: 'net-1' }
      : target === 'sb.volumes/d' && path === 'size'
        ? { value: 20 }
        : undefined;
  const cases: { name: string; reason: string; value: unknown; want: unknown }[] = [
    {
      name: 'known whole',
      reason: 'keeps the referenced value',
      value: '${sb.networks/main.id}',
      want: 'net-1',
    },
    {
      name: 'typed whole',
      reason: 'a number stays a number',
      value: '${sb.volumes/d.size}',
      want: 20,
    },
    {
      name: 'embedded',
      reason: 'text substitution',
      value: 'n=${sb.networks/main.id};s=${sb.volumes/d.size}',
      want: 'n=net-1;s=20',
    },
    {
      name: 'plain text',
      reason: 'a string without a reference is kept as it is, dollar signs and braces included',
      value: { a: 'cost: $5 {per} month', b: '$', c: '{x}' },
      want: { a: 'cost: $5 {per} month', b: '$', c: '{x}' },
    },
    {
      name: 'unknown',
      reason: 'a reference that is not known yet makes the value Unknown',
      value: { a: '${sb.instances/web.id}', b: 'x-${sb.instances/web.id}' },
      want: {
        a: { $unknown: '${sb.instances/web.id}' },
        b: { $unknown: 'x-${sb.instances/web.id}' },
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(resolveReferences(c.value, lookup)).toEqual(c.want);
    });
  }
  it('containsUnknown finds nested unknowns', () => {
    expect(containsUnknown({ a: [{ b: { $unknown: 'x' } }] })).toBe(true);
    expect(containsUnknown({ a: [{ b: 'x' }] })).toBe(false);
  });
});
