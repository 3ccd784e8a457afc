import { TendError } from '../../core/index.js';
import { GENESIS_HASH } from '../ledger-chain.js';
import type { SqliteDatabase } from './sqlite-database.js';

/** One step of the schema. Versions run 1, 2, 3…; a released migration is never edited, only followed. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * The SQLite schema, oldest first. JSON values are stored as TEXT. Tables are STRICT so a value of the
 * wrong type is refused rather than silently stored.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'twin, journal, ledger, cursors, statuses',
    sql: `
      CREATE TABLE twin (
        address     TEXT PRIMARY KEY,
        type        TEXT NOT NULL,
        object_id   TEXT NOT NULL,
        fields      TEXT NOT NULL,
        stateful    INTEGER NOT NULL,
        depends_on  TEXT NOT NULL,
        observed_at TEXT NOT NULL
      ) STRICT;

      -- seq is the insertion order, the tie-break between operations created at the same instant.
      CREATE TABLE operations (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT NOT NULL UNIQUE,
        address      TEXT NOT NULL,
        type         TEXT NOT NULL,
        action       TEXT NOT NULL,
        object_id    TEXT,
        desired_hash TEXT NOT NULL,
        marker       TEXT NOT NULL,
        group_id     TEXT,
        step         INTEGER,
        state        TEXT NOT NULL CHECK (state IN ('pending', 'settled', 'failed')),
        created_at   TEXT NOT NULL,
        settled_at   TEXT,
        error        TEXT
      ) STRICT;
      CREATE INDEX operations_by_state ON operations (state, created_at, seq);
      CREATE INDEX operations_by_address ON operations (address, created_at, seq);

      -- The change ledger: append-only and hash-chained (see ledger-chain.ts). recorded_at is when
      -- this store appended the entry, which is not part of the entry and not hashed.
      CREATE TABLE changes (
        seq         INTEGER PRIMARY KEY,
        time        TEXT NOT NULL,
        actor       TEXT NOT NULL,
        intent      TEXT,
        motivation  TEXT,
        source      TEXT NOT NULL,
        address     TEXT,
        type        TEXT NOT NULL,
        object_id   TEXT NOT NULL,
        action      TEXT NOT NULL,
        fields      TEXT NOT NULL,
        before      TEXT,
        after       TEXT,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL,
        recorded_at TEXT NOT NULL
      ) STRICT;
      CREATE INDEX changes_by_address ON changes (address, seq);
      -- Refuse edits made through the store's own connection. Anyone with the file can drop these
      -- triggers; the hash chain is what detects that.
      CREATE TRIGGER changes_append_only_update BEFORE UPDATE ON changes
        BEGIN SELECT RAISE(ABORT, 'the change ledger is append-only'); END;
      CREATE TRIGGER changes_append_only_delete BEFORE DELETE ON changes
        BEGIN SELECT RAISE(ABORT, 'the change ledger is append-only'); END;

      -- The last appended entry, so that deleting the newest entries is detected too.
      CREATE TABLE ledger_head (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        seq  INTEGER NOT NULL,
        hash TEXT NOT NULL
      ) STRICT;
      INSERT INTO ledger_head (id, seq, hash) VALUES (1, 0, '${GENESIS_HASH}');

      CREATE TABLE cursors (
        provider   TEXT PRIMARY KEY,
        cursor     TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      CREATE TABLE statuses (
        address    TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        object_id  TEXT,
        message    TEXT,
        checks     TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'operations: the object a replace replaces',
    sql: `ALTER TABLE operations ADD COLUMN replaces TEXT;`,
  },
  {
    version: 3,
    name: 'workspace leases, the epoch of each operation, store settings',
    sql: `
      -- One row per workspace: who may mutate it now. epoch grows by one per acquisition and fences
      -- every write of an older holder. A released lease is deleted; its epoch lives on in lease_epochs.
      CREATE TABLE leases (
        workspace   TEXT PRIMARY KEY,
        epoch       INTEGER NOT NULL,
        command     TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        host        TEXT NOT NULL,
        started_at  TEXT NOT NULL,
        acquired_at TEXT NOT NULL,
        expires_at  TEXT NOT NULL
      ) STRICT;
      CREATE TABLE lease_epochs (
        workspace TEXT PRIMARY KEY,
        epoch     INTEGER NOT NULL
      ) STRICT;
      ALTER TABLE operations ADD COLUMN epoch INTEGER;
      CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT;
      -- A store written before workspace names were derived from the intent used the name 'default'
      -- for every folder: keep it, so that the objects it created stay recognised as its own.
      INSERT INTO meta (key, value)
        SELECT 'workspace', 'default' WHERE EXISTS (SELECT 1 FROM operations) OR EXISTS (SELECT 1 FROM twin);
    `,
  },
  {
    version: 4,
    name: 'announcements and field claims',
    sql: `
      -- What actors declared they set (memory like the twin, not the ledger). seq is the storing
      -- order, the tie-break between announcements made at the same instant; the *_ms columns hold
      -- the times as numbers so that filtering and ordering never depend on how the ISO text is spelt.
      -- value is JSON text; NULL only for a value JSON cannot write (undefined).
      CREATE TABLE announcements (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        address     TEXT NOT NULL,
        field       TEXT NOT NULL,
        value       TEXT,
        actor       TEXT NOT NULL,
        actor_kind  TEXT,
        intent      TEXT,
        motivation  TEXT,
        note        TEXT,
        created_at  TEXT NOT NULL,
        created_ms  INTEGER NOT NULL,
        expires_at  TEXT NOT NULL,
        expires_ms  INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX announcements_by_address ON announcements (address, created_ms, seq);
      CREATE INDEX announcements_by_expiry ON announcements (expires_ms);

      -- Field ownership: the claim an actor holds on one field after a decision in its favour.
      CREATE TABLE field_claims (
        address     TEXT NOT NULL,
        field       TEXT NOT NULL,
        value       TEXT,
        actor       TEXT NOT NULL,
        actor_kind  TEXT,
        intent      TEXT,
        motivation  TEXT,
        decision    TEXT NOT NULL,
        rule        TEXT NOT NULL,
        since       TEXT NOT NULL,
        hold_until  TEXT,
        then_decide TEXT,
        seq         INTEGER,
        declared_hash TEXT,
        PRIMARY KEY (address, field)
      ) STRICT;
    `,
  },
  {
    version: 5,
    name: 'ledger v2: keyed entries',
    sql: `
      -- Entries are signed with a key kept outside the database (HMAC, see ledger-chain.ts) and carry
      -- the actor kind, the decision (JSON) and the id of the key. Rows written before stay exactly as
      -- they were (format 1, plain SHA-256, motivation as free text): the table is append-only and
      -- adding columns rewrites no row. New rows are format 2.
      ALTER TABLE changes ADD COLUMN actor_kind TEXT;
      ALTER TABLE changes ADD COLUMN decision TEXT;
      ALTER TABLE changes ADD COLUMN key_id TEXT;
      ALTER TABLE changes ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 6,
    name: 'twin: hashes of the write-only values sent',
    sql: `
      -- JSON {field: hash} of the write-only values Tend sent (TwinEntry.sent); NULL when none.
      ALTER TABLE twin ADD COLUMN sent TEXT;
    `,
  },
  {
    version: 7,
    name: 'Day-2 action runs and their steps',
    sql: `
      -- One row per run of an action (core/action.ts), written before its first step. params and
      -- actor are JSON; never a secret (the store's redactor is the last line of defence).
      CREATE TABLE action_runs (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        address     TEXT NOT NULL,
        type        TEXT NOT NULL,
        action      TEXT NOT NULL,
        params      TEXT NOT NULL,
        actor       TEXT NOT NULL,
        state       TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
        created_at  TEXT NOT NULL,
        finished_at TEXT,
        error       TEXT,
        epoch       INTEGER
      ) STRICT;
      CREATE INDEX action_runs_by_state ON action_runs (state, address, action, seq);
      -- One row per step started: 'started' until its verification settles it (or it fails).
      CREATE TABLE action_steps (
        run_id      TEXT NOT NULL REFERENCES action_runs (id),
        idx         INTEGER NOT NULL,
        name        TEXT NOT NULL,
        state       TEXT NOT NULL CHECK (state IN ('started', 'settled', 'failed')),
        attempts    INTEGER NOT NULL,
        started_at  TEXT NOT NULL,
        settled_at  TEXT,
        message     TEXT,
        PRIMARY KEY (run_id, idx)
      ) STRICT;
    `,
  },
  {
    version: 8,
    name: 'ledger: the commit a git workspace planned from',
    sql: `
      -- JSON {kind:'git', url, ref, commit, path?} of the commit the pass that wrote the entry planned
      -- from (a git workspace, docs/fleet.md); NULL otherwise. Part of the hashed entry when present, so
      -- the entries written before (NULL) keep their hash.
      ALTER TABLE changes ADD COLUMN origin TEXT;
    `,
  },
  {
    version: 9,
    name: 'policies: verdicts in the ledger, compliance in statuses',
    sql: `
      -- JSON ComplianceRecord of a 'verdict' entry (a policy found broken on the observed object, or
      -- no longer broken; docs/policies.md); NULL otherwise. Part of the hashed entry when present, so
      -- the entries written before (NULL) keep their hash.
      ALTER TABLE changes ADD COLUMN compliance TEXT;
      -- JSON ComplianceState of a resource (its broken rules, counts, and what they were evaluated
      -- on); NULL when no policy was evaluated.
      ALTER TABLE statuses ADD COLUMN compliance TEXT;
    `,
  },
];

/** The schema versions before and after `migrate`. */
export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings a database to the newest schema: applies every migration above its `PRAGMA user_version`,
 * all in one transaction together with the new version, so a crash leaves the old schema or the new
 * one, never half of it. Running it again is a no-op. Refuses a database written by a newer Tend.
 */
export function migrate(
  db: SqliteDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
): MigrationResult {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`migration ${m.name} has version ${m.version}; expected ${i + 1}`);
    }
  });
  const latest = migrations.length;
  // IMMEDIATE: a second process opening the same file waits here, then sees the new version.
  return db
    .transaction(() => {
      const from = db.pragma('user_version', { simple: true });
      if (typeof from !== 'number') throw new Error('PRAGMA user_version returned no number');
      if (from > latest) {
        throw new TendError(
          'store.schema-too-new',
          `the database has schema version ${from}, but this Tend knows versions up to ${latest}; upgrade Tend to open it`,
          { phase: 'store' },
        );
      }
      for (const m of migrations.slice(from)) {
        db.exec(m.sql);
        db.pragma(`user_version = ${m.version}`);
      }
      return { from, to: latest };
    })
    .immediate();
}
