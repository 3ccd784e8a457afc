import type { ActionRun } from '../../core/index.js';
import { runFromRow, runToRow, stepFromRow, stepToRow } from '../rows.js';
import type { RunRow, StepRow } from '../rows.js';
import { checkCount } from '../store-errors.js';
import type { ActionRunQuery } from '../store.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

// Day-2 action runs on SQLite (migration 7): their statements, kept apart from the twin, the journal
// and the ledger. The rows are the shared ones (../rows.ts).

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
      this.#upsertRun.run(runToRow(run, epoch));
      this.#deleteSteps.run(run.id);
      for (const s of run.steps) this.#insertStep.run(stepToRow(run.id, s));
    })();
  }

  get(id: string): ActionRun | undefined {
    const row = this.#getRun.get(id) as RunRow | undefined;
    return row && this.#fromRow(row);
  }

  list(query: ActionRunQuery): ActionRun[] {
    const limit = checkCount('limit', query.limit) ?? -1;
    const rows = this.#runs.all({
      address: query.address ?? null,
      action: query.action ?? null,
      unfinished: query.unfinished ? 1 : 0,
      limit,
    }) as RunRow[];
    return rows.map((r) => this.#fromRow(r));
  }

  #fromRow(row: RunRow): ActionRun {
    return runFromRow(row, (this.#steps.all(row.id) as StepRow[]).map(stepFromRow));
  }
}
