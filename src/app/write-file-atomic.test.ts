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
import { writeFileAtomic } from './write-file-atomic.js';

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
