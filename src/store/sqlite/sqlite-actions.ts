import type { ActionActor, ActionRun, ActionStepRecord, Address } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { ActionRunQuery } from '../store.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

// Day-2 action runs on SQLite (migration 7): their rows and statements, kept apart from the twin,
// the journal and the ledger. Reading a row builds an object without the absent optional members,
// so that a run read back is exactly the run written.

/** An `action_runs` row (without the storing-order `seq`). */
interface RunRow {
  readonly id: string;
  readonly address: string;
  readonly type: string;
  readonly action: string;
  readonly params: string;
  readonly actor: string;
  readonly state: string;
  readonly created_at: string;
  readonly finished_at: string | null;
  readonly error: string | null;
  readonly epoch: number | null;
}

/** An `action_steps` row. */
interface StepRow {
  readonly run_id: string;
  readonly idx: number;
  readonly name: string;
  readonly state: string;
  readonly attempts: number;
  readonly started_at: string;
  readonly settled_at: string | null;
  readonly message: string | null;
}

function stepFromRow(row: StepRow): ActionStepRecord {
  return {
    index: row.idx,
    name: row.name,
    state: row.state as ActionStepRecord['state'],
    attempts: row.attempts,
    startedAt: row.started_at,
    ...(row.settled_at !== null ? { settledAt: row.settled_at } : {}),
    ...(row.message !== null ? { message: row.message } : {}),
  };
}

/** The statements of action runs, prepared once per store. */
export class ActionStatements {
  readonly #db: SqliteDatabase;
  readonly #upsertRun: SqliteStatement;
  readonly #deleteSteps: SqliteStatement;
  readonly #insertStep: SqliteStatement;
  readonly #getRun: SqliteStatement;
  readonly #steps: SqliteStatement;
  readonly #runs: SqliteStatement;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    const p = (sql: string) => db.prepare(sql);
    this.#upsertRun = p(
      `INSERT INTO action_runs (id, address, type, action, params, actor, state, created_at,
         finished_at, error, epoch)
       VALUES (@id, @address, @type, @action, @params, @actor, @state, @created_at, @finished_at,
         @error, @epoch)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, finished_at = excluded.finished_at,
         error = excluded.error, epoch = COALESCE(excluded.epoch, epoch)`,
    );
    this.#deleteSteps = p('DELETE FROM action_steps WHERE run_id = ?');
    this.#insertStep = p(
      `INSERT INTO action_steps (run_id, idx, name, state, attempts, started_at, settled_at, message)
       VALUES (@run_id, @idx, @name, @state, @attempts, @started_at, @settled_at, @message)`,
    );
    this.#getRun = p('SELECT * FROM action_runs WHERE id = ?');
    this.#steps = p('SELECT * FROM action_steps WHERE run_id = ? ORDER BY idx');
    this.#runs = p(
      `SELECT * FROM (SELECT * FROM action_runs
         WHERE (@address IS NULL OR address = @address) AND (@action IS NULL OR action = @action)
           AND (@unfinished = 0 OR state = 'running')
         ORDER BY seq DESC LIMIT @limit)
       ORDER BY seq`,
    );
  }

  /** Writes the run and all its step records in one nested transaction (a savepoint). */
  put(run: ActionRun, epoch: number | undefined): void {
    this.#db.transaction(() => {
      this.#upsertRun.run({
        id: run.id,
        address: run.address,
        type: run.type,
        action: run.action,
        params: JSON.stringify(run.params),
        actor: JSON.stringify(run.actor),
        state: run.state,
        created_at: run.createdAt,
        finished_at: run.finishedAt ?? null,
        error: run.error ?? null,
        epoch: epoch ?? null,
      });
      this.#deleteSteps.run(run.id);
      for (const s of run.steps) {
        this.#insertStep.run({
          run_id: run.id,
          idx: s.index,
          name: s.name,
          state: s.state,
          attempts: s.attempts,
          started_at: s.startedAt,
          settled_at: s.settledAt ?? null,
          message: s.message ?? null,
        });
      }
    })();
  }

  get(id: string): ActionRun | undefined {
    const row = this.#getRun.get(id) as RunRow | undefined;
    return row && this.#fromRow(row);
  }

  list(query: ActionRunQuery): ActionRun[] {
    const limit = query.limit ?? -1;
    if (!Number.isSafeInteger(limit) || limit < -1) {
      throw new TendError(
        'store.invalid-query',
        `limit must be a non-negative integer, got ${String(query.limit)}`,
        { phase: 'store' },
      );
    }
    const rows = this.#runs.all({
      address: query.address ?? null,
      action: query.action ?? null,
      unfinished: query.unfinished ? 1 : 0,
      limit,
    }) as RunRow[];
    return rows.map((r) => this.#fromRow(r));
  }

  #fromRow(row: RunRow): ActionRun {
    const steps = (this.#steps.all(row.id) as StepRow[]).map(stepFromRow);
    return {
      id: row.id,
      address: row.address as Address,
      type: row.type,
      action: row.action,
      params: JSON.parse(row.params) as Record<string, string>,
      actor: JSON.parse(row.actor) as ActionActor,
      state: row.state as ActionRun['state'],
      createdAt: row.created_at,
      ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
      ...(row.error !== null ? { error: row.error } : {}),
      steps,
    };
  }
}
