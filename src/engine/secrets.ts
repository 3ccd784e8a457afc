import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TendError } from '../core/index.js';

/** True when a value is a secret reference `{ fromEnv }` or `{ fromFile }`. */
export function isSecretRef(v: unknown): v is { fromEnv?: string; fromFile?: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && (keys[0] === 'fromEnv' || keys[0] === 'fromFile');
}

/**
 * Reads a secret from the environment or a file, at the moment it is needed. The value is returned to
 * the caller only: it is never stored, logged or put in an error message.
 */
export function readSecret(
  ref: { fromEnv?: string; fromFile?: string },
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
): string {
  if (ref.fromEnv !== undefined) {
    const v = env[ref.fromEnv];
    if (v === undefined || v === '') {
      throw new TendError('secret.missing', `environment variable ${ref.fromEnv} is not set`, {
        hint: `export ${ref.fromEnv}=… before running tend`,
      });
    }
    return v;
  }
  const path = resolve(baseDir, ref.fromFile ?? '');
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch {
    throw new TendError('secret.missing', `cannot read secret file ${path}`, {
      hint: 'check the path in fromFile (relative to the intent directory)',
    });
  }
}

/** Replaces every secret reference at the top level of a spec with its value, for sending only. */
export function withSecrets(
  spec: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec))
    out[k] = isSecretRef(v) ? readSecret(v, env, baseDir) : v;
  return out;
}

/** The spec without its secret references: what may be hashed, compared and shown. */
export function withoutSecrets(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!isSecretRef(v)) out[k] = v;
  return out;
}
