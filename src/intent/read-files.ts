import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, open, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostic } from '../core/index.js';
import { fileKind, isInside } from './confine.js';

/** The text of one intent file. */
export interface IntentFile {
  /** The path joined from the intent directory, e.g. `infra/main.yaml`. */
  readonly path: string;
  readonly text: string;
}

const YAML_FILE = /\.ya?ml$/i;

// Opened without following a last symbolic link (a file swapped for a link after it was checked is
// refused), and without blocking (a file swapped for a FIFO would otherwise wait for a writer).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Reads every `*.yaml` / `*.yml` file directly in `dir` (not in sub-directories), sorted by name so
 * that results never depend on the file system's order. A missing directory, a file instead of a
 * directory, or a directory without YAML files is an error diagnostic.
 *
 * Loading is all or nothing: every YAML entry is either read or reported as an error, never skipped
 * in silence (a skipped file would look like deleted intent, and its objects would be pruned). A
 * symbolic link is followed when it leads to a file inside the directory (real paths compared); one
 * leading outside, a broken one, a FIFO, socket or device, an unreadable file and a file that is not
 * valid UTF-8 are errors. FIFOs and devices are never opened. A UTF-8 byte order mark is dropped.
 */
export async function readIntentFiles(
  dir: string,
): Promise<{ files: IntentFile[]; diagnostics: Diagnostic[] }> {
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => undefined,
  );
  if (isDir === undefined) {
    return {
      files: [],
      diagnostics: [
        {
          code: 'intent.dir_missing',
          severity: 'error',
          message: `intent directory ${dir} does not exist`,
          hint: 'pass the directory that holds your intent YAML files (e.g. infra/)',
        },
      ],
    };
  }
  if (!isDir) {
    return {
      files: [],
      diagnostics: [
        {
          code: 'intent.dir_missing',
          severity: 'error',
          message: `${dir} is a file, not an intent directory`,
          hint: 'pass the directory that holds the file, not the file itself',
        },
      ],
    };
  }
  let root: string;
  let names: string[];
  try {
    root = await realpath(dir);
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      .filter((e) => YAML_FILE.test(e.name) && !e.isDirectory())
      .map((e) => e.name)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (e) {
    return {
      files: [],
      diagnostics: [
        {
          code: 'intent.unreadable',
          severity: 'error',
          message: `cannot read the intent directory ${dir}: ${errorText(e)}`,
          hint: 'check the directory permissions',
        },
      ],
    };
  }
  if (names.length === 0) {
    return {
      files: [],
      diagnostics: [
        {
          code: 'intent.empty',
          severity: 'error',
          message: `intent directory ${dir} has no .yaml or .yml files`,
          hint: `write your Provider and Resource documents in a file such as ${join(dir, 'main.yaml')}`,
        },
      ],
    };
  }
  const files: IntentFile[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const read = await readIntentFile(path, root);
    if ('text' in read) files.push({ path, text: read.text });
    else if (read.diagnostic) diagnostics.push(read.diagnostic);
  }
  return { files, diagnostics };
}

/** A diagnostic about a whole file (at its start). */
function fileProblem(path: string, code: string, message: string, hint: string): Diagnostic {
  return { code, severity: 'error', message, hint, file: path, line: 1, column: 1 };
}

/**
 * Reads one entry of the intent directory: its text, a diagnostic, or neither (a link to a
 * directory, which is not intent, like a sub-directory).
 */
async function readIntentFile(
  path: string,
  root: string,
): Promise<{ text: string } | { diagnostic?: Diagnostic }> {
  let target = path;
  let stats: Stats;
  try {
    stats = await lstat(path);
    if (stats.isSymbolicLink()) {
      let real: string;
      try {
        real = await realpath(path);
      } catch (e) {
        const to = await readlink(path).catch(() => '?');
        const why =
          errorCode(e) === 'ELOOP' ? 'a loop of symbolic links' : `${to}, which does not exist`;
        return {
          diagnostic: fileProblem(
            path,
            'intent.broken_link',
            `${path} is a symbolic link to ${why}`,
            'fix or remove the link: every YAML file in the intent directory is part of the intent',
          ),
        };
      }
      if (!isInside(real, root)) {
        return {
          diagnostic: fileProblem(
            path,
            'intent.outside',
            `${path} is a symbolic link to ${real}, outside the intent directory ${root}`,
            'copy the file into the intent directory (or link to a file inside it): intent is read only from the directory it was given',
          ),
        };
      }
      target = real;
      stats = await stat(real);
      if (stats.isDirectory()) return {};
    }
  } catch (e) {
    return {
      diagnostic: fileProblem(
        path,
        'intent.unreadable',
        `cannot read ${path}: ${errorText(e)}`,
        'check the file permissions',
      ),
    };
  }
  if (!stats.isFile()) {
    return {
      diagnostic: fileProblem(
        path,
        'intent.not_file',
        `${path} is ${fileKind(stats)}, not a regular file`,
        'intent files are regular YAML files: remove it or rename it to something not ending in .yaml/.yml',
      ),
    };
  }
  let bytes: Buffer;
  try {
    const handle = await open(target, OPEN_FLAGS);
    try {
      // Checked again on the open file: it may have been replaced since it was looked at.
      const opened = await handle.stat();
      if (!opened.isFile()) {
        return {
          diagnostic: fileProblem(
            path,
            'intent.not_file',
            `${path} is ${fileKind(opened)}, not a regular file`,
            'intent files are regular YAML files',
          ),
        };
      }
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (e) {
    return {
      diagnostic: fileProblem(
        path,
        'intent.unreadable',
        `cannot read ${path}: ${errorText(e)}`,
        'check the file permissions',
      ),
    };
  }
  const decoded = decodeUtf8(bytes);
  if ('text' in decoded) return decoded;
  return {
    diagnostic: {
      code: 'intent.encoding',
      severity: 'error',
      message: `${path}: ${decoded.problem}`,
      hint: decoded.hint,
      file: path,
      line: decoded.line,
      column: decoded.column,
    },
  };
}

/** A decoding problem and where it is (1-based line and column, as the text up to it reads). */
interface DecodeProblem {
  readonly problem: string;
  readonly hint: string;
  readonly line: number;
  readonly column: number;
}

const UTF8_HINT = 'save the file as UTF-8';

/**
 * Decodes intent bytes as strict UTF-8: a leading UTF-8 byte order mark is dropped (editors on
 * Windows write one); a UTF-16 byte order mark, and any byte sequence that is not UTF-8, is a problem
 * located at the first bad byte.
 */
export function decodeUtf8(bytes: Uint8Array): { text: string } | DecodeProblem {
  const [b0, b1] = [bytes[0], bytes[1]];
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff)) {
    return {
      problem: 'the file is UTF-16 (it starts with a UTF-16 byte order mark); intent is UTF-8',
      hint: UTF8_HINT,
      line: 1,
      column: 1,
    };
  }
  try {
    // ignoreBOM false (the default): a leading UTF-8 BOM is not part of the text.
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const at = Math.max(0, firstInvalidUtf8(bytes));
    let lineStart = 0;
    let line = 1;
    for (let i = 0; i < at; i++) {
      if (bytes[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    }
    // The valid text before the bad byte on its line, in UTF-16 units like every other column.
    const before = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, at));
    const shown = [...bytes.subarray(at, Math.min(at + 4, bytes.length))]
      .map((b) => `0x${b.toString(16).padStart(2, '0')}`)
      .join(' ');
    return {
      problem: `invalid UTF-8 at byte ${at} (${shown})`,
      hint: UTF8_HINT,
      line,
      column: before.length + 1,
    };
  }
}

/**
 * The offset of the first byte that does not start (or continue) a well-formed UTF-8 sequence
 * (Unicode table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF); -1 when all are.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let more: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) more = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      more = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      more = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    const second = bytes[i + 1];
    if (second === undefined || second < lo || second > hi) return i;
    for (let k = 2; k <= more; k++) {
      const next = bytes[i + k];
      if (next === undefined || (next & 0xc0) !== 0x80) return i;
    }
    i += more + 1;
  }
  return -1;
}
