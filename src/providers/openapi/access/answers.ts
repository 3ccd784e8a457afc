import type { Marker, ObservedObject } from '../../../core/index.js';
import { TendError, ownValue, setKey, valueAtKeyPath } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { markerOf } from '../marker-values.js';
import type { Scope } from '../object-ids.js';
import { composeId } from '../object-ids.js';
import { isObject, objectView } from '../fields/schema-view.js';
import { unwrap } from '../shapes/envelope.js';
import type { AccessContext } from './context.js';

// Reading what the platform answered: the observed object Tend keeps of it, its ids and version,
// answers out of their envelopes, and the error for an answer the document did not promise.

/**
 * An observed object from what the platform answered, in a scope; undefined without an id. Secret
 * fields are registered with the redactor and dropped (they never reach the store or the ledger).
 */
export function observed(
  ctx: AccessContext,
  t: DerivedType,
  fields: Record<string, unknown>,
  scope: Scope,
  fallbackOwn?: readonly string[],
  etag?: string,
): ObservedObject | undefined {
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
      ctx.secrets?.add(v);
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
}

/** Warns (tolerated) about each field the read schema marks required that an answer lacks. */
export function checkRequired(
  ctx: AccessContext,
  t: DerivedType,
  what: string,
  fields: Record<string, unknown>,
): void {
  const skip = t.embedded?.op?.field;
  for (const r of objectView(t.readSchema).required) {
    if (r !== skip && fields[r] === undefined) {
      ctx.warn(
        `${t.info.name}: ${what} answered without ${r}, which the document marks required; tolerated`,
      );
    }
  }
}

/**
 * An answer out of its envelope (`{"server": {…}}` → the server). An answer without the declared
 * or inferred envelope is taken as it is (some platforms wrap only some answers), with a warning.
 */
export function unwrapAnswer(
  ctx: AccessContext,
  t: DerivedType,
  field: string | undefined,
  body: unknown,
  what: string,
): unknown {
  if (field === undefined || !isObject(body)) return body;
  const inner = unwrap(body, field);
  if (isObject(inner)) return inner;
  ctx.warn(
    `${t.info.name}: ${what} answered without the envelope ${field} the document leads Tend to expect; the answer is read as the object itself`,
  );
  return body;
}

/**
 * The entries of one page of a list: the body itself when it is an array, else the array in the
 * type's list envelope, else the one array of an undeclared wrapper; undefined when it has none.
 */
export function listItems(t: DerivedType, body: unknown): unknown[] | undefined {
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

/** True for a value that says "nothing here" (`x-tend-absent-when-empty`). */
export function isEmpty(v: unknown): boolean {
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

/** A string or a number as an id part; undefined for anything else. */
export function scalarId(v: unknown): string | undefined {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

/** The last segment of a `Location` header, decoded: the id a create answered with there. */
export function locationId(location: string | null): string | undefined {
  if (!location) return undefined;
  const last = location.split('?')[0]!.split('/').filter(Boolean).at(-1);
  return last === undefined ? undefined : decodeURIComponent(last);
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

/** The object among `all` carrying a marker (its op too, when the marker names one). */
export function carrying(
  all: readonly ObservedObject[],
  marker: Marker,
): ObservedObject | undefined {
  return all.find(
    (o) =>
      o.marker !== undefined &&
      o.marker.workspace === marker.workspace &&
      o.marker.address === marker.address &&
      (marker.op === undefined || o.marker.op === marker.op),
  );
}
