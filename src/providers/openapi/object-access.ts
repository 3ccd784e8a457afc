import type { Marker, ObservedObject, SecretRegistry, WriteContext } from '../../core/index.js';
import {
  TendError,
  canonicalJson,
  ownValue,
  setKey,
  toTendError,
  valueAtKeyPath,
} from '../../core/index.js';
import { actorHeaders } from './transport/actor-headers.js';
import type { Schedule } from './transport/group-commit.js';
import { GroupCommit, SharedCalls, abortReason } from './transport/group-commit.js';
import type { DerivedType, OperationRef } from './derive-types.js';
import type { HttpClient, HttpResponse } from './transport/http-client.js';
import { canonicalValue, normalizeValue, schemaAt } from './fields/normalize.js';
import type { Scope } from './object-ids.js';
import { composeId, fillPath, fixedScope, splitId } from './object-ids.js';
import { markerOf, withMarker, withoutMarkerAt } from './marker-values.js';
import { pastIsNow } from './fields/instants.js';
import { isAbsent } from './fields/object-annotations.js';
import { pickListed, pickListedByKey } from './shapes/read-by-list.js';
import { unwrap } from './shapes/envelope.js';
import { splitCreate } from './shapes/create-query.js';
import { wrapRequest } from './shapes/request-envelope.js';
import type { PageAnswer, PageRequest } from './shapes/pagination.js';
import { collectPages, pageUrlRequest } from './shapes/pagination.js';
import { isObject, objectView } from './fields/schema-view.js';

/** What object access needs: the HTTP client, the types (to reach parents), a warning sink. */
export interface ObjectAccessOptions {
  readonly http: HttpClient;
  /**
   * The endpoint the client's paths are relative to: next-page links (a `Link` header, a next URL
   * in the body) are followed only below it. Without it such links are refused.
   */
  readonly baseUrl?: string;
  readonly types: ReadonlyMap<string, DerivedType>;
  /** Records a disagreement between the platform and its document; called once per distinct message. */
  readonly warn: (message: string) => void;
  /** Where the values of secret fields the platform returns are registered (the redactor). */
  readonly secrets?: SecretRegistry;
  /** Unix milliseconds now, for `x-tend-normalize: past-is-now` (default Date.now). */
  readonly now?: () => number;
  /** When batched changes and shared reads start (default: the next turn of the event loop). */
  readonly schedule?: Schedule;
}

/**
 * The calls behind the provider verbs, for every kind of derived type: top-level collections,
 * collections nested under parents (their parent ids come from the object id, or from the desired
 * spec's parent fields on create), and sub-collections embedded in a parent and changed through the
 * parent's PATCH. Reads never mutate; writes send what was declared in its canonical spelling.
 */
export interface ObjectAccess {
  list(t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]>;
  read(t: DerivedType, id: string, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  create(
    t: DerivedType,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  update(
    t: DerivedType,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  remove(t: DerivedType, id: string, ctx: WriteContext): Promise<void>;
  /** The object carrying a marker (marker types only; undefined for others). */
  find(t: DerivedType, marker: Marker, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  /**
   * The comparable form of a declared or observed value at a dotted path of a type's object;
   * `object` is the whole object (declared spec or observed fields) when the caller has it, for
   * normalisations keyed by a sibling field.
   */
  normalize(
    t: DerivedType,
    path: string,
    value: unknown,
    object?: Readonly<Record<string, unknown>>,
  ): unknown;
}

const REPLACE_HINT =
  'if this change needs a replacement, declare the field create-only (x-tend-immutable) in an overlay; Tend never guesses a replace';

/** Creates the object access of one provider. */
export function createObjectAccess(options: ObjectAccessOptions): ObjectAccess {
  const { http, types } = options;
  const now = options.now ?? (() => Date.now());
  const warned = new Set<string>();
  const warn = (message: string): void => {
    if (warned.has(message)) return;
    warned.add(message);
    options.warn(message);
  };
  const parentReads = new SharedCalls<Record<string, unknown> | undefined>(options.schedule);
  const itemIndexes = new WeakMap<object, Map<string, Map<string, Record<string, unknown>>>>();

  const parentOf = (t: DerivedType): DerivedType => {
    const name = t.embedded?.parentType ?? t.info.parent?.type;
    const parent = name === undefined ? undefined : types.get(name);
    if (parent === undefined) {
      throw new TendError('provider.internal', `${t.info.name} has no parent type ${String(name)}`);
    }
    return parent;
  };

  /** Every scope objects of a type may live in: one per object of its (innermost) parent. */
  const scopes = async (t: DerivedType, signal?: AbortSignal): Promise<Map<string, string>[]> => {
    const last = [...t.params].reverse().find((p) => p.kind === 'parent');
    if (last === undefined) return [fixedScope(t)];
    const parent = parentOf(t);
    // Only the parents' ids are needed: no item reads for fields their list leaves out.
    const parents = await listRest(parent, signal, false);
    return parents.map((p) => {
      const { scope: outer, own } = splitId(parent, p.id);
      // The parent's scope, plus the fixed values of parameters below the parent
      // (`/features/{featureName}/environments/{environment}/strategies`).
      const scope = fixedScope(t);
      for (const [k, v] of outer) scope.set(k, v);
      scope.set(last.param, own[0]!);
      return scope;
    });
  };

  // --- observed objects --------------------------------------------------------------------------

  const checkRequired = (t: DerivedType, what: string, fields: Record<string, unknown>): void => {
    const skip = t.embedded?.op?.field;
    for (const r of objectView(t.readSchema).required) {
      if (r !== skip && fields[r] === undefined) {
        warn(
          `${t.info.name}: ${what} answered without ${r}, which the document marks required; tolerated`,
        );
      }
    }
  };

  /** An observed object from what the platform answered, in a scope; undefined without an id. */
  const observed = (
    t: DerivedType,
    fields: Record<string, unknown>,
    scope: Scope,
    fallbackOwn?: readonly string[],
    etag?: string,
  ): ObservedObject | undefined => {
    let own: string[] | undefined;
    if (t.embedded || t.itemKey) {
      // An embedded item's key fields are its own names; an item key's may be key paths.
      const key = t.embedded
        ? t.embedded.key.map((k) => scalarId(ownValue(fields, k)))
        : t.itemKey!.map((k) => scalarId(valueAtKeyPath(fields, k.field)));
      own = key.every((k): k is string => k !== undefined) ? key : undefined;
    } else {
      const id = idOf(t, fields);
      own = id !== undefined ? [id] : undefined;
    }
    own ??= fallbackOwn ? [...fallbackOwn] : undefined;
    if (own === undefined) return undefined;
    const id = composeId(t, scope, own);
    const marker = markerOf(t, fields);
    // Observed fields end up in the store and the ledger, where secrets never go: a sensitive field
    // is dropped even if the platform echoes it. An embedded sub-collection is another type's data.
    const kept: Record<string, unknown> = {};
    for (const f of t.parentFields) setKey(kept, f, scope.get(f));
    if (t.embedded && t.info.idField === 'id') kept['id'] = id;
    // Created at its own address: the declared key is the address, whatever field lists it.
    if (t.createAtItem && ownValue(fields, t.createAtItem.param) === undefined) {
      setKey(kept, t.createAtItem.param, own.at(-1));
    }
    for (const [k, v] of Object.entries(fields)) {
      if (t.info.sensitive.includes(k)) {
        options.secrets?.add(v);
        continue;
      }
      if (t.embeddedFields.includes(k)) continue;
      if (t.embedded?.op?.field === k) continue;
      setKey(kept, k, v, `the answer for ${t.info.name}`);
    }
    const version = versionOf(t, fields) ?? etag;
    return {
      type: t.info.name,
      id,
      fields: kept,
      ...(marker ? { marker } : {}),
      ...(version !== undefined ? { version } : {}),
    };
  };

  // --- top-level and nested collections ----------------------------------------------------------

  const readRaw = async (
    t: DerivedType,
    scope: Scope,
    own: string | readonly string[],
    signal?: AbortSignal,
  ): Promise<{ body: Record<string, unknown>; etag?: string } | undefined> => {
    if (t.readByList !== undefined) return readFromList(t, scope, own, signal);
    const path = fillItemPath(t.operations.read.path, aliased(t, scope), own);
    try {
      const r = await http.request({ method: 'GET', path, ...(signal ? { signal } : {}) });
      const answer = unwrapAnswer(t, t.envelope?.read, r.body, `GET ${t.operations.read.path}`);
      if (!isObject(answer)) throw badResponse(`GET ${path}`, 'an object', r.body);
      for (const f of t.absentWhenEmpty) if (isEmpty(answer[f])) return undefined;
      if (isAbsent(t.absentWhen, answer)) return undefined;
      const etag = r.headers.get('etag') ?? undefined;
      return { body: answer, ...(etag ? { etag } : {}) };
    } catch (e) {
      if (e instanceof TendError && e.code === 'http.not_found') return undefined;
      throw e;
    }
  };

  /**
   * One object of a type whose item path has no GET: the collection's list (every page, out of its
   * envelope), and the entry whose id field is the id; none, or no list (404), is absent.
   */
  const readFromList = async (
    t: DerivedType,
    scope: Scope,
    own: string | readonly string[],
    signal?: AbortSignal,
  ): Promise<{ body: Record<string, unknown> } | undefined> => {
    let items: unknown[];
    try {
      items = await listAllPages(t, scope, signal);
    } catch (e) {
      if (e instanceof TendError && e.code === 'http.not_found') return undefined;
      throw e;
    }
    const found = t.itemKey
      ? pickListedByKey(
          items,
          t.itemKey.map((k) => k.field),
          typeof own === 'string' ? [own] : own,
        )
      : pickListed(items, t.info.idField, typeof own === 'string' ? own : own[0]!);
    if (found === undefined) return undefined;
    for (const f of t.absentWhenEmpty) if (isEmpty(found[f])) return undefined;
    if (isAbsent(t.absentWhen, found)) return undefined;
    return { body: found };
  };

  const readRest = async (
    t: DerivedType,
    id: string,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> => {
    const { scope, own } = splitId(t, id);
    const got = await readRaw(t, scope, own, signal);
    if (got === undefined) return undefined;
    checkRequired(t, `GET ${t.itemPath}`, got.body);
    return observed(t, got.body, scope, own, got.etag);
  };

  /**
   * Every item of one list, across its pages (`t.pagination`, followed with its bound), each page
   * taken out of its envelope (`t.listShape`).
   */
  const listAllPages = async (
    t: DerivedType,
    scope: Scope,
    signal?: AbortSignal,
  ): Promise<unknown[]> => {
    const path = fillPath(t.operations.list.path, aliased(t, scope));
    const getPage = async (next: PageRequest | undefined): Promise<PageAnswer> => {
      let req: { path: string; query?: Record<string, string | number> } = { path };
      if (next?.kind === 'query') req = { path, query: { ...next.query } };
      else if (next?.kind === 'url') {
        if (options.baseUrl === undefined) {
          throw new TendError(
            'provider.internal',
            `listing ${t.info.name}: a next-page link, but no endpoint to check it against`,
          );
        }
        req = pageUrlRequest(t.info.name, next.url, options.baseUrl);
      }
      const r = await http.request({ method: 'GET', ...req, ...(signal ? { signal } : {}) });
      const items = listItems(t, r.body);
      if (items === undefined) throw badResponse(`GET ${req.path}`, 'a list of objects', r.body);
      return { items, body: r.body, headers: r.headers };
    };
    return collectPages(t.info.name, t.pagination, getPage);
  };

  /**
   * An answer out of its envelope (`{"server": {…}}` → the server). An answer without the declared
   * or inferred envelope is taken as it is (some platforms wrap only some answers), with a warning.
   */
  const unwrapAnswer = (
    t: DerivedType,
    field: string | undefined,
    body: unknown,
    what: string,
  ): unknown => {
    if (field === undefined || !isObject(body)) return body;
    const inner = unwrap(body, field);
    if (isObject(inner)) return inner;
    warn(
      `${t.info.name}: ${what} answered without the envelope ${field} the document leads Tend to expect; the answer is read as the object itself`,
    );
    return body;
  };

  /**
   * Every page of the type's list in each of its scopes (per parent); a parent that went away
   * between listing it and listing its children (404) has nothing there.
   */
  const listPerScope = async (
    t: DerivedType,
    signal?: AbortSignal,
  ): Promise<{ scope: Scope; items: unknown[] }[]> => {
    const out: { scope: Scope; items: unknown[] }[] = [];
    for (const scope of await scopes(t, signal)) {
      try {
        out.push({ scope, items: await listAllPages(t, scope, signal) });
      } catch (e) {
        if (e instanceof TendError && e.code === 'http.not_found' && t.parentFields.length > 0) {
          continue;
        }
        throw e;
      }
    }
    return out;
  };

  const listRest = async (
    t: DerivedType,
    signal?: AbortSignal,
    complete = true,
  ): Promise<ObservedObject[]> => {
    const out: ObservedObject[] = [];
    for (const { scope, items } of await listPerScope(t, signal)) {
      // An entry without an id cannot be addressed; it is not something Tend can manage.
      const objects = await Promise.all(
        items
          .filter(isObject)
          .filter((item) => !isAbsent(t.absentWhen, item))
          .map((item) =>
            complete ? completeFromItem(t, item, scope, signal) : Promise.resolve(item),
          ),
      );
      for (const item of objects) {
        if (item === undefined || isAbsent(t.absentWhen, item)) continue;
        const o = observed(t, item, scope);
        if (o) out.push(o);
      }
    }
    return out;
  };

  /**
   * The objects of a singleton type (one per owner at a fixed path, `/branches/{branch}/protection`):
   * the owners' list gives the keys, and each owner's object is read at its address; an owner
   * without one (404) has none.
   */
  const listSingletons = async (
    t: DerivedType,
    signal?: AbortSignal,
  ): Promise<ObservedObject[]> => {
    const out: ObservedObject[] = [];
    const ownerKey = t.singleton!.ownerKey;
    for (const { scope, items: owners } of await listPerScope(t, signal)) {
      const keys = owners
        .filter(isObject)
        .map((o) => scalarId(o[ownerKey]))
        .filter((k): k is string => k !== undefined);
      // Every owner is read at once (the client bounds concurrency).
      const read = await Promise.all(
        keys.map(async (key) => ({ key, got: await readRaw(t, scope, key, signal) })),
      );
      for (const { key, got } of read) {
        if (got === undefined) continue;
        const o = observed(t, got.body, scope, [key], got.etag);
        if (o) out.push(o);
      }
    }
    return out;
  };

  /**
   * A listed object with the fields its list entry leaves out read from its item endpoint: when a
   * field Tend compares (declared in the type's schema, and in the item GET's) is absent from the
   * entry — PowerDNS lists zones without `soa_edit_api`, `api_rectify`, … — the object is read once,
   * and the read wins. Entries that carry every such field, or no id, are returned as they are;
   * undefined when the object went away between the list and the read.
   */
  const completeFromItem = async (
    t: DerivedType,
    item: Record<string, unknown>,
    scope: Scope,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> => {
    // Read from the list, the entry is all there is: no read per entry (a list each).
    if (t.readByList !== undefined) return item;
    const fields = itemOnlyCandidates(t);
    if (fields.length === 0 || fields.every((f) => ownValue(item, f) !== undefined)) return item;
    const own = t.itemKey
      ? t.itemKey.map((k) => scalarId(valueAtKeyPath(item, k.field)))
      : [idOf(t, item)];
    if (!own.every((v): v is string => v !== undefined)) return item;
    const got = await readRaw(t, scope, own, signal);
    if (got === undefined) return undefined;
    return { ...item, ...got.body };
  };

  /** Finds an object by its natural key among the objects of its scope. */
  const findByKey = async (
    t: DerivedType,
    desired: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> => {
    if (t.keyFields.length === 0) return undefined;
    const all = await access.list(t, signal);
    const same = (o: ObservedObject) =>
      t.keyFields.every(
        (k) =>
          canonicalJson(access.normalize(t, k, valueAtKeyPath(o.fields, k))) ===
          canonicalJson(access.normalize(t, k, valueAtKeyPath(desired, k))),
      );
    return all.find(same);
  };

  /** The scope of a desired spec: fixed values, and parent ids from its parent fields. */
  const scopeOfDesired = (
    t: DerivedType,
    desired: Record<string, unknown>,
  ): Map<string, string> => {
    const scope = fixedScope(t);
    for (const f of t.parentFields) {
      const v = scalarId(desired[f]);
      if (v === undefined) {
        const parent = t.params.find((p) => p.param === f);
        const of = parent?.kind === 'parent' ? ` (the id of its ${parent.type} object)` : '';
        throw new TendError(
          'provider.missing_parent',
          `${t.info.name} needs ${f}${of} to know where the object lives; declare it, usually as a reference`,
        );
      }
      scope.set(f, v);
    }
    return scope;
  };

  /** A desired spec as sent: canonical spelling, without parent fields and server-owned fields. */
  const bodyOf = (t: DerivedType, desired: Record<string, unknown>): Record<string, unknown> => {
    const canon = canonicalValue(t.info.schema, desired) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(canon)) {
      if (t.serverOwned.includes(k) || !inBody(t, k)) continue;
      setKey(out, k, v);
    }
    return out;
  };

  /**
   * Sends a create, at the collection or at the object's own address alike: the fields the create
   * takes in its query string, and an array body, go apart from the rest (create-query.ts); the
   * rest is the body, in its envelope. A create that takes no body sends none. It carries the
   * actor's headers, and the idempotency key where the type sends one.
   */
  const sendCreate = (
    t: DerivedType,
    path: string,
    fields: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<HttpResponse> => {
    const op = t.operations.create;
    const headers = actorHeaders(ctx.actor);
    if (ctx.idempotencyKey !== undefined && t.idempotencyHeader !== undefined) {
      setKey(headers, t.idempotencyHeader, ctx.idempotencyKey);
    }
    const sent = splitCreate(t.createQuery, fields);
    return http.request({
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
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  };

  const createRest = async (
    t: DerivedType,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
    const scope = scopeOfDesired(t, desired);
    const body = withMarker(t, bodyOf(t, desired), undefined, ctx.marker);
    const path = fillPath(t.operations.create.path, aliased(t, scope));
    const r = await sendCreate(t, path, body, ctx);
    // The object's own key (the last key field, when one field is its whole own key).
    const nk = t.keyFields.length === t.parentFields.length + 1 ? t.keyFields.at(-1) : undefined;
    const naturalId =
      nk !== undefined && t.info.idField === nk && valueAtKeyPath(body, nk) !== undefined
        ? scalarId(valueAtKeyPath(body, nk))
        : undefined;
    const createAnswer = unwrapAnswer(
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
    const answered = isObject(createAnswer) ? observed(t, createAnswer, scope) : undefined;
    const created =
      answered ??
      (ownKey !== undefined || ownId !== undefined
        ? await readBack(
            t,
            composeId(t, scope, ownKey ?? [ownId!]),
            scope,
            body,
            r.body,
            ctx.signal,
          )
        : undefined) ??
      (ctx.marker && t.info.markerField ? await find(t, ctx.marker, ctx.signal) : undefined) ??
      (await findByKey(t, desired, ctx.signal));
    if (created) return created;
    throw new TendError(
      'provider.create_unconfirmed',
      `POST ${path} succeeded but answered with no object carrying ${t.info.idField}, and the object could not be found; the journal will look it up`,
      { outcomeUnknown: true, retryable: true },
    );
  };

  /**
   * Creates an object at its own item path (`PUT /environments/{environment_name}`): the declared
   * key fills the path's last parameter, the rest is the body. The answer is taken as the object only
   * when it carries that key (a PUT may answer with something else: an invitation, an empty `{}`);
   * otherwise the object is read back from the same address.
   */
  const createAtItem = async (
    t: DerivedType,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
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
    const body = withMarker(t, bodyOf(t, desired), undefined, ctx.marker);
    const r = await sendCreate(t, path, body, ctx);
    const id = composeId(t, scope, [key]);
    const answer = unwrapAnswer(t, t.envelope?.create, r.body, `${op.method} ${op.path}`);
    const answered =
      isObject(answer) && idOf(t, answer) === key ? observed(t, answer, scope) : undefined;
    return answered ?? readBack(t, id, scope, body, undefined, ctx.signal);
  };

  /**
   * What a write leads to when its answer is not the object: a read-back by id, or, for an
   * eventually consistent API that does not show the object yet, what was sent and answered.
   */
  const readBack = async (
    t: DerivedType,
    id: string,
    scope: Scope,
    sent: Record<string, unknown>,
    answer: unknown,
    signal?: AbortSignal,
  ): Promise<ObservedObject> => {
    const again = await readRest(t, id, signal);
    if (again) return again;
    const { own } = splitId(t, id);
    return observed(t, { ...sent, ...(isObject(answer) ? answer : {}) }, scope, own)!;
  };

  const updateRest = async (
    t: DerivedType,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
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
        ? withMarker(t, sent, current, ctx.marker)
        : withMarker(t, { ...writableOf(t, current.fields), ...sent }, current, ctx.marker);
    let r;
    try {
      r = await http.request({
        method: op.method,
        path,
        body: wrapRequest(body, t.requestEnvelope?.update),
        ...(op.contentType ? { contentType: op.contentType } : {}),
        headers: actorHeaders(ctx.actor),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } catch (e) {
      throw refusalWithHint(e);
    }
    // The answer may carry a new id (PowerDNS renames a TSIG key in place and its id follows).
    const updateAnswer =
      t.envelope?.read !== undefined && isObject(unwrap(r.body, t.envelope.read))
        ? unwrap(r.body, t.envelope.read)
        : r.body;
    const answered = isObject(updateAnswer) ? observed(t, updateAnswer, scope) : undefined;
    return answered ?? readBack(t, id, scope, body, r.body, ctx.signal);
  };

  const removeRest = async (t: DerivedType, id: string, ctx: WriteContext): Promise<void> => {
    const { scope, own } = splitId(t, id);
    const op = deleteOperation(t);
    try {
      await http.request({
        method: op.method,
        path: fillItemPath(op.path, aliased(t, scope), own),
        headers: actorHeaders(ctx.actor),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
    } catch (e) {
      if (e instanceof TendError && e.code === 'http.not_found') return;
      throw e;
    }
  };

  // --- sub-collections embedded in a parent --------------------------------------------------------

  /**
   * The raw parent object holding embedded items. Reads of one parent asked for at the same moment
   * (the verifications of every item of a batch, the types listed by one observation) share one GET;
   * callers never mutate what it answers.
   */
  const parentBody = async (
    t: DerivedType,
    scope: Scope,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> => {
    const parent = parentOf(t);
    const id = scope.get(parent.idParam)!;
    const path = fillPath(
      parent.itemPath,
      aliased(parent, new Map([...scope, [parent.idParam, id]])),
    );
    const shared = parentReads.run(path, async () => (await readRaw(parent, scope, id))?.body);
    return signal ? abortable(shared, signal) : shared;
  };

  /** The items of a parent's embedded field (a copy of each: the parent body is shared). */
  const itemsOf = (t: DerivedType, body: Record<string, unknown>): Record<string, unknown>[] => {
    const v = body[t.embedded!.field];
    return Array.isArray(v) ? v.filter(isObject).map((it) => structuredClone(it)) : [];
  };

  /** The item of a parent body with a key (normalised), found through an index built once per body. */
  const itemByKey = (
    t: DerivedType,
    body: Record<string, unknown>,
    own: readonly string[],
  ): Record<string, unknown> | undefined => {
    const key = t.embedded!.key;
    const keyOf = (values: readonly unknown[]) =>
      canonicalJson(key.map((k, i) => access.normalize(t, k, values[i])));
    let perType = itemIndexes.get(body);
    if (!perType) {
      perType = new Map();
      itemIndexes.set(body, perType);
    }
    let index = perType.get(t.info.name);
    if (!index) {
      index = new Map();
      const v = body[t.embedded!.field];
      for (const it of Array.isArray(v) ? v.filter(isObject) : []) {
        const k = keyOf(key.map((f) => it[f]));
        if (!index.has(k)) index.set(k, it);
      }
      perType.set(t.info.name, index);
    }
    const item = index.get(keyOf(own));
    return item === undefined ? undefined : structuredClone(item);
  };

  const listEmbedded = async (t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]> => {
    const out: ObservedObject[] = [];
    const all = await scopes(t, signal);
    // Every parent is read at once (the client bounds concurrency), each once.
    const bodies = await Promise.all(all.map((scope) => parentBody(t, scope, signal)));
    for (const [i, scope] of all.entries()) {
      const body = bodies[i];
      if (body === undefined) continue;
      for (const item of itemsOf(t, body)) {
        checkRequired(t, `GET ${t.itemPath} (${t.embedded!.field})`, item);
        const o = observed(t, item, scope);
        if (o) out.push(o);
      }
    }
    return out;
  };

  const readEmbedded = async (
    t: DerivedType,
    id: string,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> => {
    const { scope, own } = splitId(t, id);
    const body = await parentBody(t, scope, signal);
    if (body === undefined) return undefined;
    const item = itemByKey(t, body, own);
    return item === undefined ? undefined : observed(t, item, scope);
  };

  /**
   * Sends one item change through the parent: `{field: [{...item, op: replace|delete}]}`. The changes
   * of one parent submitted together go out in one request (`batches`); the platform applies it
   * whole, so a refusal fails every change it carried, each with the same reason.
   */
  const changeItem = async (
    t: DerivedType,
    scope: Scope,
    item: Record<string, unknown>,
    action: 'replace' | 'delete',
    ctx: WriteContext,
  ): Promise<void> => {
    const e = t.embedded!;
    const parent = parentOf(t);
    const path = fillPath(parent.itemPath, aliased(parent, scope));
    const change: EmbeddedChange = {
      type: t,
      path,
      method: e.method,
      contentType: t.operations.update?.contentType ?? 'application/json',
      body: itemChangeBody(t, item, action),
      action,
      headers: actorHeaders(ctx.actor),
    };
    const own = e.key.map((k) => canonicalJson(access.normalize(t, k, item[k])));
    const destination = `${e.method} ${path}`;
    try {
      await batches.submit(
        destination,
        change,
        `${t.info.name}\u0000${own.join('\u0000')}`,
        ctx.signal,
      );
    } catch (err) {
      // Deleting an item of a parent that is gone: nothing is left to delete.
      if (action === 'delete' && err instanceof TendError && err.code === 'http.not_found') return;
      throw action === 'delete' ? err : refusalWithHint(err);
    }
  };

  /** Sends a batch of item changes of one parent as one request. */
  const sendBatch = async (changes: readonly EmbeddedChange[]): Promise<void> => {
    const first = changes[0]!;
    try {
      await http.request({
        method: first.method,
        path: first.path,
        body: mergedChangeBody(changes.map((c) => c.body)),
        contentType: first.contentType,
        headers: commonHeaders(changes.map((c) => c.headers)),
      });
    } catch (err) {
      throw changes.length === 1 ? err : batchError(err, first.method, first.path, changes.length);
    }
  };
  const batches = new GroupCommit<EmbeddedChange>(
    (_destination, changes) => sendBatch(changes),
    options.schedule,
  );

  const putEmbedded = async (
    t: DerivedType,
    scope: Scope,
    item: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
    await changeItem(t, scope, item, 'replace', ctx);
    const own = t.embedded!.key.map((k) => scalarId(item[k]) ?? '');
    const id = composeId(t, scope, own);
    return (await readEmbedded(t, id, ctx.signal)) ?? observed(t, item, scope, own)!;
  };

  const createEmbedded = async (
    t: DerivedType,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
    const scope = scopeOfDesired(t, desired);
    return putEmbedded(t, scope, bodyOf(t, desired), ctx);
  };

  const updateEmbedded = async (
    t: DerivedType,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject> => {
    const { scope } = splitId(t, id);
    // A replace carries the whole item: its key and required fields as they are, then the change.
    const required = objectView(t.info.schema).required;
    const base: Record<string, unknown> = {};
    for (const k of [...t.embedded!.key, ...required]) {
      if (current.fields[k] !== undefined && !t.parentFields.includes(k))
        setKey(base, k, current.fields[k]);
    }
    return putEmbedded(t, scope, { ...base, ...bodyOf(t, desired) }, ctx);
  };

  const removeEmbedded = async (t: DerivedType, id: string, ctx: WriteContext): Promise<void> => {
    const { scope, own } = splitId(t, id);
    const item: Record<string, unknown> = {};
    t.embedded!.key.forEach((k, i) => setKey(item, k, own[i]));
    await changeItem(t, scope, item, 'delete', ctx);
  };

  // --- markers -------------------------------------------------------------------------------------

  const find = async (
    t: DerivedType,
    marker: Marker,
    signal?: AbortSignal,
  ): Promise<ObservedObject | undefined> => {
    if (t.info.markerField === undefined) return undefined;
    const all = t.singleton ? await listSingletons(t, signal) : await listRest(t, signal);
    return all.find(
      (o) =>
        o.marker !== undefined &&
        o.marker.workspace === marker.workspace &&
        o.marker.address === marker.address &&
        (marker.op === undefined || o.marker.op === marker.op),
    );
  };

  const access: ObjectAccess = {
    list: (t, signal) =>
      t.embedded
        ? listEmbedded(t, signal)
        : t.singleton
          ? listSingletons(t, signal)
          : listRest(t, signal),
    read: (t, id, signal) => (t.embedded ? readEmbedded(t, id, signal) : readRest(t, id, signal)),
    create: (t, desired, ctx) =>
      t.embedded
        ? createEmbedded(t, desired, ctx)
        : t.createAtItem
          ? createAtItem(t, desired, ctx)
          : createRest(t, desired, ctx),
    update: (t, id, desired, current, ctx) =>
      t.embedded
        ? updateEmbedded(t, id, desired, current, ctx)
        : updateRest(t, id, desired, current, ctx),
    remove: (t, id, ctx) => (t.embedded ? removeEmbedded(t, id, ctx) : removeRest(t, id, ctx)),
    find,
    normalize(t, path, value, object) {
      const top = path.split('.')[0]!;
      // What cannot be read back, and what the platform changes by itself, never differs.
      if (t.writeOnly.includes(top) || t.serverOwned.includes(top)) return null;
      const schema = schemaAt(t.info.schema, path) ?? schemaAt(t.readSchema, path);
      const own = withoutMarkerAt(t, path, value);
      return schema === undefined
        ? own
        : normalizeValue(schema, pastIsNow(schema, own, now()), [], 0, holderAt(object, path));
    },
  };
  return access;
}

/**
 * The body of one sub-collection change: the item (without parent fields) marked with the operation,
 * inside the parent's array field. A delete carries only the item's key.
 */
export function itemChangeBody(
  t: DerivedType,
  item: Record<string, unknown>,
  action: 'replace' | 'delete',
): Record<string, unknown> {
  const e = t.embedded;
  if (!e) throw new TendError('provider.internal', `${t.info.name} is not a sub-collection`);
  const out: Record<string, unknown> = {};
  const keys = action === 'delete' ? e.key : Object.keys(item);
  for (const k of keys) {
    if (!t.parentFields.includes(k) && item[k] !== undefined) setKey(out, k, item[k]);
  }
  if (e.op) setKey(out, e.op.field, action === 'delete' ? e.op.delete : e.op.replace);
  return { [e.field]: [out] };
}

/** One item change waiting to go out with the other changes of its parent. */
interface EmbeddedChange {
  readonly type: DerivedType;
  /** The parent's item path, filled in. */
  readonly path: string;
  readonly method: 'PATCH' | 'PUT' | 'POST';
  readonly contentType: string;
  /** `{field: [item]}` as `itemChangeBody` makes it. */
  readonly body: Record<string, unknown>;
  readonly action: 'replace' | 'delete';
  readonly headers: Record<string, string>;
}

/**
 * The body of several item changes of one parent: each array field holds every change's items, in
 * the order the changes were submitted (`{rrsets: [a, b, c]}`).
 */
export function mergedChangeBody(
  bodies: readonly Record<string, unknown>[],
): Record<string, unknown> {
  const out: Record<string, unknown[]> = {};
  for (const body of bodies) {
    for (const [field, items] of Object.entries(body)) {
      const list = out[field] ?? [];
      if (out[field] === undefined) setKey(out, field, list);
      list.push(...(Array.isArray(items) ? (items as unknown[]) : [items]));
    }
  }
  return out;
}

/**
 * The attribution headers of a batch: those every change carries with the same value. A batch of
 * changes with different motivations (a create and a drift correction) carries none for it.
 */
export function commonHeaders(all: readonly Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = all;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(first ?? {})) {
    if (rest.every((h) => h[k] === v)) setKey(out, k, v);
  }
  return out;
}

/** The error of a failed batch, saying that none of its changes was made (or, unknown, may have been). */
function batchError(e: unknown, method: string, path: string, n: number): TendError {
  const err = toTendError(e);
  const what = err.outcomeUnknown
    ? `its outcome is unknown for all ${n} changes it carried`
    : `the platform applies it whole, so none of the ${n} changes it carried was made`;
  return new TendError(
    err.code,
    `${err.message} (one ${method} ${path} for ${n} changes of this parent; ${what})`,
    {
      retryable: err.retryable,
      outcomeUnknown: err.outcomeUnknown,
      ...(err.status !== undefined ? { status: err.status } : {}),
      ...(err.retryAfterSeconds !== undefined ? { retryAfterSeconds: err.retryAfterSeconds } : {}),
      ...(err.hint !== undefined ? { hint: err.hint } : {}),
      cause: err,
    },
  );
}

/** A shared promise that rejects for this caller alone when its signal aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * True when a declared field goes into a request body: not a parent's id (it is in the path) unless
 * the body repeats it (`site_id`), nor the name of an object created at its own address unless the
 * body has that field too.
 */
function inBody(t: DerivedType, field: string): boolean {
  if (t.parentFields.includes(field)) return t.parentFieldsInBody?.includes(field) === true;
  if (t.createAtItem?.param === field) return t.createAtItem.inBody;
  return true;
}

/** A scope with renamed parent fields also under the path parameter they fill (`client_id` → `id`). */
function aliased(t: DerivedType, scope: Scope): Scope {
  if (t.paramAliases === undefined) return scope;
  const out = new Map(scope);
  for (const [field, param] of Object.entries(t.paramAliases)) {
    const v = scope.get(field);
    if (v !== undefined) out.set(param, v);
  }
  return out;
}

/**
 * The delete of a type; a type whose API offers no DELETE never gets here from a plan (its deletes
 * are blocked), so reaching it is refused, never guessed.
 */
function deleteOperation(t: DerivedType): NonNullable<DerivedType['operations']['delete']> {
  const op = t.operations.delete;
  if (op !== undefined) return op;
  throw new TendError(
    'provider.no_delete',
    `the API offers no DELETE for ${t.info.name} (${t.info.noDelete ?? 'none in its document'}): Tend cannot delete ${t.info.name} objects; remove the object in the platform, or keep it in the intent`,
    { retryable: false },
  );
}

/**
 * An update body with only the fields the update takes, when it takes only some of the create's (an
 * update by POST): the others are create-only, so a plan never changes them in place, and sending
 * them would be refused as unknown.
 */
export function onlyUpdateFields(
  t: DerivedType,
  body: Record<string, unknown>,
): Record<string, unknown> {
  if (t.updateFields === undefined) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (t.updateFields.includes(k)) setKey(out, k, v);
  }
  return out;
}

/** The fields of an observed object a client may send back (for a PUT). */
function writableOf(
  t: DerivedType,
  fields: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (t.serverOwned.includes(k) || !inBody(t, k)) continue;
    const writable =
      t.writableFields.length > 0
        ? t.writableFields.includes(k)
        : !t.info.outputOnly.includes(k) && k !== t.info.idField;
    if (writable) setKey(out, k, v);
  }
  return out;
}

function listItems(t: DerivedType, body: unknown): unknown[] | undefined {
  if (Array.isArray(body)) return body as unknown[];
  if (!isObject(body)) return undefined;
  if (t.listShape.kind === 'wrapped') {
    const inner = unwrap(body, t.listShape.field);
    if (Array.isArray(inner)) return inner as unknown[];
    // A declared envelope the answer does not have: not a list Tend can read.
    if (t.listShape.declared === true) return undefined;
  }
  // Tolerate a wrapper the document did not declare, when it is unambiguous.
  const arrays = Object.values(body).filter(Array.isArray);
  return arrays.length === 1 ? arrays[0] : undefined;
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

/** The object holding the field at a dotted path of `object` (undefined when there is none). */
function holderAt(
  object: Readonly<Record<string, unknown>> | undefined,
  path: string,
): Readonly<Record<string, unknown>> | undefined {
  let cur: unknown = object;
  for (const part of path.split('.').slice(0, -1)) {
    cur = isObject(cur) ? ownValue(cur, part) : undefined;
  }
  return isObject(cur) ? cur : undefined;
}

/**
 * An item operation's path with its parameters filled: the object's own id goes into the path's last
 * parameter (`/containers/{id}/json`), whatever it is called — an own id of several parts (item-key.ts)
 * into as many last parameters, in order; the others come from the scope.
 */
function fillItemPath(template: string, scope: Scope, own: string | readonly string[]): string {
  const parts = typeof own === 'string' ? [own] : own;
  const names = [...template.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!).slice(-parts.length);
  const filled = new Map(scope);
  names.forEach((name, i) => filled.set(name, parts[parts.length - names.length + i]!));
  return fillPath(template, filled);
}

/**
 * The path of an operation addressed by fields of the object (`PUT /u/{username}.json`,
 * `OperationRef.addressedBy`): those parameters take the object's values as last observed — the
 * address it has now, not the one a change may give it — and the others come from the scope.
 */
function fillAddressedPath(
  t: DerivedType,
  op: OperationRef,
  scope: Scope,
  id: string,
  current: ObservedObject,
): string {
  const filled = new Map(scope);
  const addressedBy: Readonly<Record<string, string>> = op.addressedBy ?? {};
  for (const [param, field] of Object.entries(addressedBy)) {
    const v = valueAtKeyPath(current.fields, field);
    if (typeof v !== 'string' && typeof v !== 'number') {
      throw new TendError(
        'provider.missing_key',
        `${t.info.name} ${id}: ${op.method} ${op.path} takes {${param}} from the field ${field}, and the object as last read has ${v === undefined ? 'no such field' : `${JSON.stringify(v)} there`}`,
      );
    }
    filled.set(param, String(v));
  }
  return fillPath(op.path, filled);
}

function isEmpty(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isObject(v) && Object.keys(v).length === 0)
  );
}

/** The platform's version of an object from its declared version field, when it has one. */
function versionOf(t: DerivedType, fields: Record<string, unknown>): string | undefined {
  if (t.versionField === undefined) return undefined;
  let cur: unknown = fields;
  for (const part of t.versionField.split('.')) {
    cur = isObject(cur) ? cur[part] : undefined;
  }
  return scalarId(cur);
}

/**
 * The own id an object carries: at the type's id field (a key path: `user.login`), else, for a
 * listed object of another shape, at the list's (`login`).
 */
export function idOf(
  t: DerivedType,
  fields: Readonly<Record<string, unknown>>,
): string | undefined {
  const id = scalarId(valueAtKeyPath(fields, t.info.idField));
  if (id !== undefined || t.listIdField === undefined) return id;
  return scalarId(valueAtKeyPath(fields, t.listIdField));
}

function scalarId(v: unknown): string | undefined {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

function locationId(location: string | null): string | undefined {
  if (!location) return undefined;
  const last = location.split('?')[0]!.split('/').filter(Boolean).at(-1);
  return last === undefined ? undefined : decodeURIComponent(last);
}

function refusalWithHint(e: unknown): TendError {
  const err = toTendError(e);
  if (err.code !== 'platform.refused') return err;
  return new TendError('platform.refused', `${err.message}; ${REPLACE_HINT}`, {
    retryable: false,
    ...(err.status !== undefined ? { status: err.status } : {}),
    hint: REPLACE_HINT,
    cause: err,
  });
}

/** The error for an answer that is not what the document promised. */
export function badResponse(what: string, expected: string, body: unknown): TendError {
  const got = body === undefined ? 'an empty body' : Array.isArray(body) ? 'an array' : typeof body;
  return new TendError(
    'provider.bad_response',
    `${what} answered with ${got}, not ${expected}; the API does not behave as its OpenAPI document says`,
    { retryable: false },
  );
}
