import type { DataPathSegment } from './safe-keys.js';
import { ownValue } from './safe-keys.js';

/**
 * The value at a path into parsed data (a spec, an observed object's fields, an answer's body): each
 * segment is a key of a mapping or the index of a list (a number, or a text of digits). Only own
 * properties are read — a field named `constructor` or `__proto__` is the data's, never the
 * prototype's. Undefined where the path leads nowhere: a missing key, an index past the end, a step
 * into a scalar. Every reader of "the value at this path" in Tend goes through it; `getPath` (dotted
 * text) and `valueAtKeyPath` (escaped key paths) only parse their spelling of a path first.
 */
export function valueAt(value: unknown, path: readonly DataPathSegment[]): unknown {
  let cur = value;
  for (const segment of path) {
    if (Array.isArray(cur)) {
      const index = typeof segment === 'number' ? segment : INDEX.test(segment) ? +segment : -1;
      cur = Number.isInteger(index) && index >= 0 ? (cur as unknown[])[index] : undefined;
    } else if (cur !== null && typeof cur === 'object') {
      cur = ownValue(cur, String(segment));
    } else return undefined;
  }
  return cur;
}

const INDEX = /^(0|[1-9]\d*)$/;
