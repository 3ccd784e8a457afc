import { describe, expect, it } from 'vitest';
import { targetShare } from './worker-target.js';

describe('targetShare: a worker’s share of the fleet’s workspaces', () => {
  const cases: {
    why: string;
    workers: string[];
    self: string;
    workspaces: number;
    max?: number;
    want: number;
  }[] = [
    { why: 'alone: everything', workers: ['a'], self: 'a', workspaces: 6, want: 6 },
    { why: 'alone, not yet seen alive', workers: [], self: 'a', workspaces: 6, want: 6 },
    {
      why: 'three for six: two each (a)',
      workers: ['a', 'b', 'c'],
      self: 'a',
      workspaces: 6,
      want: 2,
    },
    {
      why: 'three for six: two each (c)',
      workers: ['c', 'b', 'a'],
      self: 'c',
      workspaces: 6,
      want: 2,
    },
    {
      why: 'seven over three: the first gets the extra',
      workers: ['a', 'b', 'c'],
      self: 'a',
      workspaces: 7,
      want: 3,
    },
    {
      why: 'seven over three: the second does not',
      workers: ['a', 'b', 'c'],
      self: 'b',
      workspaces: 7,
      want: 2,
    },
    {
      why: 'eight over three: the first two get one more',
      workers: ['c', 'a', 'b'],
      self: 'b',
      workspaces: 8,
      want: 3,
    },
    {
      why: 'eight over three: the last gets the floor',
      workers: ['c', 'a', 'b'],
      self: 'c',
      workspaces: 8,
      want: 2,
    },
    {
      why: 'more workers than workspaces: the first ones',
      workers: ['a', 'b', 'c'],
      self: 'b',
      workspaces: 2,
      want: 1,
    },
    {
      why: 'more workers than workspaces: the rest nothing',
      workers: ['a', 'b', 'c'],
      self: 'c',
      workspaces: 2,
      want: 0,
    },
    {
      why: 'sorted by id as bytes, not by arrival',
      workers: ['w-10', 'w-9'],
      self: 'w-10',
      workspaces: 3,
      want: 2,
    },
    {
      why: 'capped by --max-workspaces',
      workers: ['a', 'b'],
      self: 'a',
      workspaces: 10,
      max: 3,
      want: 3,
    },
    {
      why: 'a cap above the share changes nothing',
      workers: ['a', 'b'],
      self: 'a',
      workspaces: 4,
      max: 9,
      want: 2,
    },
    { why: 'no workspace: nothing', workers: ['a', 'b'], self: 'a', workspaces: 0, want: 0 },
    {
      why: 'duplicates in the list count once',
      workers: ['a', 'a', 'b'],
      self: 'b',
      workspaces: 4,
      want: 2,
    },
  ];
  it.each(cases)('$why', ({ workers, self, workspaces, max, want }) => {
    expect(targetShare({ workers, self, workspaces, ...(max !== undefined ? { max } : {}) })).toBe(
      want,
    );
  });

  it('gives shares that add up to the number of workspaces', () => {
    for (let w = 1; w <= 7; w++) {
      const ids = Array.from({ length: w }, (_, i) => `w${i}`);
      for (let n = 0; n <= 20; n++) {
        const shares = ids.map((self) => targetShare({ workers: ids, self, workspaces: n }));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(n);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
    }
  });
});
