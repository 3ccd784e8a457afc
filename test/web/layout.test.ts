import { describe, expect, it } from 'vitest';
import type { EdgeIn, NodeIn } from '../../src/web/layout.js';
import { layout, nameOf, typeDepths } from '../../src/web/layout.js';

// Where the page draws the twin (src/web/layout.ts): columns by type depth, large types collapsed
// into a group with counts by state, edges between what is drawn, deduplicated.

const n = (address: string, state = 'converged'): NodeIn => ({
  address,
  type: address.slice(0, address.indexOf('/')),
  state,
});
const many = (type: string, count: number, state = 'pending'): NodeIn[] =>
  Array.from({ length: count }, (_, i) => n(`${type}/r${i}`, state));

describe('nameOf', () => {
  it.each([
    ['sb.services/api', 'api'],
    ['pg.roles/app', 'app'],
    ['no-slash', 'no-slash'],
  ])('%s → %s', (address, name) => expect(nameOf(address)).toBe(name));
});

describe('typeDepths', () => {
  const cases: {
    name: string;
    nodes: NodeIn[];
    edges: EdgeIn[];
    depths: Record<string, number>;
  }[] = [
    {
      name: 'no references',
      nodes: [n('a.x/1'), n('a.y/1')],
      edges: [],
      depths: { 'a.x': 0, 'a.y': 0 },
    },
    {
      name: 'a chain: the referencing type to the right',
      nodes: [n('a.net/1'), n('a.vm/1'), n('a.disk/1')],
      edges: [
        { from: 'a.vm/1', to: 'a.net/1' },
        { from: 'a.disk/1', to: 'a.vm/1' },
      ],
      depths: { 'a.net': 0, 'a.vm': 1, 'a.disk': 2 },
    },
    {
      name: 'references inside one type do not move it',
      nodes: [n('a.x/1'), n('a.x/2')],
      edges: [{ from: 'a.x/1', to: 'a.x/2' }],
      depths: { 'a.x': 0 },
    },
    {
      name: 'a cycle between types stops growing',
      nodes: [n('a.x/1'), n('a.y/1')],
      edges: [
        { from: 'a.x/1', to: 'a.y/1' },
        { from: 'a.y/1', to: 'a.x/1' },
      ],
      depths: { 'a.x': 2, 'a.y': 2 },
    },
    {
      name: 'an edge to an unknown address is ignored',
      nodes: [n('a.x/1')],
      edges: [{ from: 'a.x/1', to: 'a.gone/1' }],
      depths: { 'a.x': 0 },
    },
  ];
  it.each(cases)('$name', ({ nodes, edges, depths }) => {
    expect(Object.fromEntries(typeDepths(nodes, edges))).toEqual(depths);
  });
});

describe('layout', () => {
  it('draws a small type node by node, in the column of its depth', () => {
    const l = layout(
      [n('a.net/main'), n('a.vm/web', 'drifted')],
      [{ from: 'a.vm/web', to: 'a.net/main' }],
      {
        expanded: new Set(),
      },
    );
    expect(l.types.map((t) => [t.type, t.collapsed, t.count])).toEqual([
      ['a.net', false, 1],
      ['a.vm', false, 1],
    ]);
    const [net, vm] = l.nodes;
    expect(net).toMatchObject({ address: 'a.net/main', name: 'main', state: 'converged' });
    expect(vm).toMatchObject({ address: 'a.vm/web', name: 'web', state: 'drifted' });
    expect(vm!.x).toBeGreaterThan(net!.x + net!.w);
    // The edge goes from the referencing node's left side to the referenced node's right side.
    expect(l.edges).toEqual([
      { x1: vm!.x, y1: vm!.y + vm!.h / 2, x2: net!.x + net!.w, y2: net!.y + net!.h / 2 },
    ]);
  });

  it('collapses a type over the threshold into a group with counts by state', () => {
    const nodes = [
      ...many('a.b', 40, 'pending'),
      ...many('a.c', 2, 'failing'),
      n('a.b/x', 'drifted'),
    ];
    const l = layout(nodes, [], { expanded: new Set(), collapseAbove: 30 });
    const b = l.types.find((t) => t.type === 'a.b')!;
    expect(b).toMatchObject({
      collapsed: true,
      count: 41,
      states: { pending: 40, drifted: 1 },
      hidden: 0,
    });
    expect(l.nodes.map((x) => x.address)).toEqual(['a.c/r0', 'a.c/r1']);
  });

  it('draws an expanded type up to maxShown and counts the rest', () => {
    const l = layout(many('a.b', 50), [], {
      expanded: new Set(['a.b']),
      collapseAbove: 30,
      maxShown: 20,
    });
    expect(l.types[0]).toMatchObject({ collapsed: false, count: 50, hidden: 30 });
    expect(l.nodes).toHaveLength(20);
  });

  it('draws one edge per pair of drawn boxes: edges into a collapsed group are merged', () => {
    const nodes = [...many('a.b', 40), n('a.c/one')];
    const edges = many('a.b', 40).map((x) => ({ from: 'a.c/one', to: x.address }));
    expect(layout(nodes, edges, { expanded: new Set(), collapseAbove: 30 }).edges).toHaveLength(1);
    expect(
      layout(nodes, edges, { expanded: new Set(['a.b']), collapseAbove: 30 }).edges,
    ).toHaveLength(40);
  });

  it('draws no edge inside a collapsed group nor to a resource not drawn', () => {
    const nodes = many('a.b', 40);
    const edges = [
      { from: 'a.b/r0', to: 'a.b/r1' },
      { from: 'a.b/r0', to: 'a.b/r39' },
    ];
    expect(layout(nodes, edges, { expanded: new Set(), collapseAbove: 30 }).edges).toEqual([]);
    const shown = layout(nodes, edges, {
      expanded: new Set(['a.b']),
      collapseAbove: 30,
      maxShown: 10,
    });
    // r0 → r1 are both drawn; r39 is past maxShown.
    expect(shown.edges).toHaveLength(1);
  });
});
