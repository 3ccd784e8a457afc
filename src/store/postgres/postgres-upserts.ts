// Plain one-row upserts that a group commit may send as one multi-row statement (decision 0037's
// group commit, docs/store.md): the end of a pass writes a status per resource, and sent one by one
// inside the batch's transaction each is a round trip while the transaction holds the workspace's
// writer and its fence. Merged, a thousand statuses are two statements.
import type { PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';

/** The tables whose one-row upserts merge, with their columns (the workspace first, then the key). */
const UPSERTS = {
  statuses: {
    columns: [
      'workspace',
      'address',
      'state',
      'object_id',
      'message',
      'checks',
      'compliance',
      'updated_at',
    ],
    key: 2,
  },
  twin: {
    columns: [
      'workspace',
      'address',
      'type',
      'object_id',
      'fields',
      'stateful',
      'depends_on',
      'observed_at',
      'sent',
    ],
    key: 2,
  },
} as const;

export type UpsertKind = keyof typeof UPSERTS;

/** One row of an upsert: its values in the kind's column order. */
export interface Upsert {
  readonly kind: UpsertKind;
  readonly values: readonly unknown[];
}

/** PostgreSQL takes at most 65,535 parameters per statement; rows per statement stay well below. */
export const ROWS_PER_STATEMENT = 500;

/** `INSERT … VALUES (…), (…) ON CONFLICT (key) DO UPDATE SET every other column` for n rows. */
export function upsertSql(kind: UpsertKind, rows: number): string {
  const { columns, key } = UPSERTS[kind];
  const width = columns.length;
  const tuples = Array.from(
    { length: rows },
    (_, r) => `(${columns.map((_, c) => `$${r * width + c + 1}`).join(', ')})`,
  );
  const keyColumns = columns.slice(0, key);
  const set = columns.slice(key).map((c) => `${c} = excluded.${c}`);
  return `INSERT INTO tend.${kind} (${columns.join(', ')}) VALUES ${tuples.join(', ')}
    ON CONFLICT (${keyColumns.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
}

/**
 * The rows to send for upserts made in this order: one per key, the last one made (what sending
 * them one after another would leave), in the order of their last write. A row whose width is not
 * its kind's is a programming error.
 */
export function lastPerKey(upserts: readonly Upsert[]): Upsert[] {
  const byKey = new Map<string, Upsert>();
  for (const u of upserts) {
    const { columns, key } = UPSERTS[u.kind];
    if (u.values.length !== columns.length) {
      throw new Error(
        `an upsert of ${u.kind} has ${u.values.length} values, not ${columns.length}`,
      );
    }
    const id = JSON.stringify([u.kind, ...u.values.slice(0, key)]);
    byKey.delete(id);
    byKey.set(id, u);
  }
  return [...byKey.values()];
}

/** Sends upserts of one kind as few statements as the parameter limit allows. */
export async function runUpserts(db: PgQueryable, upserts: readonly Upsert[]): Promise<void> {
  const rows = lastPerKey(upserts);
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    await run(
      db,
      upsertSql(chunk[0]!.kind, chunk.length),
      chunk.flatMap((u) => u.values),
    );
  }
}
