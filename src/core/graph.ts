import type { Address } from './address.js';

/** A dependency graph: each node maps to the nodes it depends on (references). */
export type DependencyGraph = ReadonlyMap<Address, readonly Address[]>;

/** The result of ordering a graph: an order, or the first cycle found (first node repeated at the end). */
export type TopoResult =
  | { readonly kind: 'ordered'; readonly order: readonly Address[] }
  | { readonly kind: 'cycle'; readonly cycle: readonly Address[] };

/**
 * Orders nodes so that every node comes after its dependencies. Ties keep the order of the map, so
 * the result is deterministic. Dependencies that are not nodes of the graph are ignored.
 */
export function topoOrder(graph: DependencyGraph): TopoResult {
  const state = new Map<Address, 'visiting' | 'done'>();
  const order: Address[] = [];
  const stack: Address[] = [];
  let cycle: Address[] | undefined;

  const visit = (node: Address): void => {
    if (cycle) return;
    const s = state.get(node);
    if (s === 'done') return;
    if (s === 'visiting') {
      cycle = [...stack.slice(stack.indexOf(node)), node];
      return;
    }
    state.set(node, 'visiting');
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      if (graph.has(dep)) visit(dep);
      if (cycle) return;
    }
    stack.pop();
    state.set(node, 'done');
    order.push(node);
  };

  for (const node of graph.keys()) visit(node);
  return cycle ? { kind: 'cycle', cycle } : { kind: 'ordered', order };
}

/** Every cycle in the graph, each reported once (as found from its first node in map order). */
export function findCycles(graph: DependencyGraph): Address[][] {
  const cycles: Address[][] = [];
  const seen = new Set<string>();
  const remaining = new Map(graph);
  for (;;) {
    const r = topoOrder(remaining);
    if (r.kind === 'ordered') return cycles;
    const members = r.cycle.slice(0, -1);
    const key = [...members].sort().join(' ');
    if (!seen.has(key)) {
      seen.add(key);
      cycles.push([...r.cycle]);
    }
    // Break this cycle by dropping the edge that closes it, then look for more.
    const last = members[members.length - 1]!;
    const first = r.cycle[0]!;
    remaining.set(
      last,
      (remaining.get(last) ?? []).filter((d) => d !== first),
    );
  }
}

/** Everything that depends on any of `roots`, transitively (the roots themselves excluded). */
export function dependentsOf(graph: DependencyGraph, roots: Iterable<Address>): Address[] {
  return dependentsIndex(graph)(roots);
}

/**
 * `dependentsOf` for many questions about one graph: the reverse edges are built once, so asking for
 * the blast radius of every replace and delete of a plan costs one pass over the graph, not one each.
 * The returned function answers for the graph as it was when the index was built.
 */
export function dependentsIndex(graph: DependencyGraph): (roots: Iterable<Address>) => Address[] {
  const reverse = new Map<Address, Address[]>();
  for (const [node, deps] of graph) {
    for (const d of deps) {
      const list = reverse.get(d);
      if (list) list.push(node);
      else reverse.set(d, [node]);
    }
  }
  return (roots) => {
    const rootSet = new Set(roots);
    const out = new Set<Address>();
    const queue = [...rootSet];
    for (let i = 0; i < queue.length; i++) {
      for (const dependent of reverse.get(queue[i]!) ?? []) {
        if (!out.has(dependent) && !rootSet.has(dependent)) {
          out.add(dependent);
          queue.push(dependent);
        }
      }
    }
    return [...out].sort();
  };
}
