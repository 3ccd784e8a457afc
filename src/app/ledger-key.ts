import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Change, SecretRegistry } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { LedgerKey } from '../store/index.js';
import { MIN_LEDGER_KEY_LENGTH, ensurePrivateDir, ledgerKey } from '../store/index.js';

// Where the key that signs the change ledger comes from (docs/decisions/0010-keyed-ledger.md). The
// key must live apart from the store: whoever can edit the database must not also hold the key.

/** The variable holding the ledger key itself (at least 32 characters). */
export const LEDGER_KEY_VARIABLE = 'TEND_LEDGER_KEY';
/** The variable naming a file holding the ledger key. */
export const LEDGER_KEY_FILE_VARIABLE = 'TEND_LEDGER_KEY_FILE';
/** The largest key file read, in bytes. */
export const MAX_LEDGER_KEY_FILE_BYTES = 4096;

/**
 * What the key is for: `sign` (a command that records changes: the per-user key file is created
 * when it is missing) or `verify` (`tend ledger`: nothing is created; no key is an error).
 */
export type LedgerKeyUse = 'sign' | 'verify';

/** Where a ledger key came from. */
export type LedgerKeySource =
  | { readonly kind: 'env'; readonly variable: typeof LEDGER_KEY_VARIABLE }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'user-file'; readonly path: string; readonly created: boolean };

/** A resolved key, where it came from, and what the user should be told (one sentence each). */
export interface ResolvedLedgerKey {
  readonly key: LedgerKey;
  readonly source: LedgerKeySource;
  readonly notices: readonly string[];
}

/** What resolving the key reads. */
export interface LedgerKeyOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly use: LedgerKeyUse;
  /** The home directory when the environment names none (default: the user's). */
  readonly home?: string;
  /** Told the key material, so that no output ever carries it. */
  readonly secrets?: SecretRegistry;
  /** The directory of the store the key will sign for: a key file inside it earns a warning. */
  readonly storeDir?: string;
}

const HINT_GENERATE = 'generate one with: openssl rand -hex 32';

/**
 * The per-user key file: `$XDG_CONFIG_HOME/tend/ledger.key`, or `~/.config/tend/ledger.key` when
 * XDG_CONFIG_HOME is unset or not absolute. Never beside a store.
 */
export function userLedgerKeyPath(
  env: Readonly<Record<string, string | undefined>>,
  home: string = homedir(),
): string {
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg && isAbsolute(xdg) ? xdg : join(env['HOME'] || home, '.config');
  return join(base, 'tend', 'ledger.key');
}

/**
 * The ledger key, from `TEND_LEDGER_KEY` (the key itself), else `TEND_LEDGER_KEY_FILE` (a file
 * holding it), else the per-user key file — created on first use for `sign`, with 32 random bytes
 * as hex, the file 0600 in a 0700 directory. A key file is read confined: a regular file, not a
 * symbolic link, at most 4 KiB; one readable by others earns a notice. The material is told to
 * `secrets` and goes nowhere else. Problems are TendErrors with codes `ledger.*` that name the
 * variable or file, never the key.
 */
export function resolveLedgerKey(options: LedgerKeyOptions): ResolvedLedgerKey {
  const { env, use } = options;
  const inline = env[LEDGER_KEY_VARIABLE];
  const file = env[LEDGER_KEY_FILE_VARIABLE];
  const notices: string[] = [];
  if (inline && file) {
    throw keyError(
      'ledger.key-conflict',
      `both ${LEDGER_KEY_VARIABLE} and ${LEDGER_KEY_FILE_VARIABLE} are set; Tend will not guess which key signs the ledger`,
      `unset one of them`,
    );
  }
  if (inline) {
    const material = inline.trim();
    if (material.length < MIN_LEDGER_KEY_LENGTH) {
      throw keyError(
        'ledger.key-too-short',
        `${LEDGER_KEY_VARIABLE} has ${material.length} characters; a ledger key needs at least ${MIN_LEDGER_KEY_LENGTH}`,
        HINT_GENERATE,
      );
    }
    options.secrets?.add(material);
    return {
      key: ledgerKey(material),
      source: { kind: 'env', variable: LEDGER_KEY_VARIABLE },
      notices,
    };
  }
  if (file) {
    const path = resolve(file);
    const read = readKeyFile(path, `${LEDGER_KEY_FILE_VARIABLE} names ${path}, which`);
    for (const n of modeNotice(path, read.mode)) notices.push(n);
    for (const n of besideStoreNotice(path, options.storeDir)) notices.push(n);
    options.secrets?.add(read.material);
    return { key: keyOf(read.material, path), source: { kind: 'file', path }, notices };
  }
  const path = userLedgerKeyPath(env, options.home);
  let created = false;
  if (!exists(path)) {
    if (use === 'verify') {
      throw keyError(
        'ledger.no-key',
        `no ledger key: ${LEDGER_KEY_VARIABLE} and ${LEDGER_KEY_FILE_VARIABLE} are unset and ${path} does not exist`,
        `set ${LEDGER_KEY_FILE_VARIABLE} to the file of the key that wrote this ledger (a key is created by the first command that records a change: apply, run, prune, import)`,
      );
    }
    created = createUserKey(path, notices);
  }
  const read = readKeyFile(path, `the ledger key file ${path}`);
  for (const n of modeNotice(path, read.mode)) notices.push(n);
  options.secrets?.add(read.material);
  return { key: keyOf(read.material, path), source: { kind: 'user-file', path, created }, notices };
}

/**
 * The sentence telling a writer that the ledger so far was signed with another key (a lost or
 * replaced key file, another TEND_LEDGER_KEY): verifying it later needs both keys.
 */
export function keyChangeNotice(last: Change | undefined, key: LedgerKey): string | undefined {
  if (last?.keyId === undefined || last.keyId === key.id) return undefined;
  return `the change ledger was signed with key id ${last.keyId} up to entry ${last.seq}; this process signs with key id ${key.id}, so \`tend ledger verify\` will stop at entry ${last.seq + 1}: use the key that wrote the ledger (${LEDGER_KEY_VARIABLE} or ${LEDGER_KEY_FILE_VARIABLE})`;
}

function keyOf(material: string, path: string): LedgerKey {
  if (material.length < MIN_LEDGER_KEY_LENGTH) {
    throw keyError(
      'ledger.key-too-short',
      `the ledger key in ${path} has ${material.length} characters; a ledger key needs at least ${MIN_LEDGER_KEY_LENGTH}`,
      HINT_GENERATE,
    );
  }
  return ledgerKey(material);
}

function keyError(code: string, message: string, hint?: string): TendError {
  return new TendError(code, message, { phase: 'store', ...(hint ? { hint } : {}) });
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(e);
}

/**
 * Reads a key file confined: it must be a regular file reached without a symbolic link in its last
 * component, at most MAX_LEDGER_KEY_FILE_BYTES, and the same file (device and inode) when opened as
 * when looked at. Surrounding whitespace is removed. `which` starts each message (`… which does not
 * exist`).
 */
function readKeyFile(path: string, which: string): { material: string; mode: number } {
  let seen;
  try {
    seen = lstatSync(path);
  } catch (e) {
    if (errorCode(e) === 'ENOENT') {
      throw keyError('ledger.key-file-missing', `${which} does not exist`, HINT_GENERATE);
    }
    throw keyError('ledger.key-file-unreadable', `${which} cannot be read (${errorCode(e)})`);
  }
  if (seen.isSymbolicLink()) {
    throw keyError(
      'ledger.key-file-link',
      `${which} is a symbolic link; Tend reads a ledger key only from the file itself`,
      'name the file the link points to',
    );
  }
  if (!seen.isFile()) {
    throw keyError(
      'ledger.key-file-not-regular',
      `${which} is not a regular file`,
      'name a file holding the key',
    );
  }
  if (seen.size > MAX_LEDGER_KEY_FILE_BYTES) {
    throw tooLarge(which, seen.size);
  }
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (e) {
    throw keyError('ledger.key-file-unreadable', `${which} cannot be read (${errorCode(e)})`);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.ino !== seen.ino || opened.dev !== seen.dev) {
      throw keyError(
        'ledger.key-file-not-regular',
        `${which} changed while it was read`,
        'run again once nothing replaces the file',
      );
    }
    const buffer = Buffer.alloc(MAX_LEDGER_KEY_FILE_BYTES + 1);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    if (n > MAX_LEDGER_KEY_FILE_BYTES) throw tooLarge(which, n);
    return { material: buffer.subarray(0, n).toString('utf8').trim(), mode: opened.mode & 0o777 };
  } finally {
    closeSync(fd);
  }
}

function tooLarge(which: string, size: number): TendError {
  return keyError(
    'ledger.key-file-too-large',
    `${which} is ${size} bytes; a ledger key file holds at most ${MAX_LEDGER_KEY_FILE_BYTES}`,
    'a key file holds the key alone, e.g. 64 hex digits',
  );
}

function modeNotice(path: string, mode: number): string[] {
  if (process.platform === 'win32' || (mode & 0o077) === 0) return [];
  return [
    `the ledger key file ${path} is open to others (mode 0${mode.toString(8)}): whoever can read it can rewrite the ledger undetected; chmod 600 it`,
  ];
}

function besideStoreNotice(path: string, storeDir: string | undefined): string[] {
  if (storeDir === undefined) return [];
  let real: string;
  let dir: string;
  try {
    real = realpathSync(path);
    dir = realpathSync(storeDir);
  } catch {
    return [];
  }
  if (!real.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return [];
  return [
    `the ledger key file ${path} lies beside the store: whoever can edit the store can read the key and rewrite the ledger undetected; keep the key elsewhere`,
  ];
}

/**
 * Creates the per-user key file with 32 random bytes as hex: written whole to a private temporary
 * file, then linked into place, so a second process starting at the same moment either finds the
 * complete file or makes it, never reads half of one. Returns whether this process created it.
 */
function createUserKey(path: string, notices: string[]): boolean {
  const dir = dirname(path);
  try {
    for (const n of ensurePrivateDir(dir, true)) notices.push(n);
    const temporary = join(dir, `.ledger.key.${process.pid}.${randomBytes(6).toString('hex')}`);
    writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temporary, path);
    } catch (e) {
      if (errorCode(e) === 'EEXIST') return false;
      // A file system without hard links: create it in place, still refusing to overwrite one.
      writeFileSync(path, readKeyFile(temporary, 'the new key').material + '\n', {
        mode: 0o600,
        flag: 'wx',
      });
    } finally {
      unlinkSync(temporary);
    }
  } catch (e) {
    if (e instanceof TendError) throw e;
    if (errorCode(e) === 'EEXIST') return false;
    throw keyError(
      'ledger.key-create-failed',
      `cannot create the ledger key file ${path} (${errorCode(e)})`,
      `make ${dir} writable, or set ${LEDGER_KEY_FILE_VARIABLE} to a key file kept elsewhere`,
    );
  }
  notices.push(
    `created the ledger key ${path} (mode 0600): it signs the change ledger; keep a copy somewhere safe, \`tend ledger verify\` needs it`,
  );
  return true;
}
