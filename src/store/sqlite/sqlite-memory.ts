import type { Operation } from '../../core/index.js';
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
  leaseFromRow,
  operationFromRow,
  operationToRow,
  statusFromRow,
  statusToRow,
  twinFromRow,
  twinToRow,
} from '../rows.js';
import type { LeaseRow, OperationRow, StatusRow, TwinRow } from '../rows.js';
import type { Lease } from '../store.js';
import type { ActionStatements } from './sqlite-actions.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';
import type { OwnershipStatements } from './sqlite-ownership.js';

// A SQLite file's whole memory, exported and imported for `tend store copy` (../memory.ts). A file
// is one workspace's: every row of it is the workspace's memory. The writes reuse the store's own
// statements, so a copied record is stored exactly as the store stores it.

/** What of the store the transfer uses: its connection, statements and redactor. */
export interface SqliteMemoryParts {
  readonly db: SqliteDatabase;
  readonly putTwin: SqliteStatement;
  readonly insertOperation: SqliteStatement;
  readonly insertChange: SqliteStatement;
  readonly setLedgerHead: SqliteStatement;
  readonly setCursor: SqliteStatement;
  readonly putStatus: SqliteStatement;
  readonly setMeta: SqliteStatement;
  readonly ownership: OwnershipStatements;
  readonly actions: ActionStatements;
  readonly clean: <T>(value: T) => T;
  readonly now: () => Date;
}

/** Every lease in the file (one workspace's; expired or not). */
function leases(db: SqliteDatabase): Lease[] {
  return (db.prepare('SELECT * FROM leases ORDER BY workspace').all() as LeaseRow[]).map(
    leaseFromRow,
  );
}

/** How many rows of each kind the file holds. */
export function countSqliteMemory(db: SqliteDatabase): MemoryCounts {
  const counts: Record<string, number> = {};
  for (const [kind, table] of MEMORY_TABLES) {
    counts[kind] = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }
  return counts as unknown as MemoryCounts;
}

/**
 * Reads the whole memory in one read transaction (a snapshot: in WAL mode another process's commits
 * after its first read are not seen). Synchronous; the store runs it after its queued writes.
 */
export function exportSqliteMemory(
  parts: SqliteMemoryParts,
  options: ExportOptions,
): WorkspaceMemory {
  const { db } = parts;
  return db.transaction((): WorkspaceMemory => {
    options.check?.(leases(db));
    const all = <R>(sql: string): R[] => db.prepare(sql).all() as R[];
    const epochs = new Map(
      all<{ id: string; epoch: number | null }>('SELECT id, epoch FROM action_runs').map((r) => [
        r.id,
        r.epoch,
      ]),
    );
    const actionRuns = parts.actions.list({}).map((run): StoredActionRun => {
      const epoch = epochs.get(run.id);
      return epoch === null || epoch === undefined ? { run } : { run, epoch };
    });
    const head = db.prepare('SELECT seq, hash FROM ledger_head WHERE id = 1').get() as
      LedgerHead | undefined;
    return {
      twin: all<TwinRow>('SELECT * FROM twin ORDER BY address').map(twinFromRow),
      operations: all<OperationRow>('SELECT * FROM operations ORDER BY created_at, seq').map(
        operationFromRow,
      ),
      ledger: {
        entries: all<LedgerRow>('SELECT * FROM changes ORDER BY seq').map(ledgerRowOf),
        head: head ? { seq: head.seq, hash: head.hash } : { seq: 0, hash: GENESIS_HASH },
      },
      cursors: all<{ provider: string; cursor: string }>(
        'SELECT provider, cursor FROM cursors ORDER BY provider',
      ),
      statuses: all<StatusRow>('SELECT * FROM statuses ORDER BY address').map(statusFromRow),
      announcements: parts.ownership.announcements({}),
      claims: parts.ownership.claims(undefined),
      meta: all<{ key: string; value: string }>('SELECT key, value FROM meta ORDER BY key'),
      actionRuns,
    };
  })();
}

/** Deletes every row of the file's memory (leases excepted), the append-only ledger included. */
function clearSqliteMemory(db: SqliteDatabase): void {
  for (const table of CLEARED_TABLES) {
    db.prepare(`DELETE FROM ${table}`).run();
  }
  // The ledger refuses deletes through a trigger: dropped and made again, inside this transaction.
  const trigger = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?")
    .get('changes_append_only_delete') as { sql: string } | undefined;
  if (trigger) db.exec('DROP TRIGGER changes_append_only_delete');
  db.prepare('DELETE FROM changes').run();
  if (trigger) db.exec(trigger.sql);
  db.prepare('UPDATE ledger_head SET seq = 0, hash = ? WHERE id = 1').run(GENESIS_HASH);
}

/**
 * Writes `memory` as the file's whole memory in one IMMEDIATE transaction (see
 * `MemoryTransfer.importMemory`); the counts stored after it.
 */
export function importSqliteMemory(
  parts: SqliteMemoryParts,
  memory: WorkspaceMemory,
  options: ImportOptions,
): MemoryCounts {
  const { db, clean } = parts;
  return db
    .transaction((): MemoryCounts => {
      const before = countSqliteMemory(db);
      options.check?.({ counts: before, leases: leases(db) });
      if (!isEmptyMemory(before)) {
        if (!options.replace) throw targetNotEmptyError(undefined, before);
        clearSqliteMemory(db);
      }
      const now = parts.now().toISOString();
      for (const entry of memory.twin) parts.putTwin.run(twinToRow(clean(entry)));
      for (const op of memory.operations) {
        parts.insertOperation.run(operationToRow(clean<Operation>(op)));
      }
      for (const row of memory.ledger.entries) parts.insertChange.run(ledgerRowOf(row));
      parts.setLedgerHead.run(memory.ledger.head.seq, memory.ledger.head.hash);
      for (const c of memory.cursors) parts.setCursor.run(c.provider, clean(c.cursor), now);
      for (const s of memory.statuses) parts.putStatus.run(statusToRow(clean(s)));
      for (const a of memory.announcements) parts.ownership.putAnnouncement(clean(a));
      for (const c of memory.claims) parts.ownership.putClaim(clean(c));
      for (const m of memory.meta) parts.setMeta.run(m.key, clean(m.value));
      for (const { run, epoch } of memory.actionRuns) parts.actions.put(clean(run), epoch);
      return countSqliteMemory(db);
    })
    .immediate();
}
