import type { TwinEntry } from '../store.js';
import { twinFromRow as twinFromSharedRow, twinToRow as twinToSharedRow } from '../rows.js';

// Rows as the tables in postgres-migrations.ts hold them. Every row is the shared one (../rows.ts:
// snake_case, JSON as text, absent as NULL), read and written by its converters, which know no
// driver; only what PostgreSQL types differently is converted here: the twin's boolean.

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
  const row = twinToSharedRow(entry);
  return { ...row, stateful: entry.stateful };
}

/** The twin entry a row holds. */
export function twinFromRow(row: TwinRow): TwinEntry {
  return twinFromSharedRow({ ...row, stateful: row.stateful ? 1 : 0 });
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
