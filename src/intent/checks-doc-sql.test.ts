import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeProvider, zoneDirs } from '../../test/support/zone-checks.js';
import { loadIntent } from './index.js';

// The `sql` check as written in intent: what it reads, its defaults, and every bad input refused
// with its place and a message that says what to write instead.

const zoneWithChecks = zoneDirs('tend-sql-check-');

type Want = { code: string; path: string; at: string; message: string; hint?: string };
const w = (code: string, path: string, at: string, message: string, hint?: string): Want => ({
  code,
  path: `checks[0].sql${path}`,
  at,
  message,
  ...(hint !== undefined ? { hint } : {}),
});

describe('sql check in intent', () => {
  it('reads every field, with the libpq variables and a 5000 ms timeout by default', async () => {
    const dir = await zoneWithChecks(
      '  - sql: { query: "SELECT 1" }',
      '  - name: orders',
      '    sql:',
      '      connection: { fromEnv: APP_DB_URL, sslMode: verify-full }',
      '      query: SELECT count(*) AS n FROM orders',
      '      rowCount: 1',
      '      value: 3',
      '      expr: rows[0].n > 0',
      '      timeoutMs: 800',
      '  - sql:',
      '      connection: { fromFile: ./db-url, user: app, passwordFromFile: app.password }',
      '      query: SELECT name, ok FROM grants',
      '      rows: [{ name: app, ok: true }, { name: "O\'Brien", ok: null }]',
      '      rowCount: { min: 0, max: 9 }',
      '      value: null',
    );
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics).toEqual([]);
    const file = join(dir, 'main.yaml');
    expect(intent!.resources[0]!.checks).toEqual([
      {
        kind: 'sql',
        name: 'sql-0',
        connection: {},
        query: 'SELECT 1',
        timeoutMs: 5000,
        source: { file, line: 6, column: 5 },
      },
      {
        kind: 'sql',
        name: 'orders',
        connection: { fromEnv: 'APP_DB_URL', sslMode: 'verify-full' },
        query: 'SELECT count(*) AS n FROM orders',
        rowCount: { min: 1, max: 1 },
        value: { is: 3 },
        expr: 'rows[0].n > 0',
        timeoutMs: 800,
        source: { file, line: 7, column: 5 },
      },
      {
        kind: 'sql',
        name: 'sql-2',
        connection: { fromFile: './db-url', user: 'app', passwordFromFile: 'app.password' },
        query: 'SELECT name, ok FROM grants',
        rows: [
          { name: 'app', ok: true },
          { name: "O'Brien", ok: null },
        ],
        rowCount: { min: 0, max: 9 },
        value: { is: null },
        timeoutMs: 5000,
        source: { file, line: 15, column: 5 },
      },
    ]);
  });

  const bad: { name: string; reason: string; line: string; want: Want[] }[] = [
    {
      name: 'not a mapping',
      reason: 'a sql check has fields; a bare query is a mistake',
      line: '  - sql: SELECT 1',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].sql',
          at: 'SELECT 1',
          message: 'a sql check must be a mapping with `query`, got string',
          hint: 'e.g. - sql: { connection: { fromEnv: APP_DB_URL }, query: "SELECT count(*) FROM orders", rowCount: 1 }',
        },
      ],
    },
    {
      name: 'no query and an unknown field',
      reason: 'query is required; a misspelt expectation is never silently dropped',
      line: '  - sql: { connection: { fromEnv: DB }, expect: 1 }',
      want: [
        w('field.required', '.query', 'sql:', 'missing required field `checks[0].sql.query`'),
        w(
          'field.unknown',
          '.expect',
          'expect',
          'unknown field `expect` in a sql check; allowed fields: connection, query, rows, rowCount, value, expr, timeoutMs.',
          'remove the field or fix its name',
        ),
      ],
    },
    {
      name: 'a connection string written inline',
      reason: 'a URL holds a password: intent names where it is, never the URL itself',
      line: '  - sql: { connection: "postgres://app:pw@db/app", query: SELECT 1 }',
      want: [
        w(
          'field.type',
          '.connection',
          '"postgres',
          '`connection` must be { fromEnv: VAR } or { fromFile: path } naming where the postgres:// URL is, got string',
          'a connection string holds a password and is never written in intent; leave `connection` out to use the libpq variables (PGHOST, PGUSER, …)',
        ),
      ],
    },
    {
      name: 'a bad connection mapping',
      reason: 'one source only, a real variable name, a known sslMode, no other fields',
      line: '  - sql: { connection: { fromEnv: bad-name, fromFile: x, sslMode: prefer, url: y }, query: SELECT 1 }',
      want: [
        w(
          'field.invalid',
          '.connection',
          '{ fromEnv',
          '`connection` takes fromEnv or fromFile, not both',
          'keep the one that holds the postgres:// URL',
        ),
        w(
          'field.invalid',
          '.connection.fromEnv',
          'bad-name',
          '`fromEnv` must name an environment variable (letters, digits, _), got "bad-name"',
        ),
        w(
          'field.invalid',
          '.connection.sslMode',
          'prefer',
          'unknown sslMode `prefer`; use one of disable, require, verify-ca, verify-full.',
        ),
        w(
          'field.unknown',
          '.connection.url',
          'url',
          'unknown field `url` in a sql check connection; allowed fields: fromEnv, fromFile, user, passwordFromFile, sslMode.',
          'remove the field or fix its name',
        ),
      ],
    },
    {
      name: 'a blank user and password file',
      reason: 'the role and the file are named; a password is never written in intent',
      line: '  - sql: { connection: { user: " ", passwordFromFile: "  " }, query: SELECT 1 }',
      want: [
        w(
          'field.invalid',
          '.connection.user',
          '" "',
          '`user` is blank',
          'name the role the check logs in as, or leave `user` out',
        ),
        w(
          'field.invalid',
          '.connection.passwordFromFile',
          '"  "',
          '`passwordFromFile` is blank',
          'name the file holding the password alone (the one a rotation writes), relative to the intent directory',
        ),
      ],
    },
    {
      name: 'a user that is not text',
      reason: 'a role is named by text',
      line: '  - sql: { connection: { user: [app], passwordFromFile: 7 }, query: SELECT 1 }',
      want: [
        w(
          'field.type',
          '.connection.user',
          '[app]',
          '`checks[0].sql.connection.user` must be a non-empty string, got list',
        ),
        w(
          'field.type',
          '.connection.passwordFromFile',
          '7 }',
          '`checks[0].sql.connection.passwordFromFile` must be a non-empty string, got integer',
        ),
      ],
    },
    {
      name: 'a blank query and a zero timeout',
      reason: 'a query says something; a timeout is at least 1 ms',
      line: '  - sql: { query: "  ", timeoutMs: 0 }',
      want: [
        w('field.invalid', '.query', '"  "', '`query` is blank'),
        w(
          'field.type',
          '.timeoutMs',
          '0 }',
          '`checks[0].sql.timeoutMs` must be an integer >= 1, got integer 0',
        ),
      ],
    },
    {
      name: 'rows that are not rows',
      reason: 'rows are mappings of column to a scalar',
      line: '  - sql: { query: SELECT 1, rows: [7, { a: [1] }] }',
      want: [
        w('field.type', '.rows[0]', '7', 'a row must be a mapping of column to value, got integer'),
        w(
          'field.type',
          '.rows[1].a',
          '[1]',
          'the value of column `a` must be a string, number, boolean or null, got list',
          'compare structured values as text: quote them',
        ),
      ],
    },
    {
      name: 'rows not a list',
      reason: 'rows is the whole expected result, a list',
      line: '  - sql: { query: SELECT 1, rows: { a: 1 } }',
      want: [
        w(
          'field.type',
          '.rows',
          '{ a: 1 }',
          '`rows` must be a list of rows (mappings of column to value), got mapping',
          'e.g. rows: [{ name: app, can_select: true }]',
        ),
      ],
    },
    {
      name: 'a negative row count',
      reason: 'a count is a whole number >= 0',
      line: '  - sql: { query: SELECT 1, rowCount: -1 }',
      want: [
        w(
          'field.type',
          '.rowCount',
          '-1',
          '`rowCount` must be a whole number >= 0 or { min, max }, got integer -1',
          'e.g. rowCount: 1, or rowCount: { min: 1, max: 100 }',
        ),
      ],
    },
    {
      name: 'bounds the wrong way round',
      reason: 'min cannot exceed max',
      line: '  - sql: { query: SELECT 1, rowCount: { min: 3, max: 1 } }',
      want: [
        w('field.invalid', '.rowCount', '{ min: 3', '`rowCount.min` (3) is greater than max (1)'),
      ],
    },
    {
      name: 'bounds that are not counts, or none',
      reason: 'each bound is a whole number; at least one is given',
      line: '  - sql: { query: SELECT 1, rowCount: { min: 1.5 } }',
      want: [
        w(
          'field.type',
          '.rowCount.min',
          '1.5',
          '`rowCount.min` must be a whole number >= 0, got number 1.5',
        ),
      ],
    },
    {
      name: 'empty bounds with an unknown key',
      reason: 'a misspelt bound is reported, and no bound at all is an error',
      line: '  - sql: { query: SELECT 1, rowCount: { least: 1 } }',
      want: [
        w(
          'field.invalid',
          '.rowCount',
          '{ least',
          '`rowCount` needs min, max or both',
          'e.g. rowCount: { min: 1 }',
        ),
        w(
          'field.unknown',
          '.rowCount.least',
          'least',
          'unknown field `least` in `rowCount`; allowed fields: min, max.',
          'remove the field or fix its name',
        ),
      ],
    },
    {
      name: 'a value that is not a scalar',
      reason: 'value compares one cell; several cells are `rows`',
      line: '  - sql: { query: SELECT 1, value: [1, 2] }',
      want: [
        w(
          'field.type',
          '.value',
          '[1, 2]',
          '`value` must be a string, number, boolean or null, got list',
          'for several values use `rows`, for a condition use `expr`',
        ),
      ],
    },
    {
      name: 'an expression that does not parse',
      reason: 'CEL syntax is checked before anything runs',
      line: '  - sql: { query: SELECT 1, expr: "rows.size() >" }',
      want: [
        w(
          'check.cel_syntax',
          '.expr',
          '"rows',
          'CEL expression does not parse: ',
          'variables are `rows` (a list of maps, one per row) and `rowCount`',
        ),
      ],
    },
  ];

  it.each(bad)('refuses $name', async (c) => {
    const dir = await zoneWithChecks(c.line);
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(intent, c.reason).toBeUndefined();
    expect(
      diagnostics.map((d) => ({ code: d.code, path: d.path, column: d.column })),
      c.reason,
    ).toEqual(
      c.want.map((x) => ({ code: x.code, path: x.path, column: c.line.indexOf(x.at) + 1 })),
    );
    c.want.forEach((x, i) => {
      const d = diagnostics[i]!;
      // A CEL parse error goes on with the parser's own words.
      if (x.code === 'check.cel_syntax') expect(d.message.startsWith(x.message)).toBe(true);
      else expect(d.message, c.reason).toBe(x.message);
      if (x.hint !== undefined) expect(d.hint).toBe(x.hint);
      expect(d.line).toBe(6);
    });
  });
});
