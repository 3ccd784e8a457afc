import { isObject, objectView, successSchema } from '../fields/schema-view.js';
import type { Placer } from './path-pairing.js';
import { METHODS, isParam, itemPathBelow, paramsOf, sameSchema, split } from './path-pairing.js';

/**
 * An item path not under its collection (issue 27): objects created in a scope, `POST
 * /teams/{team}/widgets`, but listed all together at `GET /widgets` and read, changed and deleted at
 * `/widgets/{widgetId}`. The type is `/widgets` (its list and item paths), created by the scoped
 * POST; the scope's parameters (`{team}`) are fields of the object, sent in the create's path
 * (create-query.ts `pathFields`) and part of its natural key in front of the rest. Taken only when:
 *
 * - `<c>` (last segment static) has a GET and no POST, and its own item path `<c>/{id}` has a GET
 *   and a DELETE;
 * - exactly one other path ends in the same segment below a parameter (`…/{team}/widgets`), with a
 *   POST and nothing else, and no item path of its own (else it is a collection in its own right); its
 *   POST answers what `GET <c>/{id}` answers (the same or an equal schema: `sameSchema`);
 * - the objects read at `<c>/{id}` carry each parameter of the create's path by name (`team` for
 *   `{team}`): a listed object must say which scope it is in, or Tend could not tell two teams'
 *   widgets apart, nor send a change of scope (a create-only field) for what it is.
 *
 * Declared operations are left alone.
 */
export function placeScopedCreates(placer: Placer): void {
  const paths = placer.paths;
  // The POST-only paths by their last segment (`widgets`), looked up once per collection.
  const bySegment = new Map<string, string[]>();
  for (const [p, item] of Object.entries(paths)) {
    const s = split(p);
    if (s.length < 3 || isParam(s.at(-1)!) || !isParam(s.at(-2)!)) continue;
    // Only a POST: nothing else is done at that path (it is no object, and no list).
    const ops = METHODS.filter((m) => isObject(item[m]));
    const post = item['post'];
    if (ops.length !== 1 || !isObject(post) || placer.declared(post)) continue;
    bySegment.set(s.at(-1)!, [...(bySegment.get(s.at(-1)!) ?? []), p]);
  }
  for (const [c, item] of Object.entries(paths)) {
    const s = split(c);
    const last = s.at(-1);
    if (last === undefined || isParam(last)) continue;
    if (!isObject(item['get']) || isObject(item['post'])) continue;
    const itemPath = itemPathBelow(paths, c);
    if (itemPath === undefined) continue;
    const one = paths[itemPath]!;
    if (!isObject(one['get']) || !isObject(one['delete'])) continue;
    const read = successSchema(one['get']);
    const held = objectView(read).properties;
    const candidates = (bySegment.get(last) ?? []).filter((p) => {
      if (p === c || itemPathBelow(paths, p) !== undefined) return false;
      const scope = paramsOf(p).filter((x) => !paramsOf(c).includes(x));
      if (scope.length === 0 || !scope.every((x) => Object.hasOwn(held, x))) return false;
      return sameSchema(successSchema(paths[p]!['post']), read) !== undefined;
    });
    if (candidates.length !== 1) continue;
    const from = candidates[0]!;
    const scope = paramsOf(from).filter((x) => !paramsOf(c).includes(x));
    const same = sameSchema(successSchema(paths[from]!['post']), read)!;
    const moved = placer.move(
      from,
      'post',
      c,
      'post',
      `inferred: POST ${from} creates what GET ${itemPath} reads (${same}), in the scope ${scope.map((x) => `{${x}}`).join(', ')} its objects carry as ${scope.join(', ')}`,
    );
    if (moved) placer.remove(from, c);
  }
}
