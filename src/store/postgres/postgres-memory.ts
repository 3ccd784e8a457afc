import { GENESIS_HASH } from '../ledger-chain.js';
import type { LedgerHead } from '../ledger-chain.js';
import type {
  ExportOptions,
  ImportOptions,
  LedgerRow,
  MemoryCounts,
  StoredActionRun,
  WorkspaceMemory,
} from '../memory.js';
import {
  CLEARED_TABLES,
  isEmptyMemory,
  ledgerRowOf,
  MEMORY_TABLES,
  targetNotEmptyError,
} from '../memory.js';
import {
  announcementToRow,
  claimToRow,
  leaseFromRow,
  operationFromRow,
  operationToRow,
  runToRow,
  statusFromRow,
  statusToRow,
  stepToRow,
} from '../rows.js';
import type { LeaseRow, OperationRow, StatusRow } from '../rows.js';
import type { Lease } from '../store.js';
import { actionRuns } from './postgres-actions.js';
import type { PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';
import { announcements, claims } from './postgres-ownership.js';
import { twinFromRow, twinToRow } from './postgres-rows.js';
import type { TwinRow } from './postgres-rows.js';

// One workspace's whole memory on a shared database, exported and imported for `tend store copy`
// (../memory.ts): every row keyed by the workspace, the rows the shared converters make (../rows.ts).

/** The workspace's lease, expired or not (none when free). */
async function leases(db: PgQueryable, workspace: string): Promise<Lease[]> {
  const { rows } = await run<LeaseRow>(db, 'SELECT * FROM tend.leases WHERE workspace = $1', [
    workspace,
  ]);
  return rows.map(leaseFromRow);
}

/** How many rows of each kind the workspace has, in one statement. */
export async function countPostgresMemory(
  db: PgQueryable,
  workspace: string,
): Promise<MemoryCounts> {
  const columns = MEMORY_TABLES.map(
    ([kind, table]) => `(SELECT count(*) FROM tend.${table} WHERE workspace = $1) AS "${kind}"`,
  );
  const { rows } = await run<MemoryCounts>(db, `SELECT ${columns.join(', ')}`, [workspace]);
  return rows[0]!;
}

/**
 * Reads the workspace's whole memory; `db` is a client in a REPEATABLE READ transaction, so every
 * read sees one snapshot.
 */
export async function exportPostgresMemory(
  db: PgQueryable,
  workspace: string,
  options: ExportOptions,
): Promise<WorkspaceMemory> {
  options.check?.(await leases(db, workspace));
  const all = async <R>(sql: string): Promise<R[]> => (await run<R>(db, sql, [workspace])).rows;
  const where = 'WHERE workspace = $1';
  const epochs = new Map(
    (
      await all<{ id: string; epoch: number | null }>(
        `SELECT id, epoch FROM tend.action_runs ${where}`,
      )
    ).map((r) => [r.id, r.epoch]),
  );
  const runs = (await actionRuns(db, workspace, {})).map((r): StoredActionRun => {
    const epoch = epochs.get(r.id);
    return epoch === null || epoch === undefined ? { run: r } : { run: r, epoch };
  });
  const head = (await all<LedgerHead>(`SELECT seq, hash FROM tend.ledger_heads ${where}`))[0];
  return {
    twin: (await all<TwinRow>(`SELECT * FROM tend.twin ${where} ORDER BY address`)).map(
      twinFromRow,
    ),
    operations: (
      await all<OperationRow>(`SELECT * FROM tend.operations ${where} ORDER BY created_at, seq`)
    ).map(operationFromRow),
    ledger: {
      entries: (await all<LedgerRow>(`SELECT * FROM tend.changes ${where} ORDER BY seq`)).map(
        ledgerRowOf,
      ),
      head: head ? { seq: head.seq, hash: head.hash } : { seq: 0, hash: GENESIS_HASH },
    },
    cursors: await all(`SELECT provider, cursor FROM tend.cursors ${where} ORDER BY provider`),
    statuses: (await all<StatusRow>(`SELECT * FROM tend.statuses ${where} ORDER BY address`)).map(
      statusFromRow,
    ),
    announcements: await announcements(db, workspace, {}),
    claims: await claims(db, workspace, undefined),
    meta: await all(`SELECT key, value FROM tend.meta ${where} ORDER BY key`),
    actionRuns: runs,
  };
}

/**
 * Inserts rows of one table, the workspace first, the columns named by the rows' keys (the shared
 * converters name them as the tables do), many rows per statement.
 */
async function insertRows(
  db: PgQueryable,
  table: string,
  workspace: string,
  rows: readonly object[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const width = columns.length + 1;
  // PostgreSQL takes at most 65,535 parameters in one statement.
  const perStatement = Math.min(1000, Math.floor(60_000 / width));
  for (let start = 0; start < rows.length; start += perStatement) {
    const chunk = rows.slice(start, start + perStatement);
    const params: unknown[] = [];
    const tuples = chunk.map((row, i) => {
      const values = row as Record<string, unknown>;
      params.push(workspace);
      for (const c of columns) params.push(values[c] ?? null);
      return `(${Array.from({ length: width }, (_, j) => `$${i * width + j + 1}`).join(', ')})`;
    });
    await run(
      db,
      `INSERT INTO tend.${table} (workspace, ${columns.join(', ')}) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
}

/** Deletes the workspace's memory (its lease excepted), the append-only ledger included. */
async function clearPostgresMemory(
  db: PgQueryable,
  workspace: string,
  ledger: number,
): Promise<void> {
  for (const table of [...CLEARED_TABLES, 'ledger_heads']) {
    await run(db, `DELETE FROM tend.${table} WHERE workspace = $1`, [workspace]);
  }
  if (ledger === 0) return;
  // The ledger refuses deletes through a trigger, switched off for this transaction only (the
  // table's owner may; other workspaces' appends wait for the commit).
  await run(db, 'ALTER TABLE tend.changes DISABLE TRIGGER changes_append_only');
  await run(db, 'DELETE FROM tend.changes WHERE workspace = $1', [workspace]);
  await run(db, 'ALTER TABLE tend.changes ENABLE TRIGGER changes_append_only');
}

/**
 * Writes `memory` as the workspace's whole memory; `db` is a client in a transaction (see
 * `MemoryTransfer.importMemory`). It first takes the locks that order it with the workspace's writers
 * (the version row, as every write transaction) and with lease takers (the epoch row).
 */
export async function importPostgresMemory(
  db: PgQueryable,
  workspace: string,
  memory: WorkspaceMemory,
  options: ImportOptions & { readonly clean: <T>(value: T) => T },
): Promise<MemoryCounts> {
  const { clean } = options;
  await run(
    db,
    `INSERT INTO tend.workspaces (name, version) VALUES ($1, 1)
     ON CONFLICT (name) DO UPDATE SET version = tend.workspaces.version + 1`,
    [workspace],
  );
  await run(
    db,
    'INSERT INTO tend.lease_epochs (workspace, epoch) VALUES ($1, 0) ON CONFLICT (workspace) DO NOTHING',
    [workspace],
  );
  await run(db, 'SELECT epoch FROM tend.lease_epochs WHERE workspace = $1 FOR UPDATE', [workspace]);
  const before = await countPostgresMemory(db, workspace);
  options.check?.({ counts: before, leases: await leases(db, workspace) });
  if (!isEmptyMemory(before)) {
    if (!options.replace) throw targetNotEmptyError(workspace, before);
    await clearPostgresMemory(db, workspace, before.ledger);
  }
  await insertRows(
    db,
    'twin',
    workspace,
    memory.twin.map((t) => twinToRow(clean(t))),
  );
  await insertRows(
    db,
    'operations',
    workspace,
    memory.operations.map((o) => operationToRow(clean(o))),
  );
  await insertRows(db, 'changes', workspace, memory.ledger.entries.map(ledgerRowOf));
  await insertRows(db, 'ledger_heads', workspace, [memory.ledger.head]);
  await insertRows(db, 'cursors', workspace, memory.cursors.map(clean));
  await insertRows(
    db,
    'statuses',
    workspace,
    memory.statuses.map((s) => statusToRow(clean(s))),
  );
  await insertRows(
    db,
    'announcements',
    workspace,
    memory.announcements.map((a) => announcementToRow(clean(a))),
  );
  await insertRows(
    db,
    'field_claims',
    workspace,
    memory.claims.map((c) => claimToRow(clean(c))),
  );
  await insertRows(db, 'meta', workspace, memory.meta.map(clean));
  const runs = memory.actionRuns.map(({ run: r, epoch }) => ({ r: clean(r), epoch }));
  await insertRows(
    db,
    'action_runs',
    workspace,
    runs.map(({ r, epoch }) => runToRow(r, epoch)),
  );
  await insertRows(
    db,
    'action_steps',
    workspace,
    runs.flatMap(({ r }) => r.steps.map((s) => stepToRow(r.id, s))),
  );
  return countPostgresMemory(db, workspace);
}
