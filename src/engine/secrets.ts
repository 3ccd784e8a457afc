import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { resolve } from 'node:path';
import type { SecretRegistry } from '../core/index.js';
import { setKey, TendError } from '../core/index.js';
import { SECRET_DIRS_VARIABLE, inAnyRoot, isSecretRef, trustedDirs } from '../intent/index.js';

// What counts as a secret reference is what intent validation accepted as one.
export { isSecretRef };

/**
 * Reads a secret from the environment or a file, at the moment it is needed. The value is returned to
 * the caller only: it is never stored, logged or put in an error message, and it is registered with
 * `secrets` (the process's redactor) before it is returned, so that no output can carry it even when
 * a platform echoes it back. A file is read only when its real path lies in `baseDir` (the intent
 * directory) or a directory of TEND_SECRET_DIRS in `env`, checked again now (validation checked it
 * too, but the file may since have become a link).
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
    const v = readConfined(path, trustedDirs(baseDir, env, SECRET_DIRS_VARIABLE).roots).replace(
      /\r?\n$/,
      '',
    );
    secrets.add(v);
    return v;
  } catch (e) {
    if (e instanceof TendError) throw e;
    throw new TendError('secret.missing', `cannot read secret file ${path}`, {
      hint: 'check the path in fromFile (relative to the intent directory)',
    });
  }
}

/** Secret files are small; a larger one is a mistake (or a device), never read whole. */
const MAX_SECRET_BYTES = 1024 * 1024;
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Reads the file at `path` if it is a regular file whose real path lies in one of `roots`. The real
 * path is opened without following a last link and without blocking, and the opened file must be
 * the one the path still leads to (same device and inode), so a file swapped for a link to
 * somewhere else between the check and the read is refused.
 */
function readConfined(path: string, roots: readonly string[]): string {
  const real = realpathSync(path);
  const outside = (to: string) =>
    new TendError(
      'secret.outside',
      `secret file ${path} leads to ${to}, outside the intent directory and ${SECRET_DIRS_VARIABLE}`,
      {
        hint: `keep secret files inside the intent directory, or name their directory in ${SECRET_DIRS_VARIABLE}`,
      },
    );
  if (!inAnyRoot(real, roots)) throw outside(real);
  const fd = openSync(real, OPEN_FLAGS);
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) {
      throw new TendError('secret.not_file', `secret file ${path} is not a regular file`, {
        hint: 'name the file that holds the secret',
      });
    }
    const again = realpathSync(path);
    if (!inAnyRoot(again, roots)) throw outside(again);
    const now = statSync(again);
    if (now.ino !== opened.ino || now.dev !== opened.dev) {
      throw new TendError('secret.changed', `secret file ${path} changed while it was read`, {
        hint: 'run again once the file stays put',
      });
    }
    if (opened.size > MAX_SECRET_BYTES) {
      throw new TendError(
        'secret.too_large',
        `secret file ${path} holds ${opened.size} bytes; a secret file holds at most ${MAX_SECRET_BYTES}`,
        { hint: 'name the file that holds only the secret' },
      );
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The spec without its secret references: what may be hashed, compared and shown. */
export function withoutSecrets(spec: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(spec)) if (!isSecretRef(v)) setKey(out, k, v);
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
    if (isSecretRef(v)) setKey(out, k, readSecret(v, env, baseDir, secrets));
  return out;
}
