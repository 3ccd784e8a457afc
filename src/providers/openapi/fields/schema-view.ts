import type { JsonSchema } from '../../../core/index.js';
import { keyPathSegments, nullRecord, setKey } from '../../../core/index.js';

/**
 * Small, cycle-safe readers over dereferenced OpenAPI schemas. Dereferenced recursive schemas are
 * cyclic object graphs, so nothing here recurses without a guard.
 */

/** A plain object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The top-level shape of an object schema: its properties and required names, `allOf` merged.
 * `properties` has no prototype: looking up a field name from data finds only declared fields.
 */
export interface ObjectView {
  readonly properties: Readonly<Record<string, Record<string, unknown>>>;
  readonly required: readonly string[];
}

/**
 * Merges the properties and `required` of a schema and of its `allOf` members (recursively, to a
 * bounded depth). `oneOf`/`anyOf` are not merged: which branch applies is not knowable statically.
 */
export function objectView(schema: unknown): ObjectView {
  const properties = nullRecord<Record<string, unknown>>();
  const required: string[] = [];
  const requiredSet = new Set<string>();
  const visit = (s: unknown, depth: number, seen: Set<unknown>): void => {
    if (!isObject(s) || depth > 16 || seen.has(s)) return;
    seen.add(s);
    const allOf = s['allOf'];
    if (Array.isArray(allOf)) for (const member of allOf) visit(member, depth + 1, seen);
    const props = s['properties'];
    if (isObject(props)) {
      for (const [name, prop] of Object.entries(props)) {
        if (isObject(prop)) setKey(properties, name, { ...properties[name], ...prop });
      }
    }
    const req = s['required'];
    if (Array.isArray(req)) {
      for (const r of req) {
        if (typeof r !== 'string' || requiredSet.has(r)) continue;
        requiredSet.add(r);
        required.push(r);
      }
    }
  };
  visit(schema, 0, new Set());
  return { properties, required };
}

/** True when a property schema (or one of its `allOf` members) sets `key` to true. */
export function hasFlag(prop: unknown, key: string): boolean {
  if (!isObject(prop)) return false;
  if (prop[key] === true) return true;
  const allOf = prop['allOf'];
  return Array.isArray(allOf) && allOf.some((m) => isObject(m) && m[key] === true);
}

/** True when a schema's `type` is or includes `name` (3.1 allows a list of types). */
export function hasType(schema: unknown, name: string): boolean {
  if (!isObject(schema)) return false;
  const t = schema['type'];
  return t === name || (Array.isArray(t) && t.includes(name));
}

/** Why `acyclicCopy` cut a schema short. */
export type CutReason = 'recursive' | 'deep' | 'large';

/** How far `acyclicCopy` goes: nesting (JSON levels) and objects and arrays made, together. */
export interface CopyBudget {
  readonly maxDepth: number;
  /** Objects and arrays it may still make; decremented as it goes (share it to bound several copies). */
  nodes: number;
}

/** One schema: 128 levels of JSON (about 60 of schemas), 1,000,000 objects and arrays. */
export const SCHEMA_COPY_DEPTH = 128;
export const SCHEMA_COPY_NODES = 1_000_000;

/**
 * A deep copy that is plain data: a schema that refers back to one of its ancestors (recursion) is
 * cut there and replaced by an empty schema, and `onCut` is told where. Dereferenced schemas share
 * subschemas, which a copy writes out once per use (a few dozen shared `$ref`s can stand for
 * billions of values): the copy is also cut below `maxDepth` and once the budget of objects is spent,
 * each reason told once, so that the copy (and everything that walks it: validators, hashing) stays
 * small and shallow.
 */
export function acyclicCopy(
  value: unknown,
  onCut: (path: string, reason: CutReason) => void,
  budget: CopyBudget = { maxDepth: SCHEMA_COPY_DEPTH, nodes: SCHEMA_COPY_NODES },
): unknown {
  const stack = new Set<unknown>();
  const told = new Set<CutReason>();
  // The path to where the copy is, as keys: joined only when a cut is told (building a string per
  // copied object would cost more than the copy).
  const keys: string[] = [];
  const cut = (reason: CutReason): Record<string, unknown> => {
    if (reason === 'recursive' || !told.has(reason)) onCut(['#', ...keys].join('/'), reason);
    told.add(reason);
    return {};
  };
  const copy = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return v;
    if (stack.has(v)) return cut('recursive');
    if (depth > budget.maxDepth) return cut('deep');
    if (budget.nodes <= 0) return cut('large');
    budget.nodes--;
    stack.add(v);
    let out: unknown;
    if (Array.isArray(v)) {
      out = v.map((item, i) => {
        keys.push(String(i));
        const c = copy(item, depth + 1);
        keys.pop();
        return c;
      });
    } else {
      const o: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) {
        keys.push(k);
        setKey(o, k, copy(item, depth + 1));
        keys.pop();
      }
      out = o;
    }
    stack.delete(v);
    return out;
  };
  return copy(value, 1);
}

/** The JSON media type of a `content` map and its schema: `application/json` first, then any `*json`. */
export function jsonMedia(content: unknown): { contentType: string; schema: unknown } | undefined {
  if (!isObject(content)) return undefined;
  const keys = Object.keys(content);
  const key =
    keys.find((k) => k.toLowerCase().split(';')[0]!.trim() === 'application/json') ??
    keys.find((k) => /json/i.test(k)) ??
    // `*/*` (Kubernetes): whatever is sent, JSON included.
    keys.find((k) => k.trim() === '*/*');
  if (key === undefined) return undefined;
  const media = content[key];
  return {
    contentType: key.trim() === '*/*' ? 'application/json' : key.split(';')[0]!.trim(),
    schema: isObject(media) ? media['schema'] : undefined,
  };
}

/** The schema of an operation's success response (200, 201, then any other 2xx). */
export function successSchema(operation: unknown): unknown {
  if (!isObject(operation) || !isObject(operation['responses'])) return undefined;
  const responses = operation['responses'];
  const codes = Object.keys(responses);
  const ordered = [
    ...['200', '201'].filter((c) => codes.includes(c)),
    ...codes.filter((c) => /^2(\d\d|XX)$/i.test(c) && c !== '200' && c !== '201').sort(),
  ];
  for (const code of ordered) {
    const response = responses[code];
    if (!isObject(response)) continue;
    const media = jsonMedia(response['content']);
    if (media?.schema !== undefined) return media.schema;
  }
  return undefined;
}

/** A JSON Schema with the named top-level properties removed (from `properties` and `required`). */
export function withoutProperties(
  schema: JsonSchema,
  view: ObjectView,
  drop: readonly string[],
): JsonSchema {
  const dropped = new Set(drop);
  const keep = (name: string): boolean => !dropped.has(name);
  const { allOf: _allOf, properties: _p, required: _r, ...rest } = schema;
  // A schema built with allOf is flattened: removing a field from one member is not enough, since
  // another member may still require it.
  const properties: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(view.properties))
    if (keep(name)) setKey(properties, name, prop);
  const out: JsonSchema = { ...rest, properties };
  const required = view.required.filter(keep);
  if (required.length > 0) out['required'] = required;
  if (out['type'] === undefined) out['type'] = 'object';
  return out;
}

/**
 * True when a key path names a property of a schema view, level by level (`spec.name`: `spec` has a
 * property `name`).
 */
export function viewHasKeyPath(view: ObjectView, path: string): boolean {
  let cur: ObjectView | undefined = view;
  const segments = keyPathSegments(path);
  for (const [i, segment] of segments.entries()) {
    if (cur === undefined || !Object.hasOwn(cur.properties, segment)) return false;
    const prop: Record<string, unknown> = cur.properties[segment]!;
    cur = i < segments.length - 1 ? objectView(prop) : undefined;
  }
  return true;
}

/** A string, number or integer property the client writes: a value one can look an object up by. */
export function isWritableScalar(prop: unknown): boolean {
  return (
    isObject(prop) &&
    !hasFlag(prop, 'readOnly') &&
    (hasType(prop, 'string') || hasType(prop, 'integer') || hasType(prop, 'number'))
  );
}

/** `s` as a literal inside a regular expression. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
