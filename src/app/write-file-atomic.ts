import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TendError } from '../core/index.js';

/**
 * Writes `text` to a new temporary file beside `target` (same directory, so the rename cannot cross
 * file systems) with `mode`, flushes it to disk, runs `beforeRename`, and renames it over `target`.
 * The temporary name is unique per call (process id and random bytes), so two writers — two
 * requests of one server, or two processes — never write into the same temporary file, and it ends
 * in `.tmp`, which no intent loader reads. Nothing is left behind when anything fails.
 */
async function replaceWith(
  target: string,
  text: string,
  mode: number,
  beforeRename?: () => Promise<void>,
): Promise<void> {
  const tmp = join(
    dirname(target),
    `.${basename(target)}.tend-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(tmp, 'wx', mode);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      // The umask narrowed the mode given to open; the file gets the one asked for.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await beforeRename?.();
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Replaces a file's content all at once: the text goes to a temporary file beside it, which takes
 * the file's mode, is flushed to disk, and is renamed over the file. A reader sees the old file or
 * the new one, never half of either. A symbolic link is followed: its target is replaced. With
 * `expected`, the file must still hold exactly that text just before the rename (`file.changed`
 * otherwise, nothing written), so an edit made meanwhile is never lost.
 */
export async function writeFileAtomic(
  file: string,
  text: string,
  expected?: string,
): Promise<void> {
  const target = await realpath(file);
  const mode = (await stat(target)).mode & 0o7777;
  await replaceWith(target, text, mode, async () => {
    if (expected !== undefined && (await readFile(target, 'utf8')) !== expected) {
      throw new TendError('file.changed', `${file} changed while Tend was patching it`, {
        hint: 'run the command again: it patches the file as it is now',
      });
    }
  });
}

/**
 * Creates or replaces one of Tend's own private files (mode 0600) all at once, as `writeFileAtomic`
 * does: any number of writers at the same moment, in this process or others, each rename a whole
 * file of their own into place, so a reader sees a complete file — one of theirs, or the old one.
 * A file that already holds `text` is left alone (no write, no rename).
 */
export async function writePrivateFileAtomic(file: string, text: string): Promise<void> {
  const same = await readFile(file, 'utf8').then(
    (old) => old === text,
    () => false,
  );
  if (!same) await replaceWith(file, text, 0o600);
}
