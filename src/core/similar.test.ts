import { describe, expect, it } from 'vitest';
import { editDistance, nearMatches } from './similar.js';

describe('editDistance', () => {
  const cases: { a: string; b: string; want: number; reason: string }[] = [
    { a: '', b: '', want: 0, reason: 'nothing to change' },
    { a: 'abc', b: '', want: 3, reason: 'three deletions' },
    { a: 'networks', b: 'network', want: 1, reason: 'one deletion' },
    { a: 'old', b: 'odl', want: 2, reason: 'a swap is two substitutions' },
    { a: 'kitten', b: 'sitting', want: 3, reason: 'the textbook case' },
  ];
  it.each(cases)('$a → $b: $reason', ({ a, b, want }) => {
    expect(editDistance(a, b)).toBe(want);
    expect(editDistance(b, a)).toBe(want);
  });
});

describe('nearMatches', () => {
  const known = ['sb.networks/main', 'sb.networks/spare', 'sb.buckets/old', 'sb.instances/web'];
  const cases: { word: string; want: string[]; reason: string }[] = [
    { word: 'sb.network/main', want: ['sb.networks/main'], reason: 'a missing letter' },
    { word: 'sb.networks/mian', want: ['sb.networks/main'], reason: 'a swap' },
    { word: 'zz.things/x', want: [], reason: 'nothing is close' },
    { word: 'sb.networks/main', want: [], reason: 'an exact match is not a suggestion' },
  ];
  it.each(cases)('$word: $reason', ({ word, want }) => {
    expect(nearMatches(word, known)).toEqual(want);
  });
});
