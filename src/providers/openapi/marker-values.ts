import type { Marker, ObservedObject } from '../../core/index.js';
import {
  getPath,
  isMarkerEntry,
  isMarkerTag,
  markerEntries,
  markerTags,
  readMarkerIn,
  setKey,
  splitMarkerText,
  withMarkerText,
  withoutMarkerIn,
} from '../../core/index.js';
import type { DerivedType } from './derive-types.js';
import { isObject } from './fields/schema-view.js';

/**
 * Tend's ownership marker in the values of a type's marker field, whatever its kind (a map of
 * strings, a list of strings, a free text) and wherever it sits (`tags`, `metadata.labels`).
 */

/** The marker an object's fields carry; undefined when the type has no marker field or none is there. */
export function markerOf(
  t: DerivedType,
  fields: Readonly<Record<string, unknown>>,
): Marker | undefined {
  const field = t.info.markerField;
  return field === undefined ? undefined : readMarkerIn(t.info.markerKind, getPath(fields, field));
}

/**
 * The user's part of a value at a path of a type's objects, for comparing: the marker field's value
 * without Tend's marker (a declared text compares with the text Tend sent, token left out); other
 * paths unchanged.
 */
export function withoutMarkerAt(t: DerivedType, path: string, value: unknown): unknown {
  return path === t.info.markerField ? withoutMarkerIn(t.info.markerKind, value) : value;
}

/**
 * A body with Tend's marker in the marker field: the declared value, the marker the object already
 * carries (a later marker never erases the op of the create), then the given marker. Nothing is
 * added when the type has no marker field, or when an update would not change the field (it is not
 * declared and the object already carries the marker).
 */
export function withMarker(
  t: DerivedType,
  body: Record<string, unknown>,
  current: ObservedObject | undefined,
  marker: Marker | undefined,
): Record<string, unknown> {
  const field = t.info.markerField;
  if (field === undefined) return body;
  const kind = t.info.markerKind ?? 'map';
  const declared = getPath(body, field);
  const now = current === undefined ? undefined : getPath(current.fields, field);
  const had = readMarkerIn(kind, now);
  const merged: Marker | undefined = marker
    ? { ...marker, ...(marker.op === undefined && had?.op !== undefined ? { op: had.op } : {}) }
    : had;
  const missing =
    marker !== undefined && (had?.workspace !== marker.workspace || had.address !== marker.address);

  let value: unknown;
  if (kind === 'map') {
    const add = marker ? markerTags(marker) : {};
    const currentTags = isObject(now) ? now : {};
    const kept = Object.fromEntries(Object.entries(currentTags).filter(([k]) => isMarkerTag(k)));
    if (declared === undefined) {
      if (current === undefined) {
        if (Object.keys(add).length === 0) return body;
        value = add;
      } else {
        // Tags are not being changed: send them only to put a missing marker on the object.
        if (!Object.entries(add).some(([k, v]) => currentTags[k] !== v)) return body;
        value = { ...currentTags, ...add };
      }
    } else {
      if (!isObject(declared)) return body;
      value = { ...declared, ...kept, ...add };
    }
  } else if (kind === 'list') {
    if (declared !== undefined && !Array.isArray(declared)) return body;
    if (declared === undefined && (current === undefined ? merged === undefined : !missing)) {
      return body;
    }
    const base: unknown[] = declared ?? (Array.isArray(now) ? now : []);
    const user = base.filter((e) => !isMarkerEntry(e));
    value = merged ? [...user, ...markerEntries(merged)] : user;
  } else {
    if (declared !== undefined && typeof declared !== 'string') return body;
    if (declared === undefined && (current === undefined ? merged === undefined : !missing)) {
      return body;
    }
    const text = declared ?? (typeof now === 'string' ? splitMarkerText(now).text : '');
    value = merged ? withMarkerText(text, merged) : text;
  }
  return withPath(body, field, value);
}

/** A copy of `body` with `value` at a dotted path (objects on the way are copied, made when missing). */
function withPath(
  body: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const [head, ...rest] = path.split('.');
  const out = { ...body };
  if (rest.length === 0) {
    setKey(out, head!, value);
    return out;
  }
  const inner = out[head!];
  setKey(out, head!, withPath(isObject(inner) ? inner : {}, rest.join('.'), value));
  return out;
}
