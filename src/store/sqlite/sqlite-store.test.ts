import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { NewChange, Operation } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { SUITE_LEDGER_KEY, describeStore } from '../../../test/support/store-contract.js';
import { GENESIS_HASH, keyedHash, unkeyedHash } from '../ledger-chain.js';
import { ledgerKey } from '../ledger-key.js';
import { MIGRATIONS, migrate } from './migrations.js';
import { changeFromRow, changeToRow } from '../rows.js';
import type { ChangeRow } from '../rows.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { SqliteStore, openSqliteStore } from './sqlite-store.js';
import { WalSync } from './wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A path to a database file that does not exist yet. */
function freshPath(): string {
  files += 1;
  return join(dir, `store-${files}.db`);
}

describeStore('sqlite :memory:', (options) => openSqliteStore(':memory:', options));
// Leases and ledger keys are tested with two connections to one file: `:memory:` cannot be opened twice.
describeStore(
  'sqlite file',
  (options) => openSqliteStore(freshPath(), options),
  async (now, options) => {
    const path = freshPath();
    const [a, b] = options ?? [{ ledgerKey: SUITE_LEDGER_KEY }, { ledgerKey: SUITE_LEDGER_KEY }];
    return [await openSqliteStore(path, { now, ...a }), await openSqliteStore(path, { now, ...b })];
  },
);

/** The key this file's ledgers are signed with. */
const KEY_MATERIAL = 'sqlite-store-test-ledger-key-9f8e7d6c5b4a';
const KEY = ledgerKey(KEY_MATERIAL);

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
  const store = await openSqliteStore(path, { ledgerKey: KEY });
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
  const store = await openSqliteStore(path, { ledgerKey: KEY });
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
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    const third = (await store.changes({ limit: 1 }))[0];
    expect(third?.seq).toBe(3);
    const next = await store.appendChange(change(4));
    expect(next.seq).toBe(4);
    expect(next.prevHash).toBe(third?.hash);
    expect(await store.verifyLedger()).toMatchObject({ ok: true, entries: 4, head: next.hash });
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
    const store = await openSqliteStore(path, {
      now: () => new Date('2030-05-06T07:08:09.000Z'),
      ledgerKey: KEY,
    });
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
      transaction: <A extends unknown[], T>(fn: (...args: A) => T) => {
        const t = real.transaction(fn);
        return Object.assign((...args: A) => t(...args), {
          immediate: (...args: A) => {
            immediates += 1;
            return t.immediate(...args);
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

describe('SQLite store: ledger appends in one group commit', () => {
  const now = () => new Date('2026-01-02T00:00:00.000Z');
  const entries = (store: SqliteStore) =>
    store
      .changes()
      .then((list) => list.map(({ seq, hash, prevHash }) => ({ seq, hash, prevHash })));

  it.each([2, 5, 300])(
    'chains %i entries appended at once exactly as one at a time (same seqs, links and hashes)',
    async (count) => {
      const alone = await openSqliteStore(freshPath(), { ledgerKey: KEY, now });
      for (let i = 1; i <= count; i++) await alone.appendChange(change(i % 10));
      const together = await openSqliteStore(freshPath(), { ledgerKey: KEY, now });
      const returned = await Promise.all(
        Array.from({ length: count }, (_, i) => together.appendChange(change((i + 1) % 10))),
      );
      expect(await entries(together)).toEqual(await entries(alone));
      expect(returned.map((c) => c.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
      expect(await together.verifyLedger()).toMatchObject({ ok: true, entries: count });
      await alone.close();
      await together.close();
    },
  );

  it('rejects an entry that cannot be written alone: the others of the batch chain without it', async () => {
    const store = await openSqliteStore(freshPath(), { ledgerKey: KEY, now });
    const unwritable = { ...change(2), after: { size: 10n } } as unknown as NewChange;
    const results = await Promise.allSettled([
      store.appendChange(change(1)),
      store.appendChange(unwritable),
      store.appendChange(change(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await store.changes()).map((c) => [c.seq, c.after])).toEqual([
      [1, { size: 2 }],
      [2, { size: 4 }],
    ]);
    expect(await store.verifyLedger()).toMatchObject({ ok: true, entries: 2 });
    await store.close();
  });
});

describe('SQLite store: which commits sync the write-ahead log', () => {
  /**
   * A database that records, for every write statement run, SQLite's `synchronous` level at that
   * moment (2 = FULL: the commit syncs the log; 1 = NORMAL: it does not).
   */
  function recordingDatabase(path: string): { db: SqliteDatabase; levels: number[] } {
    const real = new Database(path);
    const levels: number[] = [];
    const level = () => real.pragma('synchronous', { simple: true }) as number;
    const db: SqliteDatabase = {
      get open() {
        return real.open;
      },
      get inTransaction() {
        return real.inTransaction;
      },
      prepare: (source) => {
        const statement = real.prepare(source);
        if (!/^\s*(INSERT|UPDATE|DELETE)/i.test(source)) return statement;
        return {
          run: (...params: unknown[]) => {
            levels.push(level());
            return statement.run(...params);
          },
          get: statement.get.bind(statement),
          all: statement.all.bind(statement),
          iterate: statement.iterate.bind(statement),
        };
      },
      exec: (source) => real.exec(source),
      pragma: (source, options) => real.pragma(source, options),
      transaction: (fn) => real.transaction(fn),
      close: () => real.close(),
    };
    return { db, levels };
  }

  const FULL = 2;
  const NORMAL = 1;
  const settlement = { state: 'settled', at: '2026-01-01T00:00:01.000Z' } as const;
  const status = {
    address: 'sb.volumes/data',
    state: 'converged',
    checks: [],
    updatedAt: '2026-01-01T00:00:00.000Z',
  } as const;
  const twin = {
    address: 'sb.volumes/data',
    type: 'sb.volumes',
    objectId: 'vol-1',
    fields: { size: 1 },
    stateful: false,
    dependsOn: [],
    observedAt: '2026-01-01T00:00:00.000Z',
  } as const;

  const cases: {
    name: string;
    reason: string;
    writes: (store: SqliteStore) => Promise<unknown>[];
    want: number;
  }[] = [
    {
      name: 'a journal write alone',
      reason: 'an operation must be on disk before its request is sent',
      writes: (s) => [s.journal({ ...op, id: 'op-2' })],
      want: FULL,
    },
    {
      name: 'twin, settle, ledger and status writes together',
      reason: 'losing them to a power cut only means recovery resolves the operation again',
      writes: (s) => [
        s.putTwin(twin),
        s.settle('op-1', settlement),
        s.appendChange(change(1)),
        s.putStatus(status),
        s.deleteStatus('sb.volumes/data'),
        s.deleteTwin('sb.volumes/data'),
      ],
      want: NORMAL,
    },
    {
      name: 'a settle alone (committed without a transaction of its own)',
      reason: 'relaxed on the single-write path too',
      writes: (s) => [s.settle('op-1', settlement)],
      want: NORMAL,
    },
    {
      name: 'a settle and a journal write in one group commit',
      reason: 'one durable write makes the whole group durable',
      writes: (s) => [s.settle('op-1', settlement), s.journal({ ...op, id: 'op-2' })],
      want: FULL,
    },
    {
      name: 'a feed cursor',
      reason: 'the cursor says what was recorded: it stays durable',
      writes: (s) => [s.setCursor('sandbox', 'c-1')],
      want: FULL,
    },
    {
      name: 'a setting',
      reason: 'only the writes listed as relaxed are',
      writes: (s) => [s.setMeta('workspace', 'test')],
      want: FULL,
    },
  ];

  it.each(cases)('$name: $reason', async ({ writes, want }) => {
    const { db, levels } = recordingDatabase(freshPath());
    const store = new SqliteStore(db, { ledgerKey: KEY });
    await store.journal(op);
    levels.length = 0;
    await Promise.all(writes(store));
    expect(levels.length).toBeGreaterThan(0);
    expect(new Set(levels)).toEqual(new Set([want]));
    // Between group commits the connection is back at FULL (leases and migrations write there).
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    await store.close();
  });

  describe('with the log synced off the main thread (WalSync, as openSqliteStore sets for a file)', () => {
    /** A store whose log syncs the test finishes by hand. */
    function manual() {
      const path = freshPath();
      const { db, levels } = recordingDatabase(path);
      const syncs: ((error: Error | null) => void)[] = [];
      const walSync = new WalSync(`${path}-wal`, (_fd, done) => syncs.push(done));
      const store = new SqliteStore(db, { ledgerKey: KEY, walSync });
      return { store, levels, syncs };
    }
    const state = (p: Promise<unknown>) => {
      const s = { settled: 'pending' as 'pending' | 'resolved' | 'rejected' };
      p.then(
        () => (s.settled = 'resolved'),
        () => (s.settled = 'rejected'),
      );
      return s;
    };
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    it('resolves a journal write only after a sync begun after its commit, which runs under NORMAL', async () => {
      const { store, levels, syncs } = manual();
      const written = state(store.journal(op));
      await turn();
      expect(levels).toEqual([NORMAL]);
      expect(syncs).toHaveLength(1);
      expect(written.settled).toBe('pending');
      syncs[0]!(null);
      await turn();
      expect(written.settled).toBe('resolved');
      await store.close();
    });

    it('resolves a settle, twin and ledger write at its commit, without a sync', async () => {
      const { store, syncs } = manual();
      const journaled = store.journal(op);
      await turn();
      syncs[0]!(null);
      await journaled;
      await Promise.all([
        store.putTwin(twin),
        store.settle('op-1', settlement),
        store.appendChange(change(1)),
      ]);
      expect(syncs).toHaveLength(1);
      await store.close();
    });

    it('rejects a journal write whose sync failed, as store.failed with the reason', async () => {
      const { store, syncs } = manual();
      const written = store.journal(op);
      await turn();
      syncs[0]!(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
      await expect(written).rejects.toMatchObject({
        code: 'store.failed',
        message: 'the SQLite store failed: EIO: i/o error, fsync',
      });
      await store.close();
    });

    it('waits for a sync still running when it is closed', async () => {
      const { store, syncs } = manual();
      const written = state(store.journal(op));
      await turn();
      const closed = state(store.close());
      await turn();
      expect(closed.settled).toBe('pending');
      syncs[0]!(null);
      await turn();
      expect(written.settled).toBe('resolved');
      expect(closed.settled).toBe('resolved');
    });
  });

  it('commits a relaxed write when its promise resolves: another connection reads it', async () => {
    const path = freshPath();
    const { db } = recordingDatabase(path);
    const store = new SqliteStore(db, { ledgerKey: KEY });
    await store.journal(op);
    await store.settle('op-1', settlement);
    await store.journal({ ...op, id: 'op-2' });
    const reader = await openSqliteStore(path);
    expect((await reader.unsettled()).map((o) => o.id)).toEqual(['op-2']);
    expect(await reader.getOperation('op-1')).toMatchObject({ state: 'settled' });
    await reader.close();
    await store.close();
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
    expect(await verify(path)).toMatchObject({ ok: true, entries: 2 });
  });

  it.each([
    {
      name: 'an edited actor',
      sql: `UPDATE changes SET actor = 'mallory' WHERE seq = 3`,
      brokenAt: 3,
      problem: 'edited',
      reason:
        'entry 3 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
    {
      name: 'an edited JSON value',
      sql: `UPDATE changes SET after = '{"size":999}' WHERE seq = 2`,
      brokenAt: 2,
      problem: 'edited',
      reason:
        'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
    {
      name: 'a JSON value that no longer parses',
      sql: `UPDATE changes SET fields = '["size"' WHERE seq = 4`,
      brokenAt: 4,
      problem: 'edited',
      reason:
        'entry 4 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
    {
      name: 'a removed optional value',
      sql: `UPDATE changes SET before = NULL WHERE seq = 1`,
      brokenAt: 1,
      problem: 'edited',
      reason:
        'entry 1 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
    {
      name: 'a deleted entry in the middle',
      sql: 'DELETE FROM changes WHERE seq = 2',
      brokenAt: 2,
      problem: 'missing',
      reason: 'entry 2 is missing: the ledger jumps from 1 to 3 (an entry was deleted)',
    },
    {
      name: 'deleted newest entries',
      sql: 'DELETE FROM changes WHERE seq >= 4',
      brokenAt: 4,
      problem: 'missing',
      reason:
        'entries 4 to 5 are missing: the ledger ends at 3 but its head records 5 (entries were deleted)',
    },
    {
      name: 'an entry whose hash was recomputed to hide an edit',
      sql: `UPDATE changes SET hash = '${'a'.repeat(64)}' WHERE seq = 2`,
      brokenAt: 2,
      problem: 'edited',
      reason:
        'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
    {
      name: 'a renumbered ledger after a delete',
      sql: 'DELETE FROM changes WHERE seq = 2; UPDATE changes SET seq = seq - 1 WHERE seq > 2;',
      brokenAt: 2,
      problem: 'broken-link',
      reason:
        "entry 2 does not follow entry 1: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)",
    },
    {
      name: 'an entry turned into the old unkeyed format',
      sql: `UPDATE changes SET format = 1 WHERE seq = 3`,
      brokenAt: 3,
      problem: 'downgrade',
      reason:
        'entry 3 is in the old unkeyed format but follows keyed entries: unkeyed entries only come before the keyed ledger (the entry was rewritten without the key)',
    },
    {
      name: 'an entry of a format no Tend writes',
      sql: `UPDATE changes SET format = 9 WHERE seq = 5`,
      brokenAt: 5,
      problem: 'unknown-format',
      reason: 'entry 5 has format 9, which no Tend writes (the entry was edited)',
    },
    {
      name: 'an entry naming another key',
      sql: `UPDATE changes SET key_id = '${'b'.repeat(16)}' WHERE seq = 4`,
      brokenAt: 4,
      problem: 'key-changed',
      reason: `entry 4 was written with key id ${'b'.repeat(16)}, but entries 1–3 with key id ${KEY.id} (the key you gave): the key changed at entry 4, or the entry was forged with another key`,
    },
    {
      name: 'an edited decision',
      sql: `UPDATE changes SET decision = '{"decision":"yield","rule":"x","reason":"y","fields":[]}' WHERE seq = 2`,
      brokenAt: 2,
      problem: 'edited',
      reason:
        'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
    },
  ])('reports $name', async ({ sql, brokenAt, problem, reason }) => {
    const path = await ledgerFile(5);
    tamper(path, sql);
    expect(await verify(path)).toEqual({ ok: false, brokenAt, problem, reason });
  });

  it('reports a consistent rewrite of an entry at the next entry, which still points at the old hash', async () => {
    const path = await ledgerFile(3);
    // Rewrite entry 2 and give it a correct hash for its new contents, with the key itself.
    const honest = await openSqliteStore(':memory:', { ledgerKey: KEY });
    await honest.appendChange(change(1));
    const forged = await honest.appendChange({ ...change(2), actor: 'mallory' });
    await honest.close();
    tamper(path, `UPDATE changes SET actor = 'mallory', hash = '${forged.hash}' WHERE seq = 2`);
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 3,
      problem: 'broken-link',
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
    // Signed with the key itself: only the head, kept apart from the rows, shows the insertion.
    const unhashed = {
      ...change(3),
      format: 2 as const,
      seq: 3,
      keyId: KEY.id,
      prevHash: last.hash,
    };
    const row = changeToRow({ ...unhashed, hash: keyedHash(KEY, unhashed) });
    db.prepare(
      `INSERT INTO changes (seq, time, actor, actor_kind, intent, motivation, source, address, type,
         object_id, action, fields, before, after, decision, key_id, format, prev_hash, hash, recorded_at)
       VALUES (@seq, @time, @actor, @actor_kind, @intent, @motivation, @source, @address, @type,
         @object_id, @action, @fields, @before, @after, @decision, @key_id, @format, @prev_hash, @hash, 'x')`,
    ).run(row);
    db.close();
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 3,
      problem: 'inserted',
      reason:
        'entry 3 was not appended by the store: the ledger head records 2 entries (entries were inserted)',
    });
  });

  it('breaks the chain for good: later appends do not hide a deleted tail', async () => {
    const path = await ledgerFile(3);
    tamper(path, 'DELETE FROM changes WHERE seq = 3');
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    const next = await store.appendChange(change(4));
    expect(next.seq).toBe(4);
    expect(await store.verifyLedger()).toEqual({
      ok: false,
      brokenAt: 3,
      problem: 'missing',
      reason: 'entry 3 is missing: the ledger jumps from 2 to 4 (an entry was deleted)',
    });
    await store.close();
  });
});

/**
 * A database as Tend wrote it before the keyed ledger (schema version 3): format-1 rows, motivation
 * as free text, each hashed with plain SHA-256, and the head beside them.
 */
function legacyLedgerFile(count: number): string {
  const path = freshPath();
  const db = new Database(path);
  migrate(db, MIGRATIONS.slice(0, 3));
  const insert = db.prepare(
    `INSERT INTO changes (seq, time, actor, intent, motivation, source, address, type, object_id,
       action, fields, before, after, prev_hash, hash, recorded_at)
     VALUES (@seq, @time, @actor, @intent, @motivation, @source, @address, @type, @object_id,
       @action, @fields, @before, @after, @prev_hash, @hash, 'then')`,
  );
  let prevHash = GENESIS_HASH;
  for (let n = 1; n <= count; n++) {
    const entry = {
      seq: n,
      time: `2025-06-01T00:00:0${n}.000Z`,
      actor: 'alice',
      intent: 'availability',
      motivation: 'incident',
      source: 'audit' as const,
      address: 'sb.volumes/data' as const,
      type: 'sb.volumes',
      objectId: 'vol-1',
      action: 'update',
      fields: ['size'],
      before: { size: n },
      after: { size: n + 1 },
      prevHash,
    };
    const hash = unkeyedHash(entry);
    insert.run({
      ...entry,
      object_id: entry.objectId,
      fields: JSON.stringify(entry.fields),
      before: JSON.stringify(entry.before),
      after: JSON.stringify(entry.after),
      prev_hash: prevHash,
      hash,
    });
    prevHash = hash;
  }
  db.prepare('UPDATE ledger_head SET seq = ?, hash = ? WHERE id = 1').run(count, prevHash);
  db.close();
  return path;
}

/** The columns a format-1 row had, exactly as stored. */
function legacyColumns(path: string): unknown[] {
  const db = new Database(path, { readonly: true });
  const rows = db
    .prepare(
      `SELECT seq, time, actor, intent, motivation, source, address, type, object_id, action, fields,
         before, after, prev_hash, hash, recorded_at FROM changes WHERE seq <= 2 ORDER BY seq`,
    )
    .all();
  db.close();
  return rows;
}

describe('SQLite store: a ledger from before the keyed ledger (schema 3 → 5)', () => {
  const PREDATE =
    'entries 1–2 predate the keyed ledger: an edit there followed by re-hashing cannot be detected';

  it('adds the keyed columns without rewriting a row, and reads old entries with motivation { kind }', async () => {
    const path = legacyLedgerFile(2);
    const before = legacyColumns(path);
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    const [first] = await store.changes();
    expect(first).toStrictEqual({
      seq: 1,
      time: '2025-06-01T00:00:01.000Z',
      actor: 'alice',
      intent: 'availability',
      motivation: { kind: 'incident' },
      source: 'audit',
      address: 'sb.volumes/data',
      type: 'sb.volumes',
      objectId: 'vol-1',
      action: 'update',
      fields: ['size'],
      before: { size: 1 },
      after: { size: 2 },
      prevHash: GENESIS_HASH,
      hash: first!.hash,
    });
    await store.close();
    expect(legacyColumns(path)).toEqual(before);
    const db = new Database(path, { readonly: true });
    const columns = (db.pragma('table_info(changes)') as { name: string }[]).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(['actor_kind', 'decision', 'key_id', 'format']));
    expect(db.prepare('SELECT DISTINCT format FROM changes').pluck().all()).toEqual([1]);
    db.close();
  });

  it('verifies old entries by the old rule and says they are unprotected', async () => {
    const path = legacyLedgerFile(2);
    expect(await verify(path)).toEqual({
      ok: true,
      entries: 2,
      head: legacyColumns(path).map((r) => (r as { hash: string }).hash)[1],
      unkeyed: 2,
      unchecked: 0,
      keyId: KEY.id,
      warnings: [PREDATE],
    });
  });

  it('continues the chain across the boundary with keyed entries', async () => {
    const path = legacyLedgerFile(2);
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    const [, second] = await store.changes();
    const next = await store.appendChange(change(3));
    expect(next).toMatchObject({ seq: 3, prevHash: second!.hash, keyId: KEY.id });
    expect(await store.verifyLedger()).toEqual({
      ok: true,
      entries: 3,
      head: next.hash,
      unkeyed: 2,
      unchecked: 0,
      keyId: KEY.id,
      warnings: [PREDATE],
    });
    await store.close();
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT format FROM changes ORDER BY seq').pluck().all()).toEqual([1, 1, 2]);
    db.close();
  });

  it('still detects an edit of an old entry that was not re-hashed', async () => {
    const path = legacyLedgerFile(2);
    await (await openSqliteStore(path)).close(); // migrates
    tamper(path, `UPDATE changes SET actor = 'mallory' WHERE seq = 1`);
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 1,
      problem: 'edited',
      reason: 'entry 1 was edited after it was written: its hash does not match its contents',
    });
  });

  it('ignores columns an old entry did not have, so one written there is never shown', async () => {
    const path = legacyLedgerFile(2);
    await (await openSqliteStore(path)).close();
    tamper(
      path,
      `UPDATE changes SET actor_kind = 'human', key_id = 'x', decision = '{"decision":"yield"}' WHERE seq = 1`,
    );
    const store = await openSqliteStore(path);
    const [first] = await store.changes();
    expect(first).not.toHaveProperty('decision');
    expect(first).not.toHaveProperty('actorKind');
    expect(first).not.toHaveProperty('keyId');
    await store.close();
  });

  it('reports an old entry appended after keyed ones as a downgrade', async () => {
    const path = legacyLedgerFile(2);
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    const third = await store.appendChange(change(3));
    await store.close();
    const forged = {
      seq: 4,
      time: '2026-01-01T00:00:04.000Z',
      actor: 'mallory',
      source: 'tend' as const,
      type: 'sb.volumes',
      objectId: 'vol-1',
      action: 'delete',
      fields: [],
      prevHash: third.hash,
    };
    const hash = unkeyedHash(forged);
    tamper(
      path,
      `INSERT INTO changes (seq, time, actor, source, type, object_id, action, fields, prev_hash, hash, recorded_at, format)
         VALUES (4, '${forged.time}', 'mallory', 'tend', 'sb.volumes', 'vol-1', 'delete', '[]', '${third.hash}', '${hash}', 'x', 1);
       UPDATE ledger_head SET seq = 4, hash = '${hash}' WHERE id = 1;`,
    );
    expect(await verify(path)).toEqual({
      ok: false,
      brokenAt: 4,
      problem: 'downgrade',
      reason:
        'entry 4 is in the old unkeyed format but follows keyed entries: unkeyed entries only come before the keyed ledger (the entry was rewritten without the key)',
    });
  });
});

describe('SQLite store: the ledger key stays out of the database', () => {
  it('writes neither the key material nor its bytes to the database or its log', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    for (let i = 1; i <= 3; i++) await store.appendChange(change(i));
    const entries = await store.changes();
    const raw = () =>
      [path, `${path}-wal`]
        .filter((p) => existsSync(p))
        .map((p) => readFileSync(p))
        .reduce((all, b) => Buffer.concat([all, b]), Buffer.alloc(0));
    const hex = Buffer.from(KEY_MATERIAL, 'utf8').toString('hex');
    for (const bytes of [raw()]) {
      expect(bytes.includes(Buffer.from(KEY_MATERIAL, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(hex))).toBe(false);
      expect(bytes.includes(Buffer.from(KEY.id))).toBe(true); // the id is, and is meant to be
    }
    await store.close();
    const bytes = readFileSync(path);
    expect(bytes.includes(Buffer.from(KEY_MATERIAL, 'utf8'))).toBe(false);
    expect(entries.every((e) => e.keyId === KEY.id)).toBe(true);
  });

  it('signs a change so that the same change under another key has another hash', async () => {
    const a = await openSqliteStore(':memory:', { ledgerKey: KEY });
    const b = await openSqliteStore(':memory:', {
      ledgerKey: ledgerKey('a-different-ledger-key-0123456789abcdef'),
    });
    const [ea, eb] = [await a.appendChange(change(1)), await b.appendChange(change(1))];
    expect(ea.hash).not.toBe(eb.hash);
    const { hash, ...rest } = ea;
    expect(hash).toBe(keyedHash(KEY, { ...rest, format: 2, keyId: KEY.id }));
    await a.close();
    await b.close();
  });
});

describe('SQLite store: reading a damaged ledger', () => {
  it('still shows an entry whose format was edited, and verification reports it', async () => {
    const path = await ledgerFile(2);
    tamper(path, 'UPDATE changes SET format = 7 WHERE seq = 2');
    const store = await openSqliteStore(path, { ledgerKey: KEY });
    expect((await store.changes()).map((c) => [c.seq, c.keyId])).toEqual([
      [1, KEY.id],
      [2, KEY.id],
    ]);
    expect(await store.verifyLedger()).toMatchObject({
      ok: false,
      brokenAt: 2,
      problem: 'unknown-format',
    });
    await store.close();
  });

  it('names an entry without a key id as such', async () => {
    const path = await ledgerFile(2);
    tamper(path, 'UPDATE changes SET key_id = NULL WHERE seq = 2');
    expect(await verify(path)).toMatchObject({
      ok: false,
      brokenAt: 2,
      problem: 'key-changed',
      reason: expect.stringMatching(/^entry 2 was written with key id \(none\), but entry 1 with/),
    });
  });
});
