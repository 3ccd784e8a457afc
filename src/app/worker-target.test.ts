import { describe, expect, it } from 'vitest';
import { targetShare } from './worker-target.js';

describe('targetShare: a worker’s share of the fleet’s workspaces', () => {
  const cases: {
    why: string;
    workers: string[];
    self: string;
    workspaces: number;
    max?: number;
    caps?: Record<string, number>;
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
    {
      why: 'a capped worker’s remainder goes to the uncapped ones (b)',
      workers: ['a', 'b', 'c'],
      self: 'b',
      workspaces: 9,
      caps: { a: 1 },
      want: 4,
    },
    {
      why: 'a capped worker’s remainder goes to the uncapped ones (c)',
      workers: ['a', 'b', 'c'],
      self: 'c',
      workspaces: 9,
      caps: { a: 1 },
      want: 4,
    },
    {
      why: 'the capped worker itself holds its cap',
      workers: ['a', 'b', 'c'],
      self: 'a',
      workspaces: 9,
      max: 1,
      want: 1,
    },
    {
      why: 'an odd remainder: the first uncapped worker gets the extra',
      workers: ['a', 'b', 'c'],
      self: 'b',
      workspaces: 8,
      caps: { a: 1 },
      want: 4,
    },
    {
      why: 'an odd remainder: the last uncapped worker the floor',
      workers: ['a', 'b', 'c'],
      self: 'c',
      workspaces: 8,
      caps: { a: 1 },
      want: 3,
    },
    {
      why: 'a cap that becomes binding only after another’s remainder is redistributed',
      workers: ['a', 'b', 'c'],
      self: 'c',
      workspaces: 9,
      caps: { a: 0, b: 4 },
      want: 5,
    },
    {
      why: 'every worker capped: each holds its cap',
      workers: ['a', 'b'],
      self: 'b',
      workspaces: 10,
      max: 2,
      caps: { a: 1 },
      want: 2,
    },
    {
      why: 'a cap above the share changes nothing for the others',
      workers: ['a', 'b'],
      self: 'b',
      workspaces: 4,
      caps: { a: 9 },
      want: 2,
    },
    {
      why: 'the cap of a worker not alive is ignored',
      workers: ['a', 'b'],
      self: 'b',
      workspaces: 4,
      caps: { z: 0 },
      want: 2,
    },
  ];
  it.each(cases)('$why', ({ workers, self, workspaces, max, caps, want }) => {
    expect(
      targetShare({
        workers,
        self,
        workspaces,
        ...(max !== undefined ? { max } : {}),
        ...(caps !== undefined ? { caps: new Map(Object.entries(caps)) } : {}),
      }),
    ).toBe(want);
  });

  it('with caps, gives shares that add up to N (or to the caps) and never exceed a cap', () => {
    for (let w = 1; w <= 5; w++) {
      const ids = Array.from({ length: w }, (_, i) => `w${i}`);
      for (let n = 0; n <= 16; n++) {
        for (let c = 0; c <= 4; c++) {
          // Every other worker capped at c.
          const caps = new Map(ids.filter((_, i) => i % 2 === 0).map((id) => [id, c]));
          const shares = ids.map((self) =>
            targetShare({
              workers: ids,
              self,
              workspaces: n,
              caps,
              ...(caps.has(self) ? { max: caps.get(self)! } : {}),
            }),
          );
          const room = ids.every((id) => caps.has(id)) ? c * ids.length : Infinity;
          expect(shares.reduce((a, b) => a + b, 0)).toBe(Math.min(n, room));
          ids.forEach((id, i) => {
            if (caps.has(id)) expect(shares[i]).toBeLessThanOrEqual(c);
          });
        }
      }
    }
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
