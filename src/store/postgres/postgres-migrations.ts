import { TendError } from '../../core/index.js';
import type { PgQueryable } from './postgres-client.js';

/** One step of the schema. Versions run 1, 2, 3…; a released migration is never edited, only followed. */
export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The PostgreSQL schema, oldest first, in the schema `tend` (apart from whatever else the database
 * holds). Several workspaces share one database: every table is keyed by `workspace`, where SQLite has
 * one file per workspace. JSON values are stored as TEXT (as SQLite does): exactly the text written,
 * so a value reads back as it was (jsonb would reorder keys and refuse `\u0000`). Names and addresses
 * compare and sort as bytes (`COLLATE "C"`), whatever the database's locale, as in SQLite.
 */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'twin, journal, ledger, cursors, statuses, leases, settings, announcements, claims, action runs',
    sql: `
      -- One row per workspace that wrote: version grows by one in every write transaction (the twin
      -- cache re-reads when another connection committed), and the row lock orders the workspace's
      -- writers, so that ledger appends from two processes never fork the chain.
      CREATE TABLE tend.workspaces (
        name       TEXT COLLATE "C" PRIMARY KEY,
        version    BIGINT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );

      CREATE TABLE tend.twin (
        workspace   TEXT COLLATE "C" NOT NULL,
        address     TEXT COLLATE "C" NOT NULL,
        type        TEXT NOT NULL,
        object_id   TEXT NOT NULL,
        fields      TEXT NOT NULL,
        stateful    BOOLEAN NOT NULL,
        depends_on  TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        sent        TEXT,
        PRIMARY KEY (workspace, address)
      );

      -- seq is the insertion order, the tie-break between operations created at the same instant.
      CREATE TABLE tend.operations (
        seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        workspace    TEXT COLLATE "C" NOT NULL,
        id           TEXT COLLATE "C" NOT NULL,
        address      TEXT COLLATE "C" NOT NULL,
        type         TEXT NOT NULL,
        action       TEXT NOT NULL,
        object_id    TEXT,
        desired_hash TEXT NOT NULL,
        marker       TEXT NOT NULL,
        group_id     TEXT,
        step         INTEGER,
        replaces     TEXT,
        epoch        INTEGER,
        state        TEXT NOT NULL CHECK (state IN ('pending', 'settled', 'failed')),
        created_at   TEXT COLLATE "C" NOT NULL,
        settled_at   TEXT,
        error        TEXT,
        UNIQUE (workspace, id)
      );
      CREATE INDEX operations_by_state ON tend.operations (workspace, state, created_at, seq);
      CREATE INDEX operations_by_address ON tend.operations (workspace, address, created_at, seq);

      -- The change ledger: append-only and hash-chained per workspace (ledger-chain.ts). recorded_at is
      -- when the entry was appended (database time); it is not part of the entry and not hashed.
      CREATE TABLE tend.changes (
        workspace   TEXT COLLATE "C" NOT NULL,
        seq         BIGINT NOT NULL,
        time        TEXT NOT NULL,
        actor       TEXT NOT NULL,
        actor_kind  TEXT,
        intent      TEXT,
        motivation  TEXT,
        source      TEXT NOT NULL,
        address     TEXT COLLATE "C",
        type        TEXT NOT NULL,
        object_id   TEXT NOT NULL,
        action      TEXT NOT NULL,
        fields      TEXT NOT NULL,
        before      TEXT,
        after       TEXT,
        decision    TEXT,
        key_id      TEXT,
        format      INTEGER NOT NULL,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace, seq)
      );
      CREATE INDEX changes_by_address ON tend.changes (workspace, address, seq);
      -- Refuse edits through an ordinary connection. Whoever may drop the trigger can edit; the keyed
      -- hash chain is what detects that (docs/decisions/0010-keyed-ledger.md).
      CREATE FUNCTION tend.refuse_ledger_edit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'the change ledger is append-only'; END;
      $$;
      CREATE TRIGGER changes_append_only BEFORE UPDATE OR DELETE ON tend.changes
        FOR EACH ROW EXECUTE FUNCTION tend.refuse_ledger_edit();

      -- The last appended entry of each workspace's ledger (none: empty), so that deleting the newest
      -- entries is detected too.
      CREATE TABLE tend.ledger_heads (
        workspace TEXT COLLATE "C" PRIMARY KEY,
        seq       BIGINT NOT NULL,
        hash      TEXT NOT NULL
      );

      CREATE TABLE tend.cursors (
        workspace  TEXT COLLATE "C" NOT NULL,
        provider   TEXT COLLATE "C" NOT NULL,
        cursor     TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace, provider)
      );

      CREATE TABLE tend.statuses (
        workspace  TEXT COLLATE "C" NOT NULL,
        address    TEXT COLLATE "C" NOT NULL,
        state      TEXT NOT NULL,
        object_id  TEXT,
        message    TEXT,
        checks     TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (workspace, address)
      );

      -- One row per leased workspace: who may mutate it now, until when (database time). epoch grows
      -- by one per acquisition and fences every write of an older holder: each write transaction
      -- reads this row FOR SHARE and commits only while it still has the writer's epoch, and a
      -- takeover (an UPDATE of the row) waits for those transactions. A released lease is deleted; its
      -- epoch lives on in lease_epochs, whose row also orders two processes acquiring at once.
      CREATE TABLE tend.leases (
        workspace   TEXT COLLATE "C" PRIMARY KEY,
        epoch       INTEGER NOT NULL,
        command     TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        host        TEXT NOT NULL,
        started_at  TEXT NOT NULL,
        acquired_at TIMESTAMPTZ NOT NULL,
        expires_at  TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE tend.lease_epochs (
        workspace TEXT COLLATE "C" PRIMARY KEY,
        epoch     INTEGER NOT NULL
      );

      CREATE TABLE tend.meta (
        workspace TEXT COLLATE "C" NOT NULL,
        key       TEXT COLLATE "C" NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (workspace, key)
      );

      -- What actors declared they set (memory like the twin, not the ledger); seq is the storing
      -- order, the *_ms columns the times as numbers (ordering never depends on how a time is spelt).
      CREATE TABLE tend.announcements (
        seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        workspace   TEXT COLLATE "C" NOT NULL,
        id          TEXT COLLATE "C" NOT NULL,
        address     TEXT COLLATE "C" NOT NULL,
        field       TEXT NOT NULL,
        value       TEXT,
        actor       TEXT NOT NULL,
        actor_kind  TEXT,
        intent      TEXT,
        motivation  TEXT,
        note        TEXT,
        created_at  TEXT NOT NULL,
        created_ms  BIGINT NOT NULL,
        expires_at  TEXT NOT NULL,
        expires_ms  BIGINT NOT NULL,
        UNIQUE (workspace, id)
      );
      CREATE INDEX announcements_by_address ON tend.announcements (workspace, address, created_ms, seq);

      CREATE TABLE tend.field_claims (
        workspace     TEXT COLLATE "C" NOT NULL,
        address       TEXT COLLATE "C" NOT NULL,
        field         TEXT COLLATE "C" NOT NULL,
        value         TEXT,
        actor         TEXT NOT NULL,
        actor_kind    TEXT,
        intent        TEXT,
        motivation    TEXT,
        decision      TEXT NOT NULL,
        rule          TEXT NOT NULL,
        since         TEXT NOT NULL,
        hold_until    TEXT,
        then_decide   TEXT,
        seq           BIGINT,
        declared_hash TEXT,
        PRIMARY KEY (workspace, address, field)
      );

      -- Day-2 action runs (core/action.ts) and their steps.
      CREATE TABLE tend.action_runs (
        seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        workspace   TEXT COLLATE "C" NOT NULL,
        id          TEXT COLLATE "C" NOT NULL,
        address     TEXT COLLATE "C" NOT NULL,
        type        TEXT NOT NULL,
        action      TEXT NOT NULL,
        params      TEXT NOT NULL,
        actor       TEXT NOT NULL,
        state       TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
        created_at  TEXT NOT NULL,
        finished_at TEXT,
        error       TEXT,
        epoch       INTEGER,
        UNIQUE (workspace, id)
      );
      CREATE INDEX action_runs_by_state ON tend.action_runs (workspace, state, address, action, seq);
      CREATE TABLE tend.action_steps (
        workspace  TEXT COLLATE "C" NOT NULL,
        run_id     TEXT COLLATE "C" NOT NULL,
        idx        INTEGER NOT NULL,
        name       TEXT NOT NULL,
        state      TEXT NOT NULL CHECK (state IN ('started', 'settled', 'failed')),
        attempts   INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        settled_at TEXT,
        message    TEXT,
        PRIMARY KEY (workspace, run_id, idx),
        FOREIGN KEY (workspace, run_id) REFERENCES tend.action_runs (workspace, id)
      );
    `,
  },
  {
    version: 2,
    name: 'fleet: registered workspaces, workers, the worker holding a lease',
    sql: `
      -- The workspaces a fleet runs (store-wide, not per workspace): where each one's intent comes
      -- from. source is {"kind":"dir","dir":"/abs/path"} (later {"kind":"git",…}). last_pass_at is
      -- when the holder last finished a pass (database time), written only by the lease's holder.
      -- Removing a registration keeps the workspace's memory (twin, journal, ledger, …).
      CREATE TABLE tend.registered_workspaces (
        name         TEXT COLLATE "C" PRIMARY KEY,
        source       JSONB NOT NULL,
        added_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
        added_by     TEXT NOT NULL,
        last_pass_at TIMESTAMPTZ
      );

      -- The workers of the fleet (\`tend worker\`): alive while heartbeat_at + ttl_ms is after the
      -- database's clock_timestamp(); each worker's ttl is its lease TTL.
      CREATE TABLE tend.workers (
        id           TEXT COLLATE "C" PRIMARY KEY,
        host         TEXT NOT NULL,
        pid          INTEGER NOT NULL,
        version      TEXT NOT NULL,
        ttl_ms       INTEGER NOT NULL,
        started_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
      );

      -- Which worker holds a lease (NULL: a single tend run, apply, serve…).
      ALTER TABLE tend.leases ADD COLUMN worker TEXT COLLATE "C";
    `,
  },
  {
    version: 3,
    name: 'fleet: the job table (writes carried out by the holder of a workspace)',
    sql: `
      -- A write that needs a workspace's lease, asked of \`tend serve --fleet\` on any node and carried
      -- out once by the worker holding the workspace (docs/fleet.md, decision 0045). A worker claims a
      -- queued job of a workspace it holds with FOR UPDATE SKIP LOCKED, only while its lease with
      -- that epoch is live, and records the epoch; a running job whose epoch is gone is marked
      -- interrupted by the next holder, never run again. input, result and error are JSON as TEXT
      -- (like the rest of the schema); every time is the database's.
      CREATE TABLE tend.jobs (
        id           TEXT COLLATE "C" PRIMARY KEY,
        workspace    TEXT COLLATE "C" NOT NULL,
        kind         TEXT NOT NULL,
        input        TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        state        TEXT NOT NULL
                     CHECK (state IN ('queued', 'running', 'done', 'failed', 'interrupted')),
        result       TEXT,
        error        TEXT,
        created_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        started_at   TIMESTAMPTZ,
        finished_at  TIMESTAMPTZ,
        epoch        INTEGER,
        worker       TEXT COLLATE "C"
      );
      CREATE INDEX jobs_queued ON tend.jobs (workspace, created_at, id) WHERE state = 'queued';
      CREATE INDEX jobs_running ON tend.jobs (workspace) WHERE state = 'running';
    `,
  },
  {
    version: 4,
    name: 'git workspaces: the commit on ledger entries and of the last pass',
    sql: `
      -- JSON {kind:'git', url, ref, commit, path?} of the commit the pass that wrote the entry planned
      -- from (a git workspace, docs/fleet.md); NULL otherwise. Part of the hashed entry when present,
      -- so the entries written before (NULL) keep their hash.
      ALTER TABLE tend.changes ADD COLUMN origin TEXT;
      -- The same, of the holder's last finished pass (\`tend status\`), written with last_pass_at.
      ALTER TABLE tend.registered_workspaces ADD COLUMN last_origin JSONB;
    `,
  },
  {
    version: 5,
    name: 'fleet: a worker’s --max-workspaces in a column of its own',
    sql: `
      -- A worker's --max-workspaces (NULL: no cap), written with each heartbeat. Schema version 4 had
      -- no column for it, and Tend kept it after the version (\`0.1.0;max-workspaces=3\`, decision
      -- 0046): such rows are split, the version plain again and the cap in its column (a suffix that
      -- is not a number, which no Tend wrote, leaves the column NULL).
      ALTER TABLE tend.workers ADD COLUMN max_workspaces INTEGER CHECK (max_workspaces >= 0);
      UPDATE tend.workers
         SET max_workspaces =
               CASE WHEN substr(version, strpos(version, ';max-workspaces=') + 16) ~ '^[0-9]{1,9}$'
                    THEN substr(version, strpos(version, ';max-workspaces=') + 16)::integer
               END,
             version = left(version, strpos(version, ';max-workspaces=') - 1)
       WHERE strpos(version, ';max-workspaces=') > 0;
    `,
  },
  {
    version: 6,
    name: 'policies: verdicts in the ledger, compliance in statuses',
    sql: `
      -- JSON ComplianceRecord of a 'verdict' entry (a policy found broken on the observed object, or
      -- no longer broken; docs/policies.md); NULL otherwise. Part of the hashed entry when present, so
      -- the entries written before (NULL) keep their hash.
      ALTER TABLE tend.changes ADD COLUMN compliance TEXT;
      -- JSON ComplianceState of a resource; NULL when no policy was evaluated.
      ALTER TABLE tend.statuses ADD COLUMN compliance TEXT;
    `,
  },
];

/** Where a database's Tend schema stands: 0 when it has none (a database Tend never used). */
export interface SchemaState {
  readonly version: number;
  /** The newest version this Tend knows. */
  readonly latest: number;
}

/** The schema versions before and after `migratePostgres`. */
export interface PostgresMigrationResult {
  readonly from: number;
  readonly to: number;
}

// Any constant: two processes migrating one database at once take turns on this advisory lock.
const MIGRATION_LOCK = 7_304_210_026;

function checkList(migrations: readonly PostgresMigration[]): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`migration ${m.name} has version ${m.version}; expected ${i + 1}`);
    }
  });
  return migrations.length;
}

/** The database's schema version (0: no Tend schema at all). */
export async function schemaState(
  db: PgQueryable,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<SchemaState> {
  const latest = checkList(migrations);
  const { rows } = await db.query<{ exists: boolean }>(
    `SELECT to_regclass('tend.schema_migrations') IS NOT NULL AS exists`,
  );
  if (rows[0]?.exists !== true) return { version: 0, latest };
  const applied = await db.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM tend.schema_migrations',
  );
  return { version: applied.rows[0]?.version ?? 0, latest };
}

/** The refusal of a database whose schema is newer than this Tend knows. */
export function schemaTooNew(state: SchemaState): TendError {
  return new TendError(
    'store.schema-too-new',
    `the database has Tend schema version ${state.version}, but this Tend knows versions up to ${state.latest}; upgrade Tend to open it`,
    {
      phase: 'store',
      hint: 'every process sharing the database must run a Tend that knows its schema',
    },
  );
}

/** The refusal of a database whose schema is older than this Tend expects. */
export function schemaTooOld(state: SchemaState): TendError {
  return new TendError(
    'store.schema-too-old',
    `the database has Tend schema version ${state.version}, but this Tend expects version ${state.latest}; run \`tend store migrate\` to bring it up to date`,
    {
      phase: 'store',
      hint: 'stop the older Tend processes sharing the database first: they refuse a newer schema',
    },
  );
}

/**
 * Brings the database to the newest schema: applies every migration above its version, all in one
 * transaction together with their rows in `tend.schema_migrations`, so that a failure leaves the old
 * schema or the new one, never half of it. Two processes migrating at once take turns (an advisory
 * lock); running it again is a no-op. Refuses a database written by a newer Tend.
 */
export async function migratePostgres(
  db: PgQueryable,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<PostgresMigrationResult> {
  const latest = checkList(migrations);
  await db.query('BEGIN');
  try {
    await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await db.query('CREATE SCHEMA IF NOT EXISTS tend');
    await db.query(
      `CREATE TABLE IF NOT EXISTS tend.schema_migrations (
         version    INTEGER PRIMARY KEY,
         name       TEXT NOT NULL,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const { version: from } = await schemaState(db, migrations);
    if (from > latest) throw schemaTooNew({ version: from, latest });
    for (const m of migrations.slice(from)) {
      await db.query(m.sql);
      await db.query('INSERT INTO tend.schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
    }
    await db.query('COMMIT');
    return { from, to: latest };
  } catch (e) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
