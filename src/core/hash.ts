import { createHash } from 'node:crypto';
import { defineKey } from './safe-keys.js';

/**
 * Canonical JSON: object keys sorted, `undefined` members dropped. Two values that are equal as data
 * give the same text, so hashes of desired state and idempotency keys are stable across runs.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) defineKey(out, k, sortKeys(v));
    }
    return out;
  }
  return value;
}

/** Hex SHA-256 of a string. Deterministic; no I/O. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Short stable hash of any JSON value (first 16 hex digits of SHA-256 of its canonical JSON). */
export function hashValue(value: unknown): string {
  return sha256(canonicalJson(value)).slice(0, 16);
}

/**
 * The canonical JSON of `value` as `JSON.stringify` writes it, in one walk: the same text as
 * `canonicalJson(JSON.parse(JSON.stringify(value)))` without writing, parsing and sorting copies.
 * So `toJSON` is honoured, boxed primitives are unboxed, members that are `undefined`, functions or
 * symbols are dropped (`null` inside arrays), non-finite numbers are `null`, and keys are sorted as
 * `canonicalJson` sorts them. Undefined where `JSON.stringify` returns undefined; throws where it
 * throws (a cycle, a bigint). Used where a value is stored as JSON text and hashed as read back.
 */
export function storedCanonicalJson(value: unknown): string | undefined {
  return writeStored(value, '', []);
}

function writeStored(input: unknown, key: string, path: object[]): string | undefined {
  let value = input;
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  ) {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (value instanceof Number) value = Number(value);
  else if (value instanceof String) value = String(value);
  else if (value instanceof Boolean) value = value.valueOf();
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      // JSON.stringify's own error.
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (path.includes(value)) throw new TypeError('Converting circular structure to JSON');
  path.push(value);
  let text: string;
  if (Array.isArray(value)) {
    const items: string[] = [];
    for (let i = 0; i < value.length; i++) {
      items.push(writeStored((value as unknown[])[i], String(i), path) ?? 'null');
    }
    text = `[${items.join(',')}]`;
  } else {
    const members: string[] = [];
    const record = value as Record<string, unknown>;
    for (const k of sortedAsCanonical(Object.keys(record))) {
      const member = writeStored(record[k], k, path);
      if (member !== undefined) members.push(`${JSON.stringify(k)}:${member}`);
    }
    text = `{${members.join(',')}}`;
  }
  path.pop();
  return text;
}

/** An array index (a canonical integer below 2^32 − 1): enumerated before other keys, in order. */
function isArrayIndex(key: string): boolean {
  // Most keys start with a letter: decided without the pattern.
  const first = key.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return false;
  return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 4_294_967_295;
}

/**
 * The keys in the order `JSON.stringify` writes an object `canonicalJson` built by inserting them
 * sorted: array indices first, ascending by value (every object enumerates them so), then the rest
 * in sort order.
 */
function sortedAsCanonical(keys: string[]): string[] {
  const sorted = keys.sort();
  if (!sorted.some(isArrayIndex)) return sorted;
  const indices = sorted.filter(isArrayIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...sorted.filter((k) => !isArrayIndex(k))];
}
