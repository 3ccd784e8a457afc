import type { ObservedObject, WriteContext } from '../../../core/index.js';
import { TendError, canonicalJson, setKey, toTendError } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { isObject, objectView } from '../fields/schema-view.js';
import type { Scope } from '../object-ids.js';
import { composeId, fillPath, splitId } from '../object-ids.js';
import { actorHeaders } from '../transport/actor-headers.js';
import type { Schedule } from '../transport/group-commit.js';
import { GroupCommit, SharedCalls, abortReason } from '../transport/group-commit.js';
import type { HttpClient } from '../transport/http-client.js';
import { onAbort } from '../transport/on-abort.js';
import { checkRequired, observed, scalarId } from './answers.js';
import { scopes } from './collection.js';
import { comparable } from './comparable.js';
import type { AccessContext, ShapeAccess } from './context.js';
import { parentOf } from './context.js';
import { readRaw } from './reads.js';
import { aliased, bodyOf, refusalWithHint, scopeOfDesired } from './requests.js';

// Sub-collections embedded in a parent (PowerDNS rrsets in a zone): read out of the parent's read,
// changed through the parent (`{rrsets: [{...item, changetype: REPLACE}]}`). The reads of one parent
// asked for at the same moment share one GET; the changes of one parent go out in one request.

/** The state embedded access keeps per provider: shared parent reads, item indexes, batches. */
export interface EmbeddedState {
  /** Reads of one parent asked for at the same moment share one GET (by path). */
  readonly parentReads: SharedCalls<Record<string, unknown> | undefined>;
  /** Per parent body, per type: its items by normalised key (built once per body). */
  readonly itemIndexes: WeakMap<object, Map<string, Map<string, Record<string, unknown>>>>;
  /** Item changes waiting to go out with the other changes of their parent. */
  readonly batches: GroupCommit<EmbeddedChange>;
}

/** The embedded state of one provider, its batches sent through `http`. */
export function embeddedState(http: HttpClient, schedule: Schedule | undefined): EmbeddedState {
  return {
    parentReads: new SharedCalls<Record<string, unknown> | undefined>(schedule),
    itemIndexes: new WeakMap(),
    batches: new GroupCommit<EmbeddedChange>(
      (_destination, changes) => sendBatch(http, changes),
      schedule,
    ),
  };
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
  /** The change's WriteContext.fence: the batch that carries it passes every one before it is sent. */
  readonly fence?: () => void;
}

/**
 * The raw parent object holding embedded items. Reads of one parent asked for at the same moment
 * (the verifications of every item of a batch, the types listed by one observation) share one GET;
 * callers never mutate what it answers.
 */
async function parentBody(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  signal?: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const parent = parentOf(ctx, t);
  const id = scope.get(parent.idParam)!;
  const path = fillPath(
    parent.itemPath,
    aliased(parent, new Map([...scope, [parent.idParam, id]])),
  );
  const shared = ctx.embedded.parentReads.run(
    path,
    async () => (await readRaw(ctx, parent, scope, id))?.body,
  );
  return signal ? abortable(shared, signal) : shared;
}

/** The items of a parent's embedded field (a copy of each: the parent body is shared). */
function itemsOf(t: DerivedType, body: Record<string, unknown>): Record<string, unknown>[] {
  const v = body[t.embedded!.field];
  return Array.isArray(v) ? v.filter(isObject).map((it) => structuredClone(it)) : [];
}

/** The item of a parent body with a key (normalised), found through an index built once per body. */
function itemByKey(
  ctx: AccessContext,
  t: DerivedType,
  body: Record<string, unknown>,
  own: readonly string[],
): Record<string, unknown> | undefined {
  const key = t.embedded!.key;
  const keyOf = (values: readonly unknown[]) =>
    canonicalJson(key.map((k, i) => comparable(ctx.now, t, k, values[i])));
  let perType = ctx.embedded.itemIndexes.get(body);
  if (!perType) {
    perType = new Map();
    ctx.embedded.itemIndexes.set(body, perType);
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
}

/** Every item of every parent (each parent read once, all at once). */
async function listEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  signal?: AbortSignal,
): Promise<ObservedObject[]> {
  const out: ObservedObject[] = [];
  const all = await scopes(ctx, t, signal);
  // Every parent is read at once (the client bounds concurrency), each once.
  const bodies = await Promise.all(all.map((scope) => parentBody(ctx, t, scope, signal)));
  for (const [i, scope] of all.entries()) {
    const body = bodies[i];
    if (body === undefined) continue;
    for (const item of itemsOf(t, body)) {
      checkRequired(ctx, t, `GET ${t.itemPath} (${t.embedded!.field})`, item);
      const o = observed(ctx, t, item, scope);
      if (o) out.push(o);
    }
  }
  return out;
}

/** One item, out of its parent's (shared) read. */
async function readEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  signal?: AbortSignal,
): Promise<ObservedObject | undefined> {
  const { scope, own } = splitId(t, id);
  const body = await parentBody(ctx, t, scope, signal);
  if (body === undefined) return undefined;
  const item = itemByKey(ctx, t, body, own);
  return item === undefined ? undefined : observed(ctx, t, item, scope);
}

/**
 * Sends one item change through the parent: `{field: [{...item, op: replace|delete}]}`. The changes
 * of one parent submitted together go out in one request (`batches`); the platform applies it
 * whole, so a refusal fails every change it carried, each with the same reason.
 */
async function changeItem(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  item: Record<string, unknown>,
  action: 'replace' | 'delete',
  wctx: WriteContext,
): Promise<void> {
  const e = t.embedded!;
  const parent = parentOf(ctx, t);
  const path = fillPath(parent.itemPath, aliased(parent, scope));
  const change: EmbeddedChange = {
    type: t,
    path,
    method: e.method,
    contentType: t.operations.update?.contentType ?? 'application/json',
    body: itemChangeBody(t, item, action),
    action,
    headers: actorHeaders(wctx.actor),
    ...(wctx.fence ? { fence: wctx.fence } : {}),
  };
  const own = e.key.map((k) => canonicalJson(comparable(ctx.now, t, k, item[k])));
  const destination = `${e.method} ${path}`;
  try {
    await ctx.embedded.batches.submit(
      destination,
      change,
      `${t.info.name}\u0000${own.join('\u0000')}`,
      wctx.signal,
    );
  } catch (err) {
    // Deleting an item of a parent that is gone: nothing is left to delete.
    if (action === 'delete' && err instanceof TendError && err.code === 'http.not_found') return;
    throw action === 'delete' ? err : refusalWithHint(err);
  }
}

/** Sends a batch of item changes of one parent as one request. */
async function sendBatch(http: HttpClient, changes: readonly EmbeddedChange[]): Promise<void> {
  const first = changes[0]!;
  try {
    await http.request({
      method: first.method,
      path: first.path,
      body: mergedChangeBody(changes.map((c) => c.body)),
      contentType: first.contentType,
      headers: commonHeaders(changes.map((c) => c.headers)),
      fence: () => {
        for (const c of changes) c.fence?.();
      },
    });
  } catch (err) {
    throw changes.length === 1 ? err : batchError(err, first.method, first.path, changes.length);
  }
}

/** Replaces an item through its parent, then reads it back (else: what was sent). */
async function putEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  scope: Scope,
  item: Record<string, unknown>,
  wctx: WriteContext,
): Promise<ObservedObject> {
  await changeItem(ctx, t, scope, item, 'replace', wctx);
  const own = t.embedded!.key.map((k) => scalarId(item[k]) ?? '');
  const id = composeId(t, scope, own);
  return (await readEmbedded(ctx, t, id, wctx.signal)) ?? observed(ctx, t, item, scope, own)!;
}

async function createEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  desired: Record<string, unknown>,
  wctx: WriteContext,
): Promise<ObservedObject> {
  const scope = scopeOfDesired(t, desired);
  return putEmbedded(ctx, t, scope, bodyOf(t, desired), wctx);
}

async function updateEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  desired: Record<string, unknown>,
  current: ObservedObject,
  wctx: WriteContext,
): Promise<ObservedObject> {
  const { scope } = splitId(t, id);
  // A replace carries the whole item: its key and required fields as they are, then the change.
  const required = objectView(t.info.schema).required;
  const base: Record<string, unknown> = {};
  for (const k of [...t.embedded!.key, ...required]) {
    if (current.fields[k] !== undefined && !t.parentFields.includes(k))
      setKey(base, k, current.fields[k]);
  }
  return putEmbedded(ctx, t, scope, { ...base, ...bodyOf(t, desired) }, wctx);
}

async function removeEmbedded(
  ctx: AccessContext,
  t: DerivedType,
  id: string,
  wctx: WriteContext,
): Promise<void> {
  const { scope, own } = splitId(t, id);
  const item: Record<string, unknown> = {};
  t.embedded!.key.forEach((k, i) => setKey(item, k, own[i]));
  await changeItem(ctx, t, scope, item, 'delete', wctx);
}

/** The access of a sub-collection embedded in a parent, changed through the parent in batches. */
export const embedded: ShapeAccess = {
  list: listEmbedded,
  read: readEmbedded,
  create: createEmbedded,
  update: updateEmbedded,
  remove: removeEmbedded,
};

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
    // Every caller sharing the read shares one listener on the signal (on-abort.ts).
    const unsubscribe = onAbort(signal, () => reject(abortReason(signal)));
    p.then(
      (v) => {
        unsubscribe();
        resolve(v);
      },
      (e: unknown) => {
        unsubscribe();
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
