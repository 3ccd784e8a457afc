import { defineKey } from '../core/index.js';
import type { FieldReader } from './fields.js';
import { typeName } from './fields.js';
import type { PathSegment } from './positions.js';

// Labels are Tend's own metadata about a resource (`tier: web`), written like Kubernetes labels so
// that they read the same everywhere: a key is an optional DNS-subdomain prefix and a name
// (`example.com/team`), a value is at most 63 letters, digits, `-`, `_` and `.`.

const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Why a label key is not one, or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix))) {
    return `the prefix of label \`${key}\` must be a lower-case DNS name (example.com) of at most 253 characters`;
  }
  if (!NAME.test(name)) {
    return `label key \`${key}\` is not valid: a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a prefix and '/' (example.com/team)`;
  }
  return undefined;
}

/** Why a label value is not one, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || NAME.test(value)) return undefined;
  return `label value ${JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)} is not valid: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)`;
}

/**
 * Reads a mapping of labels at `at` (a Resource's `labels`, a rule's `when.labels`), reporting every
 * key (`label.invalid_key`) and value (`label.invalid_value`, `field.type`) that is not one. Returns
 * the labels that are valid, or undefined when the value is absent or not a mapping.
 */
export function readLabels(
  r: FieldReader,
  obj: Record<string, unknown>,
  key: string,
  at: readonly PathSegment[],
): Record<string, string> | undefined {
  const value = r.mapping(obj, key, at);
  if (value === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    const path = [...at, key, k];
    const keyProblem = labelKeyProblem(k);
    if (keyProblem !== undefined) {
      r.report('label.invalid_key', keyProblem, path, { target: 'key' });
      continue;
    }
    if (typeof v !== 'string') {
      r.report('field.type', `label \`${k}\` must be a string, got ${typeName(v)}`, path, {
        hint: `quote it: ${k}: "${typeof v === 'number' || typeof v === 'boolean' ? String(v) : '…'}"`,
      });
      continue;
    }
    const valueProblem = labelValueProblem(v);
    if (valueProblem !== undefined) {
      r.report('label.invalid_value', valueProblem, path);
      continue;
    }
    defineKey(out, k, v);
  }
  return out;
}
