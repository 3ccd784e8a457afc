import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../test/support/postgres.js';
import { createSession, lendClient } from './session.js';

// The provider's lent connections on a real cluster: the server ending one while it is lent (its
// backend terminated, as a restart or a failover does) fails the work under way with a TendError and
// does not end the process — pg-pool listens for `error` only on idle connections, and an `error`
// event nobody listens to is an uncaught exception (vitest reports it, and the suite fails). The
// broken connection is discarded and the next work gets a new one. With CI=true a missing server
// fails the suite instead of skipping it.

let server: PostgresHandle | undefined;
const actor = { actor: 'tend', intent: '', motivation: '' };

function newPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: server!.url(), max: 2 });
  pool.on('error', () => undefined); // idle connections, as the provider's pool does
  return pool;
}

async function terminate(pid: number): Promise<void> {
  const killer = new pg.Client({ connectionString: server!.url() });
  await killer.connect();
  try {
    await killer.query('SELECT pg_terminate_backend($1)', [pid]);
  } finally {
    await killer.end();
  }
}

describe.skipIf(POSTGRES.skip)(`the provider's lent connections${POSTGRES.note}`, () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('survives a lent connection whose backend is terminated between two statements', async () => {
    const pool = newPool();
    try {
      const lent = await lendClient(pool, 'testing');
      const pid = (await lent.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
        .rows[0]!.pid;
      const ended = new Promise<void>((resolve) => lent.client.once('end', () => resolve()));
      // Idle between two statements while the server ends it: pg emits `error` on the client.
      await terminate(pid);
      await ended;
      await expect(lent.client.query('SELECT 1')).rejects.toThrow();
      lent.release();
      // Discarded: the pool opens a new connection for the next one.
      const next = await lendClient(pool, 'testing');
      expect((await next.client.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
      next.release();
    } finally {
      await pool.end();
    }
  });

  it('fails a transaction whose backend is terminated mid-way with a TendError, then works again', async () => {
    const pool = newPool();
    const session = createSession(pool, 'postgres', () => Promise.resolve([]));
    try {
      const error = await session
        .transaction(
          'creating table a',
          ['CREATE TABLE a (x int)', 'SELECT pg_terminate_backend(pg_backend_pid())'],
          { actor },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(TendError);
      // Let the ended socket's `error` event come, as it does after the statement failed.
      await new Promise((r) => setTimeout(r, 200));
      // Rolled back (the connection went before COMMIT), and the session carries on.
      await session.transaction('creating table b', ['CREATE TABLE b (x int)'], { actor });
      const { rows } = await pool.query<{ name: string }>(
        "SELECT relname AS name FROM pg_class WHERE relname IN ('a', 'b') ORDER BY 1",
      );
      expect(rows).toEqual([{ name: 'b' }]);
    } finally {
      await pool.end();
    }
  });
});
