import type { IntentOrigin, Redactor } from '../../core/index.js';
import { setKey, TendError } from '../../core/index.js';
import type {
  AddedWorkspace,
  FleetLease,
  FleetRegistry,
  RegisteredWorkspace,
  StateCounts,
  WorkerRecord,
  WorkerRegistration,
  WorkspaceSource,
} from '../registry.js';
import { describeSource, sameSource } from '../registry.js';
import type { PgPool, PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';
import { parsePostgresLocation } from './postgres-location.js';
import {
  migratePostgres,
  POSTGRES_MIGRATIONS,
  schemaState,
  schemaTooNew,
  schemaTooOld,
} from './postgres-migrations.js';
import type { PostgresMigration } from './postgres-migrations.js';
import { leaseFromRow } from '../rows.js';
import type { LeaseRow } from '../rows.js';
import { connectPool, openError, storeError, withClient } from './postgres-store.js';

/** Options of the registry on PostgreSQL. */
export interface PostgresRegistryOptions {
  /** Where the libpq variables are read (default: the process's environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The process's redactor: the password is added, every value written passes through it. */
  readonly redactor?: Redactor;
  /** Tests only: the schema's migrations (default: `POSTGRES_MIGRATIONS`). */
  readonly migrations?: readonly PostgresMigration[];
}

interface RegisteredRow {
  readonly name: string;
  readonly source: WorkspaceSource;
  readonly added_at: Date;
  readonly added_by: string;
  readonly last_pass_at: Date | null;
  readonly last_origin?: IntentOrigin | null;
}

interface WorkerRow {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  readonly max_workspaces: number | null;
  readonly ttl_ms: number;
  readonly started_at: Date;
  readonly heartbeat_at: Date;
  readonly alive: boolean;
}

function registeredFromRow(row: RegisteredRow): RegisteredWorkspace {
  return {
    name: row.name,
    source: row.source,
    addedAt: row.added_at.toISOString(),
    addedBy: row.added_by,
    ...(row.last_pass_at ? { lastPassAt: row.last_pass_at.toISOString() } : {}),
    ...(row.last_origin ? { lastOrigin: row.last_origin } : {}),
  };
}

// A worker's `--max-workspaces` is its row's max_workspaces (schema version 5). Before, it was kept
// after the version (`0.1.0;max-workspaces=3`, decision 0046); the migration splits such rows, and a
// worker of that older Tend still running while the fleet is upgraded writes the old form again at
// each heartbeat, so a row in the old form is still read as the version and the cap.
const CAP_MARK = ';max-workspaces=';

function workerFromRow(row: WorkerRow): WorkerRecord {
  const mark = row.version.indexOf(CAP_MARK);
  const legacy = mark < 0 ? NaN : Number(row.version.slice(mark + CAP_MARK.length));
  const cap = row.max_workspaces ?? legacy;
  return {
    id: row.id,
    host: row.host,
    pid: row.pid,
    version: mark < 0 ? row.version : row.version.slice(0, mark),
    ...(Number.isSafeInteger(cap) && cap >= 0 ? { maxWorkspaces: cap } : {}),
    ttlMs: row.ttl_ms,
    startedAt: row.started_at.toISOString(),
    heartbeatAt: row.heartbeat_at.toISOString(),
    alive: row.alive,
  };
}

/**
 * Opens the fleet registry of a `postgres://` location, with a small pool of its own (2). A database
 * without Tend's schema gets it; an older or newer one is refused as a store's is.
 */
export async function openPostgresRegistry(
  location: string,
  options: PostgresRegistryOptions = {},
): Promise<PostgresRegistry> {
  const where = parsePostgresLocation(location, options.env ?? process.env);
  if (where.password !== undefined) options.redactor?.add(where.password);
  const pool = await connectPool(where, 2);
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
  return new PostgresRegistry(pool, options.redactor);
}

/** The fleet registry on PostgreSQL (tables of schema version 2, the workers' caps of 5; docs/fleet.md). */
export class PostgresRegistry implements FleetRegistry {
  readonly #pool: PgPool;
  readonly #clean: <T>(value: T) => T;
  #closed = false;

  constructor(pool: PgPool, redactor?: Redactor) {
    this.#pool = pool;
    this.#clean = redactor ? (value) => redactor.value(value) : (value) => value;
  }

  addWorkspace(entry: {
    readonly name: string;
    readonly source: WorkspaceSource;
    readonly addedBy: string;
  }): Promise<AddedWorkspace> {
    return this.#run(async (db) => {
      const inserted = await run<RegisteredRow>(
        db,
        `INSERT INTO tend.registered_workspaces (name, source, added_by) VALUES ($1, $2::jsonb, $3)
         ON CONFLICT (name) DO NOTHING RETURNING *`,
        [entry.name, JSON.stringify(this.#clean(entry.source)), this.#clean(entry.addedBy)],
      );
      if (inserted.rows[0]) return { added: true, workspace: registeredFromRow(inserted.rows[0]) };
      const { rows } = await run<RegisteredRow>(
        db,
        'SELECT * FROM tend.registered_workspaces WHERE name = $1',
        [entry.name],
      );
      const existing = registeredFromRow(rows[0]!);
      if (sameSource(existing.source, entry.source)) return { added: false, workspace: existing };
      throw new TendError(
        'workspace.exists',
        `workspace ${entry.name} is already registered with another source (${describeSource(existing.source)})`,
        {
          phase: 'store',
          hint: `remove it first (tend workspace remove ${entry.name}), or add it under another name`,
        },
      );
    });
  }

  listWorkspaces(): Promise<RegisteredWorkspace[]> {
    return this.#run(async (db) => {
      const { rows } = await run<RegisteredRow>(
        db,
        'SELECT * FROM tend.registered_workspaces ORDER BY name',
      );
      return rows.map(registeredFromRow);
    });
  }

  removeWorkspace(name: string): Promise<boolean> {
    return this.#run(async (db) => {
      const { rowCount } = await run(db, 'DELETE FROM tend.registered_workspaces WHERE name = $1', [
        name,
      ]);
      return (rowCount ?? 0) > 0;
    });
  }

  passDone(name: string, epoch: number, origin?: IntentOrigin): Promise<void> {
    return this.#run(async (db) => {
      await run(
        db,
        `UPDATE tend.registered_workspaces SET last_pass_at = now(), last_origin = $3::jsonb
         WHERE name = $1
           AND EXISTS (SELECT 1 FROM tend.leases WHERE workspace = $1 AND epoch = $2)`,
        [name, epoch, origin ? JSON.stringify(this.#clean(origin)) : null],
      );
    });
  }

  heartbeat(worker: WorkerRegistration): Promise<void> {
    return this.#run(async (db) => {
      const w = this.#clean(worker);
      await run(
        db,
        `INSERT INTO tend.workers (id, host, pid, version, max_workspaces, ttl_ms)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid,
           version = excluded.version, max_workspaces = excluded.max_workspaces,
           ttl_ms = excluded.ttl_ms, heartbeat_at = clock_timestamp()`,
        [w.id, w.host, w.pid, w.version, w.maxWorkspaces ?? null, w.ttlMs],
      );
    });
  }

  listWorkers(): Promise<WorkerRecord[]> {
    return this.#run(async (db) => {
      const { rows } = await run<WorkerRow>(
        db,
        `SELECT *, heartbeat_at + ttl_ms * interval '1 millisecond' > clock_timestamp() AS alive
         FROM tend.workers ORDER BY id`,
      );
      return rows.map(workerFromRow);
    });
  }

  removeWorker(id: string): Promise<void> {
    return this.#run(async (db) => {
      await run(db, 'DELETE FROM tend.workers WHERE id = $1', [id]);
    });
  }

  pruneWorkers(ttlFactor: number): Promise<string[]> {
    return this.#run(async (db) => {
      const { rows } = await run<{ id: string }>(
        db,
        `DELETE FROM tend.workers
         WHERE heartbeat_at + ttl_ms * $1::float8 * interval '1 millisecond' < clock_timestamp()
         RETURNING id`,
        [ttlFactor],
      );
      return rows.map((r) => r.id).sort();
    });
  }

  fleetLeases(): Promise<FleetLease[]> {
    return this.#run(async (db) => {
      const { rows } = await run<LeaseRow & { expired: boolean }>(
        db,
        `SELECT *, expires_at <= clock_timestamp() AS expired FROM tend.leases ORDER BY workspace`,
      );
      return rows.map((row) => ({ ...leaseFromRow(row), expired: row.expired }));
    });
  }

  leaseEpochs(): Promise<Map<string, number>> {
    return this.#run(async (db) => {
      const { rows } = await run<{ workspace: string; epoch: number }>(
        db,
        'SELECT workspace, epoch FROM tend.lease_epochs',
      );
      return new Map(rows.map((r) => [r.workspace, r.epoch]));
    });
  }

  stateCounts(): Promise<Map<string, StateCounts>> {
    return this.#run(async (db) => {
      const { rows } = await run<{ workspace: string; state: string; n: number }>(
        db,
        `SELECT workspace, state, count(*)::int AS n FROM tend.statuses
         GROUP BY workspace, state ORDER BY workspace, state`,
      );
      const counts = new Map<string, Record<string, number>>();
      for (const r of rows) {
        const c = counts.get(r.workspace) ?? {};
        setKey(c, r.state, r.n);
        counts.set(r.workspace, c);
      }
      return counts;
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end();
  }

  async #run<T>(body: (db: PgQueryable) => Promise<T>): Promise<T> {
    if (this.#closed) {
      throw new TendError('store.closed', 'the fleet registry is closed', { phase: 'store' });
    }
    try {
      return await body(this.#pool);
    } catch (e) {
      throw storeError(e);
    }
  }
}
