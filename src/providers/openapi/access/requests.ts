import type { ObservedObject } from '../../../core/index.js';
import { TendError, setKey, toTendError, valueAtKeyPath } from '../../../core/index.js';
import type { DerivedType, OperationRef } from '../derive-types.js';
import { canonicalValue } from '../fields/normalize.js';
import type { Scope } from '../object-ids.js';
import { fillPath, fixedScope } from '../object-ids.js';
import { scalarId } from './answers.js';

// Building requests, for every shape alike: the paths an operation is sent to, the body a desired
// spec becomes, and the errors a refused write or a missing operation turns into.

const REPLACE_HINT =
  'if this change needs a replacement, declare the field create-only (x-tend-immutable) in an overlay; Tend never guesses a replace';

/** The scope of a desired spec: fixed values, and parent ids from its parent fields. */
export function scopeOfDesired(
  t: DerivedType,
  desired: Record<string, unknown>,
): Map<string, string> {
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
}

/** A desired spec as sent: canonical spelling, without parent fields and server-owned fields. */
export function bodyOf(t: DerivedType, desired: Record<string, unknown>): Record<string, unknown> {
  const canon = canonicalValue(t.info.schema, desired) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(canon)) {
    if (t.serverOwned.includes(k) || !inBody(t, k)) continue;
    setKey(out, k, v);
  }
  return out;
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
export function aliased(t: DerivedType, scope: Scope): Scope {
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
export function deleteOperation(t: DerivedType): NonNullable<DerivedType['operations']['delete']> {
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
export function writableOf(
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

/**
 * An item operation's path with its parameters filled: the object's own id goes into the path's last
 * parameter (`/containers/{id}/json`), whatever it is called — an own id of several parts (item-key.ts)
 * into as many last parameters, in order; the others come from the scope.
 */
export function fillItemPath(
  template: string,
  scope: Scope,
  own: string | readonly string[],
): string {
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
export function fillAddressedPath(
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

/** A refusal of a change, with the hint that a change the platform cannot make may need a replace. */
export function refusalWithHint(e: unknown): TendError {
  const err = toTendError(e);
  if (err.code !== 'platform.refused') return err;
  return new TendError('platform.refused', `${err.message}; ${REPLACE_HINT}`, {
    retryable: false,
    ...(err.status !== undefined ? { status: err.status } : {}),
    hint: REPLACE_HINT,
    cause: err,
  });
}
