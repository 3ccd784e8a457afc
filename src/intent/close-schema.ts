import type { JsonSchema } from '../core/index.js';
import { setKey } from '../core/index.js';

type Node = Record<string, unknown>;

const COMPOSITIONS = ['allOf', 'anyOf', 'oneOf'] as const;
/** Keywords whose value is one subschema. */
const ONE = [
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'additionalItems',
  'unevaluatedItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
] as const;
/** Keywords whose value is a list of subschemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'] as const;
/** Keywords whose value maps names to subschemas. */
const MAP = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
] as const;

function isNode(v: unknown): v is Node {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function compositionBranches(node: Node): Node[] {
  return COMPOSITIONS.flatMap((k) => (Array.isArray(node[k]) ? (node[k] as unknown[]) : [])).filter(
    isNode,
  );
}

/** Local `$ref`s used as direct composition branches: their targets must stay open. */
function refsInBranches(root: unknown): Set<string> {
  const out = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (isNode(v)) {
      for (const b of compositionBranches(v)) {
        if (typeof b.$ref === 'string' && b.$ref.startsWith('#')) out.add(b.$ref);
      }
    }
    for (const child of Object.values(v)) walk(child);
  };
  walk(root);
  return out;
}

function hasProperties(node: Node): boolean {
  return isNode(node.properties);
}

/** True when the node leaves the question of extra properties to the schema author. */
function openByAuthor(node: Node): boolean {
  return (
    node.additionalProperties !== undefined ||
    node.unevaluatedProperties !== undefined ||
    node.patternProperties !== undefined
  );
}

/** OpenAPI 3.0 / draft-04 spellings that a 2020-12 validator would reject or ignore. */
function modernise(node: Node): void {
  delete node.$schema;
  if (node.nullable === true) {
    const type: unknown = node.type;
    const values: unknown = node.enum;
    if (typeof type === 'string') node.type = [type, 'null'];
    else if (Array.isArray(type) && !type.includes('null'))
      node.type = [...(type as unknown[]), 'null'];
    if (Array.isArray(values) && !values.includes(null))
      node.enum = [...(values as unknown[]), null];
  }
  delete node.nullable;
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (node[exclusive] === true && typeof node[bound] === 'number') {
      node[exclusive] = node[bound];
      delete node[bound];
    } else if (typeof node[exclusive] === 'boolean') {
      delete node[exclusive];
    }
  }
}

/**
 * A copy of a spec schema ready for strict validation (the original is never changed):
 * - object schemas are CLOSED: a schema with `properties` and no word on extra properties gets
 *   `additionalProperties: false`, so a misspelt field is an error instead of being silently sent;
 * - a schema combining subschemas (allOf/anyOf/oneOf) is closed with `unevaluatedProperties: false`
 *   instead, and its direct branches (and local `$ref` targets used as branches) stay open, because
 *   closing one branch would reject the fields its siblings declare;
 * - OpenAPI 3.0 `nullable` and boolean `exclusiveMinimum/Maximum` become their 2020-12 forms, and
 *   `$schema` is dropped (the validator is always 2020-12).
 * - cycles (dereferenced recursive schemas) become local `$ref`s, which the validator can compile.
 */
export function closeSchema(schema: JsonSchema): JsonSchema {
  // Dereferenced recursive schemas are cyclic object graphs, which a validator cannot compile: a
  // back edge to an ancestor becomes a `$ref` to where that ancestor's copy sits.
  const done = new Map<unknown, unknown>();
  const onPath = new Map<unknown, string>();
  const copyValue = (v: unknown, pointer: string): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const ancestor = onPath.get(v);
    if (ancestor !== undefined) return { $ref: ancestor };
    const copied = done.get(v);
    if (copied !== undefined) return copied;
    onPath.set(v, pointer);
    let out: unknown;
    if (Array.isArray(v)) {
      out = v.map((item, i) => copyValue(item, `${pointer}/${i}`));
    } else {
      const node: Node = {};
      for (const [k, item] of Object.entries(v)) {
        setKey(node, k, copyValue(item, `${pointer}/${escapePointer(k)}`));
      }
      out = node;
    }
    onPath.delete(v);
    done.set(v, out);
    return out;
  };

  const seen = new Set<Node>();
  const transform = (node: Node, pointer: string, isBranch: boolean): void => {
    if (seen.has(node)) return;
    seen.add(node);
    modernise(node);
    const branches = compositionBranches(node);
    if (!openByAuthor(node) && !isBranch && !keepOpen.has(pointer)) {
      if (branches.length > 0 && (hasProperties(node) || branches.some(hasProperties))) {
        node.unevaluatedProperties = false;
      } else if (hasProperties(node)) {
        node.additionalProperties = false;
      }
    }
    for (const k of ONE) {
      if (isNode(node[k])) transform(node[k], `${pointer}/${k}`, false);
    }
    for (const k of LIST) {
      const list = node[k];
      if (!Array.isArray(list)) continue;
      const branch = (COMPOSITIONS as readonly string[]).includes(k);
      list.forEach((item, i) => {
        if (isNode(item)) transform(item, `${pointer}/${k}/${i}`, branch);
      });
    }
    for (const k of MAP) {
      const map = node[k];
      if (!isNode(map)) continue;
      for (const [name, item] of Object.entries(map)) {
        if (isNode(item)) transform(item, `${pointer}/${k}/${escapePointer(name)}`, false);
      }
    }
  };

  const copy = copyValue(schema, '#') as Node;
  const keepOpen = refsInBranches(copy);
  transform(copy, '#', false);
  // OpenAPI documents keep shared schemas under components/schemas: close those too.
  const components = copy.components;
  if (isNode(components) && isNode(components.schemas)) {
    for (const [name, item] of Object.entries(components.schemas)) {
      if (isNode(item)) transform(item, `#/components/schemas/${escapePointer(name)}`, false);
    }
  }
  return copy;
}

/** The property names a (closed) object schema node allows, following composition branches and local refs. */
export function allowedProperties(node: unknown, root: unknown, depth = 0): string[] {
  if (!isNode(node) || depth > 8) return [];
  const out = new Set<string>(isNode(node.properties) ? Object.keys(node.properties) : []);
  if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    let target: unknown = root;
    for (const part of node.$ref.slice(2).split('/')) {
      target = isNode(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    for (const p of allowedProperties(target, root, depth + 1)) out.add(p);
  }
  for (const b of compositionBranches(node)) {
    for (const p of allowedProperties(b, root, depth + 1)) out.add(p);
  }
  return [...out];
}
