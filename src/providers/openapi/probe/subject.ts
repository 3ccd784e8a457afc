import { setKey } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { NAME_LIKE } from '../fields/identity.js';
import type { MarkerPlaceKind } from './facts.js';
import type { SchemaLocation } from './targets.js';

/** What the probe needs to know of one type before it sends anything. */
export interface ProbeSubject {
  readonly type: string;
  readonly location: SchemaLocation;
  /**
   * The object the probe creates, before its name is put in: the create schema's `example` when it
   * has one, else each property's `example`, `default` or first `enum` value.
   */
  readonly sample: Record<string, unknown>;
  /** The field the probe names its objects by (and tries as a natural key). */
  readonly nameField?: string;
  /** Candidate places for a marker: free-form string maps, string lists, description texts. */
  readonly markerPlaces: readonly { readonly field: string; readonly kind: MarkerPlaceKind }[];
  /** Fields the probe changes in place, one at a time, with their schemas. */
  readonly changeable: readonly string[];
  /** Required fields the probe has no value for: it cannot create the type without an example. */
  readonly missing: readonly string[];
  /** The path parameters that need a scope value (`--scope`): a parent's id or a provider value. */
  readonly scopeParams: readonly { readonly param: string; readonly field?: string }[];
  /** The key fields of a sub-collection: the probe never changes them (a new key is a new item). */
  readonly embeddedKey?: readonly string[];
}

const MAP_NAMES = /^(tags|labels|metadata|annotations|attributes|properties)$/i;
const LIST_NAMES = /^(tags|labels)$/i;
const TEXT_NAMES = /^(description|comment|comments|notes?|remarks?)$/i;

/**
 * Reads a type as the probe sees it (pure): the sample object, the name field, the marker places,
 * the fields to change, what is missing and which path parameters need a scope. `createSchema` is
 * the create body's schema from the dereferenced document, for its `example`.
 */
export function probeSubject(t: DerivedType, createSchema: unknown): ProbeSubject {
  const schema = t.info.schema as Record<string, unknown>;
  const props = record(schema['properties']);
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  // Secrets are never sent from an example (nor read back into evidence): a type that requires
  // one is not probed.
  const skip = new Set([
    ...t.parentFields,
    ...t.info.outputOnly,
    ...t.serverOwned,
    ...t.info.sensitive,
  ]);
  const example = record(record(createSchema)['example']);
  const sample: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(example)) if (!skip.has(k)) setKey(sample, k, v);
  for (const [k, p] of Object.entries(props)) {
    if (skip.has(k) || Object.hasOwn(sample, k)) continue;
    const value = valueOf(record(p));
    if (value !== undefined && (required.includes(k) || Object.keys(example).length === 0)) {
      setKey(sample, k, value);
    }
  }
  const ownKey = t.keyFields.length === t.parentFields.length + 1 ? t.keyFields.at(-1) : undefined;
  const nameField =
    (ownKey !== undefined && typeof record(props[ownKey])['type'] !== 'number'
      ? ownKey
      : undefined) ??
    // `name`, or `Name` (Docker's): the first name-like field the create takes as a string.
    NAME_LIKE.map((n) => Object.keys(props).find((f) => f.toLowerCase() === n)).find(
      (f): f is string => f !== undefined && record(props[f])['type'] === 'string' && !skip.has(f),
    );
  const markerPlaces = markerPlacesOf(props, skip, t.info.sensitive);
  const marked = new Set(markerPlaces.map((m) => m.field));
  // A required secret is missing too: the type is set aside with the reason, not created without it.
  const notSent = new Set([...t.parentFields, ...t.info.outputOnly, ...t.serverOwned]);
  const missing = required.filter(
    (f) => !notSent.has(f) && f !== nameField && !Object.hasOwn(sample, f) && !marked.has(f),
  );
  const embeddedKey = t.embedded?.key;
  const changeable = Object.keys(sample).filter(
    (f) =>
      t.writableFields.includes(f) &&
      !marked.has(f) &&
      !t.info.sensitive.includes(f) &&
      !(embeddedKey ?? []).includes(f),
  );
  if (
    nameField !== undefined &&
    !embeddedKey?.includes(nameField) &&
    !changeable.includes(nameField)
  )
    changeable.unshift(nameField);
  const scopeParams = t.params
    .filter((p) => p.kind === 'parent' || p.kind === 'provider')
    .map((p) => ({
      param: p.param,
      ...(p.kind === 'parent'
        ? { field: t.parentFields.find((f) => f === p.param) ?? p.param }
        : {}),
    }));
  const location: SchemaLocation = t.embedded
    ? { kind: 'embedded', parentItemPath: t.itemPath, field: t.embedded.field }
    : { kind: 'create', path: t.operations.create.path, method: t.operations.create.method };
  return {
    type: t.info.name,
    location,
    sample,
    ...(nameField !== undefined ? { nameField } : {}),
    markerPlaces,
    changeable,
    missing,
    scopeParams,
    ...(embeddedKey !== undefined ? { embeddedKey } : {}),
  };
}

function markerPlacesOf(
  props: Record<string, unknown>,
  skip: ReadonlySet<string>,
  sensitive: readonly string[],
): { field: string; kind: MarkerPlaceKind }[] {
  const out: { field: string; kind: MarkerPlaceKind }[] = [];
  for (const [k, p] of Object.entries(props)) {
    if (skip.has(k) || sensitive.includes(k)) continue;
    const s = record(p);
    // Only maps named for it: another map of strings (Docker's driver `Options`) is settings,
    // and a marker there is an option the platform acts on or refuses.
    const stringMap = s['type'] === 'object' && MAP_NAMES.test(k) && !Array.isArray(s['required']);
    if (stringMap) out.push({ field: k, kind: 'map' });
    else if (s['type'] === 'array' && LIST_NAMES.test(k) && record(s['items'])['type'] === 'string')
      out.push({ field: k, kind: 'list' });
    else if (
      s['type'] === 'string' &&
      TEXT_NAMES.test(k) &&
      s['enum'] === undefined &&
      s['format'] === undefined
    )
      out.push({ field: k, kind: 'text' });
  }
  return out;
}

function valueOf(s: Record<string, unknown>): unknown {
  if (s['example'] !== undefined) return s['example'];
  if (Array.isArray(s['examples']) && s['examples'].length > 0) return s['examples'][0];
  if (s['default'] !== undefined) return s['default'];
  if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
  return undefined;
}

/** The marker value the probe writes into a place of each kind, for run `run`. */
export function markerValue(kind: MarkerPlaceKind, run: string): unknown {
  if (kind === 'map') return { 'tend.probe': run };
  if (kind === 'list') return [`tend:probe=${run}`];
  return `tend probe ${run}`;
}

function record(v: unknown): Record<string, unknown> {
  return isRecordValue(v) ? v : {};
}

function isRecordValue(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
