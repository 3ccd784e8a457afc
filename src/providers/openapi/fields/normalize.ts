import { canonicalJson, ownValue, setKey } from '../../../core/index.js';
import type { KeyedNormalizer, NormalizeOp } from './annotations.js';
import { keyedNormalizers, normalizeOps } from './annotations.js';
import { canonicalIp, canonicalRdata } from './dns-values.js';
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
  'ip',
];

function applyStringOps(value: string, ops: readonly NormalizeOp[]): string {
  let v = value;
  for (const op of ops) {
    if (op === 'lowercase') v = v.toLowerCase();
    else if (op === 'uppercase') v = v.toUpperCase();
    else if (op === 'trailing-dot') v = v === '' || v.endsWith('.') ? v : `${v}.`;
    else if (op === 'no-trailing-dot') v = v.length > 1 && v.endsWith('.') ? v.slice(0, -1) : v;
    else if (op === 'ip') v = canonicalIp(v);
  }
  return v;
}

/**
 * The comparable form of a value under a schema: string steps, keyed steps, `sort`, and nested
 * defaults. `inherited` string steps come from an enclosing array or object schema; `holder` is the
 * object the value is a field of (where a keyed step finds its key). Total: a value that does not
 * fit the schema is returned as it is (normalised where it fits).
 */
export function normalizeValue(
  schema: unknown,
  value: unknown,
  inherited: readonly NormalizeOp[] = [],
  depth = 0,
  holder?: Readonly<Record<string, unknown>>,
): unknown {
  if (depth > 32) return value;
  const own = normalizeOps(schema).ops;
  const stringOps = unique([...inherited, ...own.filter((o) => STRING_OPS.includes(o))]);
  if (typeof value === 'string') {
    // A date-time compares as the instant it names, in one spelling.
    const instant = isDateTime(schema) ? canonicalInstant(value) : undefined;
    return keyed(schema, applyStringOps(instant ?? value, stringOps), holder);
  }
  if (Array.isArray(value)) {
    const items = isObject(schema) ? schema['items'] : undefined;
    const mapped = value.map((v) => normalizeValue(items, v, stringOps, depth + 1));
    // Keyed steps before sorting: the order of items is that of their comparable form.
    const out = keyed(schema, mapped, holder) as unknown[];
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
        setKey(out, k, normalizeValue(prop, prop['default'], stringOps, depth + 1, value));
      }
    }
    for (const [k, v] of Object.entries(value)) {
      setKey(out, k, normalizeValue(props[k], v, stringOps, depth + 1, value));
    }
    return keyed(schema, out, holder);
  }
  return value;
}

/**
 * The form of a value to send: only the string steps (case, trailing dot, an address's or a DNS
 * record's canonical text), so the platform receives the canonical spelling of what was declared
 * (PowerDNS refuses `Example.ORG` and a CNAME target without its final dot). Arrays keep their
 * order and no default is added: what is sent is what was declared.
 */
export function canonicalValue(
  schema: unknown,
  value: unknown,
  inherited: readonly NormalizeOp[] = [],
  depth = 0,
  holder?: Readonly<Record<string, unknown>>,
): unknown {
  if (depth > 32) return value;
  const stringOps = unique([
    ...inherited,
    ...normalizeOps(schema).ops.filter((o) => STRING_OPS.includes(o)),
  ]);
  if (typeof value === 'string') return keyed(schema, applyStringOps(value, stringOps), holder);
  if (Array.isArray(value)) {
    const items = isObject(schema) ? schema['items'] : undefined;
    const mapped = value.map((v) => canonicalValue(items, v, stringOps, depth + 1));
    return keyed(schema, mapped, holder);
  }
  if (isObject(value)) {
    const props = isObject(schema) ? objectView(schema).properties : {};
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      setKey(out, k, canonicalValue(props[k], v, stringOps, depth + 1, value));
    }
    return keyed(schema, out, holder);
  }
  return value;
}

/**
 * Applies the keyed steps of a schema (`x-tend-normalize: [{by, at?, format | cases}]`) to a value:
 * each takes its key from the field `by` of `holder` (the object the value is a field of) and
 * rewrites the strings at `at` below the value (below each item of an array). Without a holder, or
 * when the key is not a string, nothing changes.
 */
function keyed(
  schema: unknown,
  value: unknown,
  holder: Readonly<Record<string, unknown>> | undefined,
): unknown {
  if (holder === undefined) return value;
  const { entries } = keyedNormalizers(schema);
  let out = value;
  for (const entry of entries) {
    const key = ownValue(holder, entry.by);
    if (typeof key !== 'string') continue;
    const step = keyedStep(entry, key);
    if (step === undefined) continue;
    out = Array.isArray(out)
      ? out.map((item) => rewriteAt(item, entry.at, step))
      : rewriteAt(out, entry.at, step);
  }
  return out;
}

/** What a keyed entry does to a string, given the key's value; undefined for nothing. */
function keyedStep(entry: KeyedNormalizer, key: string): ((s: string) => string) | undefined {
  if (entry.format === 'dns-rdata') return (s) => canonicalRdata(key, s);
  const ops = entry.cases?.get(key);
  return ops === undefined ? undefined : (s) => applyStringOps(s, ops);
}

/** The value with the string at `path` below it rewritten (copies; anything else unchanged). */
function rewriteAt(value: unknown, path: readonly string[], step: (s: string) => string): unknown {
  if (path.length === 0) return typeof value === 'string' ? step(value) : value;
  if (!isObject(value)) return value;
  const [head, ...rest] = path as [string, ...string[]];
  const inner = ownValue(value, head);
  if (inner === undefined) return value;
  const out: Record<string, unknown> = { ...value };
  setKey(out, head, rewriteAt(inner, rest, step));
  return out;
}

function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}
