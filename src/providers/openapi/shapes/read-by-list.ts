/**
 * Reading one object through its collection's list, when the item path has no GET.
 *
 * Some APIs offer DELETE (and PUT or PATCH) on `/things/{id}` but no GET there: one object can be
 * changed and removed, yet only read among the others (`GET /things`). Tend then reads one object by
 * listing the collection — with the pagination and envelope inferred for the list — and picking the
 * entry whose id field equals the id; none is absent, like a 404. The rule is generic: it needs a
 * list GET and an item path that is really the objects' address (a DELETE or an update on it), and a
 * real GET on the item path always wins. A verification (which re-reads) costs a list per read.
 */
import { valueAtKeyPath } from '../../../core/index.js';
import type { RealOperation } from './irregular-ops.js';
import { inferListEnvelope, readEnvelope, schemaAtPath } from './envelope.js';
import { hasType, isObject, successSchema } from '../fields/schema-view.js';

/** What `assigned` says of a read from the list (inspect shows it on the read operation). */
export function readByListReason(itemPath: string, checkOnly = false): string {
  return checkOnly
    ? `inferred: GET ${itemPath} answers 204 with no object (a check that it exists); one object is read from the list`
    : `inferred: no GET on ${itemPath}; one object is read from the list`;
}

/**
 * True for a GET that only says whether the object exists: its only success answer is a 204 with no
 * body (GitHub's and Gitea's `GET /repos/{owner}/{repo}/collaborators/{username}`), so it cannot be
 * the object's read.
 */
export function isCheckOnlyGet(op: unknown): boolean {
  if (!isObject(op) || !isObject(op['responses'])) return false;
  const success = Object.keys(op['responses']).filter((c) => /^2(\d\d|XX)$/i.test(c));
  if (success.length === 0 || success.some((c) => c !== '204')) return false;
  const answer = op['responses']['204'];
  return !(isObject(answer) && isObject(answer['content']));
}

/**
 * A GET operation standing for "read one object from the list", for an item path without GET: its
 * success schema is the schema of one listed entry, it declares no envelope (entries are already out
 * of the list's), and `realOf` records that it really is the list's GET. Undefined when the rule does
 * not apply: the item path has a GET that answers the object (a GET answering only 204 is a check,
 * not a read), or neither DELETE, PATCH nor PUT, or the collection no list GET.
 */
export function readByListOperation(
  typeName: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  /** The item path as the document writes it (for the reason). */
  itemPath: string,
  item: Record<string, unknown>,
  realOf: WeakMap<object, RealOperation>,
): Record<string, unknown> | undefined {
  const checkOnly = isCheckOnlyGet(item['get']);
  if (isObject(item['get']) && !checkOnly) return undefined;
  if (!['delete', 'patch', 'put'].some((m) => isObject(item[m]))) return undefined;
  const list = collection['get'];
  if (!isObject(list)) return undefined;
  const entry = listEntrySchema(list, typeName);
  const op: Record<string, unknown> = {
    ...(typeof list['operationId'] === 'string' ? { operationId: list['operationId'] } : {}),
    'x-tend-envelope': false,
    responses: {
      '200': {
        description: `one entry of GET ${collectionPath}`,
        content: { 'application/json': { schema: isObject(entry) ? entry : {} } },
      },
    },
  };
  const real = realOf.get(list);
  realOf.set(op, {
    method: 'GET',
    path: real?.path ?? collectionPath,
    source: readByListReason(itemPath, checkOnly),
  });
  return op;
}

/** The schema of one entry of a list answer: the array's items, inside the list's envelope if any. */
function listEntrySchema(list: Record<string, unknown>, typeName: string): unknown {
  const schema = successSchema(list);
  const declared = readEnvelope(list['x-tend-envelope']);
  const field =
    list['x-tend-envelope'] === undefined
      ? inferListEnvelope(schema, typeName)
      : typeof declared === 'string'
        ? declared
        : undefined;
  const array = field === undefined ? schema : schemaAtPath(schema, field);
  if (!isObject(array)) return undefined;
  if (hasType(array, 'array') || isObject(array['items'])) return array['items'];
  return undefined;
}

/**
 * The entry of a list whose id field equals an id (compared as text, as ids are in addresses);
 * undefined when none does. The first wins when several have the same id.
 */
export function pickListed(
  items: readonly unknown[],
  idField: string,
  id: string,
): Record<string, unknown> | undefined {
  for (const it of items) {
    if (!isObject(it)) continue;
    const v = valueAtKeyPath(it, idField);
    if ((typeof v === 'string' || typeof v === 'number') && String(v) === id) return it;
  }
  return undefined;
}

/**
 * The entry of a list whose key fields equal an object's own id parts, in order (an object addressed
 * by several parameters together: item-key.ts); compared as text. The first wins.
 */
export function pickListedByKey(
  items: readonly unknown[],
  fields: readonly string[],
  own: readonly string[],
): Record<string, unknown> | undefined {
  if (fields.length !== own.length) return undefined;
  return items.find(
    (it): it is Record<string, unknown> =>
      isObject(it) &&
      fields.every((f, i) => {
        const v = valueAtKeyPath(it, f);
        return (typeof v === 'string' || typeof v === 'number') && String(v) === own[i];
      }),
  );
}
