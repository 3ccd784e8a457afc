import { setKey } from '../../core/index.js';
import { isObject } from './schema-view.js';

/**
 * Operations that belong to a resource type without sitting on its plain collection and item paths
 * (`POST /containers/create`, `GET /containers/json`, `GET /containers/{id}/json`), moved onto the
 * paths where `deriveTypes` looks for them. Two sources:
 *
 * - declared: `x-tend-type: <name>` and `x-tend-op: list|create|read|update|delete` on an operation.
 *   An item operation's item path is its path up to its last parameter (`/containers/{id}/json` →
 *   `/containers/{id}`); the collection is that item path without its parameter, or, with no item
 *   operation declared, the path of the list or create without its trailing static segments.
 * - inferred (generic rules, never per API): `POST <c>/create|new|add` is the create of `<c>`, and a
 *   `json` format suffix is dropped (`GET <c>/json` lists `<c>`, `GET <c>/{p}/json` reads `<c>/{p}`),
 *   each only when `<c>` (or `<c>/{p}`) lacks that operation and `<c>` has an item path with DELETE.
 */

/** The operations of a resource type, by role. */
export const TYPE_OPS = ['list', 'create', 'read', 'update', 'delete'] as const;
export type TypeOp = (typeof TYPE_OPS)[number];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
type Method = (typeof METHODS)[number];

/** Where an operation moved onto another path really is: its method and path in the document. */
export interface RealOperation {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  /** How it was assigned: declared with x-tend-op, or inferred by a generic rule (with the rule). */
  readonly source: string;
}

/** The document's paths with irregular operations moved in, and where each really is. */
export interface AssembledPaths {
  readonly paths: Record<string, Record<string, unknown>>;
  /** The real place of every operation object that was moved. */
  readonly realOf: WeakMap<object, RealOperation>;
  /** The real paths whose operations were moved onto a (collection or item) path, by that path. */
  readonly movedFrom: ReadonlyMap<string, readonly string[]>;
}

const ACTION_CREATE = new Set(['create', 'new', 'add']);
const FORMAT_SUFFIX = 'json';

/** Moves declared and inferred irregular operations onto their type's collection and item paths. */
export function assembleOperations(
  source: Readonly<Record<string, Record<string, unknown>>>,
  warnings: string[],
): AssembledPaths {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [p, item] of Object.entries(source)) setKey(paths, p, item);
  const realOf = new WeakMap<object, RealOperation>();
  const movedFrom = new Map<string, string[]>();
  const copied = new Set<string>();

  const place = (
    target: string,
    slot: Method,
    op: Record<string, unknown>,
    real: RealOperation,
    extra: Record<string, unknown> = {},
  ): void => {
    if (!copied.has(target)) {
      setKey(paths, target, { ...(paths[target] ?? {}) });
      copied.add(target);
    }
    const item = paths[target]!;
    setKey(item, slot, op);
    for (const [k, v] of Object.entries(extra)) setKey(item, k, v);
    realOf.set(op, real);
    const list = movedFrom.get(target) ?? [];
    if (!list.includes(real.path)) list.push(real.path);
    movedFrom.set(target, list);
  };

  // The item path with DELETE below each collection path, indexed once (a lookup per path would be
  // quadratic in the number of paths).
  const deletable = new Map<string, string>();
  for (const [p, item] of Object.entries(source)) {
    const seg = split(p);
    if (seg.length === 0 || !isParam(seg.at(-1)!) || !isObject(item['delete'])) continue;
    const c = join(seg.slice(0, -1));
    if (!deletable.has(c)) deletable.set(c, p);
  }
  const itemWithDelete = (c: string): string | undefined => deletable.get(c);
  // --- declared: x-tend-type + x-tend-op -------------------------------------------------------
  interface Declared {
    readonly op: TypeOp;
    readonly method: Method;
    readonly path: string;
    readonly operation: Record<string, unknown>;
  }
  const byType = new Map<string, Declared[]>();
  for (const [path, item] of Object.entries(source)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const opValue = operation['x-tend-op'];
      const typeValue = operation['x-tend-type'];
      if (opValue === undefined && typeValue === undefined) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const op = TYPE_OPS.find((o) => o === opValue);
      if (op === undefined) {
        warnings.push(
          `${where}: x-tend-op must be one of ${TYPE_OPS.join(', ')}, not ${JSON.stringify(opValue)}; ignored`,
        );
        continue;
      }
      if (typeof typeValue !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(typeValue)) {
        warnings.push(
          `${where}: x-tend-op needs x-tend-type naming the type (letters, digits, - and _), not ${JSON.stringify(typeValue)}; ignored`,
        );
        continue;
      }
      const list = byType.get(typeValue) ?? [];
      list.push({ op, method, path, operation });
      byType.set(typeValue, list);
    }
  }
  for (const [type, ops] of byType) {
    const assembled = declaredPaths(type, ops, (c) => itemWithDelete(c) !== undefined, warnings);
    if (assembled === undefined) continue;
    const { collection, item } = assembled;
    for (const d of ops) {
      const real: RealOperation = {
        method: d.method.toUpperCase() as RealOperation['method'],
        path: d.path,
        source: `x-tend-op ${d.op}`,
      };
      const target = d.op === 'list' || d.op === 'create' ? collection : item;
      if (target === undefined) continue;
      const slot: Method =
        d.op === 'list'
          ? 'get'
          : d.op === 'create'
            ? 'post'
            : d.op === 'read'
              ? 'get'
              : d.op === 'delete'
                ? 'delete'
                : d.method === 'patch'
                  ? 'patch'
                  : 'put';
      place(
        target,
        slot,
        d.operation,
        real,
        d.op === 'list' || d.op === 'create' ? { 'x-tend-type': type } : {},
      );
      if (d.op === 'update' && slot === 'put') {
        // A declared update is the update, whatever else the item path offers.
        const it = paths[target]!;
        delete it['patch'];
      }
    }
  }

  // --- inferred: generic rules --------------------------------------------------------------------
  for (const [path, item] of Object.entries(source)) {
    const s = split(path);
    const last = s.at(-1);
    if (last === undefined || isParam(last)) continue;
    const parent = join(s.slice(0, -1));
    const post = item['post'];
    const get = item['get'];
    if (
      isObject(post) &&
      post['x-tend-op'] === undefined &&
      ACTION_CREATE.has(last.toLowerCase())
    ) {
      const c = parent;
      if (
        s.length >= 2 &&
        !isParam(s.at(-2)!) &&
        !isObject(paths[c]?.['post']) &&
        itemWithDelete(c)
      ) {
        place(c, 'post', post, {
          method: 'POST',
          path,
          source: `inferred: POST ${path} creates ${c}`,
        });
      }
    }
    if (isObject(get) && get['x-tend-op'] === undefined && last.toLowerCase() === FORMAT_SUFFIX) {
      const target = parent;
      const ts = split(target);
      if (ts.length === 0) continue;
      if (isObject(paths[target]?.['get'])) continue;
      if (isParam(ts.at(-1)!)) {
        // GET <c>/{p}/json reads <c>/{p} when that item path exists with DELETE.
        if (!isObject(paths[target]?.['delete'])) continue;
        place(target, 'get', get, {
          method: 'GET',
          path,
          source: `inferred: GET ${path} reads ${target}`,
        });
      } else if (itemWithDelete(target)) {
        place(target, 'get', get, {
          method: 'GET',
          path,
          source: `inferred: GET ${path} lists ${target}`,
        });
      }
    }
  }
  return { paths, realOf, movedFrom };
}

/** The collection and item paths of a type assembled from declared operations; a warning if none. */
function declaredPaths(
  type: string,
  ops: readonly { op: TypeOp; method: Method; path: string }[],
  hasItemUnder: (collection: string) => boolean,
  warnings: string[],
): { collection?: string; item?: string } | undefined {
  const items = new Set<string>();
  for (const d of ops.filter((o) => o.op === 'read' || o.op === 'update' || o.op === 'delete')) {
    const s = split(d.path);
    const lastParam = findLastIndex(s, isParam);
    if (lastParam < 0) {
      warnings.push(
        `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.path} is declared as ${d.op}, but an item operation needs the object's id as a path parameter; ignored`,
      );
      return undefined;
    }
    items.add(join(s.slice(0, lastParam + 1)));
  }
  const shapes = new Set([...items].map(shape));
  if (shapes.size > 1) {
    warnings.push(
      `x-tend-type ${type}: the item operations are on different objects (${[...items].join(', ')}); ignored`,
    );
    return undefined;
  }
  // The item path as the first item operation names its parameters (delete preferred).
  const item = ops
    .filter((o) => o.op === 'delete' || o.op === 'read' || o.op === 'update')
    .map((o) => {
      const s = split(o.path);
      return join(s.slice(0, findLastIndex(s, isParam) + 1));
    })[0];
  let collection: string | undefined;
  if (item !== undefined) {
    collection = join(split(item).slice(0, -1));
  } else {
    // No item operation declared: the collection is what the list and create paths share, or, for
    // one of them alone, its path without a last static segment when an item path sits there.
    const segs = ops.filter((o) => o.op === 'list' || o.op === 'create').map((o) => split(o.path));
    const n = segs.length > 1 ? commonLength(segs) : (segs[0]?.length ?? 0);
    const own = join((segs[0] ?? []).slice(0, n));
    const shorter = join((segs[0] ?? []).slice(0, n - 1));
    collection = segs.length === 1 && n > 1 && hasItemUnder(shorter) ? shorter : own;
  }
  if (collection === undefined || collection === '/' || isParam(split(collection).at(-1) ?? '{}')) {
    warnings.push(
      `x-tend-type ${type}: cannot tell the collection from the declared operations (its last segment must be a name, not a parameter); ignored`,
    );
    return undefined;
  }
  // The collection's operations may sit anywhere, as long as the values of their path parameters
  // are known where the objects live (those of the collection path).
  const known = new Set(split(collection).filter(isParam));
  for (const d of ops.filter((o) => o.op === 'list' || o.op === 'create')) {
    // A create on the item path itself names the object it makes (item-create.ts).
    if (d.op === 'create' && item !== undefined && shape(d.path) === shape(item)) continue;
    const unknown = split(d.path).filter((seg) => isParam(seg) && !known.has(seg));
    if (unknown.length > 0) {
      warnings.push(
        `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.path} (${d.op}) has path parameters the collection ${collection} does not (${unknown.join(', ')}); ignored`,
      );
      return undefined;
    }
  }
  return { collection, ...(item !== undefined ? { item } : {}) };
}

/** The number of leading segments the paths share. */
function commonLength(paths: readonly string[][]): number {
  let n = 0;
  for (;;) {
    const s = paths[0]![n];
    if (s === undefined || paths.some((p) => p[n] !== s)) return n;
    n++;
  }
}

function findLastIndex<T>(xs: readonly T[], test: (x: T) => boolean): number {
  for (let i = xs.length - 1; i >= 0; i--) if (test(xs[i]!)) return i;
  return -1;
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function join(segments: readonly string[]): string {
  return '/' + segments.join('/');
}

function isParam(segment: string): boolean {
  return /^\{[^{}]+\}$/.test(segment);
}

function shape(path: string): string {
  return join(split(path).map((s) => (isParam(s) ? '{}' : s)));
}
