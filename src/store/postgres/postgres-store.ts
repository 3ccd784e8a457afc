import type { ClientConfig, PoolConfig } from 'pg';
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
import { TendError, WORKSPACE_NAME } from '../../core/index.js';
import { GENESIS_HASH, verifyChain } from '../ledger-chain.js';
import type { LedgerHead } from '../ledger-chain.js';
import { signChange } from '../ledger-entry.js';
import type { LedgerKey } from '../ledger-key.js';
import type { KnownWorkspaces, WorkspaceDirectory } from '../workspace-directory.js';
import {
  changeFromRow,
  leaseFromRow,
  operationFromRow,
  operationToRow,
  recordFromRow,
  statusFromRow,
  statusToRow,
} from '../rows.js';
import type { ChangeRow, LeaseRow, OperationRow, StatusRow } from '../rows.js';
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
import * as actions from './postgres-actions.js';
import type { PgClient, PgPool, PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';
import { parsePostgresLocation } from './postgres-location.js';
import type { PostgresLocation } from './postgres-location.js';
import {
  migratePostgres,
  POSTGRES_MIGRATIONS,
  schemaState,
  schemaTooNew,
  schemaTooOld,
} from './postgres-migrations.js';
import type { PostgresMigration, PostgresMigrationResult } from './postgres-migrations.js';
import * as ownership from './postgres-ownership.js';
import { exportPostgresMemory, importPostgresMemory } from './postgres-memory.js';
import type {
  ExportOptions,
  ImportOptions,
  MemoryCounts,
  MemoryTransfer,
  WorkspaceMemory,
} from '../memory.js';
import { twinFromRow, twinParams, twinToRow } from './postgres-rows.js';
import type { TwinRow } from './postgres-rows.js';
import type { Upsert } from './postgres-upserts.js';
import { runUpserts } from './postgres-upserts.js';

/** Options of a PostgreSQL store. */
export interface PostgresStoreOptions {
  /**
   * The workspace this store is for: one database holds many (a fleet), and every read and write of
   * this store is scoped by this name. Leases are keyed by the name each request gives.
   */
  readonly workspace?: string;
  /**
   * Where the libpq variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE) are read
   * for the parts the URL leaves out (default: the process's environment).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Tests only: a clock that decides leases (acquired, expired, renewed) instead of the database's.
   * Without it — always, in Tend itself — lease times are the database's `clock_timestamp()`, so
   * workers on several hosts agree on expiry whatever their own clocks say.
   */
  readonly now?: () => Date;
  /** The process's redactor: every value written passes through it, and the password is added. */
  readonly redactor?: Redactor;
  /** The key that signs the entries this store appends (see `SqliteStoreOptions.ledgerKey`). */
  readonly ledgerKey?: LedgerKey;
  /** Connections kept open (default 4: the writer, reads, lease renewal). */
  readonly poolSize?: number;
  /** Tests only: the schema's migrations (default: `POSTGRES_MIGRATIONS`). */
  readonly migrations?: readonly PostgresMigration[];
}

/** The default number of pooled connections: one writing, the others reading and renewing. */
export const DEFAULT_POOL_SIZE = 4;

/**
 * Opens the PostgreSQL store a `postgres://` location names, for one workspace. `pg` is loaded here,
 * only now (decision 0033). A database without Tend's schema gets it at once (so `tend apply` on a new
 * database just works); one with an older schema is refused until `tend store migrate` ran, one with a
 * newer schema until Tend is upgraded (docs/decisions/0037-postgres-store.md). The password, from the
 * URL or PGPASSWORD, is added to the redactor; no error repeats the location.
 */
export async function openPostgresStore(
  location: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresStore> {
  const workspace = options.workspace;
  if (workspace === undefined || !WORKSPACE_NAME.test(workspace)) {
    throw new TendError(
      'store.workspace-required',
      workspace === undefined
        ? 'a PostgreSQL store holds many workspaces: it is opened for one, and none was named'
        : `workspace name ${JSON.stringify(workspace)} is not valid`,
      { phase: 'store' },
    );
  }
  const where = parsePostgresLocation(location, options.env ?? process.env);
  if (where.password !== undefined) options.redactor?.add(where.password);
  const pool = await connectPool(where, options.poolSize ?? DEFAULT_POOL_SIZE);
  try {
    const migrations = options.migrations ?? POSTGRES_MIGRATIONS;
    const state = await schemaState(pool, migrations);
    if (state.version > state.latest) throw schemaTooNew(state);
    if (state.version === 0) await withClient(pool, (c) => migratePostgres(c, migrations));
    else if (state.version < state.latest) throw schemaTooOld(state);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw openError(e, where, options.redactor);
  }
  return new PostgresStore(pool, { ...options, workspace });
}

/**
 * `tend store migrate` on PostgreSQL: applies the pending migrations (see `migratePostgres`) and says
 * from which version to which.
 */
export async function migratePostgresStore(
  location: string,
  options: Pick<PostgresStoreOptions, 'env' | 'redactor' | 'migrations'> = {},
): Promise<PostgresMigrationResult> {
  const where = parsePostgresLocation(location, options.env ?? process.env);
  if (where.password !== undefined) options.redactor?.add(where.password);
  const pool = await connectPool(where, 1);
  try {
    return await withClient(pool, (c) => migratePostgres(c, options.migrations));
  } catch (e) {
    throw openError(e, where, options.redactor);
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/**
 * How long a connection may take: `connectMs` bounds opening one (a server that does not answer),
 * `waitMs` the wait for one of the pool's connections to come free. pg-pool has one setting for
 * both; with 10 s for both, a worker whose passes keep every connection busy (30 workspaces of
 * 1,000 resources on two cores) failed passes with `timeout exceeded when trying to connect` while
 * the server was fine. A busy pool is waited for longer: statements are bounded on their own
 * (statement_timeout, lock_timeout), so the wait ends when one of them does.
 */
export interface PoolTimeouts {
  readonly connectMs: number;
  readonly waitMs: number;
}

export const POOL_TIMEOUTS: PoolTimeouts = { connectMs: 10_000, waitMs: 120_000 };

/** pg-pool's own message when no connection came free within its `connectionTimeoutMillis`. */
const POOL_WAIT_EXPIRED = 'timeout exceeded when trying to connect';

export async function connectPool(
  where: PostgresLocation,
  max: number,
  timeouts: PoolTimeouts = POOL_TIMEOUTS,
): Promise<PgPool> {
  const pg = (await import('pg')).default;
  const int8 = 20;
  // pg-pool passes its options to each new client: this one keeps its own, shorter connect bound.
  // pg-pool hides the password (a property that is not enumerable, kept out of stack traces), which
  // a spread would drop: it is carried over the same way.
  class BoundedClient extends pg.Client {
    constructor(options?: ClientConfig) {
      const config: ClientConfig = { ...options, connectionTimeoutMillis: timeouts.connectMs };
      if (options?.password !== undefined) {
        Object.defineProperty(config, 'password', {
          value: options.password,
          enumerable: false,
          writable: true,
          configurable: true,
        });
      }
      super(config);
    }
  }
  const config: PoolConfig = {
    Client: BoundedClient,
    host: where.host,
    port: where.port,
    user: where.user,
    database: where.database,
    ...(where.password !== undefined ? { password: where.password } : {}),
    ssl: where.ssl === 'disable' ? false : { rejectUnauthorized: where.ssl === 'verify-full' },
    max,
    application_name: where.applicationName,
    // pg-pool's one timeout: the wait in its queue (and a new client's connect, which the client's
    // own, shorter bound ends first).
    connectionTimeoutMillis: timeouts.waitMs,
    // A statement never hangs a pass; a lock (a takeover waiting for a write) is waited for briefly.
    statement_timeout: 60_000,
    lock_timeout: 10_000,
    // Sequences and counts (bigint) as numbers: Tend's never reach 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary'): ((text: string) => unknown) =>
        oid === int8
          ? (text: string) => Number(text)
          : (pg.types.getTypeParser(oid, format ?? 'text') as (text: string) => unknown)) as never,
    },
  };
  const pool = new pg.Pool(config) as unknown as PgPool;
  // A pooled connection that drops while idle is discarded by the pool; the next statement reports.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Lends `body` one pooled connection and gives it back. While lent, the connection's `error` event
 * has a listener: a connection the server ends between two statements (`pg_terminate_backend`, a
 * restart, a dropped network) emits `error` while no query is active, and pg-pool listens only to
 * idle ones — unheard, the event would end the process. Such a connection is discarded, never given
 * back to others; the next statement on it fails, and so does the body.
 */
export async function withClient<T>(
  pool: PgPool,
  body: (client: PgClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error): void => {
    broken ??= e;
  };
  client.on('error', onError);
  const release = (error?: Error | boolean): void => {
    // A broken one keeps the listener: its socket's end may still emit `error` once discarded.
    if (broken === undefined) client.off('error', onError);
    client.release(broken ?? error);
  };
  try {
    const value = await body(client);
    release();
    return value;
  } catch (e) {
    // A client that failed in the driver may be broken: it is not given back to others.
    if (e instanceof TendError) release();
    else release(e instanceof Error ? e : true);
    throw e;
  }
}

/** An error of opening, without the location (it may hold a password): only host, port, database. */
export function openError(
  e: unknown,
  where: PostgresLocation,
  redactor: Redactor | undefined,
): TendError {
  if (e instanceof TendError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new TendError(
    'store.open-failed',
    `cannot open the PostgreSQL store at ${where.shown}: ${redactor ? redactor.text(message) : message}`,
    {
      phase: 'store',
      retryable: isTransient(e),
      hint: 'check that the server runs and accepts the user (PGUSER, PGPASSWORD or the URL), and that the database exists',
      cause: e,
    },
  );
}

/** A write waiting for the next group commit. */
interface QueuedWrite {
  readonly body: (tx: WriteTx) => Promise<unknown>;
  /** A plain one-row upsert: sent in one statement with its neighbours of the same kind. */
  readonly upsert?: Upsert;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
}

/** What a write sees of the transaction it runs in. */
interface WriteTx {
  readonly db: PgQueryable;
  /** The ledger head as this transaction's appends left it (undefined: none appended yet). */
  head: LedgerHead | undefined;
}

/**
 * The Store on a PostgreSQL database shared by many workspaces and workers, scoped to one workspace.
 *
 * Writes are group-committed like SQLite's: the writes made in one turn of the event loop commit
 * together in one transaction, batches one after another, so writes commit in call order; a read
 * waits for the writes queued before it, so a caller always reads its own writes. Each write
 * transaction first reads this store's lease row `FOR KEY SHARE` and commits only while it still has the
 * epoch this store acquired — a takeover (which updates that row) waits for the transaction, and one
 * that took over first makes it fail with `store.lease-lost` — and then bumps the workspace's version
 * row, which orders the workspace's writers (ledger appends never fork) and tells other connections'
 * twin caches to re-read. Every commit is durable (PostgreSQL's `synchronous_commit`).
 */
export class PostgresStore implements Store, WorkspaceDirectory, MemoryTransfer {
  readonly #pool: PgPool;
  readonly #workspace: string;
  readonly #now: (() => Date) | undefined;
  readonly #ledgerKey: LedgerKey | undefined;
  readonly #clean: <T>(value: T) => T;
  #queue: QueuedWrite[] = [];
  /** The last batch's commit (never rejects): reads and later batches wait for it. */
  #tail: Promise<void> = Promise.resolve();
  #fence: { workspace: string; epoch: number } | undefined;
  #closed = false;
  /** The workspace version as this store last accounted for it (its own commits included). */
  #knownVersion = -1;
  /** Changes each time the version moved by someone else's commit (see `dataVersion`). */
  #foreignCommits = 0;

  /** Wraps a pool on a migrated database; prefer `openPostgresStore`. */
  constructor(pool: PgPool, options: PostgresStoreOptions & { readonly workspace: string }) {
    this.#pool = pool;
    this.#workspace = options.workspace;
    this.#now = options.now;
    this.#ledgerKey = options.ledgerKey;
    const redactor = options.redactor;
    this.#clean = redactor ? (value) => redactor.value(value) : (value) => value;
  }

  /** The workspace this store reads and writes. */
  get workspace(): string {
    return this.#workspace;
  }

  /**
   * A number that changes when another connection committed a write of this workspace since the
   * last call; this store's own writes do not change it (twin-cache.ts). One read of the version row.
   */
  async dataVersion(): Promise<number> {
    await this.#settled();
    const { rows } = await run<{ version: number }>(
      this.#pool,
      'SELECT version FROM tend.workspaces WHERE name = $1',
      [this.#workspace],
    );
    const version = rows[0]?.version ?? 0;
    if (version !== this.#knownVersion) {
      this.#knownVersion = version;
      this.#foreignCommits += 1;
    }
    return this.#foreignCommits;
  }

  /** Whether this store's workspace ever wrote to the database (its row in `tend.workspaces`). */
  workspaceKnown(): Promise<boolean> {
    return this.#read(async (db) => {
      const { rows } = await run(db, 'SELECT 1 FROM tend.workspaces WHERE name = $1', [
        this.#workspace,
      ]);
      return rows.length > 0;
    });
  }

  /** Up to `limit` of the workspaces that wrote to the database, by name, and how many there are. */
  knownWorkspaces(limit: number): Promise<KnownWorkspaces> {
    return this.#read(async (db) => {
      const { rows } = await run<{ name: string; total: number }>(
        db,
        `SELECT name, count(*) OVER () AS total FROM tend.workspaces ORDER BY name LIMIT $1`,
        [Math.max(0, Math.trunc(limit))],
      );
      const total =
        rows[0]?.total ??
        (await run<{ n: number }>(db, 'SELECT count(*) AS n FROM tend.workspaces')).rows[0]!.n;
      return { names: rows.map((r) => r.name), total };
    });
  }

  getTwin(address: Address): Promise<TwinEntry | undefined> {
    return this.#read(async (db) => {
      const { rows } = await run<TwinRow>(
        db,
        'SELECT * FROM tend.twin WHERE workspace = $1 AND address = $2',
        [this.#workspace, address],
      );
      return rows[0] && twinFromRow(rows[0]);
    });
  }

  getTwins(addresses: readonly Address[]): Promise<TwinEntry[]> {
    return this.#read(async (db) => {
      if (addresses.length === 0) return [];
      const { rows } = await run<TwinRow>(
        db,
        'SELECT * FROM tend.twin WHERE workspace = $1 AND address = ANY($2::text[]) ORDER BY address',
        [this.#workspace, [...new Set(addresses)]],
      );
      return rows.map(twinFromRow);
    });
  }

  listTwin(): Promise<TwinEntry[]> {
    return this.#read(async (db) => {
      const { rows } = await run<TwinRow>(
        db,
        'SELECT * FROM tend.twin WHERE workspace = $1 ORDER BY address',
        [this.#workspace],
      );
      return rows.map(twinFromRow);
    });
  }

  putTwin(entry: TwinEntry): Promise<void> {
    return this.#upsert({
      kind: 'twin',
      values: [this.#workspace, ...twinParams(twinToRow(this.#clean(entry)))],
    });
  }

  deleteTwin(address: Address): Promise<void> {
    return this.#write(async ({ db }) => {
      await run(db, 'DELETE FROM tend.twin WHERE workspace = $1 AND address = $2', [
        this.#workspace,
        address,
      ]);
    });
  }

  journal(op: Operation): Promise<void> {
    if (op.state !== 'pending') {
      return Promise.reject(
        new TendError(
          'store.invalid-operation',
          `operation ${op.id} is ${op.state}; journal() takes a pending operation, settle() settles it`,
          { address: op.address, phase: 'store' },
        ),
      );
    }
    return this.#write(async ({ db }) => {
      const clean = this.#clean(op);
      // The epoch of the lease the batch is fenced by, checked in this same transaction.
      const r = operationToRow(this.#fence ? { ...clean, epoch: this.#fence.epoch } : clean);
      const { rowCount } = await run(
        db,
        `INSERT INTO tend.operations (workspace, id, address, type, action, object_id, desired_hash,
           marker, group_id, step, replaces, epoch, state, created_at, settled_at, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
         ON CONFLICT (workspace, id) DO NOTHING`,
        [
          this.#workspace,
          r.id,
          r.address,
          r.type,
          r.action,
          r.object_id,
          r.desired_hash,
          r.marker,
          r.group_id,
          r.step,
          r.replaces,
          r.epoch ?? null,
          r.state,
          r.created_at,
          r.settled_at,
          r.error,
        ],
      );
      if (rowCount === 0) {
        throw new TendError(
          'store.operation-exists',
          `operation ${op.id} is already journaled; resolve the existing one instead of journaling it again`,
          { address: op.address, phase: 'store' },
        );
      }
    });
  }

  settle(opId: string, settlement: Settlement): Promise<void> {
    if (settlement.state !== 'settled' && settlement.state !== 'failed') {
      return Promise.reject(
        new TendError(
          'store.invalid-settlement',
          `cannot settle operation ${opId} as ${String(settlement.state)}; use 'settled' or 'failed'`,
          { phase: 'store' },
        ),
      );
    }
    return this.#write(async ({ db }) => {
      const clean = this.#clean(settlement);
      // Only a pending operation changes: settling twice never overwrites the first result.
      const { rowCount } = await run(
        db,
        `UPDATE tend.operations
         SET state = $3, settled_at = $4, error = $5, object_id = COALESCE($6, object_id)
         WHERE workspace = $1 AND id = $2 AND state = 'pending'`,
        [this.#workspace, opId, clean.state, clean.at, clean.error ?? null, clean.objectId ?? null],
      );
      if (rowCount !== 0) return;
      const { rows } = await run(
        db,
        'SELECT 1 FROM tend.operations WHERE workspace = $1 AND id = $2',
        [this.#workspace, opId],
      );
      if (rows.length === 0) {
        throw new TendError(
          'store.operation-not-found',
          `operation ${opId} was never journaled; journal an operation before settling it`,
          { phase: 'store' },
        );
      }
    });
  }

  getOperation(opId: string): Promise<Operation | undefined> {
    return this.#read(async (db) => {
      const { rows } = await run<OperationRow>(
        db,
        'SELECT * FROM tend.operations WHERE workspace = $1 AND id = $2',
        [this.#workspace, opId],
      );
      return rows[0] && operationFromRow(rows[0]);
    });
  }

  unsettled(): Promise<Operation[]> {
    return this.#read(async (db) => {
      const { rows } = await run<OperationRow>(
        db,
        `SELECT * FROM tend.operations WHERE workspace = $1 AND state = 'pending'
         ORDER BY created_at, seq`,
        [this.#workspace],
      );
      return rows.map(operationFromRow);
    });
  }

  operations(query: { address?: Address; limit?: number } = {}): Promise<Operation[]> {
    return this.#read(async (db) => {
      const limit = checkCount('limit', query.limit) ?? null;
      // Most recent N, returned oldest first.
      const { rows } = await run<OperationRow>(
        db,
        `SELECT * FROM (SELECT * FROM tend.operations
           WHERE workspace = $1 AND ($2::text IS NULL OR address = $2)
           ORDER BY created_at DESC, seq DESC LIMIT $3) AS recent
         ORDER BY created_at, seq`,
        [this.#workspace, query.address ?? null, limit],
      );
      return rows.map(operationFromRow);
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
    return this.#write(async (tx) => {
      // Under the workspace's row lock (taken first in every write transaction): no other writer
      // appends between this read of the head and the commit.
      const head = tx.head ?? (await this.#head(tx.db));
      const { row, entry } = signChange(this.#clean(change), key, head);
      // The origin column (schema version 4) only when the entry has one: an entry without it is
      // written exactly as before.
      const origin = row.origin ?? null;
      // Likewise the compliance column (schema version 6): only on a verdict.
      const compliance = row.compliance ?? null;
      const extra = [
        ...(origin === null ? [] : [['origin', origin] as const]),
        ...(compliance === null ? [] : [['compliance', compliance] as const]),
      ];
      await run(
        tx.db,
        `INSERT INTO tend.changes (workspace, seq, time, actor, actor_kind, intent, motivation, source,
           address, type, object_id, action, fields, before, after, decision, key_id, format,
           prev_hash, hash${extra.map(([c]) => `, ${c}`).join('')})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20
           ${extra.map((_, i) => `, $${21 + i}`).join('')})`,
        [
          this.#workspace,
          row.seq,
          row.time,
          row.actor,
          row.actor_kind ?? null,
          row.intent,
          row.motivation,
          row.source,
          row.address,
          row.type,
          row.object_id,
          row.action,
          row.fields,
          row.before,
          row.after,
          row.decision ?? null,
          row.key_id ?? null,
          row.format ?? 1,
          row.prev_hash,
          row.hash,
          ...extra.map(([, v]) => v),
        ],
      );
      tx.head = { seq: entry.seq, hash: entry.hash };
      return entry;
    });
  }

  changes(query: ChangeQuery = {}): Promise<Change[]> {
    return this.#read(async (db) => {
      const limit = checkCount('limit', query.limit) ?? null;
      const afterSeq = checkCount('afterSeq', query.afterSeq) ?? 0;
      const { rows } = await run<ChangeRow>(
        db,
        `SELECT * FROM (SELECT * FROM tend.changes
           WHERE workspace = $1 AND seq > $2 AND ($3::text IS NULL OR address = $3)
           ORDER BY seq DESC LIMIT $4) AS recent
         ORDER BY seq`,
        [this.#workspace, afterSeq, query.address ?? null, limit],
      );
      return rows.map((row) => changeFromRow(row));
    });
  }

  verifyLedger(check: LedgerCheck = {}): Promise<LedgerVerification> {
    return this.#read(() =>
      // One snapshot: entries appended meanwhile by another worker are not half-seen.
      withClient(this.#pool, async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          const head = await this.#head(client);
          const { rows } = await run<ChangeRow>(
            client,
            'SELECT * FROM tend.changes WHERE workspace = $1 ORDER BY seq',
            [this.#workspace],
          );
          return verifyChain(
            rows.map((row) => recordFromRow(row, true)),
            {
              head,
              ...(this.#ledgerKey ? { key: this.#ledgerKey } : {}),
              ...(check.checkpoint ? { checkpoint: check.checkpoint } : {}),
            },
          );
        } finally {
          await client.query('COMMIT');
        }
      }),
    );
  }

  getCursor(provider: string): Promise<string | undefined> {
    return this.#read(async (db) => {
      const { rows } = await run<{ cursor: string }>(
        db,
        'SELECT cursor FROM tend.cursors WHERE workspace = $1 AND provider = $2',
        [this.#workspace, provider],
      );
      return rows[0]?.cursor;
    });
  }

  setCursor(provider: string, cursor: string): Promise<void> {
    return this.#write(async ({ db }) => {
      await run(
        db,
        `INSERT INTO tend.cursors (workspace, provider, cursor) VALUES ($1, $2, $3)
         ON CONFLICT (workspace, provider) DO UPDATE SET cursor = excluded.cursor, updated_at = now()`,
        [this.#workspace, provider, this.#clean(cursor)],
      );
    });
  }

  putStatus(status: ResourceStatus): Promise<void> {
    const r = statusToRow(this.#clean(status));
    return this.#upsert({
      kind: 'statuses',
      values: [
        this.#workspace,
        r.address,
        r.state,
        r.object_id,
        r.message,
        r.checks,
        r.compliance ?? null,
        r.updated_at,
      ],
    });
  }

  listStatus(): Promise<ResourceStatus[]> {
    return this.#read(async (db) => {
      const { rows } = await run<StatusRow>(
        db,
        'SELECT * FROM tend.statuses WHERE workspace = $1 ORDER BY address',
        [this.#workspace],
      );
      return rows.map(statusFromRow);
    });
  }

  deleteStatus(address: Address): Promise<void> {
    return this.#write(async ({ db }) => {
      await run(db, 'DELETE FROM tend.statuses WHERE workspace = $1 AND address = $2', [
        this.#workspace,
        address,
      ]);
    });
  }

  putAnnouncement(announcement: Announcement): Promise<void> {
    return this.#write(({ db }) =>
      ownership.putAnnouncement(db, this.#workspace, this.#clean(announcement)),
    );
  }

  announcements(query: AnnouncementQuery = {}): Promise<Announcement[]> {
    return this.#read((db) => ownership.announcements(db, this.#workspace, query));
  }

  putClaim(claim: FieldClaim): Promise<void> {
    return this.#write(({ db }) => ownership.putClaim(db, this.#workspace, this.#clean(claim)));
  }

  deleteClaim(address: Address, field: string): Promise<void> {
    return this.#write(({ db }) => ownership.deleteClaim(db, this.#workspace, address, field));
  }

  claims(address?: Address): Promise<FieldClaim[]> {
    return this.#read((db) => ownership.claims(db, this.#workspace, address));
  }

  acquireLease(request: LeaseRequest): Promise<LeaseAttempt> {
    if (!Number.isSafeInteger(request.ttlMs) || request.ttlMs <= 0) {
      return Promise.reject(
        new TendError(
          'store.invalid-lease',
          `ttlMs must be a positive integer, got ${request.ttlMs}`,
          { phase: 'store' },
        ),
      );
    }
    // Not a queued write: it must not be fenced by a lease this store held before. It decides in one
    // transaction under the lock of the workspace's lease_epochs row, so two workers never both
    // acquire; expiry is decided by the database's clock.
    return this.#read(() =>
      this.#transaction(async (db): Promise<LeaseAttempt> => {
        const now = this.#clock();
        await run(
          db,
          'INSERT INTO tend.lease_epochs (workspace, epoch) VALUES ($1, 0) ON CONFLICT (workspace) DO NOTHING',
          [request.workspace],
        );
        const last = await run<{ epoch: number }>(
          db,
          'SELECT epoch FROM tend.lease_epochs WHERE workspace = $1 FOR UPDATE',
          [request.workspace],
        );
        // The lease row is locked too: a renewal of the current lease either commits before this
        // read (and the lease is live again) or waits, and then finds its epoch gone. Read without
        // the lock, a renewal committed between this read and the upsert below would be overwritten
        // while its holder goes on believing it holds the workspace (found by the fleet's torture).
        const { rows } = await run<LeaseRow & { expired: boolean }>(
          db,
          `SELECT *, expires_at <= COALESCE($2::timestamptz, clock_timestamp()) AS expired
           FROM tend.leases WHERE workspace = $1 FOR UPDATE`,
          [request.workspace, now],
        );
        const row = rows[0];
        const current = row && leaseFromRow(row);
        if (current && !row.expired && !(request.takeOver?.(current) ?? false)) {
          return { acquired: false, current };
        }
        const epoch = Math.max(last.rows[0]?.epoch ?? 0, current?.epoch ?? 0) + 1;
        const holder = this.#clean(request.holder);
        // Updating the row waits for every write transaction still fenced by the old epoch.
        const stored = await run<LeaseRow>(
          db,
          `INSERT INTO tend.leases (workspace, epoch, command, pid, host, started_at, acquired_at,
             expires_at, worker)
           SELECT $1, $2, $3, $4, $5, $6, t, t + $8 * interval '1 millisecond', $9
           FROM (SELECT COALESCE($7::timestamptz, clock_timestamp()) AS t) AS now
           ON CONFLICT (workspace) DO UPDATE SET epoch = excluded.epoch, command = excluded.command,
             pid = excluded.pid, host = excluded.host, started_at = excluded.started_at,
             acquired_at = excluded.acquired_at, expires_at = excluded.expires_at,
             worker = excluded.worker
           RETURNING *`,
          [
            request.workspace,
            epoch,
            holder.command,
            holder.pid,
            holder.host,
            holder.startedAt,
            now,
            request.ttlMs,
            holder.worker ?? null,
          ],
        );
        await run(db, 'UPDATE tend.lease_epochs SET epoch = $2 WHERE workspace = $1', [
          request.workspace,
          epoch,
        ]);
        const lease = leaseFromRow(stored.rows[0]!);
        this.#fence = { workspace: request.workspace, epoch };
        return current ? { acquired: true, lease, tookOver: current } : { acquired: true, lease };
      }),
    );
  }

  renewLease(workspace: string, epoch: number, ttlMs: number): Promise<boolean> {
    // Not behind the queued writes: a worker writing without pause must still renew in time.
    return this.#unqueued(async (db) => {
      const { rowCount } = await run(
        db,
        `UPDATE tend.leases
         SET expires_at = COALESCE($3::timestamptz, clock_timestamp()) + $4 * interval '1 millisecond'
         WHERE workspace = $1 AND epoch = $2`,
        [workspace, epoch, this.#clock(), ttlMs],
      );
      // Taken over: the fence stays, so that every later write is refused.
      return (rowCount ?? 0) > 0;
    });
  }

  releaseLease(workspace: string, epoch: number): Promise<void> {
    return this.#read(async (db) => {
      await run(db, 'DELETE FROM tend.leases WHERE workspace = $1 AND epoch = $2', [
        workspace,
        epoch,
      ]);
      if (this.#fence?.workspace === workspace && this.#fence.epoch === epoch) {
        this.#fence = undefined;
      }
    });
  }

  getLease(workspace: string): Promise<Lease | undefined> {
    return this.#read(async (db) => {
      const { rows } = await run<LeaseRow>(db, 'SELECT * FROM tend.leases WHERE workspace = $1', [
        workspace,
      ]);
      return rows[0] && leaseFromRow(rows[0]);
    });
  }

  getMeta(key: string): Promise<string | undefined> {
    return this.#read(async (db) => {
      const { rows } = await run<{ value: string }>(
        db,
        'SELECT value FROM tend.meta WHERE workspace = $1 AND key = $2',
        [this.#workspace, key],
      );
      return rows[0]?.value;
    });
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.#write(async ({ db }) => {
      await run(
        db,
        `INSERT INTO tend.meta (workspace, key, value) VALUES ($1, $2, $3)
         ON CONFLICT (workspace, key) DO UPDATE SET value = excluded.value`,
        [this.#workspace, key, this.#clean(value)],
      );
    });
  }

  putActionRun(actionRun: ActionRun): Promise<void> {
    return this.#write(({ db }) =>
      actions.putActionRun(db, this.#workspace, this.#clean(actionRun), this.#fence?.epoch),
    );
  }

  getActionRun(id: string): Promise<ActionRun | undefined> {
    return this.#read((db) => actions.getActionRun(db, this.#workspace, id));
  }

  actionRuns(query: ActionRunQuery = {}): Promise<ActionRun[]> {
    return this.#read((db) => actions.actionRuns(db, this.#workspace, query));
  }

  // ---- The whole memory, for `tend store copy` (../memory.ts, postgres-memory.ts).

  exportMemory(options: ExportOptions = {}): Promise<WorkspaceMemory> {
    return this.#read(() =>
      // One snapshot: a writer committing meanwhile is not half-seen.
      withClient(this.#pool, async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        try {
          return await exportPostgresMemory(client, this.#workspace, options);
        } finally {
          await client.query('COMMIT');
        }
      }),
    );
  }

  importMemory(memory: WorkspaceMemory, options: ImportOptions): Promise<MemoryCounts> {
    // Not a queued write: one transaction of its own, not fenced (the copy holds no lease).
    return this.#read(() =>
      this.#transaction((db) =>
        importPostgresMemory(db, this.#workspace, memory, { ...options, clean: this.#clean }),
      ),
    );
  }

  /** Commits the writes still queued, then closes every connection; closing twice is a no-op. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#kick();
    this.#closed = true;
    await this.#tail;
    await this.#pool.end();
  }

  /** The test clock's time as a parameter, or null: the database's `clock_timestamp()` decides. */
  #clock(): string | null {
    return this.#now ? this.#now().toISOString() : null;
  }

  async #head(db: PgQueryable): Promise<LedgerHead> {
    const { rows } = await run<LedgerHead>(
      db,
      'SELECT seq, hash FROM tend.ledger_heads WHERE workspace = $1',
      [this.#workspace],
    );
    return rows[0] ?? { seq: 0, hash: GENESIS_HASH };
  }

  /** Resolves once every write queued so far has committed or failed. */
  #settled(): Promise<void> {
    this.#kick();
    return this.#tail;
  }

  /** Runs a read after every write queued before it, so a caller always reads its own writes. */
  async #read<T>(body: (db: PgQueryable) => Promise<T>): Promise<T> {
    try {
      this.#checkOpen();
      await this.#settled();
      return await body(this.#pool);
    } catch (e) {
      throw storeError(e);
    }
  }

  /** Runs `body` at once on the pool, not after the queued writes: for what needs no read-your-writes. */
  async #unqueued<T>(body: (db: PgQueryable) => Promise<T>): Promise<T> {
    try {
      this.#checkOpen();
      return await body(this.#pool);
    } catch (e) {
      throw storeError(e);
    }
  }

  /** Runs `body` in a transaction of its own on one pooled connection. */
  #transaction<T>(body: (db: PgQueryable) => Promise<T>): Promise<T> {
    return withClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        const value = await body(client);
        await client.query('COMMIT');
        return value;
      } catch (e) {
        // A connection that cannot even roll back is discarded by withClient; the cause is `e`.
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  /** Queues a one-row upsert, which the group commit may merge with its neighbours. */
  #upsert(upsert: Upsert): Promise<void> {
    return this.#write(({ db }) => runUpserts(db, [upsert]), upsert);
  }

  /** Queues a write for the next group commit (see the class comment). */
  #write<T>(body: (tx: WriteTx) => Promise<T>, upsert?: Upsert): Promise<T> {
    try {
      this.#checkOpen();
    } catch (e) {
      return Promise.reject(storeError(e));
    }
    return new Promise<T>((resolve, reject) => {
      const queued: QueuedWrite = { body, resolve: resolve as (value: unknown) => void, reject };
      this.#queue.push(upsert ? { ...queued, upsert } : queued);
      if (this.#queue.length === 1) setImmediate(() => this.#kick());
    });
  }

  /** Hands the queued writes to the next commit, after the batches before them. */
  #kick(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.#tail = this.#tail.then(() => this.#commit(batch));
  }

  /**
   * Commits a batch in one fenced transaction. A write that fails by throwing before it changed
   * anything (a refused operation) is rejected alone. A statement that fails aborts PostgreSQL's
   * whole transaction: the batch is then rolled back and each of its writes committed alone, so only
   * the failing one is rejected. A lost lease rejects the whole batch.
   */
  async #commit(batch: QueuedWrite[]): Promise<void> {
    const outcomes: { ok: boolean; value: unknown }[] = [];
    let version: number;
    try {
      version = await this.#transaction(async (db) => {
        const fence = this.#fence;
        if (fence) await this.#checkFence(db, fence);
        const bumped = await run<{ version: number }>(
          db,
          `INSERT INTO tend.workspaces (name, version) VALUES ($1, 1)
           ON CONFLICT (name) DO UPDATE SET version = tend.workspaces.version + 1
           RETURNING version`,
          [this.#workspace],
        );
        const tx: WriteTx = { db, head: undefined };
        for (let i = 0; i < batch.length;) {
          const merged = mergeable(batch, i);
          if (merged > 1) {
            // A statement error aborts the transaction: the batch is retried write by write.
            await runUpserts(
              db,
              batch.slice(i, i + merged).map((w) => w.upsert!),
            );
            for (let k = 0; k < merged; k++) outcomes.push({ ok: true, value: undefined });
            i += merged;
            continue;
          }
          try {
            outcomes.push({ ok: true, value: await batch[i]!.body(tx) });
          } catch (e) {
            // A driver error has aborted the transaction: the batch is retried write by write.
            if (!(e instanceof TendError)) throw e;
            outcomes.push({ ok: false, value: e });
          }
          i += 1;
        }
        if (tx.head) {
          await run(
            db,
            `INSERT INTO tend.ledger_heads (workspace, seq, hash) VALUES ($1, $2, $3)
             ON CONFLICT (workspace) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`,
            [this.#workspace, tx.head.seq, tx.head.hash],
          );
        }
        return bumped.rows[0]!.version;
      });
    } catch (e) {
      const failure = storeError(e);
      if (batch.length === 1 || failure.code === 'store.lease-lost' || !isStatementError(e)) {
        for (const { reject } of batch) reject(failure);
        return;
      }
      for (const write of batch) await this.#commit([write]);
      return;
    }
    // Only this store committed since it last looked: its own writes do not count as foreign.
    if (version === this.#knownVersion + 1) this.#knownVersion = version;
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(storeError(outcome.value));
    });
  }

  /**
   * The fence of a write transaction: the lease row still has this store's epoch, and keeps it until
   * the commit. `FOR KEY SHARE` is the weakest lock that does that: a takeover locks the row `FOR
   * UPDATE` before it changes the epoch (acquireLease) and a release deletes it, so both wait for
   * the commit; a renewal (an UPDATE of `expires_at` alone) does not. With `FOR SHARE` a worker
   * writing without pause starved its own renewals past the lease (docs/fleet.md).
   */
  async #checkFence(db: PgQueryable, fence: { workspace: string; epoch: number }): Promise<void> {
    const { rows } = await run<LeaseRow>(
      db,
      'SELECT * FROM tend.leases WHERE workspace = $1 FOR KEY SHARE',
      [fence.workspace],
    );
    const row = rows[0];
    if (row?.epoch === fence.epoch) return;
    throw leaseLostError(fence.workspace, row);
  }

  #checkOpen(): void {
    if (this.#closed) {
      throw storeClosedError();
    }
  }
}

/** How many writes from `i` on are upserts of one kind (0 when the write at `i` is not one). */
function mergeable(batch: readonly QueuedWrite[], i: number): number {
  const kind = batch[i]!.upsert?.kind;
  if (kind === undefined) return 0;
  let n = 1;
  while (batch[i + n]?.upsert?.kind === kind) n += 1;
  return n;
}

/** PostgreSQL's SQLSTATE of a server error, if it is one. */
function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A statement the server refused (not a lost connection): retrying the rest alone makes sense. */
function isStatementError(e: unknown): boolean {
  const state = sqlState(e);
  return state !== undefined && !isTransient(e);
}

/**
 * Errors worth trying again: a lost or refused connection (a socket file gone while the server is
 * down, a name that does not resolve for now, a host out of reach, a connection timed out or ended
 * by the server), a lock or statement timeout, a deadlock, the server starting or shutting down.
 */
function isTransient(e: unknown): boolean {
  const state = sqlState(e);
  if (state === undefined) {
    const code = (e as { code?: unknown } | null)?.code;
    if (typeof code === 'string') {
      return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOENT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/.test(
        code,
      );
    }
    // pg's own: `Connection terminated unexpectedly`, `… due to connection timeout`, `timeout expired`;
    // pg-pool's when every connection stayed busy.
    const message = e instanceof Error ? e.message : '';
    return (
      /^(Connection terminated|timeout expired)/.test(message) || message === POOL_WAIT_EXPIRED
    );
  }
  // 08: connection exceptions; 40: rollbacks (deadlock, serialization); 55P03 lock timeout;
  // 57014 statement timeout (canceled); 57P: the server shutting down.
  return /^(08|40|57P)/.test(state) || state === '55P03' || state === '57014';
}

/** Keeps TendErrors; reports a driver failure as `store.failed` (retryable when transient). */
export function storeError(e: unknown): TendError {
  if (e instanceof TendError) return e;
  const transient = isTransient(e);
  if (e instanceof Error && e.message === POOL_WAIT_EXPIRED) {
    return new TendError(
      'store.busy',
      'the PostgreSQL store is busy: no connection of this process came free in time (every one stayed in use)',
      {
        phase: 'store',
        retryable: true,
        hint: 'the database or this worker is overloaded: give the worker fewer workspaces (--max-workspaces) or more CPU, or look for long statements on the server',
        cause: e,
      },
    );
  }
  return new TendError(
    'store.failed',
    `the PostgreSQL store failed: ${e instanceof Error ? e.message : String(e)}`,
    {
      phase: 'store',
      retryable: transient,
      ...(transient && { hint: 'the database was unreachable or busy; try again' }),
      cause: e,
    },
  );
}
