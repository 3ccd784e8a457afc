import type { TwinEntry } from '../store.js';
import type { Lease } from '../store.js';
import {
  twinFromRow as twinFromSqliteRow,
  twinToRow as twinToSqliteRow,
} from '../sqlite/sqlite-rows.js';

// Rows as the tables in postgres-migrations.ts hold them. The journal, ledger, status,
// announcement and claim rows are the SQLite ones (snake_case, JSON as text, absent as NULL), read
// and written by the converters of sqlite-rows.ts and sqlite-ownership.ts, which know no driver; only
// what PostgreSQL types differently is converted here: the twin's boolean and the lease's times.

/** A `tend.twin` row (without `workspace`). */
export interface TwinRow {
  readonly address: string;
  readonly type: string;
  readonly object_id: string;
  readonly fields: string;
  readonly stateful: boolean;
  readonly depends_on: string;
  readonly observed_at: string;
  readonly sent: string | null;
}

/** The row holding a twin entry. */
export function twinToRow(entry: TwinEntry): TwinRow {
  const row = twinToSqliteRow(entry);
  return { ...row, stateful: entry.stateful };
}

/** The twin entry a row holds. */
export function twinFromRow(row: TwinRow): TwinEntry {
  return twinFromSqliteRow({ ...row, stateful: row.stateful ? 1 : 0 });
}

/** The parameters of a twin row, in the order of `TWIN_COLUMNS`, after the workspace. */
export function twinParams(row: TwinRow): unknown[] {
  return [
    row.address,
    row.type,
    row.object_id,
    row.fields,
    row.stateful,
    row.depends_on,
    row.observed_at,
    row.sent,
  ];
}

/** A `tend.leases` row; the times are the database's (`timestamptz`, read as dates). */
export interface LeaseRow {
  readonly workspace: string;
  readonly epoch: number;
  readonly command: string;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  readonly acquired_at: Date;
  readonly expires_at: Date;
  /** The `tend worker` holding it (schema version 2), else null. */
  readonly worker?: string | null;
}

/** The lease a row holds. */
export function leaseFromRow(row: LeaseRow): Lease {
  return {
    workspace: row.workspace,
    epoch: row.epoch,
    holder: {
      command: row.command,
      pid: row.pid,
      host: row.host,
      startedAt: row.started_at,
      ...(typeof row.worker === 'string' ? { worker: row.worker } : {}),
    },
    acquiredAt: row.acquired_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}
