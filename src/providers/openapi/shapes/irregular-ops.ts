import { setKey } from '../../../core/index.js';
import type { Placer } from './path-pairing.js';
import {
  METHODS,
  type Method,
  dropJsonSuffixes,
  isParam,
  join,
  mergeVersions,
  pairItemPaths,
  paramsOf,
  renameRepeatedParams,
  shape,
  split,
  withParams,
} from './path-pairing.js';
import { isObject } from '../fields/schema-view.js';
import { placeCollectionPuts } from './collection-put.js';
import { listThroughParents } from './embedded-list.js';
import { placeScopedCreates } from './scoped-create.js';

/**
 * Operations that belong to a resource type without sitting on its plain collection and item paths
 * (`POST /containers/create`, `GET /containers/json`, `GET /containers/{id}/json`), moved onto the
 * paths where `deriveTypes` looks for them. Two sources:
 *
 * - declared: `x-tend-type: <name>` and `x-tend-op: list|create|read|update|delete` on an operation.
 *   An item operation's item path is its path up to its last parameter (`/containers/{id}/json` →
 *   `/containers/{id}`); the collection is that item path without its parameter, or, with no item
 *   operation declared, the path of the list or create without its trailing static segments. Item
 *   operations declared alone belong under the collection that is already the type's (named so by
 *   `x-tend-type`, else by its last segment: `/silences` for `/silence/{silenceID}`), when there is
 *   exactly one with the item's parameters but its own.
 * - inferred (generic rules, never per API): `POST <c>/create|new|add` is the create of `<c>`, and a
 *   `json` format segment is dropped (`GET <c>/json` lists `<c>`, `GET <c>/{p}/json` reads `<c>/{p}`),
 *   each only when `<c>` (or `<c>/{p}`) lacks that operation and `<c>` has an item path with DELETE;
 *   `PUT <c>` of one object answering the item's schema creates `<c>` (collection-put.ts);
 *   `POST …/{scope}/<c>` creates `<c>` objects listed at `<c>` that carry their scope
 *   (scoped-create.ts); the
 *   rules of path-pairing.ts (`.json` suffixes and API versions first, which every later rule then
 *   sees; collections paired with item paths elsewhere last); and, at the very end, a parent's read
 *   lists a sub-collection it embeds (embedded-list.ts).
 *
 * Declared operations are never taken by an inferred rule.
 */

/** The operations of a resource type, by role. */
export const TYPE_OPS = ['list', 'create', 'read', 'update', 'delete'] as const;
export type TypeOp = (typeof TYPE_OPS)[number];

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
  /** Why a document path is not used, where a rule says it better than the generic reasons. */
  readonly notes: ReadonlyMap<string, string>;
  /** The path a document path is read as, when a rule normalised it (`/x/{id}.json` → `/x/{id}`). */
  readonly readAs: ReadonlyMap<string, string>;
  /**
   * The document path each path written with `x-tend-path-values` stands for
   * (`/admin/users/list/active.json` → `/admin/users/list/{flag}.json`): an operation sent to the
   * first uses the second.
   */
  readonly valuedFrom: ReadonlyMap<string, string>;
  /**
   * The declared updates taken with `x-tend-key-fields` (checked against the type's item path): their
   * path parameters are filled from the object's fields, as the declaration maps them.
   */
  readonly addressedUpdates: WeakSet<object>;
}

const ACTION_CREATE = new Set(['create', 'new', 'add']);
const FORMAT_SUFFIX = 'json';

/** Moves declared and inferred irregular operations onto their type's collection and item paths. */
export function assembleOperations(
  source: Readonly<Record<string, Record<string, unknown>>>,
  warnings: string[],
): AssembledPaths {
  const a = startAssembly(source);
  // --- declared: path parameters one operation always fills with one value ----------------------
  fillPathValues(a.paths, warnings, (from, to) => {
    a.movedFrom.set(to, [...(a.movedFrom.get(to) ?? []), from]);
    a.readAs.set(from, to);
    a.valuedFrom.set(to, from);
  });
  // --- normalised: .json suffixes, API versions, repeated parameter names -------------------------
  dropJsonSuffixes(a.placer);
  mergeVersions(a.placer);
  renameRepeatedParams(a.placer);
  const itemWithDelete = deletableItems(a.paths);
  // --- declared: x-tend-type + x-tend-op -------------------------------------------------------
  for (const [type, ops] of declaredOperations(a, warnings)) {
    placeDeclared(type, ops, a, itemWithDelete, warnings);
  }
  // --- inferred: generic rules --------------------------------------------------------------------
  placeActionPaths(a, itemWithDelete);
  // --- inferred: a PUT on the collection that creates one object (collection-put.ts) -------------
  placeCollectionPuts(a.placer);
  // --- inferred: a create in a scope for objects listed all together (scoped-create.ts) ----------
  placeScopedCreates(a.placer);
  // --- inferred: collections paired with item paths elsewhere (path-pairing.ts) -------------------
  pairItemPaths(a.placer, a.documentPaths);
  // --- inferred: sub-collections listed through their parent's read (embedded-list.ts) ----------
  listThroughParents(a.placer);
  const { paths, realOf, movedFrom, notes, readAs, valuedFrom, addressedUpdates } = a;
  return { paths, realOf, movedFrom, notes, readAs, valuedFrom, addressedUpdates };
}

/** The working paths while operations are moved, what was moved where, and the Placer moving them. */
interface Assembly {
  readonly paths: Record<string, Record<string, unknown>>;
  readonly documentPaths: ReadonlySet<string>;
  readonly realOf: WeakMap<object, RealOperation>;
  readonly movedFrom: Map<string, string[]>;
  readonly notes: Map<string, string>;
  readonly readAs: Map<string, string>;
  readonly valuedFrom: Map<string, string>;
  readonly addressedUpdates: WeakSet<object>;
  /** Operations placed by a declaration (inference leaves them alone). */
  readonly declaredOps: WeakSet<object>;
  readonly placer: Placer;
  /** The working path item at `target`, copied once before it is changed (the document's stays). */
  readonly own: (target: string) => Record<string, unknown>;
}

function startAssembly(source: Readonly<Record<string, Record<string, unknown>>>): Assembly {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [p, item] of Object.entries(source)) setKey(paths, p, item);
  const documentPaths = new Set(Object.keys(source));
  const realOf = new WeakMap<object, RealOperation>();
  const movedFrom = new Map<string, string[]>();
  const copied = new Set<string>();
  const declaredOps = new WeakSet<object>();
  const placedAt = new WeakMap<object, string>();
  const notes = new Map<string, string>();
  const readAs = new Map<string, string>();

  const own = (target: string): Record<string, unknown> => {
    if (!copied.has(target)) {
      setKey(paths, target, { ...(paths[target] ?? {}) });
      copied.add(target);
    }
    return paths[target]!;
  };
  const absorb = (target: string, from: string): void => {
    if (target === from) return;
    const list = movedFrom.get(target) ?? [];
    for (const p of [...(documentPaths.has(from) ? [from] : []), ...(movedFrom.get(from) ?? [])]) {
      if (!list.includes(p)) list.push(p);
    }
    movedFrom.set(target, list);
  };
  const placer: Placer = {
    paths,
    move(from, method, target, slot, source, options = {}) {
      const op = paths[from]?.[method];
      if (!isObject(op)) return false;
      const prev = realOf.get(op);
      const template = prev?.path ?? from;
      const path = options.rename === true ? withParams(template, paramsOf(target)) : template;
      if (path === undefined) return false;
      const item = own(target);
      setKey(item, slot, op);
      for (const [k, v] of Object.entries(options.extra ?? {})) {
        if (!(k in item)) setKey(item, k, v);
      }
      realOf.set(op, {
        method: prev?.method ?? (method.toUpperCase() as RealOperation['method']),
        path,
        source: prev !== undefined ? `${prev.source}; ${source}` : source,
      });
      placedAt.set(op, target);
      absorb(target, from);
      return true;
    },
    lend(from, method, target, slot, source, extra) {
      const op = paths[from]?.[method];
      if (!isObject(op) || isObject(paths[target]?.[slot])) return false;
      const copy: Record<string, unknown> = { ...op };
      for (const [k, v] of Object.entries(extra)) setKey(copy, k, v);
      setKey(own(target), slot, copy);
      const prev = realOf.get(op);
      realOf.set(copy, {
        method: prev?.method ?? (method.toUpperCase() as RealOperation['method']),
        path: prev?.path ?? from,
        source: prev !== undefined ? `${prev.source}; ${source}` : source,
      });
      placedAt.set(copy, target);
      return true;
    },
    absorb,
    note: (path, reason) => void notes.set(path, reason),
    placedAt: (op) => (isObject(op) ? placedAt.get(op) : undefined),
    remove(path, now) {
      delete paths[path];
      if (documentPaths.has(path)) readAs.set(path, now);
    },
    declared: (op) => declaredOps.has(op) || op['x-tend-op'] !== undefined,
  };
  return {
    paths,
    documentPaths,
    realOf,
    movedFrom,
    notes,
    readAs,
    valuedFrom: new Map(),
    addressedUpdates: new WeakSet(),
    declaredOps,
    placer,
    own,
  };
}

/**
 * The item path with DELETE below each collection path (the first), indexed once: a lookup per
 * path would be quadratic in the number of paths.
 */
function deletableItems(
  paths: Readonly<Record<string, Record<string, unknown>>>,
): (collection: string) => string | undefined {
  const deletable = new Map<string, string>();
  for (const [p, item] of Object.entries(paths)) {
    const seg = split(p);
    if (seg.length === 0 || !isParam(seg.at(-1)!) || !isObject(item['delete'])) continue;
    const c = join(seg.slice(0, -1));
    if (!deletable.has(c)) deletable.set(c, p);
  }
  return (c) => deletable.get(c);
}

/** An operation declared with `x-tend-type` and `x-tend-op`. */
interface Declared {
  readonly op: TypeOp;
  readonly method: Method;
  readonly path: string;
  /** The path as the document writes it (for messages). */
  readonly shown: string;
  readonly operation: Record<string, unknown>;
}

/** The declared operations of the working paths, by type; a malformed declaration is a warning. */
function declaredOperations(a: Assembly, warnings: string[]): Map<string, Declared[]> {
  const byType = new Map<string, Declared[]>();
  for (const [path, item] of Object.entries(a.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const opValue = operation['x-tend-op'];
      const typeValue = operation['x-tend-type'];
      if (opValue === undefined && typeValue === undefined) continue;
      const shown = a.realOf.get(operation)?.path ?? path;
      const where = `${method.toUpperCase()} ${shown}`;
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
      list.push({ op, method, path, shown, operation });
      byType.set(typeValue, list);
    }
  }
  return byType;
}

/**
 * Moves the declared operations of one type onto its collection and item paths (declaredPaths);
 * each leaves the path it came from, and a declared update is the update, whatever else the item
 * path offers.
 */
function placeDeclared(
  type: string,
  ops: readonly Declared[],
  a: Assembly,
  itemWithDelete: (collection: string) => string | undefined,
  warnings: string[],
): void {
  const assembled = declaredPaths(
    type,
    ops,
    (c) => itemWithDelete(c) !== undefined,
    (item) => existingCollection(a.paths, type, item),
    warnings,
  );
  if (assembled === undefined) return;
  const { collection, item, rename } = assembled;
  for (const d of ops) {
    const target = d.op === 'list' || d.op === 'create' ? collection : item;
    if (target === undefined) continue;
    if (addressedByFields(d)) {
      if (!addressedOk(type, d, target, warnings)) continue;
      a.addressedUpdates.add(d.operation);
    }
    if ((d.op === 'read' || d.op === 'delete') && d.operation['x-tend-key-fields'] !== undefined) {
      warnings.push(
        `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.shown}: x-tend-key-fields on an operation is taken only on the update (Tend reads and deletes an object by its id alone); ignored here`,
      );
    }
    const slot = slotOf(d);
    place(
      a,
      target,
      slot,
      d.path,
      d.method,
      `x-tend-op ${d.op}`,
      d.op === 'list' || d.op === 'create' ? { 'x-tend-type': type } : {},
      rename && target === item && !addressedByFields(d),
    );
    if (d.op === 'update' && slot === 'put') {
      // A declared update is the update, whatever else the item path offers.
      const it = a.paths[target]!;
      delete it['patch'];
    }
    // A declared operation belongs to its type alone: it leaves the path it came from, which, with
    // nothing left, is read as the type's path (and explained as part of it, not as a collection
    // of its own that cannot be listed).
    if (target !== d.path && a.placer.placedAt(d.operation) === target) {
      const from = a.own(d.path);
      if (from[d.method] === d.operation) delete from[d.method];
      if (!METHODS.some((m) => isObject(from[m]))) a.placer.remove(d.path, target);
    }
  }
}

/**
 * Moves the operation at `from`/`method` as a declared one (inference leaves it alone), and writes
 * `extra` onto its target (the `x-tend-type` of a list or create).
 */
function place(
  a: Assembly,
  target: string,
  slot: Method,
  from: string,
  method: Method,
  source: string,
  extra: Record<string, unknown>,
  rename: boolean,
): void {
  const op = a.paths[from]?.[method];
  if (!a.placer.move(from, method, target, slot, source, { rename })) return;
  const item = a.paths[target]!;
  for (const [k, v] of Object.entries(extra)) setKey(item, k, v);
  if (isObject(op)) a.declaredOps.add(op);
}

/** The slot of its type's path a declared operation takes (an update: PATCH as PATCH, else PUT). */
function slotOf(d: Declared): Method {
  switch (d.op) {
    case 'list':
    case 'read':
      return 'get';
    case 'create':
      return 'post';
    case 'delete':
      return 'delete';
    case 'update':
      return d.method === 'patch' ? 'patch' : 'put';
  }
}

/**
 * The inferred rules on a path's last segment, each only for operations not declared:
 * `POST <c>/create|new|add` creates `<c>` when `<c>` has no POST and an item path with DELETE; `GET
 * <c>/json` lists `<c>` (with such an item path) and `GET <c>/{p}/json` reads `<c>/{p}` (when it has
 * a DELETE), when the target has no GET.
 */
function placeActionPaths(
  a: Assembly,
  itemWithDelete: (collection: string) => string | undefined,
): void {
  const { paths, placer } = a;
  for (const [path, item] of Object.entries(paths)) {
    const s = split(path);
    const last = s.at(-1);
    if (last === undefined || isParam(last)) continue;
    const parent = join(s.slice(0, -1));
    const post = item['post'];
    const get = item['get'];
    const shown = (op: Record<string, unknown>): string => a.realOf.get(op)?.path ?? path;
    if (isObject(post) && !placer.declared(post) && ACTION_CREATE.has(last.toLowerCase())) {
      const c = parent;
      if (
        s.length >= 2 &&
        !isParam(s.at(-2)!) &&
        !isObject(paths[c]?.['post']) &&
        itemWithDelete(c)
      ) {
        placer.move(path, 'post', c, 'post', `inferred: POST ${shown(post)} creates ${c}`);
      }
    }
    if (isObject(get) && !placer.declared(get) && last.toLowerCase() === FORMAT_SUFFIX) {
      const target = parent;
      const ts = split(target);
      if (ts.length === 0) continue;
      if (isObject(paths[target]?.['get'])) continue;
      if (isParam(ts.at(-1)!)) {
        // GET <c>/{p}/json reads <c>/{p} when that item path exists with DELETE.
        if (!isObject(paths[target]?.['delete'])) continue;
        placer.move(path, 'get', target, 'get', `inferred: GET ${shown(get)} reads ${target}`);
      } else if (itemWithDelete(target)) {
        placer.move(path, 'get', target, 'get', `inferred: GET ${shown(get)} lists ${target}`);
      }
    }
  }
}

/**
 * The collection that is already the type's, for item operations declared without a list or create:
 * the one path (with a POST or GET, the item's parameters but its own) whose `x-tend-type` names the
 * type, or, without one, whose last segment is the type's name.
 */
function existingCollection(
  paths: Readonly<Record<string, Record<string, unknown>>>,
  type: string,
  item: string,
): string | undefined {
  const parents = paramsOf(item).length - 1;
  const named = (p: string, it: Record<string, unknown>): unknown =>
    it['x-tend-type'] ?? split(p).at(-1);
  const found = Object.entries(paths).filter(([p, it]) => {
    const last = split(p).at(-1);
    if (last === undefined || isParam(last) || paramsOf(p).length !== parents) return false;
    if (!isObject(it['post']) && !isObject(it['get'])) return false;
    return named(p, it) === type;
  });
  return found.length === 1 ? found[0]![0] : undefined;
}

/** The collection and item paths of a type assembled from declared operations; a warning if none. */
function declaredPaths(
  type: string,
  ops: readonly Declared[],
  hasItemUnder: (collection: string) => boolean,
  collectionOf: (item: string) => string | undefined,
  warnings: string[],
): { collection?: string; item?: string; rename: boolean } | undefined {
  const items = new Set<string>();
  for (const d of ops.filter((o) => o.op === 'read' || o.op === 'update' || o.op === 'delete')) {
    if (addressedByFields(d)) continue; // its path is checked against the type's item path later
    const s = split(d.path);
    const lastParam = findLastIndex(s, isParam);
    if (lastParam < 0) {
      warnings.push(
        `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.shown} is declared as ${d.op}, but an item operation needs the object's id as a path parameter; ignored`,
      );
      return undefined;
    }
    items.add(join(s.slice(0, lastParam + 1)));
  }
  // Item operations on paths of different shapes (`PUT /groups/{id}`, `DELETE /admin/groups/{id}`)
  // address one object when they take the same parameters, in the same order: the overlay that
  // declares them says so. Each keeps its own path; the type's item path is the read's, else the
  // delete's, else the update's.
  const shapes = new Set([...items].map(shape));
  const paramLists = new Set([...items].map((p) => paramsOf(p).join('/')));
  if (shapes.size > 1 && paramLists.size > 1) {
    warnings.push(
      `x-tend-type ${type}: the item operations are on different objects (${[...items].join(', ')}: their path parameters differ); ignored`,
    );
    return undefined;
  }
  const itemOf = (o: { path: string }): string => {
    const s = split(o.path);
    return join(s.slice(0, findLastIndex(s, isParam) + 1));
  };
  const itemOps = ops.filter(
    (o) => (o.op === 'delete' || o.op === 'read' || o.op === 'update') && !addressedByFields(o),
  );
  let item =
    shapes.size > 1
      ? (['read', 'delete', 'update'] as const)
          .map((role) => itemOps.find((o) => o.op === role))
          .filter((o) => o !== undefined)
          .map(itemOf)[0]
      : itemOps.map(itemOf)[0];
  let collection: string | undefined;
  let rename = false;
  const listOrCreate = ops.filter((o) => o.op === 'list' || o.op === 'create');
  if (item !== undefined) {
    collection = join(split(item).slice(0, -1));
    // Item operations alone, on a path that is not <collection>/{id} (`/silence/{silenceID}`): they
    // belong under the collection that is already the type's (`/silences`).
    const existing = listOrCreate.length === 0 ? collectionOf(item) : undefined;
    if (existing !== undefined && existing !== collection) {
      collection = existing;
      item = `${existing}/{${paramsOf(item).at(-1)!}}`;
      rename = true;
    }
  } else {
    // No item operation declared: the collection is what the list and create paths share, or, for
    // one of them alone, its path without a last static segment when an item path sits there.
    const segs = listOrCreate.map((o) => split(o.path));
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
  for (const d of listOrCreate) {
    // A create on the item path itself names the object it makes (item-create.ts).
    if (d.op === 'create' && item !== undefined && shape(d.path) === shape(item)) continue;
    const unknown = split(d.path).filter((seg) => isParam(seg) && !known.has(seg));
    if (unknown.length > 0) {
      warnings.push(
        `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.shown} (${d.op}) has path parameters the collection ${collection} does not (${unknown.join(', ')}); ignored`,
      );
      return undefined;
    }
  }
  return { collection, ...(item !== undefined ? { item } : {}), rename };
}

/**
 * An update declared with `x-tend-key-fields: {param: field}` on the operation: it addresses the
 * object by fields of it other than its id (Discourse updates a user at `PUT /u/{username}.json`
 * and reads and deletes it at `/admin/users/{id}.json`). Tend fills those parameters from the
 * object as last observed. Only an update: a read or a delete has nothing but the id to go on.
 */
function addressedByFields(d: { op: TypeOp; operation: Record<string, unknown> }): boolean {
  return d.op === 'update' && d.operation['x-tend-key-fields'] !== undefined;
}

/**
 * Whether an update addressed by fields fits the type's item path: `x-tend-key-fields` maps some of
 * its path parameters to field names, and every other parameter is one of the item path's above
 * the id (its value comes from where the object lives). A warning when not.
 */
function addressedOk(
  type: string,
  d: { method: Method; path: string; shown: string; operation: Record<string, unknown> },
  item: string,
  warnings: string[],
): boolean {
  const where = `x-tend-type ${type}: ${d.method.toUpperCase()} ${d.shown}`;
  const declared = d.operation['x-tend-key-fields'];
  const params = paramsOf(d.path);
  if (!isObject(declared) || Object.keys(declared).length === 0) {
    warnings.push(
      `${where}: x-tend-key-fields on an update must map its path parameters to fields of the object ({${params.at(-1) ?? 'param'}: <field>}); ignored`,
    );
    return false;
  }
  for (const [param, field] of Object.entries(declared)) {
    if (!params.includes(param)) {
      warnings.push(
        `${where}: x-tend-key-fields names {${param}}, which is not a parameter of the path; ignored`,
      );
      return false;
    }
    if (typeof field !== 'string' || field === '') {
      warnings.push(
        `${where}: x-tend-key-fields gives {${param}} ${JSON.stringify(field)}: it must name a field of the object; ignored`,
      );
      return false;
    }
  }
  const above = new Set(paramsOf(item).slice(0, -1));
  const unknown = params.filter((p) => !Object.hasOwn(declared, p) && !above.has(p));
  if (unknown.length > 0) {
    warnings.push(
      `${where}: its path parameters ${unknown.map((p) => `{${p}}`).join(', ')} are neither named in x-tend-key-fields nor parameters of ${item} above the id; ignored`,
    );
    return false;
  }
  return true;
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

/**
 * `x-tend-path-values: {param: value}` on an operation: the operation always takes these values for
 * these path parameters (Discourse lists every user at `GET /admin/users/list/{flag}.json` with
 * `flag: active`, whose only effect is the order). The values are written into the path (each
 * URI-encoded), and the operation is read as if the document had written that path; the rest of the
 * path item (other methods, path-level parameters) stays where it was. `moved(from, to)` records that
 * the new path stands for the document's.
 */
export function fillPathValues(
  paths: Record<string, Record<string, unknown>>,
  warnings: string[],
  moved: (from: string, to: string) => void,
): void {
  const filledOps = new WeakSet<object>();
  for (const path of Object.keys(paths)) {
    for (const method of METHODS) {
      const item = paths[path];
      const op = item?.[method];
      if (!isObject(op) || op['x-tend-path-values'] === undefined || filledOps.has(op)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const values = op['x-tend-path-values'];
      if (!isObject(values) || Object.keys(values).length === 0) {
        warnings.push(
          `${where}: x-tend-path-values must map path parameters to values ({${paramsOf(path)[0] ?? 'param'}: <value>}); ignored`,
        );
        continue;
      }
      const params = paramsOf(path);
      const problem = Object.entries(values)
        .map(([k, v]) =>
          !params.includes(k)
            ? `names {${k}}, which is not a parameter of the path (${params.map((p) => `{${p}}`).join(', ') || 'it has none'})`
            : typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))
              ? `gives {${k}} ${JSON.stringify(v)}: a value must be a string or a number`
              : typeof v === 'string' && v === ''
                ? `gives {${k}} an empty value`
                : undefined,
        )
        .find((m) => m !== undefined);
      if (problem !== undefined) {
        warnings.push(`${where}: x-tend-path-values ${problem}; ignored`);
        continue;
      }
      const filled = path.replace(/\{([^{}]+)\}/g, (m, name: string) =>
        Object.hasOwn(values, name) ? encodeURIComponent(String(values[name])) : m,
      );
      if (isObject(paths[filled]?.[method])) {
        warnings.push(
          `${where}: x-tend-path-values makes it ${method.toUpperCase()} ${filled}, which the document already has; ignored`,
        );
        continue;
      }
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(item!)) if (k !== method) setKey(rest, k, v);
      if (METHODS.some((m) => isObject(rest[m]))) setKey(paths, path, rest);
      else delete paths[path];
      const target: Record<string, unknown> = { ...(paths[filled] ?? {}) };
      for (const [k, v] of Object.entries(rest)) {
        if (!(METHODS as readonly string[]).includes(k) && !(k in target)) setKey(target, k, v);
      }
      setKey(target, method, op);
      setKey(paths, filled, target);
      filledOps.add(op); // its new path may come later in this loop: it is done
      moved(path, filled);
    }
  }
}
