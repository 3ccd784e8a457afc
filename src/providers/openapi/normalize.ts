import { canonicalJson, ownValue, setKey } from '../../core/index.js';
import type { NormalizeOp } from './annotations.js';
import { normalizeOps } from './annotations.js';
import { canonicalInstant, isDateTime } from './instants.js';
import { isObject, objectView } from './schema-view.js';

/**
 * Schema-driven normalisation (`x-tend-normalize`), so that values the platform stores in a
 * canonical form compare equal to how a person writes them: `Example.ORG` and `example.org.` are the
 * same DNS name, `[b, a]` and `[a, b]` the same set. String steps apply to the strings at and below
 * the annotated schema; `sort` orders arrays; `default`s of nested object schemas fill missing keys
 * (a record without `disabled` is the record with `disabled: false` when the schema says so).
 */

/** The schema of the property at a dotted path (`tags.team`), through objects and `allOf`. */
export function schemaAt(schema: unknown, path: string): unknown {
  let cur: unknown = schema;
  for (const key of path.split('.')) {
    if (!isObject(cur)) return undefined;
    const props = objectView(cur).properties;
    if (key in props) {
      cur = props[key];
      continue;
    }
    const extra = cur['additionalProperties'];
    if (!isObject(extra)) return undefined;
    cur = extra;
  }
  return cur;
}

const STRING_OPS: readonly NormalizeOp[] = [
  'lowercase',
  'uppercase',
  'trailing-dot',
  'no-trailing-dot',
];

function applyStringOps(value: string, ops: readonly NormalizeOp[]): string {
  let v = value;
  for (const op of ops) {
    if (op === 'lowercase') v = v.toLowerCase();
    else if (op === 'uppercase') v = v.toUpperCase();
    else if (op === 'trailing-dot') v = v === '' || v.endsWith('.') ? v : `${v}.`;
    else if (op === 'no-trailing-dot') v = v.length > 1 && v.endsWith('.') ? v.slice(0, -1) : v;
  }
  return v;
}

/**
 * The comparable form of a value under a schema: string steps, `sort`, and nested defaults. `inherited`
 * string steps come from an enclosing array or object schema. Total: a value that does not fit the
 * schema is returned as it is (normalised where it fits).
 */
export function normalizeValue(
  schema: unknown,
  value: unknown,
  inherited: readonly NormalizeOp[] = [],
  depth = 0,
): unknown {
  if (depth > 32) return value;
  const own = normalizeOps(schema).ops;
  const stringOps = unique([...inherited, ...own.filter((o) => STRING_OPS.includes(o))]);
  if (typeof value === 'string') {
    // A date-time compares as the instant it names, in one spelling.
    const instant = isDateTime(schema) ? canonicalInstant(value) : undefined;
    return applyStringOps(instant ?? value, stringOps);
  }
  if (Array.isArray(value)) {
    const items = isObject(schema) ? schema['items'] : undefined;
    const out = value.map((v) => normalizeValue(items, v, stringOps, depth + 1));
    if (own.includes('sort')) {
      out.sort((a, b) => {
        const ka = canonicalJson(a);
        const kb = canonicalJson(b);
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      });
    }
    return out;
  }
  if (isObject(value)) {
    const props = isObject(schema) ? objectView(schema).properties : {};
    const out: Record<string, unknown> = {};
    for (const [k, prop] of Object.entries(props)) {
      if (ownValue(value, k) === undefined && isObject(prop) && prop['default'] !== undefined) {
        setKey(out, k, normalizeValue(prop, prop['default'], stringOps, depth + 1));
      }
    }
    for (const [k, v] of Object.entries(value)) {
      setKey(out, k, normalizeValue(props[k], v, stringOps, depth + 1));
    }
    return out;
  }
  return value;
}

/**
 * The form of a value to send: only the string steps (case, trailing dot), so the platform receives
 * the canonical spelling of what was declared (PowerDNS refuses `Example.ORG`, accepts `example.org.`).
 * Arrays keep their order and no default is added: what is sent is what was declared.
 */
export function canonicalValue(
  schema: unknown,
  value: unknown,
  inherited: readonly NormalizeOp[] = [],
  depth = 0,
): unknown {
  if (depth > 32) return value;
  const stringOps = unique([
    ...inherited,
    ...normalizeOps(schema).ops.filter((o) => STRING_OPS.includes(o)),
  ]);
  if (typeof value === 'string') return applyStringOps(value, stringOps);
  if (Array.isArray(value)) {
    const items = isObject(schema) ? schema['items'] : undefined;
    return value.map((v) => canonicalValue(items, v, stringOps, depth + 1));
  }
  if (isObject(value)) {
    const props = isObject(schema) ? objectView(schema).properties : {};
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      setKey(out, k, canonicalValue(props[k], v, stringOps, depth + 1));
    }
    return out;
  }
  return value;
}

function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}
