import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Redactor, TendError } from '../core/index.js';
import { readSecret, sendableSpec } from './secrets.js';

// readSecret checks a file's place again when it reads it: validation checked it too, but the file
// may have been replaced since (by a link to somewhere else, by a FIFO).

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

const intent = tempDir('tend-intent-');
const outside = tempDir('tend-outside-');
writeFileSync(join(intent, 'pw'), 'inside-secret\n');
writeFileSync(join(outside, 'token'), 'outside-secret\r\n');

function refusal(fn: () => unknown): TendError {
  try {
    fn();
  } catch (e) {
    if (e instanceof TendError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('readSecret from a file', () => {
  it('reads a file inside the intent directory, without its final newline', () => {
    expect(readSecret({ fromFile: 'pw' }, {}, intent, new Redactor())).toBe('inside-secret');
  });

  it('reads a file in a directory named in TEND_SECRET_DIRS', () => {
    const env = { TEND_SECRET_DIRS: `relative${delimiter}${outside}` };
    expect(readSecret({ fromFile: join(outside, 'token') }, env, intent, new Redactor())).toBe(
      'outside-secret',
    );
  });

  it('refuses a file outside, and never shows its content', () => {
    const e = refusal(() =>
      readSecret({ fromFile: join(outside, 'token') }, {}, intent, new Redactor()),
    );
    expect(e.code).toBe('secret.outside');
    expect(e.message).toBe(
      `secret file ${join(outside, 'token')} leads to ${join(outside, 'token')}, outside the intent directory and TEND_SECRET_DIRS`,
    );
    expect(e.hint).toContain('TEND_SECRET_DIRS');
    expect(`${e.message} ${e.hint}`).not.toContain('outside-secret');
  });

  it('refuses a file that became a link to a file outside after validation', () => {
    const path = join(intent, 'swapped');
    writeFileSync(path, 'was-fine\n');
    expect(readSecret({ fromFile: 'swapped' }, {}, intent, new Redactor())).toBe('was-fine');
    unlinkSync(path);
    symlinkSync(join(outside, 'token'), path);
    const e = refusal(() => readSecret({ fromFile: 'swapped' }, {}, intent, new Redactor()));
    expect(e.code).toBe('secret.outside');
    expect(e.message).toContain(`secret file ${path} leads to ${join(outside, 'token')}`);
  });

  it('follows a link that stays inside', () => {
    symlinkSync('pw', join(intent, 'pw-link'));
    expect(readSecret({ fromFile: 'pw-link' }, {}, intent, new Redactor())).toBe('inside-secret');
  });

  it('refuses a FIFO without waiting for a writer', () => {
    execFileSync('mkfifo', [join(intent, 'fifo')]);
    const e = refusal(() => readSecret({ fromFile: 'fifo' }, {}, intent, new Redactor()));
    expect(e.code).toBe('secret.not_file');
    expect(e.message).toBe(`secret file ${join(intent, 'fifo')} is not a regular file`);
  }, 5_000);

  it('refuses a file larger than a secret can be', () => {
    writeFileSync(join(intent, 'big'), Buffer.alloc(1024 * 1024 + 1, 0x61));
    const e = refusal(() => readSecret({ fromFile: 'big' }, {}, intent, new Redactor()));
    expect(e.code).toBe('secret.too_large');
    expect(e.message).toContain('holds 1048577 bytes; a secret file holds at most 1048576');
  });

  it('reports a missing file as missing', () => {
    const e = refusal(() => readSecret({ fromFile: 'nope' }, {}, intent, new Redactor()));
    expect(e.code).toBe('secret.missing');
    expect(e.message).toBe(`cannot read secret file ${join(intent, 'nope')}`);
  });
});

describe('sendableSpec', () => {
  it('reads file references under the same rule', () => {
    const spec = { name: 'a', password: { fromFile: 'pw' } };
    expect(sendableSpec(spec, { name: 'a' }, {}, intent, new Redactor())).toEqual({
      name: 'a',
      password: 'inside-secret',
    });
    const bad = { name: 'a', password: { fromFile: join(outside, 'token') } };
    expect(refusal(() => sendableSpec(bad, { name: 'a' }, {}, intent, new Redactor())).code).toBe(
      'secret.outside',
    );
  });
});
