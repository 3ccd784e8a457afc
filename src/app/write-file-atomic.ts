import { randomBytes } from 'node:crypto';
import { open, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TendError } from '../core/index.js';

/**
 * Replaces a file's content all at once: the text goes to a temporary file beside it (same
 * directory, so the rename cannot cross file systems), which takes the file's mode, is flushed to
 * disk, and is renamed over the file. A reader sees the old file or the new one, never half of
 * either. A symbolic link is followed: its target is replaced. With `expected`, the file must still
 * hold exactly that text just before the rename (`file.changed` otherwise, nothing written), so an
 * edit made meanwhile is never lost. The temporary name ends in `.tmp`, which no intent loader reads.
 */
export async function writeFileAtomic(
  file: string,
  text: string,
  expected?: string,
): Promise<void> {
  const target = await realpath(file);
  const mode = (await stat(target)).mode & 0o7777;
  const tmp = join(
    dirname(target),
    `.${basename(target)}.tend-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(tmp, 'wx', mode);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      // The umask narrowed the mode given to open; the file keeps the original's.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (expected !== undefined && (await readFile(target, 'utf8')) !== expected) {
      throw new TendError('file.changed', `${file} changed while Tend was patching it`, {
        hint: 'run the command again: it patches the file as it is now',
      });
    }
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
