// Where a secret may have leaked: every output a run printed and the raw bytes of every file it
// left (the SQLite database and its write-ahead log included), searched for each secret as is and in
// the encodings a secret travels in (the e2e tests of issue 10, item 4, and of secrets sent in URLs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every form a secret is searched for in: as is and as it is commonly encoded. */
export function secretForms(secret: string): string[] {
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
      Buffer.from(secret).toString('base64').replace(/=+$/, ''),
    ]),
  ];
}

/** Every file under a directory (recursively) with its raw bytes. */
export function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .map((path) => ({ path, bytes: readFileSync(path) }));
}

/** Where any form of any secret occurs: in a captured output or in a file's bytes. */
export function leaks(
  secrets: readonly string[],
  outputs: readonly { what: string; text: string }[],
  files: readonly { path: string; bytes: Buffer }[],
): string[] {
  const found: string[] = [];
  for (const secret of secrets) {
    for (const form of secretForms(secret)) {
      for (const o of outputs) if (o.text.includes(form)) found.push(`${o.what}: ${form}`);
      const needle = Buffer.from(form, 'utf8');
      for (const f of files) if (f.bytes.includes(needle)) found.push(`${f.path}: ${form}`);
    }
  }
  return found;
}
