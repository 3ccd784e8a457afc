import { describe, expect, it } from 'vitest';
import type { Address } from './address.js';
import { dependentsIndex, dependentsOf, findCycles, topoOrder } from './graph.js';

const g = (edges: Record<string, string[]>) =>
  new Map(Object.entries(edges).map(([k, v]) => [k as Address, v as Address[]]));

describe('topoOrder', () => {
  const cases: {
    name: string;
    reason: string;
    edges: Record<string, string[]>;
    want: string[] | { cycle: string[] };
  }[] = [
    {
      name: 'chain',
      reason: 'dependencies come first',
      edges: { 'a.x/c': ['a.x/b'], 'a.x/b': ['a.x/a'], 'a.x/a': [] },
      want: ['a.x/a', 'a.x/b', 'a.x/c'],
    },
    {
      name: 'independent',
      reason: 'ties keep declaration order',
      edges: { 'a.x/b': [], 'a.x/a': [] },
      want: ['a.x/b', 'a.x/a'],
    },
    {
      name: 'external dependency',
      reason: 'edges to unknown nodes are ignored',
      edges: { 'a.x/a': ['a.x/zz'] },
      want: ['a.x/a'],
    },
    {
      name: 'cycle',
      reason: 'the cycle is reported with its first node repeated',
      edges: { 'a.x/a': ['a.x/b'], 'a.x/b': ['a.x/c'], 'a.x/c': ['a.x/a'] },
      want: { cycle: ['a.x/a', 'a.x/b', 'a.x/c', 'a.x/a'] },
    },
    {
      name: 'self reference',
      reason: 'a node that depends on itself is a cycle of one',
      edges: { 'a.x/a': ['a.x/a'] },
      want: { cycle: ['a.x/a', 'a.x/a'] },
    },
    {
      name: 'cycle past a finished branch',
      reason: 'the cycle holds only the nodes on the path that closes it',
      edges: { 'a.x/a': ['a.x/b', 'a.x/c'], 'a.x/b': [], 'a.x/c': ['a.x/d'], 'a.x/d': ['a.x/c'] },
      want: { cycle: ['a.x/c', 'a.x/d', 'a.x/c'] },
    },
    {
      name: 'diamond',
      reason: 'a shared dependency comes once, before both of its dependents',
      edges: {
        'a.x/top': ['a.x/l', 'a.x/r'],
        'a.x/l': ['a.x/base'],
        'a.x/r': ['a.x/base'],
        'a.x/base': [],
      },
      want: ['a.x/base', 'a.x/l', 'a.x/r', 'a.x/top'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const r = topoOrder(g(c.edges));
      if (Array.isArray(c.want)) expect(r).toEqual({ kind: 'ordered', order: c.want });
      else expect(r).toEqual({ kind: 'cycle', cycle: c.want.cycle });
    });
  }
});

describe('topoOrder on long chains', () => {
  it('orders a chain of 200,000 references without running out of stack', () => {
    const n = 200_000;
    const edges = new Map<Address, Address[]>();
    for (let i = n - 1; i >= 0; i--) edges.set(`a.x/n${i}`, i === 0 ? [] : [`a.x/n${i - 1}`]);
    const r = topoOrder(edges);
    expect(r.kind).toBe('ordered');
    if (r.kind === 'ordered') {
      expect(r.order).toHaveLength(n);
      expect(r.order[0]).toBe('a.x/n0');
      expect(r.order[n - 1]).toBe(`a.x/n${n - 1}`);
    }
  });
});

describe('findCycles', () => {
  it('reports every distinct cycle once', () => {
    const cycles = findCycles(
      g({
        'a.x/a': ['a.x/b'],
        'a.x/b': ['a.x/a'],
        'a.x/c': ['a.x/d'],
        'a.x/d': ['a.x/c'],
        'a.x/e': [],
      }),
    );
    expect(cycles).toEqual([
      ['a.x/a', 'a.x/b', 'a.x/a'],
      ['a.x/c', 'a.x/d', 'a.x/c'],
    ]);
  });
  it('finds nothing in a DAG', () => {
    expect(findCycles(g({ 'a.x/a': [], 'a.x/b': ['a.x/a'] }))).toEqual([]);
  });
});

describe('dependentsOf', () => {
  it('walks dependents transitively, excluding the roots', () => {
    const graph = g({
      'a.x/net': [],
      'a.x/vm': ['a.x/net'],
      'a.x/vol': ['a.x/vm'],
      'a.x/other': [],
    });
    expect(dependentsOf(graph, ['a.x/net'])).toEqual(['a.x/vm', 'a.x/vol']);
    expect(dependentsOf(graph, ['a.x/vol'])).toEqual([]);
  });
});

describe('dependentsIndex', () => {
  const graph = g({
    'a.x/net': [],
    'a.x/vm': ['a.x/net'],
    'a.x/vol': ['a.x/vm'],
    'a.x/svc': ['a.x/net', 'a.x/vm'],
    'a.x/other': [],
  });
  const cases: { name: string; reason: string; roots: string[]; want: string[] }[] = [
    {
      name: 'transitive',
      reason: 'everything downstream, each once, sorted',
      roots: ['a.x/net'],
      want: ['a.x/svc', 'a.x/vm', 'a.x/vol'],
    },
    {
      name: 'roots excluded',
      reason: 'a root that depends on another root is not its dependent',
      roots: ['a.x/net', 'a.x/vm'],
      want: ['a.x/svc', 'a.x/vol'],
    },
    { name: 'leaf', reason: 'nothing depends on a leaf', roots: ['a.x/vol'], want: [] },
    {
      name: 'unknown',
      reason: 'a root outside the graph has no dependents',
      roots: ['a.x/zz'],
      want: [],
    },
  ];
  const index = dependentsIndex(graph);
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(index(c.roots as Address[])).toEqual(c.want);
      // One index answers every question the same way as a fresh walk would.
      expect(dependentsOf(graph, c.roots as Address[])).toEqual(c.want);
    });
  }
});
