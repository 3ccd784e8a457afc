import { setKey } from '../../core/index.js';

// The few parts of the `pg` driver the PostgreSQL store uses, described by what is used (like
// sqlite-database.ts): a pool that runs single statements and lends a client for a transaction. `pg`
// itself is loaded with import() only when a PostgreSQL store is opened (decision 0033).

/** The result of a statement: its rows and how many it changed. */
export interface PgResult<R> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

/** Something that runs one statement: the pool (any connection) or one client (a transaction). */
export interface PgQueryable {
  query<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<PgResult<R>>;
}

/** A connection lent by the pool; `release(error)` with an error discards it instead. */
export interface PgClient extends PgQueryable {
  release(error?: Error | boolean): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool of connections to one database. */
export interface PgPool extends PgQueryable {
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

// PostgreSQL text cannot hold U+0000, which Tend's values may (a note, a message): such a string is
// stored as NUL_MARK + its JSON text, and so is one that happens to start with NUL_MARK, so reading
// back is unambiguous. Every other string is stored as it is (and sorts as it is). JSON columns never
// need it: JSON text writes U+0000 as an escape.
const NUL_MARK = '\u0001\u0002tend-json:';

/** A string as a parameter: as it is, unless it holds U+0000 (see NUL_MARK). */
export function toDbText(value: string): string {
  return value.includes('\u0000') || value.startsWith(NUL_MARK)
    ? NUL_MARK + JSON.stringify(value)
    : value;
}

/** A string as written by `toDbText`, read back. */
export function fromDbText(value: string): string {
  return value.startsWith(NUL_MARK) ? (JSON.parse(value.slice(NUL_MARK.length)) as string) : value;
}

function toDbValue(value: unknown): unknown {
  if (typeof value === 'string') return toDbText(value);
  if (Array.isArray(value)) return value.map(toDbValue);
  return value;
}

function fromDbRow<R>(row: Record<string, unknown>): R {
  for (const [name, value] of Object.entries(row)) {
    if (typeof value === 'string' && value.startsWith(NUL_MARK))
      setKey(row, name, fromDbText(value));
  }
  return row as R;
}

/**
 * Runs one statement with every string parameter encoded (`toDbText`) and every string column of the
 * rows decoded, so that the store reads back exactly the text it wrote.
 */
export async function run<R = Record<string, unknown>>(
  db: PgQueryable,
  sql: string,
  params: readonly unknown[] = [],
): Promise<PgResult<R>> {
  const result = await db.query<Record<string, unknown>>(sql, params.map(toDbValue));
  return { rows: result.rows.map((row) => fromDbRow<R>(row)), rowCount: result.rowCount };
}
