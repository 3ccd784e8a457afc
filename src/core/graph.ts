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
  // A depth-first walk over node numbers with an explicit stack: no recursion, so a chain of any
  // length fits, and one map lookup per edge instead of several per node.
  const nodes: Address[] = [];
  const depsOf: (readonly Address[])[] = [];
  let edges = 0;
  for (const [node, deps] of graph) {
    nodes.push(node);
    depsOf.push(deps);
    edges += deps.length;
  }
  // Nothing depends on anything (a large flat intent): the map's order is the order, and the index
  // below — a map as large as the graph — is not needed.
  if (edges === 0) return { kind: 'ordered', order: nodes };
  const index = new Map<Address, number>();
  for (let i = 0; i < nodes.length; i++) index.set(nodes[i]!, i);
  const state = new Uint8Array(nodes.length); // 0 unvisited, 1 on the current path, 2 done
  const path = new Int32Array(nodes.length);
  const next = new Int32Array(nodes.length); // per path entry: the next dependency to look at
  const order: Address[] = [];
  for (let root = 0; root < nodes.length; root++) {
    if (state[root] !== 0) continue;
    let top = 0;
    path[0] = root;
    next[0] = 0;
    state[root] = 1;
    while (top >= 0) {
      const node = path[top]!;
      const deps = depsOf[node]!;
      let descended = false;
      while (next[top]! < deps.length) {
        const dep = index.get(deps[next[top]!]!);
        next[top]!++;
        if (dep === undefined || state[dep] === 2) continue;
        if (state[dep] === 1) {
          const from = path.subarray(0, top + 1).indexOf(dep);
          const cycle = [...path.subarray(from, top + 1)].map((i) => nodes[i]!);
          return { kind: 'cycle', cycle: [...cycle, nodes[dep]!] };
        }
        state[dep] = 1;
        top++;
        path[top] = dep;
        next[top] = 0;
        descended = true;
        break;
      }
      if (!descended) {
        state[node] = 2;
        order.push(nodes[node]!);
        top--;
      }
    }
  }
  return { kind: 'ordered', order };
}

/** Every cycle in the graph, each reported once (as found from its first node in map order). */
export function findCycles(graph: DependencyGraph): Address[][] {
  const cycles: Address[][] = [];
  const seen = new Set<string>();
  // Most graphs have no cycle: the copy below, edited to break cycles, is made only for one that has.
  if (topoOrder(graph).kind === 'ordered') return cycles;
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
 * The returned function answers for the graph as it was when it was first asked.
 */
export function dependentsIndex(graph: DependencyGraph): (roots: Iterable<Address>) => Address[] {
  let reverse: Map<Address, Address[]> | undefined;
  // Built on the first question: a plan with no replace or delete never pays for it.
  const reverseEdges = (): Map<Address, Address[]> => {
    if (reverse) return reverse;
    reverse = new Map<Address, Address[]>();
    for (const [node, deps] of graph) {
      for (const d of deps) {
        const list = reverse.get(d);
        if (list) list.push(node);
        else reverse.set(d, [node]);
      }
    }
    return reverse;
  };
  return (roots) => {
    const edges = reverseEdges();
    const rootSet = new Set(roots);
    const out = new Set<Address>();
    const queue = [...rootSet];
    for (let i = 0; i < queue.length; i++) {
      for (const dependent of edges.get(queue[i]!) ?? []) {
        if (!out.has(dependent) && !rootSet.has(dependent)) {
          out.add(dependent);
          queue.push(dependent);
        }
      }
    }
    return [...out].sort();
  };
}
