// What the PostgreSQL provider's type modules do their work with: the pool of connections to the
// working database, reads with their errors mapped, and the two ways a change is sent — statements
// in one transaction with the actor set for the DDL audit, or one statement alone (CREATE/DROP
// DATABASE cannot run in a transaction) — and an object read back after a change.
import type pg from 'pg';
import type { ObservedObject, WriteContext } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import { pgError, sqlstateOf } from './errors.js';

/**
 * The settings that let PostgreSQL's audit (an event trigger, `current_setting('tend.actor')`) say
 * who made a change: one statement with bind parameters, local to the transaction.
 */
export const SET_ACTOR =
  "SELECT set_config('tend.actor', $1, true), set_config('tend.intent', $2, true), set_config('tend.motivation', $3, true)";

/** A provider's connections and how its type modules read and write through them. */
export interface PgSession {
  /** The pool of connections to the working database. */
  readonly pool: pg.Pool;
  /** The database schemas, extensions and grants in a schema live in. */
  readonly database: string;
  /** Runs a read; a failure is a TendError saying `what` was being read (nothing was changed). */
  reading<T>(what: string, read: () => Promise<T>): Promise<T>;
  /**
   * Runs statements in one transaction, with the actor in settings PostgreSQL's audit can read.
   * A failure before COMMIT rolled everything back (the outcome is known, also when the connection
   * went away); a lost connection during COMMIT leaves the outcome unknown. No statements: nothing.
   */
  transaction(what: string, statements: readonly string[], ctx: WriteContext): Promise<void>;
  /**
   * One statement outside a transaction (CREATE/DROP DATABASE cannot run in one); `fence` (the
   * WriteContext's) is passed right before it is sent.
   */
  single(what: string, statement: string, fence?: () => void): Promise<void>;
  /** The object of a type with this id as the catalog shows it now, if there is one. */
  read(type: string, id: string): Promise<ObservedObject | undefined>;
  /** The object `what` just made or changed; not in the catalog is an unknown outcome. */
  mustRead(type: string, id: string, what: string): Promise<ObservedObject>;
}

/** A connection lent by the pool, listening for `error` while lent. */
export interface LentClient {
  readonly client: pg.PoolClient;
  /** Gives it back; a broken one (`broken`, or an `error` it emitted while lent) is discarded. */
  release(broken?: boolean): void;
}

/**
 * Borrows a connection for `what` (a failure to connect is a TendError; nothing was sent). pg-pool
 * listens for `error` only on idle connections: one the server ends while lent (terminated,
 * restarted, a failover) emits `error` — also after the statement under way failed — and with no
 * listener that event ends the process. This listener keeps it: the statement's own rejection
 * reports the failure, and the connection is discarded when given back.
 */
export async function lendClient(pool: pg.Pool, what: string): Promise<LentClient> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (e) {
    throw pgError(e, what, false);
  }
  let failed: Error | undefined;
  const onError = (e: Error): void => {
    failed ??= e;
  };
  client.on('error', onError);
  return {
    client,
    release(broken = false) {
      // A broken one keeps the listener: its socket's end may still emit `error` once discarded.
      if (failed === undefined && !broken) client.off('error', onError);
      client.release(failed ?? broken);
    },
  };
}

/** A session on `pool`; `list` lists a type's objects (what `read` looks an object up in). */
export function createSession(
  pool: pg.Pool,
  database: string,
  list: (type: string) => Promise<ObservedObject[]>,
): PgSession {
  const read = async (type: string, id: string): Promise<ObservedObject | undefined> =>
    (await list(type)).find((o) => o.id === id);
  return {
    pool,
    database,
    async reading<T>(what: string, run: () => Promise<T>): Promise<T> {
      try {
        return await run();
      } catch (e) {
        throw pgError(e, what, false);
      }
    },
    async transaction(what, statements, ctx) {
      if (statements.length === 0) return;
      const lent = await lendClient(pool, what);
      const { client } = lent;
      let committing = false;
      let broken = false;
      try {
        await client.query('BEGIN');
        await client.query(SET_ACTOR, [
          ctx.actor.actor,
          ctx.actor.intent ?? '',
          ctx.actor.motivation ?? '',
        ]);
        for (const s of statements) await client.query(s);
        // The last moment before the change takes effect: a writer that may have lost its lease
        // commits nothing.
        ctx.fence?.();
        committing = true;
        await client.query('COMMIT');
      } catch (e) {
        if (e instanceof TendError) {
          // The fence refused: nothing was committed.
          await client.query('ROLLBACK').catch(() => undefined);
          throw e;
        }
        // A connection that failed without a server error is not given back to the pool.
        broken = sqlstateOf(e) === undefined;
        if (!broken) await client.query('ROLLBACK').catch(() => undefined);
        // Before COMMIT, a lost connection rolls the transaction back: only COMMIT leaves it unknown.
        throw pgError(e, what, committing);
      } finally {
        lent.release(broken);
      }
    },
    async single(what, statement, fence) {
      const lent = await lendClient(pool, what); // failing to connect: nothing was sent
      let broken = false;
      try {
        fence?.();
      } catch (e) {
        lent.release();
        throw e;
      }
      try {
        await lent.client.query(statement);
      } catch (e) {
        broken = sqlstateOf(e) === undefined;
        throw pgError(e, what, true);
      } finally {
        lent.release(broken);
      }
    },
    read,
    async mustRead(type, id, what) {
      const o = await read(type, id);
      if (!o) {
        throw new TendError(
          'postgres.not_visible',
          `${what} succeeded but ${type} ${id} is not in the catalog`,
          { retryable: true, outcomeUnknown: true },
        );
      }
      return o;
    },
  };
}
