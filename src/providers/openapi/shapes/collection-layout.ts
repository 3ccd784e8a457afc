import type { RealOperation } from './irregular-ops.js';
import type { ItemCreateChoice, SingletonChoice } from './item-create.js';
import { itemCreateChoice, singletonChoice, withItemCreate, withSingleton } from './item-create.js';
import { compositeItemPath } from './item-key.js';
import type { KeyedCollection } from './keyed-collection.js';
import { keyedCollections } from './keyed-collection.js';
import type { Deletion } from './no-delete.js';
import { deletion } from './no-delete.js';
import { isParam, join, split } from './path-pairing.js';
import { isCheckOnlyGet, readByListOperation, readByListReason } from './read-by-list.js';
import { NAME_LIKE } from '../fields/identity.js';
import { isObject } from '../fields/schema-view.js';

/**
 * How one collection path of a document lays its objects out, the shape decisions `deriveTypes`
 * takes before it builds a type: which working paths are collections and which item paths sit below
 * each (`collectionIndex`), whether the collection holds one object per owner, plain items or items
 * addressed by several parameters (`collectionLayout`), where its objects are created
 * (`creationOf`), and at which item path one object is read and deleted (`itemAccess`). Each says
 * why in a string when the collection cannot be a type.
 */

/** The collection paths among the working paths, and the item paths below each. */
export interface CollectionIndex {
  /** Every working path, shallow first (a parent type exists before its children), else in order. */
  readonly collections: readonly string[];
  /** Collections whose path ends in a parameter (keyed-collection.ts), by path. */
  readonly keyed: ReadonlyMap<string, KeyedCollection>;
  /** Why the item paths below a GET-only path ending in a parameter are not created there. */
  readonly keyedReasons: ReadonlyMap<string, string>;
  /** The item paths directly below a path (`/a/{x}` below `/a`), keyed collections left out. */
  readonly itemPathsUnder: (path: string) => readonly string[];
}

/** Indexes the working paths once: looking item paths up per collection would be quadratic. */
export function collectionIndex(
  paths: Readonly<Record<string, Record<string, unknown>>>,
): CollectionIndex {
  // Keyed by the collection's segments joined by `/`, no leading slash (as keyedCollections reads it).
  const itemPathsOf = new Map<string, string[]>();
  for (const p of Object.keys(paths)) {
    const segments = split(p);
    const last = segments[segments.length - 1];
    if (last === undefined || !isParam(last)) continue;
    const key = segments.slice(0, -1).join('/');
    const list = itemPathsOf.get(key);
    if (list) list.push(p);
    else itemPathsOf.set(key, [p]);
  }
  // Collections whose path ends in a parameter (`/repositories/{workspace}`, keyed-collection.ts):
  // not items of the path above them.
  const { found: keyed, reasons: keyedReasons } = keyedCollections(paths, itemPathsOf);
  for (const p of keyed.keys()) {
    const key = split(p).slice(0, -1).join('/');
    const siblings = itemPathsOf.get(key)?.filter((q) => q !== p);
    if (siblings === undefined) continue;
    if (siblings.length > 0) itemPathsOf.set(key, siblings);
    else itemPathsOf.delete(key);
  }
  const collections = Object.keys(paths)
    .map((p, i) => ({ p, i, depth: split(p).length }))
    .sort((a, b) => a.depth - b.depth || a.i - b.i)
    .map((x) => x.p);
  return {
    collections,
    keyed,
    keyedReasons,
    itemPathsUnder: (path) => itemPathsOf.get(split(path).join('/')) ?? [],
  };
}

/** What a collection path holds, before its creation, name and item path are looked at. */
export interface CollectionLayout {
  readonly segments: readonly string[];
  /** The name the path gives its objects: its last segment (a keyed collection's, the root's). */
  readonly last: string;
  /** Set for one object per owner at a fixed path (item-create.ts `singletonChoice`). */
  readonly single?: SingletonChoice;
  /** The item paths that may address one object (the singleton's own path for a singleton). */
  readonly itemPaths: readonly string[];
  /** Set for objects addressed by several parameters together (item-key.ts). */
  readonly composite?: { readonly path: string; readonly params: readonly string[] };
}

/**
 * What a working path holds as a collection: undefined when it is none (or an action on the objects
 * of a type, reported with the paths no type uses), a string when it is a singleton whose owners'
 * list cannot be read (only this path is then unmapped, with that reason). `idFieldAt` is the id
 * field of the type whose item path has the shape of a path, when one is derived already.
 */
export function collectionLayout(
  collectionPath: string,
  index: CollectionIndex,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  idFieldAt: (itemPath: string) => string | undefined,
): CollectionLayout | string | undefined {
  const segments = split(collectionPath);
  const declaredItems = index.itemPathsUnder(collectionPath);
  // The root collection (`/` with `/{realm}`, when the base URL ends in the collection) is named
  // after its item parameter (`realms`).
  const rootParam = segments.length === 0 ? declaredItems[0]?.slice(2, -1) : undefined;
  const last =
    rootParam !== undefined && /^[A-Za-z][A-Za-z0-9_-]*$/.test(rootParam)
      ? `${rootParam}s`
      : (index.keyed.get(collectionPath)?.name ?? segments[segments.length - 1]);
  if (last === undefined || (segments.length > 0 && isParam(last))) return undefined;
  const collection = paths[collectionPath]!;
  const post = isObject(collection['post']);
  // One object per owner at a fixed path below it (`/branches/{branch}/protection`): item-create.ts.
  const single =
    !post && declaredItems.length === 0
      ? singletonChoice(collectionPath, paths, idFieldAt, NAME_LIKE)
      : undefined;
  if (typeof single === 'string') return single;
  const itemPaths = single ? [collectionPath] : declaredItems;
  // Objects addressed by several parameters together (`/buckets/{clusterId}/{bucket}`), when no
  // item path directly under the collection deletes one (item-key.ts).
  const composite =
    single || !post || itemPaths.some((p) => isObject(paths[p]!['delete']))
      ? undefined
      : compositeItemPath(collectionPath, paths);
  if (!post && itemPaths.length === 0) return undefined; // not a collection
  if (
    itemPaths.length === 0 &&
    !composite &&
    idFieldAt(join(segments.slice(0, -1))) !== undefined
  ) {
    return undefined; // an action on objects of a type (POST /volumes/{id}/resize): reported later
  }
  return {
    segments,
    last,
    ...(single ? { single } : {}),
    itemPaths,
    ...(composite ? { composite } : {}),
  };
}

/** Where the objects of a collection are created. */
export interface Creation {
  /** Set when they are created at their own item path (item-create.ts `itemCreateChoice`). */
  readonly atItem?: ItemCreateChoice;
  /** The collection's path item with the create as its POST (and a singleton's list as its GET). */
  readonly creatable: Record<string, unknown>;
}

/**
 * The create of a collection: its POST, else (for a singleton) the PUT at its fixed path, else a PUT
 * or POST on an item path that says it creates; a string says why there is none.
 */
export function creationOf(
  collectionPath: string,
  collection: Record<string, unknown>,
  layout: CollectionLayout,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  realOf: WeakMap<object, RealOperation>,
): Creation | string {
  const hasPost = isObject(collection['post']);
  const atItem =
    hasPost || layout.single
      ? undefined
      : itemCreateChoice(collectionPath, layout.itemPaths, paths, isObject(collection['get']));
  if (typeof atItem === 'string') return atItem;
  const creatable = layout.single
    ? withSingleton(collection, layout.single, realOf)
    : atItem
      ? withItemCreate(collection, atItem, realOf)
      : collection;
  return { ...(atItem ? { atItem } : {}), creatable };
}

/** Where one object of a type is read, changed and deleted. */
export interface ItemAccess {
  readonly itemPath: string;
  /** The item path's path item as the document has it (its own GET, if any). */
  readonly item: Record<string, unknown>;
  /** The path item the type reads one object with: `item`, or with the list standing for its GET. */
  readonly readable: Record<string, unknown>;
  /** Set when one object is read from the list (read-by-list.ts): how, for inspect. */
  readonly readByList?: string;
  /** The item path has a DELETE, or none (no-delete.ts). */
  readonly deletes: Exclude<Deletion, { kind: 'unmapped' }>;
}

/** The paths of the document around a working path (irregular-ops.ts `assembleOperations`). */
export interface PathOrigins {
  /** The document's own paths. */
  readonly documentPaths: Readonly<Record<string, Record<string, unknown>>>;
  /** Where operations moved onto a working path really are. */
  readonly realOf: WeakMap<object, RealOperation>;
  /** The document paths whose operations were moved onto a working path. */
  readonly moved: (path: string) => readonly string[];
  /** A working path as the document writes it (the paths it stands for, when a rule made it). */
  readonly shown: (path: string) => string;
}

/**
 * The item path of a type (several for one collection are rare: the one created at, the composite
 * one, else the first with GET and DELETE, else the first), how one object is read there (its GET,
 * else from the list), and whether it is deleted there; a string says why it cannot be a type.
 */
export function itemAccess(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  layout: CollectionLayout,
  creation: Creation,
  index: CollectionIndex,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  origins: PathOrigins,
): ItemAccess | string {
  const itemPath =
    creation.atItem?.itemPath ??
    layout.composite?.path ??
    layout.itemPaths.find((p) => isObject(paths[p]!['get']) && isObject(paths[p]!['delete'])) ??
    layout.itemPaths[0]!;
  const item = paths[itemPath]!;
  // Without a GET on the item path, one object may be read from the list (read-by-list.ts) —
  // not when the document has a GET there that a declaration or a rule put elsewhere.
  const documentGet = [
    itemPath,
    ...origins.moved(itemPath),
    ...(['delete', 'patch', 'put'] as const).map((m) => {
      const o = item[m];
      return isObject(o) ? origins.realOf.get(o)?.path : undefined;
    }),
  ].some(
    (q) =>
      q !== undefined &&
      isObject(origins.documentPaths[q]?.['get']) &&
      !isCheckOnlyGet(origins.documentPaths[q]?.['get']),
  );
  const shownItem = origins.shown(itemPath);
  const byList = documentGet
    ? undefined
    : readByListOperation(name, collectionPath, collection, shownItem, item, origins.realOf);
  if (!isObject(item['get']) && !byList) {
    return `no GET on ${shownItem}: Tend cannot read one object`;
  }
  // Without DELETE the type may still be managed, its objects never deleted (no-delete.ts).
  const deletes = deletion(itemPath, item, index.itemPathsUnder(itemPath), paths);
  if (deletes.kind === 'unmapped') return deletes.reason;
  return {
    itemPath,
    item,
    readable: byList ? { ...item, get: byList } : item,
    ...(byList ? { readByList: readByListReason(shownItem, isCheckOnlyGet(item['get'])) } : {}),
    deletes,
  };
}
