// Observing a cluster: each type's module (role.ts, database.ts, …) reads every object of its type
// with one catalog query per pass (never one per object); what those readers share is here. System
// objects are left out: roles named `pg_*`, template databases, schemas `pg_*` and
// `information_schema`, the `plpgsql` extension.
import type { ObservedObject } from '../../core/index.js';
import { splitMarkerText } from '../../core/index.js';
import type { PgSession } from './session.js';

/** The part of a `pg` client the catalog readers use. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** One observed object before the marker is read from its comment. */
export interface CatalogRow {
  readonly id: string;
  readonly fields: Record<string, unknown>;
}

/** The SQL condition keeping the schemas of users (`n` the alias of `pg_namespace`). */
export const USER_SCHEMA = (n: string): string =>
  `${n}.nspname NOT LIKE 'pg\\_%' AND ${n}.nspname <> 'information_schema'`;

/** A catalog value as text. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/** Drops null values: a field PostgreSQL has no value for is absent, as it is when not declared. */
export function present(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null && v !== undefined));
}

/** A row as the object the provider reports, with Tend's marker read from its comment. */
export function observedObject(type: string, row: CatalogRow): ObservedObject {
  const comment = row.fields['comment'];
  const marker = typeof comment === 'string' ? splitMarkerText(comment).marker : undefined;
  return { type, id: row.id, fields: row.fields, ...(marker ? { marker } : {}) };
}

/**
 * Every object of a type PostgreSQL names (role, database, schema, extension): `query` returns one
 * row per object, with its `name` and the fields of the type's schema.
 */
export async function listNamed(
  s: PgSession,
  type: string,
  query: string,
  idOf: (name: string) => string,
): Promise<ObservedObject[]> {
  const { rows } = await s.reading(`reading ${type}s from ${s.database}`, () =>
    s.pool.query<Record<string, unknown>>(query),
  );
  return rows.map((r) => observedObject(type, { id: idOf(text(r['name'])), fields: present(r) }));
}
