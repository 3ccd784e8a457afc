// Where each resource of the twin is drawn (pure: no DOM, tested in test/web/layout.test.ts).
// Resources are grouped by type; a type's box sits in the column of its depth (a type that
// references another is drawn to its right), and a type with more resources than `collapseAbove`
// is drawn as one group node with its counts by state until it is expanded.

/** A resource as the page draws it: `state` is what it shows (paused and drift already folded in). */
export interface NodeIn {
  readonly address: string;
  readonly type: string;
  readonly state: string;
}

/** `from` references `to`. */
export interface EdgeIn {
  readonly from: string;
  readonly to: string;
}

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

/** A type's box: its resources are drawn inside, or (collapsed) one group node with its counts. */
export interface TypeBox extends Box {
  readonly type: string;
  readonly count: number;
  readonly states: Readonly<Record<string, number>>;
  readonly collapsed: boolean;
  /** Resources not drawn in an expanded box (past `maxShown`). */
  readonly hidden: number;
}

export interface PlacedNode extends Box {
  readonly address: string;
  readonly name: string;
  readonly state: string;
}

export interface PlacedEdge {
  readonly x1: number;
  readonly y1: number;
  readonly x2: number;
  readonly y2: number;
}

export interface Layout {
  readonly width: number;
  readonly height: number;
  readonly types: readonly TypeBox[];
  readonly nodes: readonly PlacedNode[];
  readonly edges: readonly PlacedEdge[];
}

export interface LayoutOptions {
  /** Types expanded by the user (drawn node by node whatever their size). */
  readonly expanded: ReadonlySet<string>;
  /** A type with more resources than this is collapsed unless expanded (default 30). */
  readonly collapseAbove?: number;
  /** Most resources drawn in one expanded type (default 600); the rest are counted. */
  readonly maxShown?: number;
}

export const NODE_W = 150;
export const NODE_H = 34;
const GAP = 8;
const PAD = 10;
const TITLE = 22;
const COLUMN_GAP = 60;

/** The name part of an address: `sb.services/api` → `api`. */
export function nameOf(address: string): string {
  const slash = address.indexOf('/');
  return slash < 0 ? address : address.slice(slash + 1);
}

/**
 * Each type's column: 0 for a type that references no other type, else one more than the deepest
 * type it references. A cycle between types stops growing after as many rounds as there are types.
 */
export function typeDepths(
  nodes: readonly NodeIn[],
  edges: readonly EdgeIn[],
): Map<string, number> {
  const typeOf = new Map<string, string>();
  for (const n of nodes) typeOf.set(n.address, n.type);
  const refs = new Map<string, Set<string>>();
  for (const n of nodes) if (!refs.has(n.type)) refs.set(n.type, new Set());
  for (const e of edges) {
    const from = typeOf.get(e.from);
    const to = typeOf.get(e.to);
    if (from !== undefined && to !== undefined && from !== to) refs.get(from)?.add(to);
  }
  const depth = new Map<string, number>();
  for (const t of refs.keys()) depth.set(t, 0);
  for (let round = 0; round < refs.size; round++) {
    let moved = false;
    for (const [t, tos] of refs) {
      let d = 0;
      for (const to of tos) d = Math.max(d, (depth.get(to) ?? 0) + 1);
      if (d > (depth.get(t) ?? 0)) {
        depth.set(t, Math.min(d, refs.size));
        moved = true;
      }
    }
    if (!moved) break;
  }
  return depth;
}

/** Lays the twin out: type boxes in columns by depth, resources in a grid inside their box. */
export function layout(
  nodes: readonly NodeIn[],
  edges: readonly EdgeIn[],
  options: LayoutOptions,
): Layout {
  const collapseAbove = options.collapseAbove ?? 30;
  const maxShown = options.maxShown ?? 600;
  const byType = new Map<string, NodeIn[]>();
  for (const n of nodes) {
    const list = byType.get(n.type);
    if (list) list.push(n);
    else byType.set(n.type, [n]);
  }
  const depths = typeDepths(nodes, edges);
  const columns = new Map<number, string[]>();
  for (const t of [...byType.keys()].sort()) {
    const d = depths.get(t) ?? 0;
    const col = columns.get(d);
    if (col) col.push(t);
    else columns.set(d, [t]);
  }
  const types: TypeBox[] = [];
  const placed: PlacedNode[] = [];
  const where = new Map<string, Box>();
  let x = PAD;
  let height = 0;
  for (const d of [...columns.keys()].sort((a, b) => a - b)) {
    let y = PAD;
    let columnWidth = NODE_W + 2 * PAD;
    for (const type of columns.get(d) ?? []) {
      const members = byType.get(type) ?? [];
      const counted = new Map<string, number>();
      for (const n of members) counted.set(n.state, (counted.get(n.state) ?? 0) + 1);
      const states = Object.fromEntries(counted);
      const collapsed = members.length > collapseAbove && !options.expanded.has(type);
      if (collapsed) {
        const box = { x, y, w: NODE_W + 2 * PAD, h: TITLE + 3 * NODE_H + PAD };
        types.push({ type, ...box, count: members.length, states, collapsed, hidden: 0 });
        const inner = { x: x + PAD, y: y + TITLE, w: NODE_W, h: 3 * NODE_H };
        for (const n of members) where.set(n.address, inner);
        y += box.h + GAP * 2;
        columnWidth = Math.max(columnWidth, box.w);
        continue;
      }
      const shown = members.slice(0, maxShown);
      const perRow = Math.max(1, Math.min(8, Math.ceil(Math.sqrt(shown.length / 2))));
      const rows = Math.max(1, Math.ceil(shown.length / perRow));
      const w = perRow * (NODE_W + GAP) - GAP + 2 * PAD;
      const h = TITLE + rows * (NODE_H + GAP) - GAP + PAD;
      types.push({
        type,
        x,
        y,
        w,
        h,
        count: members.length,
        states,
        collapsed,
        hidden: members.length - shown.length,
      });
      shown.forEach((n, i) => {
        const box = {
          x: x + PAD + (i % perRow) * (NODE_W + GAP),
          y: y + TITLE + Math.floor(i / perRow) * (NODE_H + GAP),
          w: NODE_W,
          h: NODE_H,
        };
        placed.push({ address: n.address, name: nameOf(n.address), state: n.state, ...box });
        where.set(n.address, box);
      });
      y += h + GAP * 2;
      columnWidth = Math.max(columnWidth, w);
    }
    height = Math.max(height, y);
    x += columnWidth + COLUMN_GAP;
  }
  const seen = new Set<string>();
  const placedEdges: PlacedEdge[] = [];
  for (const e of edges) {
    const a = where.get(e.from);
    const b = where.get(e.to);
    if (!a || !b || a === b) continue;
    const key = `${a.x},${a.y}>${b.x},${b.y}`;
    if (seen.has(key)) continue;
    seen.add(key);
    placedEdges.push({ x1: a.x, y1: a.y + a.h / 2, x2: b.x + b.w, y2: b.y + b.h / 2 });
  }
  return { width: x, height: height + PAD, types, nodes: placed, edges: placedEdges };
}
