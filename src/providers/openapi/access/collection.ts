import type { ObservedObject, WriteContext } from '../../../core/index.js';
import { TendError, canonicalJson, ownValue, setKey, valueAtKeyPath } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { isAbsent } from '../fields/object-annotations.js';
import { isObject, objectView } from '../fields/schema-view.js';
import { withMarker } from '../marker-values.js';
import type { Scope } from '../object-ids.js';
import { composeId, fillPath, fixedScope, splitId } from '../object-ids.js';
import { splitCreate } from '../shapes/create-query.js';
import { unwrap } from '../shapes/envelope.js';
import { wrapRequest } from '../shapes/request-envelope.js';
import { actorHeaders } from '../transport/actor-headers.js';
import type { HttpResponse } from '../transport/http-client.js';
import {
  carrying,
  checkRequired,
  idOf,
  locationId,
  observed,
  scalarId,
  unwrapAnswer,
} from './answers.js';
import { comparable } from './comparable.js';
import type { AccessContext, ShapeAccess } from './context.js';
import { parentOf } from './context.js';
import { listAllPages, readRaw } from './reads.js';
import {
  aliased,
  bodyOf,
  deleteOperation,
  fillAddressedPath,
  fillItemPath,
  onlyUpdateFields,
  refusalWithHint,
  scopeOfDesired,
  writableOf,
} from './requests.js';

// The ordinary shape: a collection with items, top-level or nested under parents (their ids come
// from the object id, or from the desired spec's parent fields on create). Listed per scope, read
// at the item path, created at the collection (or at the object's own address), changed by its PUT
// or PATCH, deleted by its DELETE.

/** Every scope objects of a type may live in: one per object of its (innermost) parent. */
export async function scopes(
  ctx: AccessContext,
  t: DerivedType,
  signal?: AbortSignal,
): Promise<Map<string, string>[]> {
  const last = [...t.params].reverse().find((p) => p.kind === 'parent');
  if (last === undefined) return [fixedScope(t)];
  const parent = parentOf(ctx, t);
  // Only the parents' ids are needed: no item reads for fields their list leaves out.
  const parents = await listCollection(ctx, parent, signal, false);
  return parents.map((p) => {
    const { scope: outer, own } = splitId(parent, p.id);
    // The parent's scope, plus the fixed values of parameters below the parent
    // (`/features/{featureName}/environments/{environment}/strategies`).
    const scope = fixedScope(t);
    for (const [k, v] of outer) scope.set(k, v);
    scope.set(last.param, own[0]!);
    return scope;
  });
}

/**
 * Every page of the type's list in each of its scopes (per parent); a parent that went away
 * between listing it and listing its children (404) has nothing there.
 */
export async function listPerScope(
  ctx: AccessContext,
  t: DerivedType,
  signal?: AbortSignal,
): Promise<{ scope: Scope; items: unknown[] }[]> {
  const out: { scope: Scope; items: unknown[] }[] = [];
  for (const scope of await scopes(ctx, t, signal)) {
    try {
      out.push({ scope, items: await listAllPages(ctx, t, scope, signal) });
    } catch (e) {
      if (e instanceof TendError && e.code === 'http.not_found' && t.parentFields.length > 0) {
        continue;
      }
      throw e;
    }
  }
  return out;
}

/**
 * Every object of a collection type, in every scope; `complete` reads an object whose list entry
 * leaves out a compared field (completeFromItem), off when only the ids are needed.
 */
export async function listCollection(
  ctx: AccessContext,
  t: DerivedType,
  signal?: AbortSignal,
  complete = true,
): Promise<ObservedObject[]> {
  const out: ObservedObject[] = [];
  for (const { scope, items } of await listPerScope(ctx, t, signal)) {
    // An entry without an id cannot be addressed; it is not something Tend can manage.
    const objects = await Promise.all(
      items
        .filter(isObject)
        .filter((item) => !isAbsent(t.absentWhen, item))
        .map((item) =>
          complete ? completeFromItem(ctx, t, item, scope, signal) : Promise.resolve(item),
        ),
    );
    for (const item of objects) {
      if (item === undefined || isAbsent(t.absentWhen, item)) continue;
      const o = observed(ctx, t, item, scope);
      if (o) out.push(o);
    }
  }
  return out;
}

/**
 * A listed object with the fields its list entry leaves out read from its item endpoint: when a
 * field Tend compares (declared in the type's schema, and in the item GET's) is absent from the
 * entry — PowerDNS lists zones without `soa_edit_api`, `api_rectify`, … — the object is read once,
 * and the read wins. Entries that carry every such field, or no id, are returned as they are;
 * undefined when the object went away between the list and the read.
 */
async function completeFromItem(
  ctx: AccessContext,
  t: DerivedType,
  item: Record<string, unknown>,
  scope: Scope,
  signal?: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  // Read from the list, the entry is all there is: no read per entry (a list each).
  if (t.readByList !== undefined) return item;
  const fields = itemOnlyCandidates(t);
  if (fields.length === 0 || fields.every((f) => ownValue(item, f) !== undefined)) return item;
  const own = t.itemKey
    ? t.itemKey.map((k) => scalarId(valueAtKeyPath(item, k.field)))
    : [idOf(t, item)];
  if (!own.every((v): v is string => v !== undefined)) return item;
  const got = await readRaw(ctx, t, scope, own, signal);
  if (got === undefined) return undefined;
  return { ...item, ...got.body };
}

const candidatesOf = new WeakMap<DerivedType, readonly string[]>();

/**
 * The fields of a type a listed object must carry to be compared: those of its desired schema that
 * Tend compares (not write-only, server-owned, secret, output-only, a parent's or a sub-collection's)
 * and that its item GET returns. Computed once per type.
 */
export function itemOnlyCandidates(t: DerivedType): readonly string[] {
  const known = candidatesOf.get(t);
  if (known !== undefined) return known;
  const readable = objectView(t.readSchema).properties;
  const skip = new Set([
    ...t.writeOnly,
    ...t.serverOwned,
    ...t.info.sensitive,
    ...t.info.outputOnly,
    ...t.parentFields,
    ...t.embeddedFields,
  ]);
  const out = Object.keys(objectView(t.info.schema).properties).filter(
    (f) => !skip.has(f) && Object.hasOwn(readable, f),
  );
  candidatesOf.set(t, out);
  return out;
}

/** One object by id, read at its address (singletons are read the same way). */
export async function readCollection(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  signal?: AbortSignal,
): Promise<ObservedObject | undefined> {
  const { scope, own } = splitId(t, id);
  const got = await readRaw(ctx, t, scope, own, signal);
  if (got === undefined) return undefined;
  checkRequired(ctx, t, `GET ${t.itemPath}`, got.body);
  return observed(ctx, t, got.body, scope, own, got.etag);
}

/** Finds an object by its natural key among the objects of its scope. */
async function findByKey(
  ctx: AccessContext,
  t: DerivedType,
  desired: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<ObservedObject | undefined> {
  if (t.keyFields.length === 0) return undefined;
  const all = await ctx.list(t, signal);
  const same = (o: ObservedObject) =>
    t.keyFields.every(
      (k) =>
        canonicalJson(comparable(ctx.now, t, k, valueAtKeyPath(o.fields, k))) ===
        canonicalJson(comparable(ctx.now, t, k, valueAtKeyPath(desired, k))),
    );
  return all.find(same);
}

/**
 * Sends a create, at the collection or at the object's own address alike: the fields the create
 * takes in its query string, and an array body, go apart from the rest (create-query.ts); the
 * rest is the body, in its envelope. A create that takes no body sends none. It carries the
 * actor's headers, and the idempotency key where the type sends one.
 */
function sendCreate(
  ctx: AccessContext,
  t: DerivedType,
  path: string,
  fields: Record<string, unknown>,
  wctx: WriteContext,
): Promise<HttpResponse> {
  const op = t.operations.create;
  const headers = actorHeaders(wctx.actor);
  if (wctx.idempotencyKey !== undefined && t.idempotencyHeader !== undefined) {
    setKey(headers, t.idempotencyHeader, wctx.idempotencyKey);
  }
  const sent = splitCreate(t.createQuery, fields);
  return ctx.http.request({
    method: op.method,
    path,
    ...(sent.query !== undefined ? { query: sent.query } : {}),
    ...(sent.body !== undefined
      ? {
          body:
            t.createQuery?.bodyField !== undefined
              ? sent.body
              : wrapRequest(sent.body as Record<string, unknown>, t.requestEnvelope?.create),
        }
      : {}),
    ...(op.contentType ? { contentType: op.contentType } : {}),
    headers,
    ...(wctx.signal ? { signal: wctx.signal } : {}),
    ...(wctx.fence ? { fence: wctx.fence } : {}),
  });
}

/**
 * Creates an object at its collection. The object is the answer when it carries an id; else it is
 * read back by the id the create chose (natural key, answered id field, `Location`); else found by
 * its marker or natural key; else the outcome is unknown and the journal will look it up.
 */
async function createInCollection(
  ctx: AccessContext,
  t: DerivedType,
  desired: Record<string, unknown>,
  wctx: WriteContext,
): Promise<ObservedObject> {
  const scope = scopeOfDesired(t, desired);
  const body = withMarker(t, bodyOf(t, desired), undefined, wctx.marker);
  const path = fillPath(t.operations.create.path, withScopeFields(t, aliased(t, scope), desired));
  const r = await sendCreate(ctx, t, path, body, wctx);
  // The object's own key (the last key field, when one field is its whole own key).
  const nk = t.keyFields.length === t.parentFields.length + 1 ? t.keyFields.at(-1) : undefined;
  const naturalId =
    nk !== undefined && t.info.idField === nk && valueAtKeyPath(body, nk) !== undefined
      ? scalarId(valueAtKeyPath(body, nk))
      : undefined;
  const createAnswer = unwrapAnswer(
    ctx,
    t,
    t.envelope?.create,
    r.body,
    `${t.operations.create.method} ${t.operations.create.path}`,
  );
  const answeredId =
    t.createIdField !== undefined && isObject(createAnswer)
      ? scalarId(createAnswer[t.createIdField])
      : undefined;
  // Addressed by several parameters: the key's values, which the create chose.
  const keyed = t.itemKey?.map((k) => scalarId(body[k.field]));
  const ownKey = keyed?.every((v): v is string => v !== undefined) ? keyed : undefined;
  const ownId = naturalId ?? answeredId ?? locationId(r.headers.get('location'));
  const answered = isObject(createAnswer) ? observed(ctx, t, createAnswer, scope) : undefined;
  const created =
    answered ??
    (ownKey !== undefined || ownId !== undefined
      ? await readBack(
          ctx,
          t,
          composeId(t, scope, ownKey ?? [ownId!]),
          scope,
          body,
          r.body,
          wctx.signal,
        )
      : undefined) ??
    (wctx.marker && t.info.markerField
      ? carrying(await ctx.list(t, wctx.signal), wctx.marker)
      : undefined) ??
    (await findByKey(ctx, t, desired, wctx.signal));
  if (created) return created;
  throw new TendError(
    'provider.create_unconfirmed',
    `POST ${path} succeeded but answered with no object carrying ${t.info.idField}, and the object could not be found; the journal will look it up`,
    { outcomeUnknown: true, retryable: true },
  );
}

/**
 * The scope with the create's path parameters the collection lacks, from the object's fields
 * (`{team}` of `POST /teams/{team}/widgets`: create-query.ts `pathFields`).
 */
function withScopeFields(t: DerivedType, scope: Scope, desired: Record<string, unknown>): Scope {
  const fields = t.createQuery?.pathFields ?? [];
  if (fields.length === 0) return scope;
  const out = new Map(scope);
  for (const f of fields) {
    const v = desired[f.field];
    if (typeof v !== 'string' && typeof v !== 'number') {
      throw new TendError(
        'provider.missing_key',
        `${t.info.name}: ${t.operations.create.method} ${t.operations.create.path} takes {${f.param}} from the field ${f.field}, and the spec ${v === undefined ? 'does not declare it' : `has ${JSON.stringify(v)} there`}; declare ${f.field}`,
      );
    }
    out.set(f.param, String(v));
  }
  return out;
}

/**
 * Creates an object at its own item path (`PUT /environments/{environment_name}`): the declared
 * key fills the path's last parameter, the rest is the body. The answer is taken as the object only
 * when it carries that key (a PUT may answer with something else: an invitation, an empty `{}`);
 * otherwise the object is read back from the same address.
 */
async function createAtItem(
  ctx: AccessContext,
  t: DerivedType,
  desired: Record<string, unknown>,
  wctx: WriteContext,
): Promise<ObservedObject> {
  const at = t.createAtItem!;
  const scope = scopeOfDesired(t, desired);
  const key = scalarId(desired[at.param]);
  if (key === undefined) {
    throw new TendError(
      'provider.missing_key',
      `${t.info.name} objects are created at ${t.itemPath}: declare ${at.param}, the name the object is created under`,
    );
  }
  const op = t.operations.create;
  const path = fillItemPath(op.path, aliased(t, scope), key);
  const body = withMarker(t, bodyOf(t, desired), undefined, wctx.marker);
  const r = await sendCreate(ctx, t, path, body, wctx);
  const id = composeId(t, scope, [key]);
  const answer = unwrapAnswer(ctx, t, t.envelope?.create, r.body, `${op.method} ${op.path}`);
  const answered =
    isObject(answer) && idOf(t, answer) === key ? observed(ctx, t, answer, scope) : undefined;
  return answered ?? readBack(ctx, t, id, scope, body, undefined, wctx.signal);
}

/**
 * What a write leads to when its answer is not the object: a read-back by id, or, for an
 * eventually consistent API that does not show the object yet, what was sent and answered.
 */
async function readBack(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  scope: Scope,
  sent: Record<string, unknown>,
  answer: unknown,
  signal?: AbortSignal,
): Promise<ObservedObject> {
  const again = await readCollection(ctx, t, id, signal);
  if (again) return again;
  const { own } = splitId(t, id);
  return observed(ctx, t, { ...sent, ...(isObject(answer) ? answer : {}) }, scope, own)!;
}

/**
 * Changes an object in place by the type's PUT or PATCH (at its item path, or at the address its
 * fields give it): a PATCH, or a partial update, sends the declared fields; a PUT sends them over
 * the writable fields as last observed.
 */
async function updateInCollection(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  desired: Record<string, unknown>,
  current: ObservedObject,
  wctx: WriteContext,
): Promise<ObservedObject> {
  const op = t.operations.update;
  if (!op) {
    throw new TendError(
      'provider.no_update',
      `${t.info.name} objects cannot change in place: the API has no PUT or PATCH on ${(t.operations.delete ?? t.operations.read).path}; the change needs a replacement`,
    );
  }
  const { scope, own } = splitId(t, id);
  const path =
    op.addressedBy !== undefined
      ? fillAddressedPath(t, op, aliased(t, scope), id, current)
      : fillItemPath(op.path, aliased(t, scope), own);
  const sent = onlyUpdateFields(t, bodyOf(t, desired));
  const body =
    op.method === 'PATCH' || t.partialUpdate
      ? withMarker(t, sent, current, wctx.marker)
      : withMarker(t, { ...writableOf(t, current.fields), ...sent }, current, wctx.marker);
  let r;
  try {
    r = await ctx.http.request({
      method: op.method,
      path,
      body: wrapRequest(body, t.requestEnvelope?.update),
      ...(op.contentType ? { contentType: op.contentType } : {}),
      headers: actorHeaders(wctx.actor),
      ...(wctx.signal ? { signal: wctx.signal } : {}),
      ...(wctx.fence ? { fence: wctx.fence } : {}),
    });
  } catch (e) {
    throw refusalWithHint(e);
  }
  // The answer may carry a new id (PowerDNS renames a TSIG key in place and its id follows).
  const updateAnswer =
    t.envelope?.read !== undefined && isObject(unwrap(r.body, t.envelope.read))
      ? unwrap(r.body, t.envelope.read)
      : r.body;
  const answered = isObject(updateAnswer) ? observed(ctx, t, updateAnswer, scope) : undefined;
  return answered ?? readBack(ctx, t, id, scope, body, r.body, wctx.signal);
}

/** Deletes an object by the type's DELETE; one already gone (404) is deleted. */
async function removeFromCollection(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  wctx: WriteContext,
): Promise<void> {
  const { scope, own } = splitId(t, id);
  const op = deleteOperation(t);
  try {
    await ctx.http.request({
      method: op.method,
      path: fillItemPath(op.path, aliased(t, scope), own),
      headers: actorHeaders(wctx.actor),
      ...(wctx.signal ? { signal: wctx.signal } : {}),
      ...(wctx.fence ? { fence: wctx.fence } : {}),
    });
  } catch (e) {
    if (e instanceof TendError && e.code === 'http.not_found') return;
    throw e;
  }
}

/** The access of a collection with items (the create at its own address included). */
export const collection: ShapeAccess = {
  list: (ctx, t, signal) => listCollection(ctx, t, signal),
  read: readCollection,
  create: (ctx, t, desired, wctx) =>
    t.createAtItem
      ? createAtItem(ctx, t, desired, wctx)
      : createInCollection(ctx, t, desired, wctx),
  update: updateInCollection,
  remove: removeFromCollection,
};
