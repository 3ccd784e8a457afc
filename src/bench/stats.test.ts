import { describe, expect, it } from 'vitest';
import { topSelfTime } from './cpuprofile-top.js';
import { percentile, spread } from './stats.js';

describe('spread', () => {
  const cases = [
    { values: [5], want: { runs: 1, median: 5, min: 5, max: 5 }, reason: 'one value' },
    {
      values: [3, 1, 2],
      want: { runs: 3, median: 2, min: 1, max: 3 },
      reason: 'odd count, unsorted',
    },
    {
      values: [4, 1, 3, 2],
      want: { runs: 4, median: 2.5, min: 1, max: 4 },
      reason: 'even count: the mean of the middle two',
    },
  ];
  it.each(cases)('$reason', ({ values, want }) => expect(spread(values)).toEqual(want));
  it('refuses no values', () => expect(() => spread([])).toThrow('spread of no values'));
});

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
  const cases = [
    { values: hundred, p: 50, want: 50, reason: 'p50 of 1..100' },
    { values: hundred, p: 99, want: 99, reason: 'p99 of 1..100 is the 99th value' },
    { values: hundred, p: 100, want: 100, reason: 'p100 is the max' },
    { values: [7, 1, 3], p: 99, want: 7, reason: 'p99 of three values is the max' },
    { values: [7, 1, 3], p: 1, want: 1, reason: 'a small p is the min' },
  ];
  it.each(cases)('$reason', ({ values, p, want }) => expect(percentile(values, p)).toBe(want));
  it('refuses no values', () =>
    expect(() => percentile([], 50)).toThrow('percentile of no values'));
});

describe('topSelfTime', () => {
  const frame = (functionName: string, url = '', lineNumber = 0) => ({
    functionName,
    url,
    lineNumber,
  });
  // Node 1 is the root; 2 and 4 are the same function reached by two paths (summed); 3 is idle.
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)') },
      { id: 2, callFrame: frame('parse', 'file:///x/node_modules/yaml/dist/parse.js', 9) },
      { id: 3, callFrame: frame('(idle)') },
      { id: 4, callFrame: frame('parse', 'file:///x/node_modules/yaml/dist/parse.js', 9) },
      { id: 5, callFrame: frame('plan', 'file:///w/dist/engine/planner.js', 0) },
      { id: 6, callFrame: frame('(garbage collector)') },
    ],
    // The time of sample i is timeDeltas[i + 1] (µs).
    samples: [2, 3, 4, 5, 6, 2],
    timeDeltas: [0, 1000, 50_000, 2000, 3000, 4000, 0],
  };
  it('sums self time per function, leaves idle out, and names files shortly', () => {
    expect(topSelfTime(profile, 5)).toEqual([
      { name: '(garbage collector)', selfMs: 4, share: 4 / 10 },
      { name: 'parse (yaml/dist/parse.js:10)', selfMs: 3, share: 3 / 10 },
      { name: 'plan (engine/planner.js:1)', selfMs: 3, share: 3 / 10 },
    ]);
  });
  it('keeps the top n', () => {
    expect(topSelfTime(profile, 1).map((f) => f.name)).toEqual(['(garbage collector)']);
  });
  it('an empty profile has no hot function', () => {
    expect(topSelfTime({ nodes: [] }, 5)).toEqual([]);
  });
});
