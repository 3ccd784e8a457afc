import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileAtomic, writePrivateFileAtomic } from './write-file-atomic.js';

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-atomic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the content, keeps the mode, and leaves no temporary file', async () => {
    const file = join(dir, 'app.yaml');
    writeFileSync(file, 'a: 1\n');
    chmodSync(file, 0o640);
    await writeFileAtomic(file, 'a: 2\n', 'a: 1\n');
    expect(readFileSync(file, 'utf8')).toBe('a: 2\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir)).toEqual(['app.yaml']);
  });

  it('replaces the target of a symbolic link, not the link', async () => {
    const target = join(dir, 'real.yaml');
    const link = join(dir, 'app.yaml');
    writeFileSync(target, 'a: 1\n');
    symlinkSync(target, link);
    await writeFileAtomic(link, 'a: 2\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('a: 2\n');
  });

  it('refuses when the file changed since it was read, and writes nothing', async () => {
    const file = join(dir, 'app.yaml');
    writeFileSync(file, 'a: 3\n');
    await expect(writeFileAtomic(file, 'a: 2\n', 'a: 1\n')).rejects.toMatchObject({
      code: 'file.changed',
    });
    expect(readFileSync(file, 'utf8')).toBe('a: 3\n');
    expect(readdirSync(dir)).toEqual(['app.yaml']);
  });
});

describe('writePrivateFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tend-atomic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the file private (0600) and leaves no temporary file', async () => {
    const file = join(dir, 'sb.openapi.json');
    await writePrivateFileAtomic(file, '{"openapi":"3.0.0"}');
    expect(readFileSync(file, 'utf8')).toBe('{"openapi":"3.0.0"}');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['sb.openapi.json']);
  });

  it('leaves a file that already holds the text alone', async () => {
    const file = join(dir, 'sb.openapi.json');
    await writePrivateFileAtomic(file, 'same');
    const before = statSync(file).ino;
    await writePrivateFileAtomic(file, 'same');
    expect(statSync(file).ino).toBe(before);
  });

  it('many writers at once: every read sees a whole copy, never an empty or a partial one', async () => {
    // What `tend serve` did under load (issue 25, item 9): every request wrote the cached document
    // while others read it; with one temporary name per process, readers saw an empty file.
    const file = join(dir, 'sb.openapi.json');
    const texts = Array.from({ length: 8 }, (_, i) => `${String(i).repeat(200_000)}\n`);
    await writePrivateFileAtomic(file, texts[0]!);
    const seen = new Set<string>();
    let writing = true;
    const reader = (async () => {
      while (writing) {
        const text = readFileSync(file, 'utf8');
        seen.add(texts.includes(text) ? 'whole' : `torn (${text.length} characters)`);
        await new Promise((r) => setImmediate(r));
      }
    })();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => writePrivateFileAtomic(file, texts[i % texts.length]!)),
    );
    writing = false;
    await reader;
    expect([...seen]).toEqual(['whole']);
    expect(readdirSync(dir)).toEqual(['sb.openapi.json']);
  });
});
