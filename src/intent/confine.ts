import { realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

/**
 * Which directories files named by an intent may come from. Intent is written by whoever can open
 * a pull request; the directories beyond the intent directory are named by whoever runs Tend, in an
 * environment variable, never in the intent itself.
 */
export interface TrustedDirs {
  /** Real paths (symbolic links resolved): the intent directory first, then the variable's entries. */
  readonly roots: readonly string[];
  /** The environment variable that extends the list (`TEND_SECRET_DIRS`, `TEND_SPEC_DIRS`). */
  readonly variable: string;
  /** Entries of the variable that were ignored, and why (relative, missing). */
  readonly ignored: readonly string[];
}

/** The variable naming directories outside the intent directory that `fromFile` may read. */
export const SECRET_DIRS_VARIABLE = 'TEND_SECRET_DIRS';
/** The variable naming directories outside the intent directory that `spec`/`overlay` may read. */
export const SPEC_DIRS_VARIABLE = 'TEND_SPEC_DIRS';

function realOr(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The intent directory and the absolute directories listed in `env[variable]` (separated by the
 * platform's path delimiter, `:` on POSIX), each as a real path. Relative and missing entries are
 * left out (and listed in `ignored`): a relative entry would depend on where Tend happens to run.
 */
export function trustedDirs(
  dir: string,
  env: Readonly<Record<string, string | undefined>> | undefined,
  variable: string,
): TrustedDirs {
  const roots = [realOr(resolve(dir)) ?? resolve(dir)];
  const ignored: string[] = [];
  for (const entry of (env?.[variable] ?? '').split(delimiter)) {
    if (entry === '') continue;
    if (!isAbsolute(entry)) {
      ignored.push(`${variable} entry ${JSON.stringify(entry)} is not an absolute path`);
      continue;
    }
    const real = realOr(entry);
    if (real === undefined) {
      ignored.push(`${variable} entry ${entry} does not exist`);
      continue;
    }
    if (!roots.includes(real)) roots.push(real);
  }
  return { roots, variable, ignored };
}

/** True when `path` is `root` or lies below it (both absolute and normalised). */
export function isInside(path: string, root: string): boolean {
  if (path === root) return true;
  return path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** True when `path` lies in one of the roots. */
export function inAnyRoot(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => isInside(path, root));
}

/** Where a path leads once every symbolic link is followed. */
export type Located =
  /** It exists; `real` is its real path, `stats` what it is (file, directory, FIFO, …). */
  | {
      readonly exists: true;
      readonly real: string;
      readonly inside: boolean;
      readonly stats: Stats;
    }
  /**
   * Nothing is there (or a link leads nowhere, or links loop: `code`). `real` is the real path of its
   * nearest existing ancestor joined with the rest, so a missing file is still judged inside or out.
   */
  | {
      readonly exists: false;
      readonly real: string;
      readonly inside: boolean;
      readonly code: string;
    };

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'EUNKNOWN';
}

/**
 * Follows `path` (absolute) through every symbolic link and says whether it ends inside one of
 * `roots`. Never opens the file: a FIFO or a device is only stat-ed.
 */
export function locate(path: string, roots: readonly string[]): Located {
  let real: string;
  try {
    real = realpathSync(path);
  } catch (e) {
    const code = errorCode(e);
    let head = path;
    const tail: string[] = [];
    let nearest = path;
    for (;;) {
      const parent = dirname(head);
      if (parent === head) break;
      tail.unshift(basename(head));
      head = parent;
      const r = realOr(head);
      if (r !== undefined) {
        nearest = join(r, ...tail);
        break;
      }
    }
    return { exists: false, real: nearest, inside: inAnyRoot(nearest, roots), code };
  }
  let stats: Stats;
  try {
    stats = statSync(real);
  } catch (e) {
    return { exists: false, real, inside: inAnyRoot(real, roots), code: errorCode(e) };
  }
  return { exists: true, real, inside: inAnyRoot(real, roots), stats };
}

/** Names what a non-regular file is, for messages: `a directory`, `a FIFO`, … */
export function fileKind(stats: Stats): string {
  if (stats.isFile()) return 'a file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** How to write the trusted-directories variable, for hints. */
export function trustedDirsHint(variable: string): string {
  return `${variable}=/one/dir${delimiter}/another/dir`;
}
