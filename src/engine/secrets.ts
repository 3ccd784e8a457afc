import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { SecretRegistry } from '../core/index.js';
import { TendError } from '../core/index.js';
import { isSecretRef } from '../intent/index.js';

// What counts as a secret reference is what intent validation accepted as one.
export { isSecretRef };

/**
 * Reads a secret from the environment or a file, at the moment it is needed. The value is returned to
 * the caller only: it is never stored, logged or put in an error message, and it is registered with
 * `secrets` (the process's redactor) before it is returned, so that no output can carry it even when
 * a platform echoes it back.
 */
export function readSecret(
  ref: { fromEnv?: string; fromFile?: string },
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
  secrets: SecretRegistry,
): string {
  if (ref.fromEnv !== undefined) {
    const v = env[ref.fromEnv];
    if (v === undefined || v === '') {
      throw new TendError('secret.missing', `environment variable ${ref.fromEnv} is not set`, {
        hint: `export ${ref.fromEnv}=… before running tend`,
      });
    }
    secrets.add(v);
    return v;
  }
  const path = resolve(baseDir, ref.fromFile ?? '');
  try {
    const v = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
    secrets.add(v);
    return v;
  } catch {
    throw new TendError('secret.missing', `cannot read secret file ${path}`, {
      hint: 'check the path in fromFile (relative to the intent directory)',
    });
  }
}

/** The spec without its secret references: what may be hashed, compared and shown. */
export function withoutSecrets(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!isSecretRef(v)) out[k] = v;
  return out;
}

/**
 * What is sent for a declared resource: its resolved desired fields plus its secret references read
 * now. The result lives only as long as the request; it is never stored, hashed or logged.
 */
export function sendableSpec(
  spec: Readonly<Record<string, unknown>>,
  desired: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
  secrets: SecretRegistry,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...desired };
  for (const [k, v] of Object.entries(spec))
    if (isSecretRef(v)) out[k] = readSecret(v, env, baseDir, secrets);
  return out;
}
