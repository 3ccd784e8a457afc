import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Changeset, Redactor } from '../core/index.js';
import { TendError, parseChangeset, serializeChangeset } from '../core/index.js';

/** Changeset files larger than this are refused before they are read (a plan is kilobytes). */
export const MAX_CHANGESET_BYTES = 32 * 1024 * 1024;

/**
 * True when a command argument names a changeset rather than an intent directory: a path ending
 * `.json` that is a file.
 */
export async function isChangesetPath(path: string): Promise<boolean> {
  if (!path.endsWith('.json')) return false;
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Reads and validates a changeset file. Throws `changeset.invalid` listing every problem (each with
 * the file and JSON path), `changeset.unreadable` when the file cannot be read, `changeset.too_large`
 * beyond MAX_CHANGESET_BYTES.
 */
export async function readChangeset(path: string): Promise<Changeset> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > MAX_CHANGESET_BYTES) {
      throw new TendError(
        'changeset.too_large',
        `${path} is ${size} bytes; a changeset is at most ${MAX_CHANGESET_BYTES}`,
      );
    }
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof TendError) throw e;
    throw new TendError('changeset.unreadable', `cannot read ${path}: ${(e as Error).message}`);
  }
  const parsed = parseChangeset(text, path);
  if (parsed.kind === 'ok') return parsed.changeset;
  const n = parsed.diagnostics.length;
  throw new TendError(
    'changeset.invalid',
    `${path} is not a valid changeset (${n} problem${n === 1 ? '' : 's'}):\n${parsed.diagnostics.map((d) => `  ${d.message}`).join('\n')}`,
    { hint: 'a changeset is written by `tend plan --out`; make a new one rather than edit it' },
  );
}

/**
 * Writes a changeset as stable JSON (`serializeChangeset`), through the process's redactor: a plan
 * file never carries a registered secret (a plan that held one is refused by apply as edited, and is
 * planned again rather than run with the marker in it). Written whole: the text goes to a temporary
 * file of this write's own beside it, renamed into place, so a reader (`GET /plans/last` while a
 * `POST /plan` saves one, another process) sees the old plan or the new one, never part of either.
 */
export async function writeChangeset(
  path: string,
  changeset: Changeset,
  redactor: Pick<Redactor, 'text'>,
): Promise<void> {
  const partial = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await writeFile(partial, redactor.text(serializeChangeset(changeset)), { flag: 'wx' });
    await rename(partial, path);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
}
