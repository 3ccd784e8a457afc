import { itemCreateChoice } from './item-create.js';
import { hasType, isObject, objectView, successSchema } from '../fields/schema-view.js';
import { sameSchema, shape } from './path-pairing.js';

/**
 * Collections whose path ends in a parameter (issue 12): `GET /repositories/{workspace}` lists the
 * repositories of one workspace, and `POST /repositories/{workspace}/{repo_slug}` creates one at the
 * address its creator names. The path looks like an item of `/repositories`, but it is not one: it
 * offers nothing but a GET (no PUT, PATCH, POST or DELETE of its own), and below it sits an item path
 * with GET, DELETE and a PUT or POST that says it creates (item-create.ts `itemCreateChoice`). Such a
 * path is read as the collection of those objects, named after its last named segment
 * (`repositories`), its parameter a value of the scope (a parent's id, a fixed value, or the
 * provider's). A generic rule, never one API's.
 *
 * The same holds for a path ending in a parameter that lists **and creates** (issue 27): `GET
 * /flags/{projectKey}` lists the flags of one project and `POST /flags/{projectKey}` creates one,
 * read, changed and deleted one level below at `/flags/{projectKey}/{flagKey}`. The path looks like
 * an item of `/flags` whose POST is an action, so it is taken for a collection only when everything
 * says so (`listsAndCreates`): nothing changes or removes it (no PUT, PATCH or DELETE); the path above
 * it creates nothing (no POST: else it is that collection's item); exactly one item path sits one
 * level below with a GET and a DELETE, and the POST answers with what that GET answers (the same or
 * an equal schema: it makes those objects); the GET answers a list (an array, or an object wrapping
 * one), not the object the POST makes; and every other path below it lies below the item — the
 * item's actions (`…/{flagKey}/copy`) and sub-resources (`…/{flagKey}/dependents`) — with no
 * sibling beside the item (`/flags/{projectKey}/summary` would make the path an object with parts).
 */

/** A collection path that ends in a parameter, with the item path its objects are created at. */
export interface KeyedCollection {
  /** The collection path (`/repositories/{workspace}`). */
  readonly path: string;
  /** Its name: the last segment that is not a parameter (`repositories`). */
  readonly name: string;
}

/**
 * The collection paths ending in a parameter among `paths`, by path. `itemPathsOf` gives the item
 * paths directly below a path (`/a/{x}/{y}` below `/a/{x}`), keyed by the path's segments joined
 * with `/` and no leading slash, as derive-types indexes them.
 */
export function keyedCollections(
  paths: Readonly<Record<string, Record<string, unknown>>>,
  itemPathsOf: ReadonlyMap<string, readonly string[]>,
): {
  readonly found: Map<string, KeyedCollection>;
  /** Why the item paths below a GET-only path ending in a parameter are not created there. */
  readonly reasons: Map<string, string>;
} {
  const found = new Map<string, KeyedCollection>();
  const reasons = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    const items = itemPathsOf.get(segmentsOf(path).join('/'));
    const got = keyedCollection(path, item, paths, items);
    if (typeof got === 'string') for (const p of items ?? []) reasons.set(p, got);
    else if (got !== undefined) found.set(path, got);
  }
  return { found, reasons };
}

/**
 * The collection `path` is, when it ends in a parameter and is one (see the file's comment);
 * undefined when it is not such a path, a string when it lists (GET only, items below it) but no
 * item below it is created at its address: why, and what to declare.
 */
export function keyedCollection(
  path: string,
  item: Record<string, unknown>,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  itemPaths: readonly string[] | undefined,
): KeyedCollection | string | undefined {
  const segments = segmentsOf(path);
  const last = segments.at(-1);
  if (last === undefined || !isParam(last)) return undefined;
  if (!isObject(item['get'])) return undefined;
  const name = [...segments].reverse().find((s) => !isParam(s));
  if (isObject(item['post'])) {
    return name !== undefined && listsAndCreates(path, item, paths, itemPaths)
      ? { path, name }
      : undefined;
  }
  // An item of its own (something changes or removes it): not a collection.
  if (['put', 'patch', 'delete'].some((m) => isObject(item[m]))) return undefined;
  if (name === undefined || itemPaths === undefined || itemPaths.length === 0) return undefined;
  const choice = itemCreateChoice(path, itemPaths, paths, true);
  if (typeof choice !== 'string') return { path, name };
  // The item path's own reason, past the collection's missing POST, which is no news here.
  const detail = choice.replace(/^no POST on \S+: Tend cannot create these objects(, |; )?/, '');
  return `GET ${path} lists these objects, but nothing creates them: it has no POST${detail === '' ? ', and no item path below it with GET, DELETE and a PUT or POST that creates' : `, ${detail}`}`;
}

/**
 * True when a path ending in a parameter with a GET and a POST is a collection of the objects one
 * level below it (see the file's comment): `POST /flags/{projectKey}` makes what
 * `GET /flags/{projectKey}/{flagKey}` reads, and `GET /flags/{projectKey}` lists them.
 */
function listsAndCreates(
  path: string,
  item: Record<string, unknown>,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  itemPaths: readonly string[] | undefined,
): boolean {
  if (['put', 'patch', 'delete'].some((m) => isObject(item[m]))) return false;
  const above = '/' + segmentsOf(path).slice(0, -1).join('/');
  if (isObject(paths[above]?.['post'])) return false; // the item of the collection above
  const items = (itemPaths ?? []).filter(
    (p) => isObject(paths[p]?.['get']) && isObject(paths[p]?.['delete']),
  );
  if (items.length !== 1) return false;
  const one = items[0]!;
  const made = successSchema(item['post']);
  if (sameSchema(made, successSchema(paths[one]!['get'])) === undefined) return false;
  const listed = successSchema(item['get']);
  if (listed === undefined || sameSchema(listed, made) !== undefined || !isList(listed)) {
    return false;
  }
  // Every other path below it is the item's action or sub-resource (compared by shape: a
  // parameter may be named otherwise there).
  const below = shape(path) + '/';
  const under = shape(one) + '/';
  return Object.keys(paths).every((p) => {
    const s = shape(p);
    return !s.startsWith(below) || s === shape(one) || s.startsWith(under);
  });
}

/** An answer that is a list: an array, or an object with an array property of objects. */
function isList(schema: unknown): boolean {
  if (hasType(schema, 'array')) return true;
  return Object.values(objectView(schema).properties).some(
    (p) => hasType(p, 'array') && isObject(p['items']) && !hasType(p['items'], 'array'),
  );
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function isParam(segment: string): boolean {
  return /^\{[^{}]+\}$/.test(segment);
}
