import { hasType, isObject, objectView } from '../fields/schema-view.js';

/**
 * Response envelopes: a single property of an answer that wraps the object (`{"server": {…}}`) or,
 * for a list, the array (`{"data": […], "next_cursor": …}`). Declared with `x-tend-envelope:
 * <property>` (a dotted path for a deeper wrapper, `_embedded.items`) on the operation, or inferred
 * from the response schema; `x-tend-envelope: false` says an answer is not wrapped.
 */

const FIELD_PATH = /^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$/;

/** Names a wrapper property commonly has, besides the type's own name (singular or plural). */
const WRAPPER_NAMES = ['data', 'item', 'result', 'object', 'resource', 'value'];
/** Names of array wrappers in list answers, in order of preference. */
const LIST_NAMES = [
  'items',
  'data',
  'results',
  'records',
  'values',
  'entries',
  'elements',
  'content',
];
/** Properties that travel next to a wrapper without being the object (paging, links, metadata). */
const METADATA =
  /^(_?links?|_?meta(data)?|pagination|paging|page_?info|included|errors?|warnings?|status|success|message|request_?id|total(_?count)?|count|next(_?\w+)?|prev(ious)?(_?\w+)?|cursor|has_?more|action|actions)$/i;

/** What `x-tend-envelope` declares: a property path, `null` for "not wrapped", or an error text. */
export function readEnvelope(value: unknown): string | null | { readonly error: string } {
  if (value === false || value === 'none') return null;
  if (typeof value === 'string' && FIELD_PATH.test(value)) return value;
  return {
    error: `x-tend-envelope must be the name (or dotted path) of the property wrapping the answer, or false, not ${JSON.stringify(value)}`,
  };
}

/** The singular of a plural type name, roughly (`servers` → `server`, `policies` → `policy`). */
export function singular(name: string): string {
  if (/ies$/i.test(name)) return `${name.slice(0, -3)}y`;
  if (/(ss|x|ch|sh)es$/i.test(name)) return name.slice(0, -2);
  if (/s$/i.test(name) && !/ss$/i.test(name)) return name.slice(0, -1);
  return name;
}

function isObjectSchema(s: unknown): boolean {
  if (!isObject(s)) return false;
  if (hasType(s, 'array')) return false;
  return (
    Object.keys(objectView(s).properties).length > 0 && (hasType(s, 'object') || !('type' in s))
  );
}

/**
 * The property that wraps the object in an answer for one object, inferred from its schema: the only
 * property when there is one and it is an object schema; else the one object property named like the
 * type (`server` for `servers`) or a wrapper (`data`, `item`, `result`…) whose siblings are all
 * metadata (`meta`, `links`, `status`…). Never a property the create body also has: that is a field.
 */
export function inferObjectEnvelope(
  schema: unknown,
  typeName: string,
  createFields: readonly string[],
): string | undefined {
  const props = objectView(schema).properties;
  const names = Object.keys(props);
  const fields = new Set(createFields);
  const objects = names.filter((n) => isObjectSchema(props[n]) && !fields.has(n));
  if (names.length === 1 && objects.length === 1) return objects[0];
  const wanted = new Set(
    [typeName, singular(typeName), ...WRAPPER_NAMES].map((n) => n.toLowerCase()),
  );
  const named = objects.filter((n) => wanted.has(n.toLowerCase()));
  if (named.length !== 1) return undefined;
  const others = names.filter((n) => n !== named[0]);
  return others.every((n) => METADATA.test(n)) ? named[0] : undefined;
}

/**
 * The property holding the array in a list answer: the only array property, or the preferred one
 * among several (`items`, `data`, `results`…, the type's name). Undefined for a bare array or when
 * nothing tells.
 */
export function inferListEnvelope(schema: unknown, typeName: string): string | undefined {
  if (hasType(schema, 'array') || (isObject(schema) && isObject(schema['items']))) return undefined;
  const view = objectView(schema);
  const arrays = Object.keys(view.properties).filter((n) => hasType(view.properties[n], 'array'));
  if (arrays.length === 1) return arrays[0];
  const known = [...LIST_NAMES, typeName].find((n) => arrays.includes(n));
  if (known !== undefined) return known;
  // One level down: `{"data": {"items": […]}}`, HAL's `{"_embedded": {"things": […]}}`.
  const inner: string[] = [];
  for (const [name, prop] of Object.entries(view.properties)) {
    if (!isObjectSchema(prop)) continue;
    const p = objectView(prop).properties;
    for (const [n, s] of Object.entries(p)) if (hasType(s, 'array')) inner.push(`${name}.${n}`);
  }
  return inner.length === 1 ? inner[0] : undefined;
}

/** The schema at a dotted property path of a schema (for an envelope's inner schema). */
export function schemaAtPath(schema: unknown, path: string): unknown {
  let cur: unknown = schema;
  for (const part of path.split('.')) {
    const props = objectView(cur).properties;
    if (!Object.hasOwn(props, part)) return undefined;
    cur = props[part];
  }
  return cur;
}

/** The value at a dotted path of an answer. */
export function unwrap(body: unknown, path: string): unknown {
  let cur: unknown = body;
  for (const part of path.split('.')) {
    if (!isObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}
