import type { ActionRun, ActionStepRecord } from '../../core/index.js';
import { runFromRow, runToRow, stepFromRow, stepToRow } from '../rows.js';
import type { RunRow, StepRow } from '../rows.js';
import { checkCount } from '../store-errors.js';
import type { ActionRunQuery } from '../store.js';
import type { PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';

// Day-2 action runs on PostgreSQL, scoped by workspace (as sqlite-actions.ts on SQLite): the
// statements. The rows are the shared ones (../rows.ts).

/**
 * Writes the run and all its step records; `db` is the write transaction's client, so the run and
 * its steps commit together. `epoch`: the lease it was written under (kept when absent).
 */
export async function putActionRun(
  db: PgQueryable,
  workspace: string,
  r: ActionRun,
  epoch: number | undefined,
): Promise<void> {
  const row = runToRow(r, epoch);
  await run(
    db,
    `INSERT INTO tend.action_runs (workspace, id, address, type, action, params, actor, state,
       created_at, finished_at, error, epoch)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (workspace, id) DO UPDATE SET state = excluded.state,
       finished_at = excluded.finished_at, error = excluded.error,
       epoch = COALESCE(excluded.epoch, tend.action_runs.epoch)`,
    [
      workspace,
      row.id,
      row.address,
      row.type,
      row.action,
      row.params,
      row.actor,
      row.state,
      row.created_at,
      row.finished_at,
      row.error,
      row.epoch,
    ],
  );
  await run(db, 'DELETE FROM tend.action_steps WHERE workspace = $1 AND run_id = $2', [
    workspace,
    r.id,
  ]);
  for (const s of r.steps.map((step) => stepToRow(r.id, step))) {
    await run(
      db,
      `INSERT INTO tend.action_steps (workspace, run_id, idx, name, state, attempts, started_at,
         settled_at, message)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        workspace,
        s.run_id,
        s.idx,
        s.name,
        s.state,
        s.attempts,
        s.started_at,
        s.settled_at,
        s.message,
      ],
    );
  }
}

/** The runs of these rows, each with its steps (one read for all of them). */
async function withSteps(db: PgQueryable, workspace: string, rows: RunRow[]): Promise<ActionRun[]> {
  if (rows.length === 0) return [];
  const { rows: steps } = await run<StepRow>(
    db,
    `SELECT * FROM tend.action_steps WHERE workspace = $1 AND run_id = ANY($2::text[])
     ORDER BY run_id, idx`,
    [workspace, rows.map((r) => r.id)],
  );
  const byRun = new Map<string, ActionStepRecord[]>();
  for (const s of steps) {
    const list = byRun.get(s.run_id) ?? [];
    list.push(stepFromRow(s));
    byRun.set(s.run_id, list);
  }
  return rows.map((r) => runFromRow(r, byRun.get(r.id) ?? []));
}

/** One run, or undefined. */
export async function getActionRun(
  db: PgQueryable,
  workspace: string,
  id: string,
): Promise<ActionRun | undefined> {
  const { rows } = await run<RunRow>(
    db,
    'SELECT * FROM tend.action_runs WHERE workspace = $1 AND id = $2',
    [workspace, id],
  );
  return (await withSteps(db, workspace, rows))[0];
}

/** The runs a query selects, oldest first. */
export async function actionRuns(
  db: PgQueryable,
  workspace: string,
  query: ActionRunQuery,
): Promise<ActionRun[]> {
  const limit = checkCount('limit', query.limit);
  const { rows } = await run<RunRow>(
    db,
    `SELECT * FROM (SELECT * FROM tend.action_runs
       WHERE workspace = $1 AND ($2::text IS NULL OR address = $2) AND ($3::text IS NULL OR action = $3)
         AND (NOT $4::boolean OR state = 'running')
       ORDER BY seq DESC LIMIT $5) AS recent
     ORDER BY seq`,
    [
      workspace,
      query.address ?? null,
      query.action ?? null,
      query.unfinished === true,
      limit ?? null,
    ],
  );
  return withSteps(db, workspace, rows);
}
