import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewChange, Operation } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { describeStore } from '../describe-store.js';
import { changeHash } from '../ledger-chain.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { changeFromRow, changeToRow } from './sqlite-rows.js';
import type { ChangeRow } from './sqlite-rows.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { SqliteStore, openSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A path to a database file that does not exist yet. */
function freshPath(): string {
  files += 1;
  return join(dir, `store-${files}.db`);
}

describeStore('sqlite :memory:', () => openSqliteStore(':memory:'));
// Leases are tested with two connections to one file: `:memory:` cannot be opened twice.
describeStore(
  'sqlite file',
  () => openSqliteStore(freshPath()),
  async (now) => {
    const path = freshPath();
    return [await openSqliteStore(path, { now }), await openSqliteStore(path, { now })];
  },
);

const op: Operation = {
  id: 'op-1',
  address: 'sb.volumes/data',
  type: 'sb.volumes',
  action: 'create',
  desiredHash: 'abc',
  marker: { workspace: 'test', address: 'sb.volumes/data' },
  state: 'pending',
  createdAt: '2026-01-01T00:00:00.000Z',
};

function change(n: number): NewChange {
  return {
    time: `2026-01-01T00:00:0${n}.000Z`,
    actor: 'tend',
    source: 'tend',
    address: 'sb.volumes/data',
    type: 'sb.volumes',
    objectId: 'vol-1',
    action: 'update',
    fields: ['size'],
    before: { size: n },
    after: { size: n + 1 },
  };
}

/** Writes `count` entries to a new ledger file, closes it, and returns its path. */
async function ledgerFile(count: number): Promise<string> {
  const path = freshPath();
  const store = await openSqliteStore(path);
  for (let i = 1; i <= count; i++) await store.appendChange(change(i));
  await store.close();
  return path;
}

/**
 * Edits the file behind the store's back, as someone with access to the file could: the triggers
 * that guard the ledger are dropped first, because anyone with the file can drop them.
 */
function tamper(path: string, sql: string): void {
  const db = new Database(path);
  db.exec('DROP TRIGGER changes_append_only_update; DROP TRIGGER changes_append_only_delete;');
  db.exec(sql);
  db.close();
}

async function verify(path: string): Promise<unknown> {
  const store = await openSqliteStore(path);
  try {
    return await store.verifyLedger();
  } finally {
    await store.close();
  }
}

describe('SQLite store: files', () => {
  it('creates missing parent directories', async () => {
    const path = join(dir, 'a', 'b', 'c', 'tend.db');
    const store = await openSqliteStore(path);
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  it('uses WAL with synchronous = FULL, so a resolved write is on disk', async () => {
    const path = freshPath();
    const db = new Database(path);
    const store = new SqliteStore(db);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // 2 is FULL
    await store.close();
    // WAL is a property of the file: the next connection finds it set.
    const probe = new Database(path, { readonly: true });
    expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
    probe.close();
  });

  it('keeps a journaled operation pending across close and reopen', async () => {
    const path = freshPath();
    const first = await openSqliteStore(path);
    await first.journal(op);
    await first.close();
    const second = await openSqliteStore(path);
    expect(await second.unsettled()).toStrictEqual([op]);
    await second.settle('op-1', {
      state: 'settled',
      objectId: 'vol-1',
      at: '2026-01-01T00:00:01.000Z',
    });
    await second.close();
    const third = await openSqliteStore(path);
    expect(await third.unsettled()).toEqual([]);
    expect((await third.getOperation('op-1'))?.objectId).toBe('vol-1');
    await third.close();
  });

  it('shows a journaled operation to a new connection while the writer is still open', async () => {
    // What a crashed process leaves behind: committed WAL content and no orderly close.
    const path = freshPath();
    const writer = await openSqliteStore(path);
    await writer.journal(op);
    const reader = await openSqliteStore(path);
    expect(await reader.unsettled()).toStrictEqual([op]);
    await reader.close();
    await writer.close();
  });

  it('keeps every entry and the chain across reopen, and continues the chain', async () => {
    const path = await ledgerFile(3);
    const store = await openSqliteStore(path);
    const third = (await store.changes({ limit: 1 }))[0];
    expect(third?.seq).toBe(3);
    const next = await store.appendChange(change(4));
    expect(next.seq).toBe(4);
    expect(next.prevHash).toBe(third?.hash);
    expect(await store.verifyLedger()).toEqual({ ok: true, entries: 4 });
    await store.close();
  });

  it('reports an unopenable path as store.open-failed', async () => {
    const blocker = freshPath();
    await (await openSqliteStore(blocker)).close();
    // A directory cannot be created below a regular file.
    const error = await openSqliteStore(join(blocker, 'sub', 'x.db')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TendError);
    expect((error as TendError).code).toBe('store.open-failed');
    expect((error as TendError).message).toMatch(/^cannot open the SQLite store at .*x\.db: /);
  });

  it('refuses an empty path', async () => {
    const error = await openSqliteStore('').catch((e: unknown) => e);
    expect((error as TendError).code).toBe('store.invalid-location');
    expect((error as TendError).message).toBe(
      'the SQLite store path is empty; give a file path or :memory:',
    );
  });

  it('stamps ledger entries and cursors with the injected clock', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path, { now: () => new Date('2030-05-06T07:08:09.000Z') });
    await store.appendChange(change(1));
    await store.setCursor('sb', '7');
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT recorded_at FROM changes').pluck().get()).toBe(
      '2030-05-06T07:08:09.000Z',
    );
    expect(db.prepare('SELECT updated_at FROM cursors').pluck().get()).toBe(
      '2030-05-06T07:08:09.000Z',
    );
    db.close();
  });
});

describe('SQLite store: group commit', () => {
  /** A database that counts the transactions begun with `.immediate()` (the group commits). */
  function countingDatabase(path: string): { db: SqliteDatabase; immediates: () => number } {
    const real = new Database(path);
    let immediates = 0;
    const db: SqliteDatabase = {
      get open() {
        return real.open;
      },
      get inTransaction() {
        return real.inTransaction;
      },
      prepare: (source) => real.prepare(source),
      exec: (source) => real.exec(source),
      pragma: (source, options) => real.pragma(source, options),
      transaction: <T>(fn: () => T) => {
        const t = real.transaction(fn);
        return Object.assign(() => t(), {
          immediate: () => {
            immediates += 1;
            return t.immediate();
          },
        });
      },
      close: () => real.close(),
    };
    return { db, immediates: () => immediates };
  }

  const nth = (n: number): Operation => ({ ...op, id: `op-${n}` });

  it('commits writes made at once in one transaction, each on disk when its promise resolves', async () => {
    const path = freshPath();
    const { db, immediates } = countingDatabase(path);
    const store = new SqliteStore(db);
    const before = immediates();
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.journal(nth(i))));
    // One group commit for 50 journal writes, none of which opens a transaction of its own.
    expect(immediates() - before).toBe(1);
    const reader = await openSqliteStore(path);
    expect(await reader.unsettled()).toHaveLength(50);
    await reader.close();
    await store.close();
  });

  it('rejects a failing write alone: the others of its group commit', async () => {
    const store = await openSqliteStore(freshPath());
    const results = await Promise.allSettled([
      store.journal(nth(1)),
      store.journal(nth(1)),
      store.journal(nth(2)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = results[1] as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(TendError);
    expect((refused.reason as TendError).code).toBe('store.operation-exists');
    expect((await store.unsettled()).map((o) => o.id)).toEqual(['op-1', 'op-2']);
    await store.close();
  });

  it('fails the whole group when a disk error made SQLite roll the transaction back', async () => {
    const path = freshPath();
    const real = new Database(path);
    const full = () => {
      // What SQLite does on SQLITE_FULL or SQLITE_IOERR inside a transaction: it rolls it back.
      real.exec('ROLLBACK');
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    };
    const db: SqliteDatabase = {
      get open() {
        return real.open;
      },
      get inTransaction() {
        return real.inTransaction;
      },
      prepare: (source) => {
        const statement = real.prepare(source);
        return source.includes('INTO statuses')
          ? {
              ...statement,
              run: full,
              get: statement.get.bind(statement),
              all: statement.all.bind(statement),
              iterate: statement.iterate.bind(statement),
            }
          : statement;
      },
      exec: (source) => real.exec(source),
      pragma: (source, options) => real.pragma(source, options),
      transaction: (fn) => real.transaction(fn),
      close: () => real.close(),
    };
    const store = new SqliteStore(db);
    const results = await Promise.allSettled([
      store.journal(nth(1)),
      store.putStatus({
        address: 'sb.volumes/data',
        state: 'converged',
        checks: [],
        updatedAt: '2026-01-01T00:00:00.000Z',
      }),
      store.journal(nth(2)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'store.failed' });
    // Nothing of the group was written, not even the write after the failing one.
    expect(await store.unsettled()).toEqual([]);
    await store.close();
  });

  it('shows a read every write queued before it', async () => {
    const store = await openSqliteStore(freshPath());
    const written = store.journal(nth(1));
    expect(await store.getOperation('op-1')).toStrictEqual(nth(1));
    await written;
    await store.close();
  });

  it('commits queued writes when closed', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path);
    const written = store.journal(nth(1));
    await store.close();
    await written;
    const reopened = await openSqliteStore(path);
    expect(await reopened.unsettled()).toStrictEqual([nth(1)]);
    await reopened.close();
  });
});

describe('SQLite store: migrations', () => {
  it('numbers migrations 1, 2, 3… with no gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('applies every migration once, then is a no-op on reopen', async () => {
    const path = freshPath();
    const db = new Database(path);
    expect(migrate(db)).toEqual({ from: 0, to: MIGRATIONS.length });
    expect(migrate(db)).toEqual({ from: MIGRATIONS.length, to: MIGRATIONS.length });
    db.close();
    const store = await openSqliteStore(path);
    await store.journal(op);
    await store.close();
    const again = await openSqliteStore(path);
    expect(await again.unsettled()).toStrictEqual([op]);
    await again.close();
  });

  it('upgrades a store of schema version 3 to announcements and field claims, keeping what it held', async () => {
    const path = freshPath();
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, 3));
    db.prepare(`INSERT INTO meta (key, value) VALUES ('workspace', 'prod')`).run();
    expect(migrate(db)).toEqual({ from: 3, to: MIGRATIONS.length });
    db.close();
    const store = await openSqliteStore(path);
    expect(await store.getMeta('workspace')).toBe('prod');
    expect(await store.announcements()).toEqual([]);
    expect(await store.claims()).toEqual([]);
    await store.close();
  });

  it('applies nothing when a migration fails, leaving the version where it was', () => {
    const db = new Database(':memory:');
    const broken = [
      { version: 1, name: 'good', sql: 'CREATE TABLE a (x INTEGER);' },
      { version: 2, name: 'bad', sql: 'CREATE TABLE b (x INTEGER); NOT SQL;' },
    ];
    expect(() => migrate(db, broken)).toThrow(/syntax error/);
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all()).toEqual([]);
    db.close();
  });

  it('refuses a list of migrations with a gap', () => {
    const db = new Database(':memory:');
    expect(() => migrate(db, [{ version: 2, name: 'two', sql: '' }])).toThrow(
      'migration two has version 2; expected 1',
    );
    db.close();
  });

  it('refuses a database written by a newer Tend', async () => {
    const path = freshPath();
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    const error = await openSqliteStore(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TendError);
    expect((error as TendError).code).toBe('store.schema-too-new');
    expect((error as TendError).message).toBe(
      `the database has schema version ${MIGRATIONS.length + 1}, but this Tend knows versions up to ${MIGRATIONS.length}; upgrade Tend to open it`,
    );
  });

  it('accepts a database it already migrated, handed in directly', async () => {
    const db = new Database(':memory:');
    migrate(db);
    const store = new SqliteStore(db);
    await store.putTwin({
      address: 'sb.volumes/data',
      type: 'sb.volumes',
      objectId: 'vol-1',
      fields: {},
      stateful: false,
      dependsOn: [],
      observedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(await store.listTwin()).toHaveLength(1);
    await store.close();
    expect(db.open).toBe(false);
  });
});

describe('SQLite store: tamper evidence', () => {
  it('refuses edits and deletes of ledger rows through an ordinary connection', async () => {
    const path = await ledgerFile(2);
    const db = new Database(path);
    expect(() => db.exec(`UPDATE changes SET actor = 'mallory' WHERE seq = 1`)).toThrow(
      'the change ledger is append-only',
    );
    expect(() => db.exec('DELETE FROM changes WHERE seq = 2')).toThrow(
      'the change ledger is append-only',
    );
    db.close();
    expect(await verify(path)).toEqual({ ok: true, entries: 2 });
  });

  it.each([
    {
      name: 'an edited actor',
      sql: `UPDATE changes SET actor = 'mallory' WHERE seq = 3`,
      brokenAt: 3,
      reason: 'entry 3 was edited after it was written: its hash does not match its contents',
    },
    {
      name: 'an edited JSON value',
      sql: `UPDATE changes SET after = '{"size":999}' WHERE seq = 2`,
      brokenAt: 2,
      reason: 'entry 2 was edited after it was written: its hash does not match its contents',
    },
    {
      name: 'a JSON value that no longer parses',
      sql: `UPDATE changes SET fields = '["size"' WHERE seq = 4`,
      brokenAt: 4,
      reason: 'entry 4 was edited after it was written: its hash does not match its contents',
    },
    {
      name: 'a removed optional value',
      sql: `UPDATE changes SET before = NULL WHERE seq = 1`,
      brokenAt: 1,
      reason: 'entry 1 was edited after it was written: its hash does not match its contents',
    },
    {
      name: 'a deleted entry in the middle',
      sql: 'DELETE FROM changes WHERE seq = 2',
      brokenAt: 2,
      reason: 'entry 2 is missing: the ledger jumps from 1 to 3 (an entry was deleted)',
    },
    {
      name: 'deleted newest entries',
      sql: 'DELETE FROM changes WHERE seq >= 4',
      brokenAt: 4,
      reason:
        'entries 4 to 5 are missing: the ledger ends at 3 but its head records 5 (entries were deleted)',
    },
    {
      name: 'an entry whose hash was recomputed to hide an edit',
      sql: `UPDATE changes SET hash = '${'a'.repeat(64)}' WHERE seq = 2`,
      brokenAt: 2,
      reason: 'entry 2 was edited after it was written: its hash does not match its contents',
    },
    {
      name: 'a renumbered ledger after a delete',
      sql: 'DELETE FROM changes WHERE seq = 2; UPDATE changes SET seq = seq - 1 WHERE seq > 2;',
      brokenAt: 2,
      reason:
        "entry 2 does not follow entry 1: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)",
    },
  ])('reports $name', async ({ sql, brokenAt, reason }) => {
    const path = await ledgerFile(5);
    tamper(path, sql);
    expect(await verify(path)).toEqual({ ok: false, brokenAt, reason });
  });

  it('reports a consistent rewrite of an entry at the next entry, which still points at the old hash', async () => {
    const path = await ledgerFile(3);
    // Rewrite entry 2 and give it a correct hash for its new contents, using the store's own hashing.
    const honest = await openSqliteStore(':memory:');
    await honest.appendChange(change(1));
    const forged = await honest.appendChange({ ...change(2), actor: 'mallory' });
    await honest.close();
    tamper(path, `UPDATE changes SET actor = 'mallory', hash = '${forged.hash}' WHERE seq = 2`);
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 3,
      reason:
        "entry 3 does not follow entry 2: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)",
    });
  });

  it('reports an entry inserted around the store, even with a correct hash', async () => {
    const path = await ledgerFile(2);
    const db = new Database(path);
    const last = changeFromRow(
      db.prepare('SELECT * FROM changes WHERE seq = 2').get() as ChangeRow,
    );
    const unhashed = { ...change(3), seq: 3, prevHash: last.hash };
    const row = changeToRow({ ...unhashed, hash: changeHash(unhashed) });
    db.prepare(
      `INSERT INTO changes (seq, time, actor, intent, motivation, source, address, type, object_id,
         action, fields, before, after, prev_hash, hash, recorded_at)
       VALUES (@seq, @time, @actor, @intent, @motivation, @source, @address, @type, @object_id,
         @action, @fields, @before, @after, @prev_hash, @hash, 'x')`,
    ).run(row);
    db.close();
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 3,
      reason:
        'entry 3 was not appended by the store: the ledger head records 2 entries (entries were inserted)',
    });
  });

  it('breaks the chain for good: later appends do not hide a deleted tail', async () => {
    const path = await ledgerFile(3);
    tamper(path, 'DELETE FROM changes WHERE seq = 3');
    const store = await openSqliteStore(path);
    const next = await store.appendChange(change(4));
    expect(next.seq).toBe(4);
    expect(await store.verifyLedger()).toEqual({
      ok: false,
      brokenAt: 3,
      reason: 'entry 3 is missing: the ledger jumps from 2 to 4 (an entry was deleted)',
    });
    await store.close();
  });
});
