import { ownValue } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { pastIsNow } from '../fields/instants.js';
import { normalizeValue, schemaAt } from '../fields/normalize.js';
import { isObject } from '../fields/schema-view.js';
import { withoutMarkerAt } from '../marker-values.js';

/**
 * The comparable form of a declared or observed value at a dotted path of a type's object;
 * `object` is the whole object (declared spec or observed fields) when the caller has it, for
 * normalisations keyed by a sibling field. What cannot be read back (write-only) and what the
 * platform changes by itself (server-owned) never differs: both compare as null.
 */
export function comparable(
  now: () => number,
  t: DerivedType,
  path: string,
  value: unknown,
  object?: Readonly<Record<string, unknown>>,
): unknown {
  const top = path.split('.')[0]!;
  if (t.writeOnly.includes(top) || t.serverOwned.includes(top)) return null;
  const schema = schemaAt(t.info.schema, path) ?? schemaAt(t.readSchema, path);
  const own = withoutMarkerAt(t, path, value);
  return schema === undefined
    ? own
    : normalizeValue(schema, pastIsNow(schema, own, now()), [], 0, holderAt(object, path));
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
