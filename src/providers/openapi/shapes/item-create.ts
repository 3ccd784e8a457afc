import type { IdentityStrategy, JsonSchema } from '../../../core/index.js';
import { setKey } from '../../../core/index.js';
import type { RealOperation } from './irregular-ops.js';
import type { ObjectView } from '../fields/schema-view.js';
import { inferListEnvelope, schemaAtPath } from './envelope.js';
import { hasType, isObject, objectView, successSchema } from '../fields/schema-view.js';

/**
 * Objects created at their own address, and child bodies that repeat a parent's path parameter
 * (issue 12). Generic rules, never one API's:
 *
 * - **Create at the item path.** A collection `/x` with a GET and no POST, whose item path `/x/{p}`
 *   has GET, DELETE and a PUT (or POST) that says it creates (`Create or update an environment`,
 *   `ResourceGroups_CreateOrUpdate`, `Add a user to the default reviewers`): the object is created
 *   by that call at the address its creator names. `{p}` is then the object's natural key: a
 *   declared field (required, create-only) sent in the path, not in the body. A second create names
 *   the same object, so it cannot make a second one. The objects Tend lists must carry the value
 *   (a field named `p`, or the name-like field `p` is named after: `name` for `{environment_name}`),
 *   else a listed object could not be told to be the declared one, and the type has no identity.
 * - **A child body repeating a parent parameter.** The create body of `/parents/{id}/children` has a
 *   field `id` too. When the field is the child's own (a generic own name: `id`, `name`, `uuid`, …)
 *   the parent's declared field is renamed after the parent (`parent_id` → `client_id`); when its
 *   name ties it to the parent (`site_id` under `/sites/{site_id}`) it is the parent's value, sent
 *   in the body too. Anything else is refused with the reason.
 */

/** How the objects of a type are created at their own item path. */
export interface ItemCreate {
  /** The item path parameter naming the object: its natural key, a declared field. */
  readonly param: string;
  /** True when the create body has a field of that name as well (then it is sent in both). */
  readonly inBody: boolean;
}

/**
 * One object per owner at a fixed path below the owner (`/repos/{owner}/{repo}/branches/{branch}/
 * protection`): listed by reading it for every item of the owners' list, keyed by the owner's key.
 */
export interface Singleton {
  /** The field of the owners' list items holding the owner's key (`name` for `{branch}`). */
  readonly ownerKey: string;
  /** The owners' list (`/repos/{owner}/{repo}/branches`). */
  readonly ownersPath: string;
}

/** A singleton sub-resource found in a document. */
export interface SingletonChoice extends Singleton {
  /** The singleton's path. */
  readonly path: string;
  /** The owner's path parameter (`branch`): the singleton's key. */
  readonly param: string;
  /** The owners' list GET operation. */
  readonly ownersList: Record<string, unknown>;
}

/** The create of a collection without POST, found on its item path. */
export interface ItemCreateChoice {
  readonly itemPath: string;
  readonly method: 'PUT' | 'POST';
  readonly operation: Record<string, unknown>;
}

/** Words of an operation's id and summary that say it creates. */
const CREATE_WORDS = new Set(['create', 'add', 'upsert', 'insert', 'register']);

/** Generic own-identity names: a body field so named is the object's own, not its parent's. */
const OWN_NAMES = new Set([
  'id',
  'uuid',
  'name',
  'slug',
  'key',
  'username',
  'login',
  'handle',
  'code',
  'identifier',
]);

/** Lower-case words of an identifier or a sentence (`ResourceGroups_CreateOrUpdate` → resource, groups, create, or, update). */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** True when an operation's id or summary says it creates (`create`, `add`, `upsert`, …). */
export function saysCreate(op: Record<string, unknown>): boolean {
  const text = [op['operationId'], op['summary']].filter((s) => typeof s === 'string').join(' ');
  return wordsOf(text).some((w) => CREATE_WORDS.has(w));
}

/** True when a path parameter names an id the platform assigns (`id`, `{volume_id}`, `{groupId}`, `{uuid}`). */
export function looksAssigned(param: string): boolean {
  const words = wordsOf(param);
  const last = words.at(-1);
  return last === 'id' || last === 'uuid' || last === 'guid';
}

/**
 * The create of a collection that has a GET and no POST: the PUT or POST of one of its item paths
 * (with GET and DELETE) that says it creates. A string is why there is none, for `inspect`.
 */
export function itemCreateChoice(
  collectionPath: string,
  itemPaths: readonly string[],
  paths: Readonly<Record<string, Record<string, unknown>>>,
  /**
   * The collection has a list GET: an item path without a GET of its own is read from the list
   * (read-by-list.ts), so it is complete with a DELETE alone (Azure's `/tagNames/{tagName}`).
   */
  listable = false,
): ItemCreateChoice | string {
  const noPost = `no POST on ${collectionPath}: Tend cannot create these objects`;
  const complete = itemPaths.filter(
    (p) => (listable || isObject(paths[p]?.['get'])) && isObject(paths[p]?.['delete']),
  );
  for (const itemPath of complete) {
    const item = paths[itemPath]!;
    const param = lastParam(itemPath);
    const offered = (['post', 'put'] as const).filter((m) => isObject(item[m]));
    if (param === undefined || offered.length === 0) continue;
    const creating = offered.find((m) => saysCreate(item[m] as Record<string, unknown>));
    if (creating === undefined) {
      const ops = offered.map((m) => `${m.toUpperCase()} ${itemPath}`).join(' or ');
      return `${noPost}, and ${ops} does not say it creates (its operationId or summary); if it does, declare it with x-tend-type and x-tend-op: create`;
    }
    if (looksAssigned(param)) {
      return `${noPost}; ${creating.toUpperCase()} ${itemPath} creates, but {${param}} looks like an id the platform assigns, not a name its creator chooses; if the creator names it, declare the operation with x-tend-type and x-tend-op: create`;
    }
    return {
      itemPath,
      method: creating === 'put' ? 'PUT' : 'POST',
      operation: item[creating] as Record<string, unknown>,
    };
  }
  return complete.length === 0 ? noPost : `${noPost}, nor a PUT or POST on ${complete[0]}`;
}

/**
 * The collection path item with the item path's creating operation as its POST (a copy, so that the
 * same operation as the item's update keeps its own place), recorded where it really is.
 */
export function withItemCreate(
  collection: Record<string, unknown>,
  choice: ItemCreateChoice,
  realOf: WeakMap<object, RealOperation>,
): Record<string, unknown> {
  const op = { ...choice.operation };
  const real = realOf.get(choice.operation);
  realOf.set(op, {
    method: real?.method ?? choice.method,
    path: real?.path ?? choice.itemPath,
    source: 'inferred: creates the object at its own address (the collection has no POST)',
  });
  return { ...collection, post: op };
}

/**
 * True when a type's create (as `realOf` places it) is a PUT or POST on the type's own item path:
 * inferred by `itemCreateChoice`, or declared with `x-tend-op: create` on the item path. The item
 * path may be one whose API version segment was merged away (`POST /v2/secrets/{name}` creates at
 * `/secrets/{idOrName}`, path-pairing.ts `mergeVersions`), and the create may name the parameter
 * otherwise (`keyParamOf`).
 */
export function createdAtItem(real: RealOperation | undefined, itemPath: string): boolean {
  if (real === undefined || (real.method !== 'PUT' && real.method !== 'POST')) return false;
  const item = shapeOf(itemPath);
  const at = shapeOf(real.path);
  return at === item || at.replace(/^\/v\d+(?=\/)/, '') === item;
}

/**
 * The parameter a type created at its item path is keyed by: the create's own last path parameter
 * (`{name}` of `POST /v2/secrets/{name}`), which the read and delete may call otherwise
 * (`{idOrName}`, declared so by an overlay that pairs them); the item path's when the create has
 * none.
 */
export function keyParamOf(real: RealOperation | undefined, itemPath: string): string {
  return (real !== undefined ? lastParam(real.path) : undefined) ?? lastParam(itemPath) ?? '';
}

/** An identity as derive-types infers it. */
export interface IdentityLike {
  readonly identity: IdentityStrategy | null;
  readonly reason?: string;
  readonly naturalKeys?: readonly string[];
  readonly idempotencyKey: boolean;
  readonly why?: string;
}

/**
 * The identity of a type created at its own item path. Inference makes `{p}` (a required field of
 * the create body, see withItemKey) the natural key; it holds when listed objects carry the value
 * (`keyField`), and then a second create names the same object. Without such a field a listed object
 * could not be matched to the declared one: no identity, and what to declare. An identity the
 * overlay declares is kept as it is.
 */
export function itemCreateIdentity(
  inferred: IdentityLike,
  at: {
    readonly idParam: string;
    readonly itemPath: string;
    readonly method: string;
    readonly keyField: string | undefined;
    /** Set for a singleton: the owners' list it is read along. */
    readonly ownersPath?: string;
  },
): IdentityLike {
  const byParam =
    inferred.identity === 'natural-key' &&
    inferred.naturalKeys?.length === 1 &&
    inferred.naturalKeys[0] === at.idParam &&
    !(inferred.why ?? '').includes('declared with x-tend-identity');
  if (!byParam) return inferred;
  if (at.ownersPath !== undefined) {
    return {
      ...inferred,
      why: `natural key ${at.idParam}: one object per {${at.idParam}}, created and replaced by ${at.method} ${at.itemPath} and read there for every item of GET ${at.ownersPath} (its ${at.keyField ?? at.idParam}); a second create writes the same object`,
    };
  }
  const creates = `${at.method} ${at.itemPath} creates the object at the address its creator names ({${at.idParam}})`;
  if (at.keyField === undefined) {
    const reason = `${creates}, but the objects its GET returns have no field holding {${at.idParam}}, so a listed object could not be matched to a declared one; name the field with x-tend-id-field on the read schema`;
    return {
      identity: null,
      reason,
      idempotencyKey: inferred.idempotencyKey,
      why: `none: ${reason}`,
    };
  }
  return {
    ...inferred,
    why: `natural key ${at.idParam}: ${creates}, so a second create names the same object; listed objects carry it in ${at.keyField}`,
  };
}

/** A path with its parameter names erased (`/a/{x}` and `/a/{y}` compare equal). */
function shapeOf(path: string): string {
  return (
    '/' +
    path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => (/^\{[^{}]+\}$/.test(s) ? '{}' : s))
      .join('/')
  );
}

/**
 * A singleton sub-resource: a path `/owners/{owner}/thing` (its last segment a name, the one before a
 * parameter, the one before that a name) with GET answering an object, PUT and DELETE, no POST and
 * nothing below it, whose owners are listed by `GET /owners`. There is one object per owner, created
 * and replaced by PUT at its fixed address and removed by DELETE: its key is the owner's, and a
 * second create writes the same object. Undefined when the path is not one; a string when it is, but
 * the owners' list carries no field holding the owner's key (`ownerIdField` is the id field of a
 * type whose item path is the owner's, when one is managed).
 */
export function singletonChoice(
  path: string,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  ownerIdField: (ownerPath: string) => string | undefined,
  nameLike: readonly string[],
): SingletonChoice | string | undefined {
  const item = paths[path];
  const segments = path.split('/').filter((x) => x !== '');
  const [ownersName, owner, last] = segments.slice(-3);
  if (item === undefined || segments.length < 3 || isParam(last!) || isParam(ownersName!)) {
    return undefined;
  }
  if (!isParam(owner!)) return undefined;
  const get = item['get'];
  if (
    !isObject(get) ||
    !isObject(item['put']) ||
    !isObject(item['delete']) ||
    isObject(item['post'])
  ) {
    return undefined;
  }
  // A 204 says whether the switch is on (a vote, a star), not a state to declare.
  const codes = isObject(get['responses']) ? Object.keys(get['responses']) : [];
  if (!codes.some((c) => c === '200' || c.toUpperCase() === '2XX')) return undefined;
  const answer = successSchema(get);
  if (!hasType(answer, 'object') && Object.keys(objectView(answer).properties).length === 0) {
    return undefined; // an on/off switch (204 or no body), not a state to declare
  }
  const param = owner!.slice(1, -1);
  const ownersPath = '/' + segments.slice(0, -2).join('/');
  const ownersList = paths[ownersPath]?.['get'];
  if (!isObject(ownersList)) return undefined;
  const known = ownerIdField(`${ownersPath}/{${param}}`);
  const listed = listItemSchema(successSchema(ownersList), ownersName!);
  const ownerKey =
    known ?? keyFieldInRead(param, objectView(listed), nameLike, paramDescription(get, param));
  if (ownerKey === undefined) {
    return `GET, PUT and DELETE on ${path}: one object per {${param}}, but the items of GET ${ownersPath} have no field holding {${param}}, so Tend cannot list them; name the field with x-tend-id-field`;
  }
  return { path, ownersPath, param, ownerKey, ownersList };
}

/**
 * The singleton's path item as a collection: its PUT as the create (a copy, recorded where it is),
 * and the owners' list GET as its list (a copy, recorded where it is and why).
 */
export function withSingleton(
  collection: Record<string, unknown>,
  single: SingletonChoice,
  realOf: WeakMap<object, RealOperation>,
): Record<string, unknown> {
  const put = { ...(collection['put'] as Record<string, unknown>) };
  realOf.set(put, {
    method: 'PUT',
    path: single.path,
    source: `inferred: one object per {${single.param}}, created and replaced at its fixed address`,
  });
  const list = { ...single.ownersList };
  const real = realOf.get(single.ownersList);
  realOf.set(list, {
    method: 'GET',
    path: real?.path ?? single.ownersPath,
    source: `inferred: the object of every item listed (its ${single.ownerKey}), read at ${single.path}`,
  });
  return { ...collection, get: list, post: put };
}

/** The schema of one item of a list answer (a bare array, or an array in an envelope). */
function listItemSchema(schema: unknown, typeName: string): unknown {
  if (hasType(schema, 'array') || (isObject(schema) && isObject(schema['items']))) {
    return isObject(schema) ? schema['items'] : undefined;
  }
  const field = inferListEnvelope(schema, typeName);
  const inner = field === undefined ? undefined : schemaAtPath(schema, field);
  return isObject(inner) ? inner['items'] : undefined;
}

/** The description of a path parameter of an operation. */
function paramDescription(op: Record<string, unknown>, name: string): string | undefined {
  const list = op['parameters'];
  if (!Array.isArray(list)) return undefined;
  for (const p of list) {
    if (
      isObject(p) &&
      p['in'] === 'path' &&
      p['name'] === name &&
      typeof p['description'] === 'string'
    ) {
      return p['description'];
    }
  }
  return undefined;
}

function isParam(segment: string): boolean {
  return /^\{[^{}]+\}$/.test(segment);
}

/** The last path parameter of a path (`/x/{name}` → name). */
export function lastParam(path: string): string | undefined {
  const all = [...path.matchAll(/\{([^{}]+)\}/g)];
  return all.at(-1)?.[1];
}

/**
 * The create schema with the item path parameter as a required field (first), unless the body has
 * it already (then it is only made required). A create without a JSON body is an empty object.
 */
export function withItemKey(
  schema: JsonSchema | undefined,
  param: string,
  itemPath: string,
): { schema: JsonSchema; inBody: boolean } {
  const base: JsonSchema = isObject(schema) ? schema : { type: 'object', properties: {} };
  const props = isObject(base['properties']) ? base['properties'] : {};
  const required = Array.isArray(base['required']) ? (base['required'] as string[]) : [];
  const inBody = Object.hasOwn(props, param);
  const key = {
    type: 'string',
    description: `The object's own name, chosen by you: it is created at ${itemPath} with this value as {${param}}`,
  };
  return {
    schema: {
      ...base,
      properties: inBody ? props : { [param]: key, ...props },
      required: required.includes(param) ? required : [param, ...required],
    },
    inBody,
  };
}

/**
 * Words for an account's handle, the name its owner signs in with and the one a `{username}`
 * parameter takes. An account's `name` is something else: the name it displays ("Octo Cat").
 */
const HANDLE_WORDS = ['username', 'login', 'handle'] as const;

/** A name without case and punctuation: `user_name`, `userName` and `username` are one. */
function flat(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * The field of a read object holding an item path parameter's value: a field named like the
 * parameter (but for case and punctuation: `user_name` for `{username}`); for an account's handle
 * (`{username}`, `{target_login}`), a field holding one (`username`, `login`, `handle`, in that
 * order), never the display `name` that `{username}` ends with; else the name-like field the
 * parameter is named after, the longest such word first (`name` for `{environment_name}` and
 * `{resourceGroupName}`, `username` for `{target_username}`); else the one its description names
 * ("The name of the branch.", "The handle for the user account."). Undefined when the read object
 * carries none: a listed object could then not be matched to a declared one.
 */
export function keyFieldInRead(
  param: string,
  read: ObjectView,
  nameLike: readonly string[],
  description?: string,
): string | undefined {
  if (Object.hasOwn(read.properties, param)) return param;
  const fields = Object.keys(read.properties);
  const fieldNamed = (n: string) => fields.find((f) => flat(f) === n);
  const handleField = () => HANDLE_WORDS.map(fieldNamed).find((f): f is string => f !== undefined);
  const p = flat(param);
  const same = fieldNamed(p);
  if (same !== undefined) return same;
  if (HANDLE_WORDS.some((w) => p.endsWith(w))) {
    const handle = handleField();
    if (handle !== undefined) return handle;
  }
  // The longest word first: {target_username} is named after username, not after name.
  const words = nameLike
    .filter((n) => p.endsWith(n) && p !== n)
    .sort((a, b) => b.length - a.length);
  for (const n of words) {
    const field = fieldNamed(n);
    if (field !== undefined) return field;
  }
  // Described as one ("The name of the branch."): the words before it name what it is of.
  const said = /^\s*(?:the\s+)?(\w+)\s+(?:of|for)\b/i.exec(description ?? '')?.[1]?.toLowerCase();
  if (said === undefined) return undefined;
  if ((HANDLE_WORDS as readonly string[]).includes(said)) return handleField();
  return nameLike.includes(said) ? fieldNamed(said) : undefined;
}

/**
 * Where the value of a path parameter above the item comes from: a fixed value for every object
 * (`x-tend-parent-values`, e.g. PowerDNS's `server_id: localhost`), or the id of an object of another
 * type (a declared field of the same name, written in intent as a reference to the parent).
 */
export type PathParam =
  | { readonly kind: 'fixed'; readonly param: string; readonly value: string }
  | { readonly kind: 'parent'; readonly param: string; readonly type: string }
  /**
   * A parameter above the item that is neither fixed nor the id of a type Tend manages (Keycloak's
   * `{realm}` when realms are not managed): its value comes from the Provider document's
   * `parameters:`, one per provider instance. Until it has one, the type cannot be called.
   */
  | { readonly kind: 'provider'; readonly param: string };

/** How a child type keeps its parent's path parameters apart from the fields of its create body. */
export interface SettledParents {
  /** The path parameters, a renamed parent's under its new field name. */
  readonly params: readonly PathParam[];
  /** Renamed parent fields: declared field → the path parameter it fills. */
  readonly aliases: Readonly<Record<string, string>>;
  /** Parent fields the create body has too, sent in it with the parent's value. */
  readonly inBody: readonly string[];
  /** What was decided, for inspect (one line per parameter). */
  readonly notes: readonly string[];
}

/**
 * Settles a clash between a parent path parameter and a field of the child's create body (`id` in
 * Keycloak's `/{realm}/clients/{id}/roles`, `name` in LXD's `/1.0/instances/{name}/snapshots`,
 * `site_id` in Netlify's `/sites/{site_id}/snippets`). The field is the parent's value when its name
 * contains the parent's (singular) collection name (`site_id` under `/sites/…`): the parent field
 * is sent in the body too. It is the child's own when it is a generic own name (`id`, `name`, …):
 * the parent's field is renamed `<parent>_<param>` (`client_id`, `instance_name`), or
 * `parent_<param>` if that is taken. Otherwise the two cannot be told apart: a string says why.
 */
export function settleParentClash(
  collectionPath: string,
  params: readonly PathParam[],
  bodyFields: readonly string[],
): SettledParents | string {
  const taken = new Set([...bodyFields, ...params.map((p) => p.param)]);
  const aliases: Record<string, string> = {};
  const inBody: string[] = [];
  const notes: string[] = [];
  const out: PathParam[] = [];
  const segments = collectionPath.split('/').filter((s) => s !== '');
  for (const p of params) {
    if (p.kind !== 'parent' || !bodyFields.includes(p.param)) {
      out.push(p);
      continue;
    }
    const at = segments.indexOf(`{${p.param}}`);
    const collection = at > 0 ? segments[at - 1]! : '';
    // `storage-pools` → storage_pool (for the new name), storagepool (to compare).
    const parentName = snake(singular(collection.toLowerCase()));
    const parentFlat = parentName.replace(/_/g, '');
    const flat = p.param.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (parentFlat !== '' && flat !== parentFlat && flat.includes(parentFlat)) {
      inBody.push(p.param);
      notes.push(
        `${p.param}: the create body's ${p.param} is named after the parent (${collection}), so it is the parent's id, sent in the path and the body`,
      );
      out.push(p);
      continue;
    }
    if (!OWN_NAMES.has(flat) || /\{/.test(collection) || parentName === '') {
      return `the create body of ${collectionPath} has a field ${p.param}, which is also the path parameter {${p.param}} naming the parent; Tend cannot tell them apart (the field's name is neither the child's own, like id or name, nor named after the parent)`;
    }
    const field = [`${snake(parentName)}_${p.param}`, `parent_${p.param}`].find(
      (f) => !taken.has(f),
    );
    if (field === undefined) {
      return `the create body of ${collectionPath} has a field ${p.param}, which is also the path parameter {${p.param}} naming the parent, and the names for the parent's field (${snake(parentName)}_${p.param}, parent_${p.param}) are taken; Tend cannot tell them apart`;
    }
    taken.add(field);
    setKey(aliases, field, p.param);
    notes.push(
      `${field}: the parent's {${p.param}}, renamed because the create body's ${p.param} is the object's own`,
    );
    out.push({ ...p, param: field });
  }
  return { params: out, aliases, inBody, notes };
}

/** A collection name made singular, plainly (`sites` → site, `policies` → policy). */
function singular(word: string): string {
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ss')) return word;
  if (word.endsWith('s') && word.length > 1) return word.slice(0, -1);
  return word;
}

function snake(word: string): string {
  return word.replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}
