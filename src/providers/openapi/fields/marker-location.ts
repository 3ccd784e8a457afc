import type { IdentityStrategy, MarkerKind } from '../../../core/index.js';
import { MARKER_KINDS } from '../../../core/index.js';
import { schemaAt } from './normalize.js';
import type { ObjectView } from './schema-view.js';
import { hasFlag, hasType, isObject } from './schema-view.js';

/** Where a type's objects carry Tend's ownership marker, and in what form. */
export interface MarkerLocation {
  /** A top-level field, or a dotted path to a nested one (`metadata.labels`). */
  readonly field: string;
  readonly kind: MarkerKind;
}

/**
 * The fields inference looks at, best first within each kind. A map of strings is the best place
 * (keys of their own, invisible to the user's keys), then a list of strings (entries of their own),
 * then, as the last resort, a free-text field, where the marker is a token at the end of the text.
 */
export const MARKER_CANDIDATES: Readonly<Record<MarkerKind, readonly string[]>> = {
  map: [
    'tags',
    'labels',
    'metadata.labels',
    'metadata.tags',
    'metadata',
    'annotations',
    'attributes',
    'properties',
  ],
  list: ['tags', 'labels'],
  text: ['description', 'comment'],
};

/**
 * Where the marker of a type goes: `x-tend-marker: {field, kind}` when the create schema (or the POST
 * operation) states it (`x-tend-marker: false` says the objects have no place for one), else the
 * first candidate of the best kind the create body offers as a writable field. A statement that
 * does not fit the schema is a warning and inference decides instead.
 */
export function markerLocation(
  typeName: string,
  create: ObjectView,
  explicit: readonly unknown[],
  warnings: string[],
): MarkerLocation | undefined {
  const stated = explicit
    .map((s) => (isObject(s) ? s['x-tend-marker'] : undefined))
    .find((v) => v !== undefined);
  if (stated === false || stated === 'none') return undefined;
  if (stated !== undefined) {
    const read = statedLocation(create, stated);
    if (typeof read !== 'string') return read;
    warnings.push(`${typeName}: x-tend-marker ${read}; inferring where the marker goes instead`);
  }
  const first = (
    kind: MarkerKind,
    fit: (field: string, prop: unknown) => boolean,
  ): MarkerLocation | undefined => {
    for (const candidate of MARKER_CANDIDATES[kind]) {
      const field = spelled(create, candidate);
      if (fit(field, propertyAt(create, field)) && writable(create, field)) return { field, kind };
    }
    return undefined;
  };
  // A map, then a list, as the schema types them; then a map the schema shows by its name and an
  // example only (freeFormMap); the free text last.
  return (
    first('map', (_, prop) => fits(prop, 'map')) ??
    first('list', (_, prop) => fits(prop, 'list')) ??
    first('map', freeFormMap) ??
    first('text', (_, prop) => fits(prop, 'text'))
  );
}

/** Reads `{field, kind}`; a string says what is wrong with it. */
function statedLocation(create: ObjectView, stated: unknown): MarkerLocation | string {
  if (!isObject(stated) || typeof stated['field'] !== 'string' || stated['field'] === '') {
    return 'must be {field: <name or dotted path>, kind: map|list|text} (or false)';
  }
  const field = stated['field'];
  const kind = stated['kind'] ?? inferKind(propertyAt(create, field));
  if (typeof kind !== 'string' || !(MARKER_KINDS as readonly string[]).includes(kind)) {
    return `kind must be one of ${MARKER_KINDS.join(', ')}, not ${JSON.stringify(kind)}`;
  }
  const prop = propertyAt(create, field);
  if (prop === undefined) return `names ${field}, which the create body does not have`;
  if (!writable(create, field)) return `names ${field}, which is read-only`;
  if (!fits(prop, kind as MarkerKind)) {
    return `says ${field} is a ${kind}, but the create body says it is ${shapeOf(prop)}`;
  }
  return { field, kind: kind as MarkerKind };
}

function inferKind(prop: unknown): MarkerKind | undefined {
  return MARKER_KINDS.find((k) => fits(prop, k));
}

/**
 * True when a property schema can hold a marker of a kind. A choice (`anyOf`/`oneOf`) fits when one
 * member does and the others only offer the empty string (Stripe's `metadata`: a map, or `""` to
 * clear it).
 */
function fits(prop: unknown, kind: MarkerKind): boolean {
  if (!isObject(prop)) return false;
  const choice = prop['anyOf'] ?? prop['oneOf'];
  if (Array.isArray(choice) && prop['type'] === undefined) {
    const others = choice.filter((m) => !fitsOne(m, kind));
    return others.length < choice.length && others.every(clearsOnly);
  }
  return fitsOne(prop, kind);
}

/** The names of the places people keep their own keys in (free-form maps), whatever their schema. */
const FREE_FORM_NAMES = new Set([
  'tags',
  'labels',
  'metadata',
  'annotations',
  'attributes',
  'properties',
]);

/** A description of a map of the user's own keys. */
const PAIRS =
  /\bkey[-/\s]?value\b|\barbitrary\b|\bfree[-\s]?form\b|\buser[-\s]?defined\b|\bcustom\b/i;

/** The names of maps that hold labels whatever else their schema says. */
const LABEL_NAMES = new Set(['tags', 'labels', 'annotations']);

/** A property name that is a field of a structure rather than an example key. */
const STRUCTURE_FIELD = /^(name|namespace|slug|key|id|uid|uuid|type|kind|version)$/i;

/**
 * A free-form map of strings under one of `FREE_FORM_NAMES`: an object whose listed properties are
 * optional strings and whose other keys are strings too (`additionalProperties` of strings) or not
 * stated, with at most one property listed that is an example (Hetzner's `labels: {properties:
 * {labelkey: {example: value}}}`, "User-defined labels (key-value pairs)"). A structure with several fields or a required one (Kubernetes' `metadata`) is no
 * map, nor one whose values may be anything (`additionalProperties: true`: Keycloak's `attributes`
 * hold lists of strings).
 */
export function freeFormMap(field: string, prop: unknown): boolean {
  const name = field.split('.').at(-1)!.toLowerCase();
  if (!FREE_FORM_NAMES.has(name) || !isObject(prop)) return false;
  if (!hasType(prop, 'object') && !(prop['type'] === undefined && isObject(prop['properties']))) {
    return false;
  }
  const listed = isObject(prop['properties']) ? Object.values(prop['properties']) : [];
  const required = prop['required'];
  if (Array.isArray(required) && required.length > 0) return false;
  if (!listed.every((p) => hasType(p, 'string') && isObject(p) && p['enum'] === undefined)) {
    return false;
  }
  const extra = prop['additionalProperties'];
  if (extra !== undefined) return isObject(extra) && hasType(extra, 'string');
  const pairs = typeof prop['description'] === 'string' && PAIRS.test(prop['description']);
  // Nothing listed: labels by their name, the others only when said to hold pairs (Keycloak's
  // `attributes` hold lists of strings).
  if (listed.length === 0) return pairs || LABEL_NAMES.has(name);
  // One listed property: an example when the map says it holds pairs, or the property shows a value
  // and is not named like a field of a structure (Kubernetes' `metadata: {name}` is one).
  const [key, value] = Object.entries(prop['properties'] as Record<string, unknown>)[0]!;
  return (
    listed.length === 1 &&
    (pairs || (isObject(value) && value['example'] !== undefined && !STRUCTURE_FIELD.test(key)))
  );
}

/** A member of a choice that offers only the empty string (`{enum: [""]}`). */
function clearsOnly(member: unknown): boolean {
  if (!isObject(member)) return false;
  const values = member['enum'];
  return Array.isArray(values) && values.length > 0 && values.every((v) => v === '');
}

function fitsOne(prop: unknown, kind: MarkerKind): boolean {
  if (!isObject(prop)) return false;
  if (kind === 'map') {
    const extra = prop['additionalProperties'];
    return hasType(prop, 'object') && isObject(extra) && hasType(extra, 'string');
  }
  if (kind === 'list') return hasType(prop, 'array') && hasType(prop['items'], 'string');
  return hasType(prop, 'string') && prop['enum'] === undefined && prop['format'] === undefined;
}

/** A field the client writes: neither it nor an object above it is read-only. */
function writable(create: ObjectView, field: string): boolean {
  const parts = field.split('.');
  for (let i = 1; i <= parts.length; i++) {
    if (hasFlag(propertyAt(create, parts.slice(0, i).join('.')), 'readOnly')) return false;
  }
  return true;
}

/** The schema of a field (a dotted path) of the create body. */
/**
 * A candidate as the create body spells it: its first segment matched without regard to case when
 * the exact name is absent (Docker Engine's `Labels`, Azure's `Tags`).
 */
function spelled(create: ObjectView, candidate: string): string {
  const [top, ...rest] = candidate.split('.');
  if (Object.hasOwn(create.properties, top!)) return candidate;
  const other = Object.keys(create.properties).find((k) => k.toLowerCase() === top);
  return other === undefined ? candidate : [other, ...rest].join('.');
}

function propertyAt(create: ObjectView, field: string): unknown {
  const [top, ...rest] = field.split('.');
  const prop = create.properties[top!];
  return rest.length === 0 || prop === undefined ? prop : schemaAt(prop, rest.join('.'));
}

function shapeOf(prop: unknown): string {
  if (hasType(prop, 'object')) return 'an object that is not a map of strings';
  if (hasType(prop, 'array')) return 'a list that is not of strings';
  if (hasType(prop, 'string')) {
    return isObject(prop) && (prop['enum'] !== undefined || prop['format'] !== undefined)
      ? 'a string with a format or an enum'
      : 'a string';
  }
  return 'not a map, a list or a string';
}

/**
 * The marker a type uses, of the place `markerLocation` found: a text marker is the last resort —
 * inferred, it is used only when the type has no other identity (a token in a person's description
 * is noise where a name already identifies the object); stated with `x-tend-marker` (on one of
 * `explicit`), it is used as stated.
 */
export function markerInUse(
  found: MarkerLocation | undefined,
  explicit: readonly unknown[],
  identity: IdentityStrategy | null,
): MarkerLocation | undefined {
  const stated = explicit.some((s) => isObject(s) && s['x-tend-marker'] !== undefined);
  return found?.kind === 'text' && !stated && identity !== 'marker' ? undefined : found;
}
