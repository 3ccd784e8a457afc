import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Tend's own files are closed by default: what it keeps (the store, its WAL, cached documents) may
 * name every object it manages, and the journal holds the platform's answers. Directories are 0700,
 * files 0600. These helpers create them so, and tighten ones found looser, returning one sentence
 * per change so the caller can say so. Symbolic links are never followed or changed. On Windows,
 * where modes mean little, they do nothing.
 */

/** The mode of Tend's directories. */
export const PRIVATE_DIR_MODE = 0o700;
/** The mode of Tend's files. */
export const PRIVATE_FILE_MODE = 0o600;

/** The name of Tend's own directory next to the intent (`<dir>/.tend`). */
export const TEND_DIR_NAME = '.tend';

const posix = process.platform !== 'win32';

/**
 * Makes `dir` (and missing parents) with mode 0700. An existing `dir` is tightened to 0700 only
 * when `own` says it is Tend's (a `.tend` directory): a store placed in a shared directory never
 * changes that directory. Returns what was tightened.
 */
export function ensurePrivateDir(dir: string, own = basename(dir) === TEND_DIR_NAME): string[] {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  return own ? tighten(dir, PRIVATE_DIR_MODE) : [];
}

/**
 * Creates `file` empty with mode 0600 when it is missing (a file SQLite then opens keeps that
 * mode, and SQLite gives its -wal and -shm files the database's mode); tightens an existing one.
 */
export function ensurePrivateFile(file: string): string[] {
  if (!posix) return [];
  // 'a' creates without truncating what is there.
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  return tighten(file, PRIVATE_FILE_MODE);
}

/** Tightens every directory (0700) and regular file (0600) under `dir`, `dir` included. */
export function tightenTree(dir: string): string[] {
  if (!posix) return [];
  const notes = tighten(dir, PRIVATE_DIR_MODE);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return notes;
  }
  for (const name of names) {
    const path = join(dir, name);
    const kind = kindOf(path);
    const found =
      kind === 'dir' ? tightenTree(path) : kind === 'file' ? tighten(path, PRIVATE_FILE_MODE) : [];
    for (const n of found) notes.push(n);
  }
  return notes;
}

/** Tightens the files a SQLite database at `path` may have next to it (-wal, -shm, -journal). */
export function tightenSqliteFiles(path: string): string[] {
  if (!posix) return [];
  return [path, `${path}-wal`, `${path}-shm`, `${path}-journal`].flatMap((f) =>
    kindOf(f) === 'file' ? tighten(f, PRIVATE_FILE_MODE) : [],
  );
}

function kindOf(path: string): 'dir' | 'file' | 'other' | 'missing' {
  try {
    const s = lstatSync(path);
    return s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
  } catch {
    return 'missing';
  }
}

/** Sets `mode` when the path has bits beyond it; a symlink or a missing path is left alone. */
function tighten(path: string, mode: number): string[] {
  if (!posix) return [];
  let current: number;
  try {
    const s = lstatSync(path);
    if (s.isSymbolicLink()) return [];
    current = s.mode & 0o777;
  } catch {
    return [];
  }
  if ((current & ~mode) === 0) return [];
  try {
    chmodSync(path, mode);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    return [`${path} is open to others (mode ${octal(current)}) and cannot be tightened (${code})`];
  }
  return [`${path} was open to others (mode ${octal(current)}); it is now ${octal(mode)}`];
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
