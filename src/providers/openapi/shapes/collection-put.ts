import { hasType, isObject, jsonMedia, objectView, successSchema } from '../fields/schema-view.js';
import type { Placer } from './path-pairing.js';
import { isParam, itemPathBelow, sameSchema, split } from './path-pairing.js';
import { holdsBodyFields } from './embedded-list.js';

/**
 * Inverted verbs: an API that creates by `PUT` on the collection (`PUT /widgets` with one widget's
 * fields) and changes an object by `POST` on its item path. The verb alone decides nothing — a PUT
 * on a collection usually replaces the whole list (`PUT /topics` with every topic) — so the PUT is
 * taken for the create only when its body and answer say it makes one object:
 *
 * - the collection has no POST and an item path `<c>/{id}` with a GET and a DELETE (a type Tend
 *   could manage, but for its create);
 * - the PUT's request body is one object (a JSON object schema with properties), not a list;
 * - its 2xx answer is the object the item GET answers (the same schema, or an equal one:
 *   `sameSchema`): what it made is one of the objects the item path reads; or, when it answers no
 *   JSON at all (a bare `201`/`204`), the body says it instead: the objects the item GET reads hold
 *   every field the PUT requires and at least half of its fields (what it made is then found in the
 *   list, as a create answering no id always is). An answer of another shape is no create.
 *
 * The PUT then sits where `deriveTypes` looks for a create (the collection's POST slot), sent as the
 * PUT it is; the item path's POST is then the update when it looks like one (update-by-post.ts).
 * Declared operations (`x-tend-op`) are left alone.
 */
export function placeCollectionPuts(placer: Placer): void {
  const paths = placer.paths;
  for (const [path, item] of Object.entries(paths)) {
    const s = split(path);
    if (s.length === 0 || isParam(s.at(-1)!)) continue;
    const put = item['put'];
    if (!isObject(put) || placer.declared(put) || isObject(item['post'])) continue;
    const itemPath = itemPathBelow(paths, path);
    if (itemPath === undefined) continue;
    const one = paths[itemPath]!;
    if (!isObject(one['get']) || !isObject(one['delete'])) continue;
    const same = createsOne(put, one['get'], itemPath);
    if (same === undefined) continue;
    const moved = placer.move(
      path,
      'put',
      path,
      'post',
      `inferred: PUT ${path} creates one object (its body is one object, and ${same})`,
    );
    // The working path item is the placer's own copy now: the PUT is the create, not a PUT too.
    if (moved) delete placer.paths[path]!['put'];
  }
}

/** How a PUT makes an object the item GET reads, when its body is one object; else undefined. */
function createsOne(
  put: Record<string, unknown>,
  get: unknown,
  itemPath: string,
): string | undefined {
  const requestBody = put['requestBody'];
  const body = isObject(requestBody) ? jsonMedia(requestBody['content'])?.schema : undefined;
  if (!isObject(body) || hasType(body, 'array')) return undefined;
  if (Object.keys(objectView(body).properties).length === 0) return undefined;
  const answer = successSchema(put);
  const read = successSchema(get);
  if (answer === undefined && holdsBodyFields(body, read)) {
    return `it answers no JSON, and the objects GET ${itemPath} reads hold its fields`;
  }
  if (!isObject(answer) || hasType(answer, 'array')) return undefined;
  const same = sameSchema(answer, read);
  return same === undefined ? undefined : `it answers ${same} as GET ${itemPath}`;
}
