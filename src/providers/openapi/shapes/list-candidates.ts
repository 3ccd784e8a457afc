import { inferListEnvelope, schemaAtPath } from './envelope.js';
import { sendableMedia } from '../transport/request-media.js';
import { isObject, objectView, successSchema } from '../fields/schema-view.js';

/**
 * Where else the objects of a collection without a list may be listed: a person onboarding an API
 * whose create has no GET beside it (Discourse's `POST /users.json`) looks for a GET that answers a
 * list of objects with the create's fields (`GET /admin/users/list/{flag}.json`), and declares it
 * with `x-tend-op: list`. `inspect` names such GETs; it never pairs them by itself: whether one of
 * them lists every object is what only the platform knows.
 */

/** A GET that lists objects sharing fields with a create: its path and the fields it shares. */
export interface ListCandidate {
  readonly path: string;
  readonly shared: readonly string[];
}

/** The property names of the objects a GET lists (a bare array, or one inside an envelope). */
export type ListedFields = (path: string) => readonly string[] | undefined;

/** The listed fields of every GET of the document, computed once per path and only when asked. */
export function listedFieldsOf(
  paths: Readonly<Record<string, Record<string, unknown>>>,
): ListedFields {
  const cache = new Map<string, readonly string[] | undefined>();
  return (path) => {
    if (cache.has(path)) return cache.get(path);
    const get = paths[path]?.['get'];
    let out: readonly string[] | undefined;
    if (isObject(get) && get['x-tend-op'] === undefined) {
      const schema = successSchema(get);
      const envelope = isObject(schema) ? inferListEnvelope(schema, '') : undefined;
      const list = envelope !== undefined ? schemaAtPath(schema, envelope) : schema;
      const items = isObject(list) ? list['items'] : undefined;
      const fields = Object.keys(objectView(items).properties);
      out = fields.length > 0 ? fields : undefined;
    }
    cache.set(path, out);
    return out;
  };
}

/**
 * The GETs (other than at `collectionPath`) whose listed objects share at least two fields with the
 * create body of `post`, most shared first (then the document's order), at most `limit`.
 */
export function listCandidates(
  collectionPath: string,
  post: unknown,
  paths: readonly string[],
  listed: ListedFields,
  limit = 3,
): ListCandidate[] {
  const body = isObject(post) ? sendableMedia(post, 'POST')?.schema : undefined;
  const view = objectView(body);
  const names = Object.keys(view.properties);
  // A body of one object property wraps the fields (`{"group": {…}}`): those are the create's.
  const only = names.length === 1 ? view.properties[names[0]!] : undefined;
  const inner = isObject(only) ? Object.keys(objectView(only).properties) : [];
  const createFields = new Set(inner.length > 0 ? inner : names);
  if (createFields.size < 2) return [];
  const found: ListCandidate[] = [];
  for (const path of paths) {
    if (path === collectionPath) continue;
    const fields = listed(path);
    if (fields === undefined) continue;
    const shared = fields.filter((f) => createFields.has(f));
    if (shared.length >= 2) found.push({ path, shared });
  }
  // A stable sort: ties keep the document's order.
  return found.sort((a, b) => b.shared.length - a.shared.length).slice(0, limit);
}

/** The sentence `inspect` adds to "no GET on …" when there are candidates. */
export function listCandidatesHint(typeName: string, candidates: readonly ListCandidate[]): string {
  if (candidates.length === 0) return '';
  const shown = candidates.map((c) => `${c.path} (${c.shared.join(', ')})`).join(', ');
  return `; GETs that list objects with its create's fields: ${shown}. If one lists every object, declare x-tend-type: ${typeName} and x-tend-op: list on it (x-tend-path-values for a parameter that filters)`;
}
