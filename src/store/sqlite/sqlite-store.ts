import { basename, dirname } from 'node:path';
import Database from 'better-sqlite3';
import type {
  ActionRun,
  Address,
  Announcement,
  Change,
  FieldClaim,
  NewChange,
  Operation,
  Redactor,
  ResourceStatus,
} from '../../core/index.js';
import { checkCount, leaseLostError, storeClosedError } from '../store-errors.js';
import { TendError } from '../../core/index.js';
import { GENESIS_HASH, verifyChain } from '../ledger-chain.js';
import { signChange } from '../ledger-entry.js';
import type { LedgerHead } from '../ledger-chain.js';
import type { LedgerKey } from '../ledger-key.js';
import type {
  ActionRunQuery,
  AnnouncementQuery,
  ChangeQuery,
  Lease,
  LeaseAttempt,
  LeaseRequest,
  LedgerCheck,
  LedgerVerification,
  Settlement,
  Store,
  TwinEntry,
} from '../store.js';
import {
  TEND_DIR_NAME,
  ensurePrivateDir,
  ensurePrivateFile,
  tightenSqliteFiles,
  tightenTree,
} from '../private-files.js';
import { migrate } from './migrations.js';
import type { MigrationResult } from './migrations.js';
import { ActionStatements } from './sqlite-actions.js';
import { OwnershipStatements } from './sqlite-ownership.js';
import { exportSqliteMemory, importSqliteMemory } from './sqlite-memory.js';
import type { SqliteMemoryParts } from './sqlite-memory.js';
import type {
  ExportOptions,
  ImportOptions,
  MemoryCounts,
  MemoryTransfer,
  WorkspaceMemory,
} from '../memory.js';
import { WalSync } from './wal-sync.js';
import { isBusy, retryBusy } from './busy-retry.js';
import type { SqliteDatabase, SqliteStatement, SqliteTransaction } from './sqlite-database.js';
import {
  changeFromRow,
  leaseFromRow,
  operationFromRow,
  recordFromRow,
  operationToRow,
  statusFromRow,
  statusToRow,
  twinFromRow,
  twinToRow,
} from '../rows.js';
import type { ChangeRow, LeaseRow, OperationRow, StatusRow, TwinRow } from '../rows.js';

/** Options of a SQLite store. */
export interface SqliteStoreOptions {
  /** The clock stamping when the store recorded a ledger entry or a cursor (default: system time). */
  readonly now?: () => Date;
  /**
   * The process's redactor: every value written passes through it first, so that no secret reaches
   * the database even when a caller forgot (the last line of defence; docs/architecture.md).
   */
  readonly redactor?: Redactor;
  /**
   * Told, one sentence each, about files and directories found open to others and tightened
   * (see `openSqliteStore`); default: nobody is told.
   */
  readonly notice?: (message: string) => void;
  /**
   * The key that signs the entries this store appends to the change ledger and checks them when it
   * is verified. Without one the ledger can be read and its links checked, but not appended to. The
   * store never reads a key from anywhere itself and never writes it.
   */
  readonly ledgerKey?: LedgerKey;
  /**
   * Syncs the write-ahead log off the main thread: durable writes then commit without a sync and
   * resolve once `walSync` has synced the log (see `WalSync`). `openSqliteStore` sets it for a file;
   * without it every durable commit syncs inside the commit (`synchronous = FULL`).
   */
  readonly walSync?: WalSync;
}

/** Milliseconds a write waits for another connection's lock before failing as retryable. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Opens (creating it and its parent directories when missing) the SQLite store at `path`, or an
 * in-memory one for `:memory:`, and brings its schema up to date.
 *
 * The store is private: the database and its -wal/-shm files are 0600, directories it creates 0700.
 * Looser ones are tightened when opened (each change goes to `options.notice`); so is every file and
 * directory in the store's directory when that is Tend's own `.tend/`. A directory of another name
 * that already exists is left as it is (a store may live in a shared directory).
 *
 * Crash safety is the product's core promise: an operation journaled before a request is sent must
 * survive a crash or a power cut right after. So the database runs in WAL mode with
 * `synchronous = FULL`, which syncs the write-ahead log at every commit: when `journal()` (or any
 * durable write) resolves, it is on disk. Writes whose loss only means re-resolving an operation
 * (twin, settle, ledger, status) commit without that sync when no durable write shares their group
 * commit; the next durable commit syncs them too (see `Sync`, docs/decisions/0028-relaxed-settles.md).
 */
export function openSqliteStore(
  path: string,
  options: SqliteStoreOptions = {},
): Promise<SqliteStore> {
  // The executor's throws become the promise's rejection.
  return new Promise((resolve) => resolve(openSync(path, options)));
}

function openSync(path: string, options: SqliteStoreOptions): SqliteStore {
  if (path === '') {
    throw new TendError(
      'store.invalid-location',
      'the SQLite store path is empty; give a file path or :memory:',
      { phase: 'store' },
    );
  }
  const memory = path === ':memory:';
  const notes: string[] = [];
  try {
    if (!memory) {
      const dir = dirname(path);
      for (const n of ensurePrivateDir(dir)) notes.push(n);
      if (basename(dir) === TEND_DIR_NAME) for (const n of tightenTree(dir)) notes.push(n);
      for (const n of ensurePrivateFile(path)) notes.push(n);
      for (const n of tightenSqliteFiles(path)) notes.push(n);
    }
  } catch (e) {
    throw openFailed(path, e);
  }
  const walSync = memory ? undefined : (options.walSync ?? new WalSync(`${path}-wal`));
  // Opening (WAL mode, the migrations) is tried again through the busy moments the busy handler
  // does not wait out (busy-retry.ts): another process opening the same new file, or closing it.
  let store: SqliteStore;
  try {
    store = retryBusy(
      () => {
        let db: Database.Database;
        try {
          db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
        } catch (e) {
          throw openFailed(path, e);
        }
        try {
          return new SqliteStore(db, { ...options, ...(walSync ? { walSync } : {}) });
        } catch (e) {
          db.close();
          throw isBusy(e) ? e : storeError(e);
        }
      },
      { deadlineMs: BUSY_TIMEOUT_MS },
    );
  } catch (e) {
    throw storeError(e);
  }
  // WAL mode has just created -wal and -shm (with the database's mode): make sure of it.
  if (!memory) for (const n of tightenSqliteFiles(path)) notes.push(n);
  for (const note of notes) options.notice?.(note);
  return store;
}

/** `store.open-failed`: the file could not be opened (or its directory made private). */
function openFailed(path: string, e: unknown): TendError {
  return new TendError(
    'store.open-failed',
    `cannot open the SQLite store at ${path}: ${e instanceof Error ? e.message : String(e)}`,
    { phase: 'store', hint: 'check that the directory is writable', cause: e },
  );
}

interface Statements {
  readonly getTwin: SqliteStatement;
  readonly getTwins: SqliteStatement;
  readonly listTwin: SqliteStatement;
  readonly putTwin: SqliteStatement;
  readonly deleteTwin: SqliteStatement;
  readonly insertOperation: SqliteStatement;
  readonly settleOperation: SqliteStatement;
  readonly getOperation: SqliteStatement;
  readonly unsettled: SqliteStatement;
  readonly operations: SqliteStatement;
  readonly operationsFor: SqliteStatement;
  readonly ledgerHead: SqliteStatement;
  readonly setLedgerHead: SqliteStatement;
  readonly insertChange: SqliteStatement;
  readonly changes: SqliteStatement;
  readonly changesFor: SqliteStatement;
  readonly allChanges: SqliteStatement;
  readonly getCursor: SqliteStatement;
  readonly setCursor: SqliteStatement;
  readonly putStatus: SqliteStatement;
  readonly listStatus: SqliteStatement;
  readonly deleteStatus: SqliteStatement;
  readonly getLease: SqliteStatement;
  readonly putLease: SqliteStatement;
  readonly renewLease: SqliteStatement;
  readonly deleteLease: SqliteStatement;
  readonly lastEpoch: SqliteStatement;
  readonly setLastEpoch: SqliteStatement;
  readonly getMeta: SqliteStatement;
  readonly setMeta: SqliteStatement;
}

/**
 * How a write must reach the disk. `durable`: on disk when its promise resolves (the write-ahead log
 * is synced at its commit). `relaxed`: committed when its promise resolves — a crash of the process
 * cannot lose it — and on disk at the next durable commit or when the store closes; only a power cut
 * or an OS crash before then loses it, and then only with every commit after it (docs/decisions/
 * 0028-relaxed-settles.md). Only writes whose loss means re-resolving are relaxed: the twin, a
 * settle, a ledger entry, a status. The journal, a lease, a cursor, claims and action runs are
 * durable.
 */
type Sync = 'durable' | 'relaxed';

const RELAXED: Sync = 'relaxed';

/** A write waiting for the next group commit. */
interface QueuedWrite {
  readonly sync: Sync;
  readonly body: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * The Store on one SQLite database. Calls take effect in the order they are made, on the single
 * connection, so calls from many async callers never interleave: writes are group-committed (see
 * `#write`) and every read first commits the writes queued before it. Writes that read first (the
 * ledger) run in an IMMEDIATE transaction, so another process sharing the file cannot interleave.
 */
export class SqliteStore implements Store, MemoryTransfer {
  readonly #db: SqliteDatabase;
  readonly #now: () => Date;
  readonly #ledgerKey: LedgerKey | undefined;
  /** What every written value passes through (identity without a redactor). */
  readonly #clean: <T>(value: T) => T;
  readonly #sql: Statements;
  /** Announcements and field claims (sqlite-ownership.ts). */
  readonly #ownership: OwnershipStatements;
  /** Day-2 action runs (sqlite-actions.ts). */
  readonly #actions: ActionStatements;
  /** Appends one signed entry to the ledger (see `appendChange`). */
  readonly #append: SqliteTransaction<[NewChange, LedgerKey], Change>;
  /** Writes waiting for the next group commit, in call order. */
  #queue: QueuedWrite[] = [];
  /**
   * While a group commit's transaction runs: the ledger head as its appends left it (undefined: none
   * appended yet), written to `ledger_head` once, before the commit.
   */
  #batch: { head: LedgerHead | undefined } | undefined;
  /** Syncs the write-ahead log off the main thread (see `SqliteStoreOptions.walSync`). */
  readonly #walSync: WalSync | undefined;
  /** The lease this store's writes are fenced by, once one was acquired (see `acquireLease`). */
  #fence: { workspace: string; epoch: number } | undefined;
  /** The schema versions before and after opening (SQLite migrates when it opens). */
  readonly migration: MigrationResult;

  /**
   * Wraps an open database: switches it to WAL with `synchronous = FULL` (see `openSqliteStore`) and
   * migrates it to the newest schema. Prefer `openSqliteStore`, which also opens the file.
   */
  constructor(db: SqliteDatabase, options: SqliteStoreOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#ledgerKey = options.ledgerKey;
    this.#walSync = options.walSync;
    const redactor = options.redactor;
    this.#clean = redactor ? (value) => redactor.value(value) : (value) => value;
    // An in-memory database answers `memory` and stays so; that is expected.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    this.migration = migrate(db);
    const p = (sql: string): SqliteStatement => db.prepare(sql);
    // Most recent N, returned oldest first: pick newest first with a limit (-1: none), then re-sort.
    const recentOperations = (where: string): string =>
      `SELECT * FROM (SELECT * FROM operations ${where} ORDER BY created_at DESC, seq DESC LIMIT @limit)
       ORDER BY created_at, seq`;
    const recentChanges = (where: string): string =>
      `SELECT * FROM (SELECT * FROM changes WHERE seq > @afterSeq ${where} ORDER BY seq DESC LIMIT @limit)
       ORDER BY seq`;
    this.#sql = {
      getTwin: p('SELECT * FROM twin WHERE address = ?'),
      // Many addresses in one statement: a JSON array of them, unpacked by SQLite (no per-row call).
      getTwins: p(
        'SELECT * FROM twin WHERE address IN (SELECT value FROM json_each(?)) ORDER BY address',
      ),
      listTwin: p('SELECT * FROM twin ORDER BY address'),
      putTwin: p(
        `INSERT OR REPLACE INTO twin (address, type, object_id, fields, stateful, depends_on, observed_at, sent)
         VALUES (@address, @type, @object_id, @fields, @stateful, @depends_on, @observed_at, @sent)`,
      ),
      deleteTwin: p('DELETE FROM twin WHERE address = ?'),
      insertOperation: p(
        `INSERT INTO operations (id, address, type, action, object_id, desired_hash, marker, group_id,
           step, replaces, epoch, state, created_at, settled_at, error)
         VALUES (@id, @address, @type, @action, @object_id, @desired_hash, @marker, @group_id,
           @step, @replaces, @epoch, @state, @created_at, @settled_at, @error)
         ON CONFLICT (id) DO NOTHING`,
      ),
      // Only a pending operation changes: settling twice never overwrites the first result.
      settleOperation: p(
        `UPDATE operations
         SET state = @state, settled_at = @at, error = @error, object_id = COALESCE(@objectId, object_id)
         WHERE id = @id AND state = 'pending'`,
      ),
      getOperation: p('SELECT * FROM operations WHERE id = ?'),
      unsettled: p(`SELECT * FROM operations WHERE state = 'pending' ORDER BY created_at, seq`),
      operations: p(recentOperations('')),
      operationsFor: p(recentOperations('WHERE address = @address')),
      ledgerHead: p('SELECT seq, hash FROM ledger_head WHERE id = 1'),
      setLedgerHead: p('INSERT OR REPLACE INTO ledger_head (id, seq, hash) VALUES (1, ?, ?)'),
      insertChange: p(
        `INSERT INTO changes (seq, time, actor, actor_kind, intent, motivation, source, address, type,
           object_id, action, fields, before, after, decision, origin, compliance, key_id, format, prev_hash, hash,
           recorded_at)
         VALUES (@seq, @time, @actor, @actor_kind, @intent, @motivation, @source, @address, @type,
           @object_id, @action, @fields, @before, @after, @decision, @origin, @compliance, @key_id, @format, @prev_hash,
           @hash, @recorded_at)`,
      ),
      changes: p(recentChanges('')),
      changesFor: p(recentChanges('AND address = @address')),
      allChanges: p('SELECT * FROM changes ORDER BY seq'),
      getCursor: p('SELECT cursor FROM cursors WHERE provider = ?'),
      setCursor: p(
        `INSERT OR REPLACE INTO cursors (provider, cursor, updated_at) VALUES (?, ?, ?)`,
      ),
      putStatus: p(
        `INSERT OR REPLACE INTO statuses (address, state, object_id, message, checks, compliance, updated_at)
         VALUES (@address, @state, @object_id, @message, @checks, @compliance, @updated_at)`,
      ),
      listStatus: p('SELECT * FROM statuses ORDER BY address'),
      deleteStatus: p('DELETE FROM statuses WHERE address = ?'),
      getLease: p('SELECT * FROM leases WHERE workspace = ?'),
      putLease: p(
        `INSERT OR REPLACE INTO leases (workspace, epoch, command, pid, host, started_at, acquired_at, expires_at)
         VALUES (@workspace, @epoch, @command, @pid, @host, @started_at, @acquired_at, @expires_at)`,
      ),
      renewLease: p('UPDATE leases SET expires_at = ? WHERE workspace = ? AND epoch = ?'),
      deleteLease: p('DELETE FROM leases WHERE workspace = ? AND epoch = ?'),
      lastEpoch: p('SELECT epoch FROM lease_epochs WHERE workspace = ?'),
      setLastEpoch: p('INSERT OR REPLACE INTO lease_epochs (workspace, epoch) VALUES (?, ?)'),
      getMeta: p('SELECT value FROM meta WHERE key = ?'),
      setMeta: p('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
    };
    this.#ownership = new OwnershipStatements(db);
    this.#actions = new ActionStatements(db);
    // IMMEDIATE when called alone (a savepoint inside a group commit): the head read and the insert
    // happen under the write lock, as one step. Made once: wrapping a new function per append cost
    // as much as the append's own statements.
    this.#append = db.transaction((change: NewChange, key: LedgerKey): Change => {
      const entry = this.#insertEntry(change, key, this.#head());
      this.#sql.setLedgerHead.run(entry.seq, entry.hash);
      return entry;
    });
  }

  /**
   * Signs `change` as the entry after `head` and inserts it; moves no head. Throws before writing
   * anything, or at the insert (which SQLite then undoes), so a failure leaves the ledger as it was.
   */
  #insertEntry(change: NewChange, key: LedgerKey, head: LedgerHead): Change {
    const { row, entry } = signChange(this.#clean(change), key, head);
    this.#sql.insertChange.run({ ...row, recorded_at: this.#now().toISOString() });
    return entry;
  }

  getTwin(address: Address): Promise<TwinEntry | undefined> {
    return this.#read(() => {
      const row = this.#sql.getTwin.get(address) as TwinRow | undefined;
      return row && twinFromRow(row);
    });
  }

  getTwins(addresses: readonly Address[]): Promise<TwinEntry[]> {
    return this.#read(() =>
      addresses.length === 0
        ? []
        : (this.#sql.getTwins.all(JSON.stringify(addresses)) as TwinRow[]).map(twinFromRow),
    );
  }

  /** SQLite's `data_version`: changes when another connection commits (twin-cache.ts). */
  dataVersion(): number {
    return this.#db.pragma('data_version', { simple: true }) as number;
  }

  listTwin(): Promise<TwinEntry[]> {
    return this.#read(() => (this.#sql.listTwin.all() as TwinRow[]).map(twinFromRow));
  }

  putTwin(entry: TwinEntry): Promise<void> {
    return this.#write(() => {
      this.#sql.putTwin.run(twinToRow(this.#clean(entry)));
    }, RELAXED);
  }

  deleteTwin(address: Address): Promise<void> {
    return this.#write(() => {
      this.#sql.deleteTwin.run(address);
    }, RELAXED);
  }

  journal(op: Operation): Promise<void> {
    return this.#write(() => {
      if (op.state !== 'pending') {
        throw new TendError(
          'store.invalid-operation',
          `operation ${op.id} is ${op.state}; journal() takes a pending operation, settle() settles it`,
          { address: op.address, phase: 'store' },
        );
      }
      // A single autocommit statement: with synchronous = FULL it is on disk when run() returns.
      const clean = this.#clean(op);
      const stamped = this.#fence ? { ...clean, epoch: this.#fence.epoch } : clean;
      const { changes } = this.#sql.insertOperation.run(operationToRow(stamped));
      if (changes === 0) {
        throw new TendError(
          'store.operation-exists',
          `operation ${op.id} is already journaled; resolve the existing one instead of journaling it again`,
          { address: op.address, phase: 'store' },
        );
      }
    });
  }

  settle(opId: string, settlement: Settlement): Promise<void> {
    return this.#write(() => {
      if (settlement.state !== 'settled' && settlement.state !== 'failed') {
        throw new TendError(
          'store.invalid-settlement',
          `cannot settle operation ${opId} as ${String(settlement.state)}; use 'settled' or 'failed'`,
          { phase: 'store' },
        );
      }
      const clean = this.#clean(settlement);
      const { changes } = this.#sql.settleOperation.run({
        id: opId,
        state: clean.state,
        at: clean.at,
        error: clean.error ?? null,
        objectId: clean.objectId ?? null,
      });
      if (changes === 0 && this.#sql.getOperation.get(opId) === undefined) {
        throw new TendError(
          'store.operation-not-found',
          `operation ${opId} was never journaled; journal an operation before settling it`,
          { phase: 'store' },
        );
      }
    }, RELAXED);
  }

  getOperation(opId: string): Promise<Operation | undefined> {
    return this.#read(() => {
      const row = this.#sql.getOperation.get(opId) as OperationRow | undefined;
      return row && operationFromRow(row);
    });
  }

  unsettled(): Promise<Operation[]> {
    return this.#read(() => (this.#sql.unsettled.all() as OperationRow[]).map(operationFromRow));
  }

  operations(query: { address?: Address; limit?: number } = {}): Promise<Operation[]> {
    return this.#read(() => {
      const limit = checkCount('limit', query.limit) ?? -1;
      const rows =
        query.address === undefined
          ? this.#sql.operations.all({ limit })
          : this.#sql.operationsFor.all({ limit, address: query.address });
      return (rows as OperationRow[]).map(operationFromRow);
    });
  }

  appendChange(change: NewChange): Promise<Change> {
    const key = this.#ledgerKey;
    if (key === undefined) {
      return Promise.reject(
        new TendError(
          'store.ledger-read-only',
          'cannot append to the change ledger: this store was opened without the ledger key, so it can read the ledger but not sign new entries',
          {
            phase: 'store',
            hint: 'open the store with a ledger key: commands that record changes (apply, run, prune, import) do',
          },
        ),
      );
    }
    return this.#write(() => {
      const batch = this.#batch;
      if (batch === undefined) return this.#append.immediate(change, key);
      // Inside a group commit (one IMMEDIATE transaction, under the write lock): no savepoint of its
      // own, and the head row is written once, when the batch ends (see `#flush`).
      const entry = this.#insertEntry(change, key, batch.head ?? this.#head());
      batch.head = { seq: entry.seq, hash: entry.hash };
      return entry;
    }, RELAXED);
  }

  changes(query: ChangeQuery = {}): Promise<Change[]> {
    return this.#read(() => {
      const limit = checkCount('limit', query.limit) ?? -1;
      const afterSeq = checkCount('afterSeq', query.afterSeq) ?? 0;
      const rows =
        query.address === undefined
          ? this.#sql.changes.all({ limit, afterSeq })
          : this.#sql.changesFor.all({ limit, afterSeq, address: query.address });
      return (rows as ChangeRow[]).map((row) => changeFromRow(row));
    });
  }

  verifyLedger(check: LedgerCheck = {}): Promise<LedgerVerification> {
    return this.#read(() =>
      // One read transaction: entries appended meanwhile by another process are not half-seen.
      this.#db.transaction(() => {
        const head = this.#head();
        const rows = this.#sql.allChanges.iterate() as IterableIterator<ChangeRow>;
        return verifyChain(
          (function* () {
            for (const row of rows) yield recordFromRow(row, true);
          })(),
          {
            head,
            ...(this.#ledgerKey ? { key: this.#ledgerKey } : {}),
            ...(check.checkpoint ? { checkpoint: check.checkpoint } : {}),
          },
        );
      })(),
    );
  }

  getCursor(provider: string): Promise<string | undefined> {
    return this.#read(() => {
      const row = this.#sql.getCursor.get(provider) as { cursor: string } | undefined;
      return row?.cursor;
    });
  }

  setCursor(provider: string, cursor: string): Promise<void> {
    return this.#write(() => {
      this.#sql.setCursor.run(provider, this.#clean(cursor), this.#now().toISOString());
    });
  }

  putStatus(status: ResourceStatus): Promise<void> {
    return this.#write(() => {
      this.#sql.putStatus.run(statusToRow(this.#clean(status)));
    }, RELAXED);
  }

  listStatus(): Promise<ResourceStatus[]> {
    return this.#read(() => (this.#sql.listStatus.all() as StatusRow[]).map(statusFromRow));
  }

  deleteStatus(address: Address): Promise<void> {
    return this.#write(() => {
      this.#sql.deleteStatus.run(address);
    }, RELAXED);
  }

  putAnnouncement(announcement: Announcement): Promise<void> {
    return this.#write(() => {
      this.#ownership.putAnnouncement(this.#clean(announcement));
    });
  }

  announcements(query: AnnouncementQuery = {}): Promise<Announcement[]> {
    return this.#read(() => this.#ownership.announcements(query));
  }

  putClaim(claim: FieldClaim): Promise<void> {
    return this.#write(() => {
      this.#ownership.putClaim(this.#clean(claim));
    });
  }

  deleteClaim(address: Address, field: string): Promise<void> {
    return this.#write(() => {
      this.#ownership.deleteClaim(address, field);
    });
  }

  claims(address?: Address): Promise<FieldClaim[]> {
    return this.#read(() => this.#ownership.claims(address));
  }

  acquireLease(request: LeaseRequest): Promise<LeaseAttempt> {
    if (!Number.isSafeInteger(request.ttlMs) || request.ttlMs <= 0) {
      return Promise.reject(
        new TendError(
          'store.invalid-lease',
          `ttlMs must be a positive integer, got ${request.ttlMs}`,
          {
            phase: 'store',
          },
        ),
      );
    }
    // Not a queued write: it must not be fenced by a lease this store held before, and it decides
    // alone, under the write lock, so two processes never both acquire.
    return this.#read(() =>
      this.#db
        .transaction((): LeaseAttempt => {
          const now = this.#now();
          const row = this.#sql.getLease.get(request.workspace) as LeaseRow | undefined;
          const current = row && leaseFromRow(row);
          const expired = current !== undefined && Date.parse(current.expiresAt) <= now.getTime();
          if (current && !expired && !(request.takeOver?.(current) ?? false)) {
            return { acquired: false, current };
          }
          const last = this.#sql.lastEpoch.get(request.workspace) as { epoch: number } | undefined;
          const epoch = Math.max(last?.epoch ?? 0, current?.epoch ?? 0) + 1;
          const lease: Lease = {
            workspace: request.workspace,
            epoch,
            holder: this.#clean(request.holder),
            acquiredAt: now.toISOString(),
            expiresAt: new Date(now.getTime() + request.ttlMs).toISOString(),
          };
          this.#sql.putLease.run({
            workspace: lease.workspace,
            epoch,
            command: lease.holder.command,
            pid: lease.holder.pid,
            host: lease.holder.host,
            started_at: lease.holder.startedAt,
            acquired_at: lease.acquiredAt,
            expires_at: lease.expiresAt,
          });
          this.#sql.setLastEpoch.run(request.workspace, epoch);
          this.#fence = { workspace: request.workspace, epoch };
          return current ? { acquired: true, lease, tookOver: current } : { acquired: true, lease };
        })
        .immediate(),
    );
  }

  renewLease(workspace: string, epoch: number, ttlMs: number): Promise<boolean> {
    return this.#read(() => {
      const expires = new Date(this.#now().getTime() + ttlMs).toISOString();
      const { changes } = this.#sql.renewLease.run(expires, workspace, epoch);
      if (changes === 0 && this.#fence?.workspace === workspace && this.#fence.epoch === epoch) {
        // Taken over: keep the fence, so that every later write is refused.
        return false;
      }
      return changes > 0;
    });
  }

  releaseLease(workspace: string, epoch: number): Promise<void> {
    return this.#read(() => {
      this.#sql.deleteLease.run(workspace, epoch);
      if (this.#fence?.workspace === workspace && this.#fence.epoch === epoch)
        this.#fence = undefined;
    });
  }

  getLease(workspace: string): Promise<Lease | undefined> {
    return this.#read(() => {
      const row = this.#sql.getLease.get(workspace) as LeaseRow | undefined;
      return row && leaseFromRow(row);
    });
  }

  getMeta(key: string): Promise<string | undefined> {
    return this.#read(() => (this.#sql.getMeta.get(key) as { value: string } | undefined)?.value);
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.#write(() => {
      this.#sql.setMeta.run(key, this.#clean(value));
    });
  }

  // ---- Day-2 action runs (kept apart from the journal and the ledger).

  putActionRun(run: ActionRun): Promise<void> {
    return this.#write(() => {
      this.#actions.put(this.#clean(run), this.#fence?.epoch);
    });
  }

  getActionRun(id: string): Promise<ActionRun | undefined> {
    return this.#read(() => this.#actions.get(id));
  }

  actionRuns(query: ActionRunQuery = {}): Promise<ActionRun[]> {
    return this.#read(() => this.#actions.list(query));
  }

  // ---- The whole memory, for `tend store copy` (../memory.ts, sqlite-memory.ts).

  exportMemory(options: ExportOptions = {}): Promise<WorkspaceMemory> {
    return this.#read(() => exportSqliteMemory(this.#memoryParts(), options));
  }

  importMemory(memory: WorkspaceMemory, options: ImportOptions): Promise<MemoryCounts> {
    // Not a queued write: one transaction of its own, not fenced (the copy holds no lease).
    return this.#read(() => importSqliteMemory(this.#memoryParts(), memory, options));
  }

  #memoryParts(): SqliteMemoryParts {
    const sql = this.#sql;
    return {
      db: this.#db,
      putTwin: sql.putTwin,
      insertOperation: sql.insertOperation,
      insertChange: sql.insertChange,
      setLedgerHead: sql.setLedgerHead,
      setCursor: sql.setCursor,
      putStatus: sql.putStatus,
      setMeta: sql.setMeta,
      ownership: this.#ownership,
      actions: this.#actions,
      clean: this.#clean,
      now: this.#now,
    };
  }

  /** Closes the database; closing twice is a no-op, any other call afterwards fails `store.closed`. */
  close(): Promise<void> {
    try {
      // Writes still queued are committed first: their callers were promised them.
      if (this.#db.open) this.#flush();
      // Closing the last connection checkpoints the log, which syncs it (and so the relaxed writes).
      if (this.#db.open) this.#db.close();
      // Durable writes still waiting for their sync get it before the store says it is closed.
      return this.#walSync ? this.#walSync.close() : Promise.resolve();
    } catch (e) {
      return Promise.reject(storeError(e));
    }
  }

  #head(): LedgerHead {
    // The head row is written by the first migration; a missing one (deleted by hand) reads as empty,
    // and verifying then reports every entry as not appended by the store.
    return (this.#sql.ledgerHead.get() as LedgerHead | undefined) ?? { seq: 0, hash: GENESIS_HASH };
  }

  /** Runs a read after every write queued before it, so a caller always reads its own writes. */
  #read<T>(body: () => T): Promise<T> {
    try {
      this.#checkOpen();
      this.#flush();
      // A read (or the lease's transaction) that could not start is tried again (busy-retry.ts).
      return Promise.resolve(retryBusy(body, { deadlineMs: BUSY_TIMEOUT_MS }));
    } catch (e) {
      return Promise.reject(storeError(e));
    }
  }

  /**
   * Queues a write for the next group commit. Writes queued in the same turn of the event loop (the
   * engine runs many operations at once) commit together in one transaction, so they share one sync
   * of the write-ahead log instead of paying one each; the promise resolves only after that commit,
   * so a resolved durable write is on disk exactly as before (a relaxed one: see `Sync`). A write that fails is rejected alone and the
   * others still commit: every write body is one statement (SQLite undoes a failed statement) or its
   * own nested transaction (a savepoint), or throws before changing anything, so a failure leaves
   * nothing behind without paying a savepoint per write.
   */
  #write<T>(body: () => T, sync: Sync = 'durable'): Promise<T> {
    try {
      this.#checkOpen();
    } catch (e) {
      return Promise.reject(storeError(e));
    }
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ sync, body, resolve: resolve as (value: unknown) => void, reject });
      if (this.#queue.length === 1) setImmediate(() => this.#flush());
    });
  }

  /** Commits every queued write now (reads, close and the scheduled group commit call it). */
  #flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    const runOne = (body: () => unknown) => {
      try {
        outcomes.push({ ok: true, value: body() });
      } catch (e) {
        outcomes.push({ ok: false, value: e });
      }
    };
    // A batch of relaxed writes only commits without syncing the write-ahead log (SQLite's WAL keeps
    // commits in order, so a power cut loses a suffix of them); any durable write in the batch makes
    // the whole batch — and every relaxed commit before it — durable. Between batches the connection
    // is back at FULL, so reads that write (leases) and migrations stay durable.
    const relaxed = batch.every((w) => w.sync === 'relaxed');
    // With a WalSync, no commit syncs inside: durable writes wait for its sync instead (below).
    const normal = relaxed || this.#walSync !== undefined;
    try {
      this.#checkOpen();
      // exec, not a prepared statement: SQLite applies this pragma when compiling it, not when run.
      if (normal) this.#db.exec('PRAGMA synchronous = NORMAL');
      const fence = this.#fence;
      if (batch.length === 1 && fence === undefined) runOne(batch[0]!.body);
      else {
        this.#db
          .transaction(() => {
            // Fenced: the batch commits only while this store's lease is still the workspace's
            // lease, checked under the write lock, so a writer that was taken over writes nothing.
            if (fence) this.#checkFence(fence);
            const appended: { head: LedgerHead | undefined } = { head: undefined };
            this.#batch = appended;
            try {
              for (const { body } of batch) {
                runOne(body);
                // A disk error (full, I/O, out of memory) can make SQLite roll the whole transaction
                // back by itself: then nothing of the batch is written, and it fails as a whole.
                const last = outcomes[outcomes.length - 1]!;
                if (!last.ok && !this.#db.inTransaction) throw last.value;
              }
            } finally {
              this.#batch = undefined;
            }
            // Failing here rolls the whole batch back (its entries would have no head).
            if (appended.head) this.#sql.setLedgerHead.run(appended.head.seq, appended.head.hash);
          })
          .immediate();
      }
    } catch (e) {
      // The commit itself failed (a busy or failing disk): nothing of the batch is durable.
      for (const { reject } of batch) reject(storeError(e));
      return;
    } finally {
      if (normal && this.#db.open) this.#db.exec('PRAGMA synchronous = FULL');
    }
    const durable: { write: QueuedWrite; value: unknown }[] = [];
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) write.reject(storeError(outcome.value));
      else if (relaxed || this.#walSync === undefined || write.sync === 'relaxed') {
        write.resolve(outcome.value);
      } else durable.push({ write, value: outcome.value });
    });
    if (durable.length === 0) return;
    // A sync that begins after this commit covers it (and every commit before it).
    this.#walSync!.after((error) => {
      for (const { write, value } of durable) {
        if (error === null) write.resolve(value);
        else write.reject(storeError(error));
      }
    });
  }

  #checkFence(fence: { workspace: string; epoch: number }): void {
    const row = this.#sql.getLease.get(fence.workspace) as LeaseRow | undefined;
    if (row?.epoch === fence.epoch) return;
    throw leaseLostError(fence.workspace, row);
  }

  #checkOpen(): void {
    if (!this.#db.open) {
      throw storeClosedError();
    }
  }
}

/** Keeps TendErrors; reports a driver failure as `store.failed` (retryable when the file was busy). */
function storeError(e: unknown): TendError {
  if (e instanceof TendError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
  return new TendError(
    'store.failed',
    `the SQLite store failed: ${e instanceof Error ? e.message : String(e)}`,
    {
      phase: 'store',
      retryable: busy,
      ...(busy && { hint: 'another process holds the database lock; try again' }),
      cause: e,
    },
  );
}
