import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256 } from '../../src/core/index.js';
import { unkeyedHash } from '../../src/store/index.js';
import type { ChangeRow } from '../../src/store/rows.js';
import { changeFromRow } from '../../src/store/rows.js';
import { copyExample, runCli, type CliResult } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// The keyed change ledger through the built `tend` command (issue 11, item 1): `tend ledger verify`
// passes an untouched ledger and names the entry after every edit an attacker with the SQLite file
// but without the key can make — an edit, an edit re-hashed all the way to the head with plain
// SHA-256, a deletion, an insertion, a truncated tail against a checkpoint — and the key lives in
// the user's config directory, never in or beside the store.

const posix = process.platform !== 'win32';

describe.skipIf(!posix)('tend ledger verify: a keyed, anchored change ledger (CLI)', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  let config: string;
  let env: Record<string, string>;
  let firstApply: CliResult;
  const copies: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    config = mkdtempSync(join(tmpdir(), 'tend-ledger-config-'));
    // The per-user key goes to a config directory of this test's own, never the real one; a key
    // the developer may have set in the environment is not used.
    env = {
      QUICKSTART_ADMIN_PASSWORD: 'ledger-verify-secret',
      XDG_CONFIG_HOME: config,
      TEND_LEDGER_KEY: '',
      TEND_LEDGER_KEY_FILE: '',
    };
    firstApply = await runCli(['apply', ex.dir, '--no-checks'], { env });
    expect(firstApply.code, firstApply.stdout + firstApply.stderr).toBe(0);
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
    rmSync(config, { recursive: true, force: true });
    for (const c of copies) rmSync(c, { recursive: true, force: true });
  });

  const keyPath = () => join(config, 'tend', 'ledger.key');
  const storeOf = (dir: string) => join(dir, '.tend', 'tend.db');

  /** A copy of the applied workspace (intent and store) to tamper with. */
  function copy(): string {
    const dir = mkdtempSync(join(tmpdir(), 'tend-ledger-copy-'));
    copies.push(dir);
    cpSync(ex.dir, dir, { recursive: true });
    return dir;
  }

  /** Edits the store as an attacker with the file would: the append-only triggers dropped first. */
  function tamper(dir: string, edit: (db: Database.Database) => void): void {
    const db = new Database(storeOf(dir));
    db.exec('DROP TRIGGER changes_append_only_update; DROP TRIGGER changes_append_only_delete;');
    edit(db);
    db.close();
  }

  /**
   * Edits entry `at` and recomputes its hash and every later one — and the ledger head — with plain
   * SHA-256, relinking each entry to the new hash before it: a consistent rewrite without the key.
   */
  function rehashWithoutKey(db: Database.Database, at: number): void {
    const rows = db.prepare('SELECT * FROM changes ORDER BY seq').all() as ChangeRow[];
    let prev = rows[at - 2]!.hash;
    for (const row of rows.filter((r) => r.seq >= at)) {
      const { hash: _, ...entry } = {
        ...changeFromRow(row),
        ...(row.seq === at ? { actor: 'mallory' } : {}),
        prevHash: prev,
      };
      const hash = sha256(canonicalJson(entry));
      db.prepare('UPDATE changes SET actor = ?, prev_hash = ?, hash = ? WHERE seq = ?').run(
        entry.actor,
        prev,
        hash,
        row.seq,
      );
      prev = hash;
    }
    db.prepare('UPDATE ledger_head SET seq = ?, hash = ? WHERE id = 1').run(rows.length, prev);
  }

  const verify = (dir: string, ...args: string[]) =>
    runCli(['ledger', 'verify', dir, ...args], { env });

  it('exits 0 on an untouched ledger, naming the entries and the key', async () => {
    const key = readFileSync(keyPath(), 'utf8').trim();
    const r = await verify(ex.dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^ledger intact: 5 entries of workspace \S+, verified with key id [0-9a-f]{16}\n$/,
    );
    const json = JSON.parse((await verify(ex.dir, '--json')).stdout) as {
      ok: boolean;
      ledger: { entries: number; unchecked: number; unkeyed: number };
    };
    expect(json).toMatchObject({ ok: true, ledger: { entries: 5, unchecked: 0, unkeyed: 0 } });
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it('creates the key on first use in the user’s config directory, 0600 in 0700, never beside the store', () => {
    const key = keyPath();
    expect(readFileSync(key, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'tend')).mode & 0o777).toBe(0o700);
    expect(firstApply.stderr).toContain(`tend: created the ledger key ${key} (mode 0600)`);
    const besides = readdirSync(join(ex.dir, '.tend'), { recursive: true, encoding: 'utf8' });
    expect(besides.filter((f) => /key/i.test(f))).toEqual([]);
    expect(readdirSync(ex.dir).filter((f) => /key/i.test(f))).toEqual([]);
  });

  it('never writes the key to the store file', () => {
    const key = readFileSync(keyPath(), 'utf8').trim();
    const files = [storeOf(ex.dir), `${storeOf(ex.dir)}-wal`].filter((f) => existsSync(f));
    const bytes = Buffer.concat(files.map((f) => readFileSync(f)));
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(Buffer.from(key))).toBe(false);
    expect(bytes.includes(Buffer.from(key, 'hex'))).toBe(false);
  });

  it('exits 1 naming the entry edited in the SQLite file', async () => {
    const dir = copy();
    tamper(dir, (db) => db.exec(`UPDATE changes SET actor = 'mallory' WHERE seq = 3`));
    const r = await verify(dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'ledger TAMPERED at entry 3: entry 3 was edited after it was written: its hash does not match its contents under the ledger key',
    );
    expect(r.stderr).toContain('what to do: do not trust the ledger from that entry on');
  });

  it('exits 1 naming the edited entry when every later hash and the head were recomputed without the key', async () => {
    const dir = copy();
    tamper(dir, (db) => rehashWithoutKey(db, 2));
    const r = await verify(dir, '--json');
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      verdict: 'tampered',
      ledger: { ok: false, brokenAt: 2, problem: 'edited' },
    });
    // Without the key (`history` opens the store so) the rewrite cannot be seen, and it says so.
    const h = await runCli(['history', dir], { env });
    expect(h.stdout).toContain(
      'ledger links intact (5 entries); signatures not checked: run tend ledger verify',
    );
  });

  it('exits 1 when the rewritten entries are also passed off as old, unkeyed ones', async () => {
    const dir = copy();
    tamper(dir, (db) => {
      const rows = db.prepare('SELECT * FROM changes ORDER BY seq').all() as ChangeRow[];
      let prev = rows[1]!.hash;
      for (const row of rows.filter((r) => r.seq >= 3)) {
        const c = changeFromRow(row);
        const hash = unkeyedHash({ ...c, actor: 'mallory', motivation: 'apply', prevHash: prev });
        db.prepare(
          `UPDATE changes SET format = 1, actor = 'mallory', motivation = 'apply', prev_hash = ?, hash = ? WHERE seq = ?`,
        ).run(prev, hash, row.seq);
        prev = hash;
      }
      db.prepare('UPDATE ledger_head SET seq = 5, hash = ? WHERE id = 1').run(prev);
    });
    const r = await verify(dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'ledger TAMPERED at entry 3: entry 3 is in the old unkeyed format but follows keyed entries',
    );
  });

  it('exits 1 after an entry is deleted', async () => {
    const dir = copy();
    tamper(dir, (db) => db.exec('DELETE FROM changes WHERE seq = 2'));
    const r = await verify(dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'ledger TAMPERED at entry 2: entry 2 is missing: the ledger jumps from 1 to 3 (an entry was deleted)',
    );
  });

  it('exits 1 after an entry is inserted, even with the head moved along', async () => {
    const dir = copy();
    tamper(dir, (db) => {
      const last = db.prepare('SELECT * FROM changes WHERE seq = 5').get() as ChangeRow;
      const { hash: _, ...entry } = { ...changeFromRow(last), seq: 6, prevHash: last.hash };
      const hash = sha256(canonicalJson(entry));
      db.prepare(
        `INSERT INTO changes (seq, time, actor, actor_kind, intent, motivation, source, address, type,
           object_id, action, fields, before, after, decision, key_id, format, prev_hash, hash, recorded_at)
         SELECT 6, time, 'mallory', actor_kind, intent, motivation, source, address, type, object_id,
           'delete', fields, before, after, decision, key_id, format, ?, ?, recorded_at
         FROM changes WHERE seq = 5`,
      ).run(last.hash, hash);
      db.prepare('UPDATE ledger_head SET seq = 6, hash = ? WHERE id = 1').run(hash);
    });
    const r = await verify(dir);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'ledger TAMPERED at entry 6: entry 6 was edited after it was written',
    );
  });

  it('exits 1 against a checkpoint after the tail was truncated and the head moved back', async () => {
    const dir = copy();
    const checkpoint = join(dir, 'ledger.checkpoint.json');
    const made = await runCli(['ledger', 'checkpoint', dir, '--out', checkpoint], { env });
    expect(made.code, made.stdout + made.stderr).toBe(0);
    expect(made.stdout).toMatch(
      /^checkpoint of workspace \S+ at entry 5 \(key id [0-9a-f]{16}\) written to /,
    );
    expect(statSync(checkpoint).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(checkpoint, 'utf8'))).toMatchObject({ seq: 5 });
    tamper(dir, (db) => {
      db.exec('DELETE FROM changes WHERE seq >= 4');
      const third = db.prepare('SELECT hash FROM changes WHERE seq = 3').pluck().get() as string;
      db.prepare('UPDATE ledger_head SET seq = 3, hash = ? WHERE id = 1').run(third);
    });
    // The head lives in the same file: without the checkpoint the shorter ledger looks whole.
    expect((await verify(dir)).code).toBe(0);
    const r = await verify(dir, '--checkpoint', checkpoint);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(
      'ledger TAMPERED at entry 4: entries 4–5 are missing: the ledger ends at 3 but the checkpoint records 5 (entries were deleted)',
    );
  });

  it('passes against a checkpoint printed to stdout, after another apply', async () => {
    const dir = copy();
    const made = await runCli(['ledger', 'checkpoint', dir], { env });
    expect(made.code, made.stderr).toBe(0);
    const checkpoint = JSON.parse(made.stdout) as { seq: number; hash: string; keyId: string };
    expect(checkpoint).toMatchObject({ seq: 5 });
    const file = join(dir, 'cp.json');
    writeFileSync(file, made.stdout);
    const apply = await runCli(['apply', dir, '--no-checks'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const r = await verify(dir, '--checkpoint', file);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('entry 5 matches the checkpoint of');
  });

  it('exits 2 with another key, saying which key wrote the ledger', async () => {
    const other = 'another-ledger-key-0123456789abcdef-0123';
    const r = await runCli(['ledger', 'verify', ex.dir], {
      env: { ...env, TEND_LEDGER_KEY: other },
    });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toMatch(
      /^cannot verify the ledger: the keyed entries, from entry 1, were written with key id [0-9a-f]{16}; you gave key id [0-9a-f]{16}\n$/,
    );
    expect(r.stdout + r.stderr).not.toContain(other);
  });

  it('exits 2 for a missing key file and for an unreadable checkpoint', async () => {
    const missing = await runCli(['ledger', 'verify', ex.dir], {
      env: { ...env, TEND_LEDGER_KEY_FILE: join(config, 'absent.key') },
    });
    expect(missing.code, missing.stdout + missing.stderr).toBe(2);
    expect(missing.stderr).toContain(
      `error: TEND_LEDGER_KEY_FILE names ${join(config, 'absent.key')}, which does not exist`,
    );
    const unreadable = await verify(ex.dir, '--checkpoint', join(config, 'absent.json'));
    expect(unreadable.code, unreadable.stdout + unreadable.stderr).toBe(2);
    expect(unreadable.stderr).toContain(
      `error: cannot read the checkpoint ${join(config, 'absent.json')}: it does not exist`,
    );
  });
});
