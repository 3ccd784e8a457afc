/**
 * The few methods of a synchronous SQLite driver that the SQLite store uses. better-sqlite3 satisfies
 * it; describing the driver by what is used keeps the store honest about its dependency and lets a
 * test hand in a database it opened itself.
 */
export interface SqliteDatabase {
  /** False once `close` has been called. */
  readonly open: boolean;
  /** True while a transaction is open (SQLite may roll one back by itself on a disk error). */
  readonly inTransaction: boolean;
  prepare(source: string): SqliteStatement;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** Wraps `fn` so that calling `.immediate()` runs it in a `BEGIN IMMEDIATE` transaction. */
  transaction<A extends unknown[], T>(fn: (...args: A) => T): SqliteTransaction<A, T>;
  close(): unknown;
}

/** A prepared statement; parameters are positional values or one object of named (`@name`) values. */
export interface SqliteStatement {
  run(...params: unknown[]): { readonly changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/** A function run inside a transaction; `immediate` takes the write lock before the first read. */
export interface SqliteTransaction<A extends unknown[], T> {
  (...args: A): T;
  immediate(...args: A): T;
}
