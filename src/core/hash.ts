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
