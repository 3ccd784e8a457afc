import { valueAt } from './value-at.js';

/**
 * Key fields given as paths into an object (docs/onboard-rest-api.md, "Keys in nested fields"): a
 * natural key or an id may live below the top level (DigitalOcean's app is named by `spec.name`, a
 * GitHub membership carries its user's `user.login`). A key path is the field names from the top
 * down, joined by `.`; a `.` or `\` inside a field name is written `\.` or `\\`, so every field name
 * has exactly one spelling and a top-level name never changes meaning (`name` is `name`).
 */

/** The field names of a key path, from the top (`spec.name` → `spec`, `name`; `a\.b` → `a.b`). */
export function keyPathSegments(path: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === '\\' && i + 1 < path.length) {
      cur += path[++i]!;
    } else if (c === '.') {
      out.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  out.push(cur);
  return out;
}

/** The key path of field names (the inverse of keyPathSegments). */
export function formatKeyPath(segments: readonly string[]): string {
  return segments.map((s) => s.replace(/[\\.]/g, (c) => `\\${c}`)).join('.');
}

/** True when a key path names a field below the top level. */
export function isNestedKeyPath(path: string): boolean {
  return keyPathSegments(path).length > 1;
}

/** The value at a key path of an object: `valueAt` of its field names (own properties only). */
export function valueAtKeyPath(value: unknown, path: string): unknown {
  return valueAt(value, keyPathSegments(path));
}
