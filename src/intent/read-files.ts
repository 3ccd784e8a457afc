import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Diagnostic } from '../core/index.js';

/** The text of one intent file. */
export interface IntentFile {
  /** The path joined from the intent directory, e.g. `infra/main.yaml`. */
  readonly path: string;
  readonly text: string;
}

const YAML_FILE = /\.ya?ml$/i;

/**
 * Reads every `*.yaml` / `*.yml` file directly in `dir` (not in sub-directories), sorted by name so
 * that results never depend on the file system's order. A missing directory, a file instead of a
 * directory, or a directory without YAML files is an error diagnostic.
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
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isFile() && YAML_FILE.test(e.name))
    .map((e) => e.name)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
    try {
      files.push({ path, text: await readFile(path, 'utf8') });
    } catch (e) {
      diagnostics.push({
        code: 'intent.unreadable',
        severity: 'error',
        message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`,
        hint: 'check the file permissions',
        file: path,
      });
    }
  }
  return { files, diagnostics };
}
