import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresHandle } from '../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../test/support/postgres.js';
import { sqlRunner } from '../app/index.js';
import type { SqlCheckDecl } from '../core/index.js';
import { Redactor } from '../core/index.js';
import type { CheckContext } from './check-context.js';
import type { SqlRows } from './sql-check.js';
import { judgeSqlRows, MAX_EVIDENCE, runSqlCheck, sqlEvidence, sqlText } from './sql-check.js';

// The `sql` check: how returned rows are judged against each expectation (pure), and the check run
// against a real cluster — read-only, bounded by its timeout, and never showing a password.

const AT = new Date('2026-11-26T12:00:00Z');
const CHECK: SqlCheckDecl = {
  kind: 'sql',
  name: 'q',
  connection: {},
  query: 'SELECT 1',
  timeoutMs: 5000,
  source: { file: 'main.yaml', line: 1, column: 1 },
};
const rows = (columns: string[], ...values: unknown[][]): SqlRows => ({
  ok: true,
  columns,
  rows: values.map((v) => Object.fromEntries(columns.map((c, i) => [c, v[i]]))),
});

describe('judgeSqlRows', () => {
  it.each([
    {
      reason: 'no expectation: returning at all is enough',
      check: {},
      got: rows(['n']),
      want: undefined,
    },
    {
      reason: 'a count within bounds',
      check: { rowCount: { min: 1, max: 3 } },
      got: rows(['n'], [1], [2]),
      want: undefined,
    },
    {
      reason: 'too few rows',
      check: { rowCount: { min: 1 } },
      got: rows(['n']),
      want: 'returned 0 rows, expected at least 1',
    },
    {
      reason: 'too many rows',
      check: { rowCount: { max: 1 } },
      got: rows(['n'], [1], [2]),
      want: 'returned 2 rows, expected at most 1',
    },
    {
      reason: 'an exact count',
      check: { rowCount: { min: 2, max: 2 } },
      got: rows(['n'], [1]),
      want: 'returned 1 row, expected exactly 2',
    },
    {
      reason: 'both bounds named when outside them',
      check: { rowCount: { min: 2, max: 4 } },
      got: rows(['n'], [1]),
      want: 'returned 1 row, expected between 2 and 4',
    },
    {
      reason: 'a bigint count equals a declared number (compared as text)',
      check: { value: { is: 3 } },
      got: rows(['count'], [3n]),
      want: undefined,
    },
    {
      reason: 'a different scalar',
      check: { value: { is: 'on' } },
      got: rows(['setting'], ['off']),
      want: 'setting is off, expected on',
    },
    {
      reason: 'NULL is only equal to null',
      check: { value: { is: null } },
      got: rows(['x'], ['']),
      want: 'x is , expected NULL',
    },
    {
      reason: 'a declared value against NULL',
      check: { value: { is: 'a' } },
      got: rows(['x'], [null]),
      want: 'x is NULL, expected a',
    },
    {
      reason: '`value` needs exactly one row of one column',
      check: { value: { is: 1 } },
      got: rows(['a', 'b'], [1, 2], [3, 4]),
      want: '`value` needs one row of one column, the query returned 2 rows of 2 columns',
    },
    {
      reason: 'exact rows, in order',
      check: {
        rows: [
          { name: 'app', ok: true },
          { name: 'ro', ok: false },
        ],
      },
      got: rows(['name', 'ok'], ['app', true], ['ro', false]),
      want: undefined,
    },
    {
      reason: 'a row whose value differs says which row and column',
      check: { rows: [{ name: 'app', ok: true }] },
      got: rows(['name', 'ok'], ['app', false]),
      want: 'row 1: ok is false, expected true',
    },
    {
      reason: 'other columns than declared',
      check: { rows: [{ name: 'app' }] },
      got: rows(['name', 'ok'], ['app', true]),
      want: 'row 1 has columns name, ok, expected name',
    },
    {
      reason: 'another number of rows than declared',
      check: { rows: [] },
      got: rows(['name'], ['app']),
      want: 'returned 1 row, expected 0 rows',
    },
    {
      reason: 'a CEL expression over rows and rowCount',
      check: { expr: 'rowCount == 2 && rows[1].n > 5 && rows[0].name == "a"' },
      got: rows(['name', 'n'], ['a', 1n], ['b', 9n]),
      want: undefined,
    },
    {
      reason: 'a false expression',
      check: { expr: 'rows.all(r, r.n < 5)' },
      got: rows(['n'], [1n], [9n]),
      want: '`rows.all(r, r.n < 5)` is false',
    },
    {
      reason: 'an expression that is not a boolean',
      check: { expr: 'rowCount' },
      got: rows(['n'], [1]),
      want: '`rowCount` returned 1, not a boolean',
    },
    {
      reason: 'an expression that fails to evaluate names the failure',
      check: { expr: 'rows[0].missing == 1' },
      got: rows(['n'], [1]),
      want: /^`rows\[0\]\.missing == 1` failed to evaluate: .*missing/,
    },
  ])('$reason', ({ check, got, want }) => {
    const problem = judgeSqlRows({ ...CHECK, ...check }, got);
    if (want instanceof RegExp) expect(problem).toMatch(want);
    else expect(problem).toBe(want);
  });
});

describe('sqlText and sqlEvidence', () => {
  it.each([
    [null, 'NULL'],
    [12n, '12'],
    [1.5, '1.5'],
    [true, 'true'],
    [new Date('2026-01-02T03:04:05Z'), '2026-01-02T03:04:05.000Z'],
    [Buffer.from([0xde, 0xad]), '\\xdead'],
    [{ b: 1, a: [2n] }, '{"a":["2"],"b":1}'],
  ])('value %# as %s', (v, want) => {
    expect(sqlText(v)).toBe(want);
  });

  it('shows the count and the first rows, trimmed', () => {
    expect(sqlEvidence([])).toBe('0 rows');
    expect(sqlEvidence([{ count: 3n }])).toBe('1 row: {"count":"3"}');
    const many = Array.from({ length: 8 }, (_, i) => ({ i }));
    expect(sqlEvidence(many)).toBe('8 rows: {"i":0}, {"i":1}, {"i":2}, {"i":3}, {"i":4}, …');
    const wide = sqlEvidence([{ t: 'x'.repeat(2000) }]);
    expect(wide).toHaveLength(MAX_EVIDENCE);
    expect(wide.endsWith('…')).toBe(true);
  });
});

describe('runSqlCheck without a runner', () => {
  it('fails saying sql checks cannot run here', async () => {
    const ctx: CheckContext = { observed: {}, desired: {}, resolve: (t) => t, now: () => AT };
    expect(await runSqlCheck(CHECK, ctx)).toEqual({
      name: 'q',
      kind: 'sql',
      ok: false,
      message: 'sql checks cannot run here: no SQL runner was given',
      at: AT.toISOString(),
    });
  });
});

describe.skipIf(POSTGRES.skip)(`sql check on a real PostgreSQL${POSTGRES.note}`, () => {
  const SUPER = 'Super-secret-password-42';
  const APP = 'App-secret-password-0042';
  let server: PostgresHandle;
  let dir: string;
  const redactor = new Redactor();
  const url = (user: string, password: string) =>
    `postgres://${user}:${password}@127.0.0.1:${server.port}/postgres`;

  const run = async (
    check: Partial<SqlCheckDecl>,
    env: Record<string, string> = { APP_DB: url('app', APP) },
  ) => {
    const ctx: CheckContext = {
      observed: {},
      desired: {},
      resolve: (t) => t.replaceAll('${pg.table/orders.name}', 'orders'),
      now: () => AT,
      sql: sqlRunner({ env, dir, secrets: redactor }),
    };
    return runSqlCheck({ ...CHECK, connection: { fromEnv: 'APP_DB' }, ...check }, ctx);
  };
  const rowCountOf = async (table: string): Promise<number> => {
    const c = new pg.Client({ connectionString: url('postgres', SUPER) });
    await c.connect();
    try {
      const r = await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
      return Number(r.rows[0]!.n);
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    server = await startPostgres({ auth: 'scram-sha-256', superPassword: SUPER });
    dir = mkdtempSync(join(tmpdir(), 'tend-sql-check-'));
    const c = new pg.Client({ connectionString: url('postgres', SUPER) });
    await c.connect();
    await c.query(`
      CREATE ROLE app LOGIN PASSWORD '${APP}';
      CREATE TABLE orders (id int PRIMARY KEY, total numeric);
      INSERT INTO orders VALUES (1, 10.5), (2, 20), (3, 30);
      CREATE TABLE secrets (id int);
      CREATE SEQUENCE orders_seq;
      GRANT USAGE ON SEQUENCE orders_seq TO app;
      GRANT SELECT, INSERT, DELETE ON orders TO app;
    `);
    await c.end();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes when the count is within bounds, with the rows as evidence', async () => {
    const got = await run({
      query: 'SELECT count(*) AS n FROM ${pg.table/orders.name}',
      value: { is: 3 },
      expr: 'rows[0].n >= 1',
    });
    expect(got).toEqual({
      name: 'q',
      kind: 'sql',
      ok: true,
      message: 'returned 1 row as expected',
      evidence: '1 row: {"n":"3"}',
      at: AT.toISOString(),
    });
    const bounded = await run({ query: 'SELECT id FROM orders', rowCount: { min: 1, max: 3 } });
    expect(bounded).toMatchObject({ ok: true, evidence: '3 rows: {"id":1}, {"id":2}, {"id":3}' });
  });

  it('fails a count outside its bounds, showing what came back', async () => {
    const got = await run({ query: 'SELECT id FROM orders ORDER BY id', rowCount: { max: 2 } });
    expect(got).toMatchObject({
      ok: false,
      message: 'returned 3 rows, expected at most 2',
      evidence: '3 rows: {"id":1}, {"id":2}, {"id":3}',
    });
  });

  it('fails a permission-denied query with a clear message', async () => {
    const got = await run({ query: 'SELECT * FROM secrets' });
    expect(got.ok).toBe(false);
    expect(got.message).toBe(
      `permission denied (postgres://app@127.0.0.1:${server.port}/postgres): permission denied for table secrets`,
    );
  });

  it('refuses a write: the query runs READ ONLY', async () => {
    const got = await run({ query: 'DELETE FROM orders' });
    expect(got.ok).toBe(false);
    expect(got.message).toMatch(
      /^the query tried to change the database, which a sql check never does \(it runs READ ONLY\) \(postgres:\/\/app@127\.0\.0\.1:\d+\/postgres\): cannot execute DELETE in a read-only transaction$/,
    );
    // Nor can a second statement escape the transaction.
    const escape = await run({ query: 'COMMIT; DELETE FROM orders' });
    expect(escape.ok).toBe(false);
    expect(escape.message).toContain('cannot insert multiple commands into a prepared statement');
    // A function with side effects is refused too.
    const writer = await run({ query: "SELECT nextval('orders_seq')" });
    expect(writer.ok).toBe(false);
    expect(writer.message).toContain('cannot execute nextval() in a read-only transaction');
    expect(await rowCountOf('orders')).toBe(3);
  });

  it('fails a query that runs past its timeout', async () => {
    const started = Date.now();
    const got = await run({ query: 'SELECT pg_sleep(5)', timeoutMs: 300 });
    expect(got).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /^the query did not finish within 300 ms and was cancelled \(postgres:\/\/app@127\.0\.0\.1:\d+\/postgres\); raise timeoutMs or make the query cheaper$/,
      ) as unknown,
    });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('never shows the password: not on success, a wrong password, or a bad URL', async () => {
    const wrong = await run({}, { APP_DB: url('app', 'Wrong-password-xyz-123') });
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toMatch(
      /^cannot connect \(postgres:\/\/app@127\.0\.0\.1:\d+\/postgres\): password authentication failed for user "app"$/,
    );
    const badUrl = await run({}, { APP_DB: `mysql://app:${APP}@127.0.0.1/x` });
    expect(badUrl.message).toBe(
      'cannot read the connection: the connection string must start with postgres:// or postgresql://, not mysql:// (write it as postgres://user:password@host:5432/database)',
    );
    const ok = await run({ query: 'SELECT current_user AS who', rows: [{ who: 'app' }] });
    expect(ok.ok).toBe(true);
    for (const r of [wrong, badUrl, ok]) {
      expect(JSON.stringify(r)).not.toContain(APP);
      expect(JSON.stringify(r)).not.toContain('Wrong-password');
    }
    // The password was registered with the redactor before anything was sent.
    expect(redactor.text(`x ${APP} y`)).not.toContain(APP);
  });

  it('fails, saying so, when the connection variable is not set', async () => {
    const got = await run({}, {});
    expect(got).toMatchObject({
      ok: false,
      message:
        'cannot read the connection: environment variable APP_DB is not set (export APP_DB=… before running tend)',
    });
  });

  it('reads the URL from a file in the intent directory, and the libpq variables without one', async () => {
    writeFileSync(join(dir, 'db-url'), `${url('app', APP)}\n`, { mode: 0o600 });
    const fromFile = await run({
      connection: { fromFile: 'db-url' },
      query: 'SELECT 1 AS one',
      value: { is: 1 },
    });
    expect(fromFile).toMatchObject({ ok: true });
    const libpq = await run(
      { connection: {}, query: 'SELECT current_user AS who', value: { is: 'app' } },
      {
        PGHOST: '127.0.0.1',
        PGPORT: String(server.port),
        PGUSER: 'app',
        PGPASSWORD: APP,
        PGDATABASE: 'postgres',
      },
    );
    expect(libpq).toMatchObject({ ok: true, evidence: '1 row: {"who":"app"}' });
  });
});
