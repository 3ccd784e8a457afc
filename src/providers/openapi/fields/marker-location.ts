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
  map: ['tags', 'labels', 'metadata.labels', 'metadata.tags', 'metadata'],
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
  for (const kind of MARKER_KINDS) {
    for (const candidate of MARKER_CANDIDATES[kind]) {
      const field = spelled(create, candidate);
      const prop = propertyAt(create, field);
      if (fits(prop, kind) && writable(create, field)) return { field, kind };
    }
  }
  return undefined;
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
