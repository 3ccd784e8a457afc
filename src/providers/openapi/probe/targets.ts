import { jsonPathString } from '../needs.js';

// Where the probe's overlay writes each fact: JSONPath targets into the document as written (an
// overlay applies before `$ref`s are resolved, so a schema shared by `$ref` is targeted where it is
// defined: `$.definitions.Zone`, `$.components.schemas.Network`). Pure.

/** A place in the raw document: its JSONPath and the value there. */
interface Place {
  readonly target: string;
  readonly node: unknown;
}

/** How to reach a type's object schema in the document as written. */
export type SchemaLocation =
  | { readonly kind: 'create'; readonly path: string; readonly method: string }
  | { readonly kind: 'embedded'; readonly parentItemPath: string; readonly field: string };

/** The JSONPath of a type's object schema in the raw document, or undefined when it cannot be found. */
export function schemaTarget(raw: unknown, at: SchemaLocation): string | undefined {
  return schemaPlace(raw, at)?.target;
}

/**
 * The JSONPath of a field of a type's object schema (`name`, or `records[].disabled` below an array
 * of objects), following `$ref`s and `allOf` members; undefined when the document does not show it.
 */
export function propertyTarget(raw: unknown, at: SchemaLocation, path: string): string | undefined {
  let place = schemaPlace(raw, at);
  for (const segment of path.split('.')) {
    if (place === undefined) return undefined;
    const array = segment.endsWith('[]');
    const name = array ? segment.slice(0, -2) : segment;
    place = propertyOf(raw, place, name);
    if (array && place !== undefined) place = child(raw, place, 'items');
  }
  return place?.target;
}

function schemaPlace(raw: unknown, at: SchemaLocation): Place | undefined {
  const paths = child(raw, { target: '$', node: raw }, 'paths');
  if (paths === undefined) return undefined;
  if (at.kind === 'create') {
    const op = keyed(raw, keyed(raw, paths, at.path), at.method.toLowerCase());
    return op === undefined ? undefined : bodySchema(raw, op);
  }
  const get = keyed(raw, keyed(raw, paths, at.parentItemPath), 'get');
  const ok = keyed(raw, child(raw, get, 'responses'), '200');
  const schema = ok === undefined ? undefined : (mediaSchema(raw, ok) ?? child(raw, ok, 'schema'));
  const field = schema === undefined ? undefined : propertyOf(raw, schema, at.field);
  return field === undefined ? undefined : child(raw, field, 'items');
}

/** The request body schema of an operation: OpenAPI 3's `requestBody`, Swagger 2.0's `in: body`. */
function bodySchema(raw: unknown, op: Place): Place | undefined {
  const body = child(raw, op, 'requestBody');
  if (body !== undefined) return mediaSchema(raw, body);
  const params = child(raw, op, 'parameters');
  if (params === undefined || !Array.isArray(params.node)) return undefined;
  for (let i = 0; i < params.node.length; i++) {
    const p = resolved(raw, { target: `${params.target}[${i}]`, node: params.node[i] });
    if (isRecord(p.node) && p.node['in'] === 'body') return child(raw, p, 'schema');
  }
  return undefined;
}

function mediaSchema(raw: unknown, holder: Place): Place | undefined {
  const content = child(raw, holder, 'content');
  if (content === undefined || !isRecord(content.node)) return undefined;
  const types = Object.keys(content.node);
  const json = types.find((t) => /json/i.test(t)) ?? types[0];
  return json === undefined ? undefined : child(raw, keyed(raw, content, json), 'schema');
}

function propertyOf(raw: unknown, schema: Place, name: string): Place | undefined {
  const direct = keyed(raw, child(raw, schema, 'properties'), name);
  if (direct !== undefined) return direct;
  const all = child(raw, schema, 'allOf');
  if (all === undefined || !Array.isArray(all.node)) return undefined;
  for (let i = 0; i < all.node.length; i++) {
    const member = resolved(raw, { target: `${all.target}[${i}]`, node: all.node[i] });
    const found = propertyOf(raw, member, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A member by a plain key (`.name`), resolved through a local `$ref`. */
function child(raw: unknown, place: Place | undefined, key: string): Place | undefined {
  if (place === undefined || !isRecord(place.node) || !Object.hasOwn(place.node, key))
    return undefined;
  return resolved(raw, { target: `${place.target}.${key}`, node: place.node[key] });
}

/** A member by any key (`['/servers/{server_id}/zones']`), resolved through a local `$ref`. */
function keyed(raw: unknown, place: Place | undefined, key: string): Place | undefined {
  if (place === undefined || !isRecord(place.node) || !Object.hasOwn(place.node, key))
    return undefined;
  const target = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
    ? `${place.target}.${key}`
    : `${place.target}[${jsonPathString(key)}]`;
  return resolved(raw, { target, node: place.node[key] });
}

/** Follows local `$ref`s (at most 20): the target becomes the definition's own path. */
function resolved(raw: unknown, place: Place): Place {
  let at = place;
  for (let hops = 0; hops < 20; hops++) {
    const ref = isRecord(at.node) ? at.node['$ref'] : undefined;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return at;
    let next: Place | undefined = { target: '$', node: raw };
    for (const part of ref.slice(2).split('/')) {
      next = keyed(raw, next, part.replace(/~1/g, '/').replace(/~0/g, '~'));
      if (next === undefined) return at;
    }
    at = next;
  }
  return at;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
