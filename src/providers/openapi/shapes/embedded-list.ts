import { hasType, isObject, jsonMedia, objectView, successSchema } from '../fields/schema-view.js';
import type { Placer } from './path-pairing.js';
import { isParam, itemPathBelow, join, paramsOf, sameSchema, split } from './path-pairing.js';

/**
 * A sub-collection with a create and item operations but no list, whose objects come back embedded
 * in the parent's read: `POST /zones/{zone}/records` and `/zones/{zone}/records/{recordId}` (GET,
 * DELETE), no `GET /zones/{zone}/records`, and `GET /zones/{zone}` answering `{…, records: [{…}]}`.
 * The parent's read is then the list, the array its envelope — what `x-tend-envelope` on a
 * declared list says — and each object is still created, read, changed and deleted at its own
 * paths. Taken only when:
 *
 * - the collection `<parent item>/<field>` has a POST and no GET, and an item path `<c>/{id}` with a
 *   GET and a DELETE;
 * - the parent's item path has a GET (not declared otherwise) answering an object with an array
 *   property named as the collection's last segment (`records`; `Records` or `record_sets` for
 *   `record-sets` too), of objects;
 * - those objects hold the create's fields: every field the create requires and at least half of
 *   its fields, and they carry an id the item path can take (`id`, the item parameter's name, or the
 *   item GET's very schema).
 *
 * The read is lent, not moved: it stays the parent's read. Declared operations are left alone.
 */
export function listThroughParents(placer: Placer): void {
  const paths = placer.paths;
  for (const [c, item] of Object.entries(paths)) {
    const s = split(c);
    if (s.length < 3 || isParam(s.at(-1)!) || !isParam(s.at(-2)!)) continue;
    const post = item['post'];
    if (!isObject(post) || isObject(item['get']) || placer.declared(post)) continue;
    const itemPath = itemPathBelow(paths, c);
    if (itemPath === undefined) continue;
    const one = paths[itemPath]!;
    if (!isObject(one['get']) || !isObject(one['delete'])) continue;
    const parent = join(s.slice(0, -1));
    const parentGet = paths[parent]?.['get'];
    if (!isObject(parentGet) || placer.declared(parentGet)) continue;
    const field = embeddingField(successSchema(parentGet), s.at(-1)!);
    if (field === undefined) continue;
    const items = (
      objectView(successSchema(parentGet)).properties[field] as Record<string, unknown>
    )['items'];
    if (!holdsCreated(items, post, paramsOf(itemPath).at(-1)!, successSchema(one['get']))) continue;
    placer.lend(
      parent,
      'get',
      c,
      'get',
      `inferred: GET ${parent} lists ${c} (its ${field} array holds the objects POST ${c} creates)`,
      { 'x-tend-envelope': field },
    );
  }
}

/** The array property of a parent's read named as the collection's last segment, of objects. */
function embeddingField(read: unknown, segment: string): string | undefined {
  if (!isObject(read) || hasType(read, 'array')) return undefined;
  const flat = (n: string) => n.toLowerCase().replace(/[^a-z0-9]/g, '');
  const want = flat(segment);
  const properties = objectView(read).properties;
  const named = Object.keys(properties).filter((k) => flat(k) === want);
  if (named.length !== 1) return undefined;
  const prop = properties[named[0]!]!;
  return hasType(prop, 'array') && isObject(prop['items']) && !hasType(prop['items'], 'array')
    ? named[0]
    : undefined;
}

/**
 * True when the embedded objects hold what the create makes: every field it requires, at least half
 * of its fields, and an id the item path can take.
 */
function holdsCreated(
  items: unknown,
  post: Record<string, unknown>,
  itemParam: string,
  itemRead: unknown,
): boolean {
  const requestBody = post['requestBody'];
  const body = isObject(requestBody) ? jsonMedia(requestBody['content'])?.schema : undefined;
  if (!holdsBodyFields(body, items)) return false;
  const held = (f: string) => Object.hasOwn(objectView(items).properties, f);
  return held('id') || held(itemParam) || sameSchema(items, itemRead) !== undefined;
}

/**
 * True when objects of schema `object` hold the fields a request body sends: every field it
 * requires and at least half of its fields (a body with no fields holds nothing).
 */
export function holdsBodyFields(body: unknown, object: unknown): boolean {
  if (!isObject(body) || !isObject(object)) return false;
  const sent = objectView(body);
  const kept = objectView(object);
  const fields = Object.keys(sent.properties);
  if (fields.length === 0) return false;
  const held = (f: string) => Object.hasOwn(kept.properties, f);
  if (!sent.required.every(held)) return false;
  return fields.filter(held).length * 2 >= fields.length;
}
