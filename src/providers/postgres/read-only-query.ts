// One query that can never change the database: the `sql` check's way of asking PostgreSQL.
import pg from 'pg';
import type { PgConnection } from './connection.js';
import { describeConnection } from './connection.js';

/** The result of `runReadOnlyQuery`: rows, or why there are none (never a password). */
export type ReadOnlyResult =
  | {
      readonly ok: true;
      readonly columns: readonly string[];
      readonly rows: readonly Readonly<Record<string, unknown>>[];
    }
  | {
      readonly ok: false;
      readonly phase: 'connect' | 'query';
      readonly sqlState?: string;
      readonly message: string;
      readonly where: string;
    };

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Values a check compares and a CEL expression computes with: int8 (`count(*)`) as a bigint and
 * numeric as a number, instead of the driver's default text.
 */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8) return (v: string) => BigInt(v);
    if (oid === NUMERIC) {
      return (v: string) => {
        const n = Number(v);
        return Number.isFinite(n) ? n : v;
      };
    }
    return pg.types.getTypeParser(oid, format) as (v: string) => unknown;
  }) as typeof pg.types.getTypeParser,
};

/**
 * Runs one statement in a READ ONLY transaction and rolls it back. The session is read-only by
 * default too (`default_transaction_read_only`), the statement goes through the extended protocol
 * (one statement only: `COMMIT; DELETE …` is refused), and `timeoutMs` bounds the statement
 * (`statement_timeout`), connecting, and the whole exchange on the client side. Never throws.
 */
export async function runReadOnlyQuery(
  connection: PgConnection,
  query: string,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<ReadOnlyResult> {
  const where = describeConnection(connection.summary);
  const { timeoutMs } = options;
  const client = new pg.Client({
    ...connection.config,
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 2000,
    connectionTimeoutMillis: Math.min(
      connection.config.connectionTimeoutMillis ?? timeoutMs,
      timeoutMs,
    ),
    options: '-c default_transaction_read_only=on',
    types: TYPES,
  });
  // A connection lost mid-query is reported by the query's own rejection.
  client.on('error', () => undefined);
  const abort = () => void client.end().catch(() => undefined);
  options.signal?.addEventListener('abort', abort, { once: true });
  let phase: 'connect' | 'query' = 'connect';
  try {
    await client.connect();
    phase = 'query';
    await client.query('BEGIN TRANSACTION READ ONLY');
    // pg 8.11+ reads `queryMode`; @types/pg does not list it yet.
    const extended = { text: query, queryMode: 'extended' } as pg.QueryConfig;
    const r = await client.query(extended);
    await client.query('ROLLBACK').catch(() => undefined);
    return {
      ok: true,
      columns: r.fields.map((f) => f.name),
      rows: r.rows as Record<string, unknown>[],
    };
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    const sqlState =
      typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code) ? err.code : undefined;
    let message = typeof err.message === 'string' ? err.message : String(e);
    if (options.signal?.aborted) message = 'aborted';
    else if (/Query read timeout/i.test(message)) {
      message = `no answer within ${timeoutMs} ms`;
      return { ok: false, phase, sqlState: '57014', message, where };
    }
    return { ok: false, phase, ...(sqlState !== undefined && { sqlState }), message, where };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await client.end().catch(() => undefined);
  }
}
