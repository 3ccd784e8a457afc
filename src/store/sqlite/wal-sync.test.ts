import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WalSync } from './wal-sync.js';
import type { SyncFile } from './wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-wal-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A sync the test finishes by hand: `syncs` holds the callbacks of the syncs begun. */
function manualSync(): { sync: SyncFile; syncs: ((error: Error | null) => void)[] } {
  const syncs: ((error: Error | null) => void)[] = [];
  return { sync: (_fd, done) => syncs.push(done), syncs };
}

function logFile(): string {
  const path = join(dir, `db-${Math.random().toString(36).slice(2)}-wal`);
  writeFileSync(path, '');
  return path;
}

describe('WalSync', () => {
  it('answers a caller only with a sync that began after it asked', () => {
    const { sync, syncs } = manualSync();
    const wal = new WalSync(logFile(), sync);
    const answered: string[] = [];
    wal.after(() => answered.push('a'));
    expect(syncs).toHaveLength(1);
    // b and c ask while a's sync runs: that sync began before them and cannot cover their commits.
    wal.after(() => answered.push('b'));
    wal.after(() => answered.push('c'));
    expect(syncs).toHaveLength(1);
    syncs[0]!(null);
    expect(answered).toEqual(['a']);
    // One more sync, shared by both.
    expect(syncs).toHaveLength(2);
    syncs[1]!(null);
    expect(answered).toEqual(['a', 'b', 'c']);
    expect(syncs).toHaveLength(2);
  });

  it('makes a caller that asks again from its callback wait for the next sync', () => {
    const { sync, syncs } = manualSync();
    const wal = new WalSync(logFile(), sync);
    const answered: string[] = [];
    wal.after(() => {
      answered.push('first');
      wal.after(() => answered.push('again'));
    });
    syncs[0]!(null);
    expect(answered).toEqual(['first']);
    expect(syncs).toHaveLength(2);
    syncs[1]!(null);
    expect(answered).toEqual(['first', 'again']);
  });

  it('hands a failed sync its error to every caller it answers', () => {
    const { sync, syncs } = manualSync();
    const wal = new WalSync(logFile(), sync);
    const errors: (Error | null)[] = [];
    wal.after((e) => errors.push(e));
    const failure = new Error('EIO: i/o error, fsync');
    syncs[0]!(failure);
    expect(errors).toEqual([failure]);
  });

  it('fails every caller with the reason when the log cannot be opened', () => {
    const wal = new WalSync(join(dir, 'missing-wal'), () => {
      throw new Error('never called');
    });
    const errors: (Error | null)[] = [];
    wal.after((e) => errors.push(e));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/ENOENT.*missing-wal/);
  });

  it('closes only after the syncs asked for, and refuses callers afterwards', async () => {
    const { sync, syncs } = manualSync();
    const wal = new WalSync(logFile(), sync);
    let answered = false;
    wal.after(() => (answered = true));
    let closed = false;
    const closing = wal.close().then(() => (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
    syncs[0]!(null);
    await closing;
    expect(answered).toBe(true);
    const errors: (Error | null)[] = [];
    wal.after((e) => errors.push(e));
    expect(errors[0]?.message).toBe('the write-ahead log sync is closed');
  });

  it('syncs a real file with fs.fsync', async () => {
    const wal = new WalSync(logFile());
    const error = await new Promise<Error | null>((resolve) => wal.after(resolve));
    expect(error).toBeNull();
    await wal.close();
  });
});
