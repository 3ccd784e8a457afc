import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from './sqlite/sqlite-store.js';

// Tend's files are closed by default: `.tend/` 0700, the SQLite database and its -wal/-shm 0600,
// whatever the umask, and looser ones found when the store opens are tightened and reported.

const root = mkdtempSync(join(tmpdir(), 'tend-private-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function scratch(): string {
  n += 1;
  const dir = join(root, `case-${n}`);
  mkdirSync(dir);
  return dir;
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** Every entry of a directory tree with its mode, as `relative path → 0oNNN`. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': mode(dir).toString(8) };
  for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    out[f] = mode(join(dir, f)).toString(8);
  }
  return out;
}

/** Opens a store, writes once (so WAL files exist), and closes it; returns the notices. */
async function openAndWrite(path: string): Promise<string[]> {
  const notices: string[] = [];
  const store = await openSqliteStore(path, { notice: (m) => notices.push(m) });
  await store.setMeta('workspace', 'w');
  // The -wal and -shm files exist while the store is open.
  const wal = [`${path}-wal`, `${path}-shm`].map((f) => mode(f).toString(8));
  expect(wal).toEqual(['600', '600']);
  await store.close();
  return notices;
}

describe.skipIf(process.platform === 'win32')('private files', () => {
  it('a new .tend/ is 0700 and the database and its -wal/-shm 0600, even with umask 000', async () => {
    const tend = join(scratch(), '.tend');
    const old = process.umask(0o000);
    let notices: string[];
    try {
      notices = await openAndWrite(join(tend, 'tend.db'));
    } finally {
      process.umask(old);
    }
    expect(notices).toEqual([]);
    expect(mode(tend)).toBe(0o700);
    expect(mode(join(tend, 'tend.db'))).toBe(0o600);
  });

  it('tightens an existing .tend/ and everything in it, and says so', async () => {
    const tend = join(scratch(), '.tend');
    mkdirSync(join(tend, 'cache'), { recursive: true });
    writeFileSync(join(tend, 'tend.db'), '');
    writeFileSync(join(tend, 'cache', 'sb.openapi.json'), '{}');
    chmodSync(tend, 0o755);
    chmodSync(join(tend, 'cache'), 0o775);
    chmodSync(join(tend, 'tend.db'), 0o644);
    chmodSync(join(tend, 'cache', 'sb.openapi.json'), 0o666);
    const notices = await openAndWrite(join(tend, 'tend.db'));
    expect(modes(tend)).toEqual({
      '.': '700',
      cache: '700',
      'cache/sb.openapi.json': '600',
      'tend.db': '600',
    });
    expect(notices.sort()).toEqual(
      [
        `${tend} was open to others (mode 0755); it is now 0700`,
        `${join(tend, 'cache')} was open to others (mode 0775); it is now 0700`,
        `${join(tend, 'cache', 'sb.openapi.json')} was open to others (mode 0666); it is now 0600`,
        `${join(tend, 'tend.db')} was open to others (mode 0644); it is now 0600`,
      ].sort(),
    );
    // Once tight, opening again says nothing.
    expect(await openAndWrite(join(tend, 'tend.db'))).toEqual([]);
  });

  it('leaves a shared directory and what a symlink points at as they are', async () => {
    const shared = scratch();
    chmodSync(shared, 0o755);
    const outside = join(scratch(), 'elsewhere.txt');
    writeFileSync(outside, 'x');
    chmodSync(outside, 0o644);
    const tend = join(shared, '.tend');
    mkdirSync(tend, { mode: 0o700 });
    symlinkSync(outside, join(tend, 'link'));
    await openAndWrite(join(tend, 'tend.db'));
    await openAndWrite(join(shared, 'state.db'));
    expect(mode(shared)).toBe(0o755);
    expect(mode(outside)).toBe(0o644);
    expect(mode(join(shared, 'state.db'))).toBe(0o600);
  });

  it('creates missing parents of a store elsewhere 0700', async () => {
    const base = scratch();
    await openAndWrite(join(base, 'a', 'b', 'state.db'));
    expect([mode(join(base, 'a')), mode(join(base, 'a', 'b'))]).toEqual([0o700, 0o700]);
  });
});
