import { parse } from '@marcbachmann/cel-js';
import type { CheckResult, SqlCheckDecl, SqlConnectionDecl, SqlScalar } from '../core/index.js';
import { setKey } from '../core/index.js';
import type { CheckContext } from './check-context.js';

/** What a `sql` check asks the runner to do. */
export interface SqlQueryRequest {
  readonly connection: SqlConnectionDecl;
  readonly query: string;
  /** The statement timeout; the whole run (connecting included) is bounded by it too. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** A query's result: column names in order and rows as objects. */
export interface SqlRows {
  readonly ok: true;
  readonly columns: readonly string[];
  /** Values as the driver gives them: int8 as bigint, numeric as number, timestamps as Date. */
  readonly rows: readonly Readonly<Record<string, unknown>>[];
}

/** Why a query gave no result. */
export interface SqlFailure {
  readonly ok: false;
  /** Where it failed: reading the connection, connecting, or running the query. */
  readonly phase: 'connection' | 'connect' | 'query';
  /** PostgreSQL's SQLSTATE, when the server answered with an error. */
  readonly sqlState?: string;
  /** The error, without any password. */
  readonly message: string;
  /** The connection as it may be shown (`postgres://app@127.0.0.1:5432/db`), when it was resolved. */
  readonly where?: string;
}

/**
 * Runs one query in a READ ONLY transaction with a statement timeout and rolls it back; never
 * throws. The application layer provides it (it reads the connection's secret and holds the driver).
 */
export type SqlRunner = (request: SqlQueryRequest) => Promise<SqlRows | SqlFailure>;

/** The longest evidence kept in a check result. */
export const MAX_EVIDENCE = 500;
/** The most rows shown in evidence. */
const EVIDENCE_ROWS = 5;

/** A value as text for comparison and display: NULL, ISO times, bigints and bytes made plain. */
export function sqlText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString();
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return `\\x${Buffer.from(v).toString('hex')}`;
  return json(v);
}

/** JSON with bigints as numbers' digits and keys in order, for values and evidence. */
function json(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'bigint') return x.toString();
    if (x instanceof Date) return x.toISOString();
    if (x !== null && typeof x === 'object' && !Array.isArray(x)) {
      return Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return x;
  });
}

/** Two values equal for a check: the same text (a declared `3` matches a returned `3` of any type). */
function same(got: unknown, want: SqlScalar): boolean {
  if (want === null || got === null || got === undefined) {
    return want === null && (got === null || got === undefined);
  }
  return sqlText(got) === sqlText(want);
}

/** The returned rows as shown in a result: the count, then the first rows as JSON, trimmed. */
export function sqlEvidence(rows: readonly Readonly<Record<string, unknown>>[]): string {
  const head = `${rows.length} row${rows.length === 1 ? '' : 's'}`;
  if (rows.length === 0) return head;
  const shown = rows.slice(0, EVIDENCE_ROWS).map((r) => json(r));
  let text = `${head}: ${shown.join(', ')}${rows.length > EVIDENCE_ROWS ? ', …' : ''}`;
  if (text.length > MAX_EVIDENCE) text = `${text.slice(0, MAX_EVIDENCE - 1)}…`;
  return text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Whether the rows meet the check's expectations: undefined when they do, else why not. */
export function judgeSqlRows(check: SqlCheckDecl, result: SqlRows): string | undefined {
  const { rows, columns } = result;
  if (check.rowCount) {
    const { min, max } = check.rowCount;
    if ((min !== undefined && rows.length < min) || (max !== undefined && rows.length > max)) {
      const want =
        min !== undefined && max !== undefined
          ? min === max
            ? `exactly ${min}`
            : `between ${min} and ${max}`
          : min !== undefined
            ? `at least ${min}`
            : `at most ${String(max)}`;
      return `returned ${plural(rows.length, 'row')}, expected ${want}`;
    }
  }
  if (check.value) {
    if (rows.length !== 1 || columns.length !== 1) {
      return `\`value\` needs one row of one column, the query returned ${plural(rows.length, 'row')} of ${plural(columns.length, 'column')}`;
    }
    const got = rows[0]![columns[0]!];
    if (!same(got, check.value.is)) {
      return `${columns[0]!} is ${sqlText(got)}, expected ${sqlText(check.value.is)}`;
    }
  }
  if (check.rows) {
    if (rows.length !== check.rows.length) {
      return `returned ${plural(rows.length, 'row')}, expected ${plural(check.rows.length, 'row')}`;
    }
    for (const [i, want] of check.rows.entries()) {
      const got = rows[i]!;
      const wantCols = Object.keys(want).sort();
      const gotCols = [...columns].sort();
      if (wantCols.join('\0') !== gotCols.join('\0')) {
        return `row ${i + 1} has columns ${gotCols.join(', ')}, expected ${wantCols.join(', ')}`;
      }
      for (const c of wantCols) {
        if (!same(got[c], want[c]!)) {
          return `row ${i + 1}: ${c} is ${sqlText(got[c])}, expected ${sqlText(want[c]!)}`;
        }
      }
    }
  }
  if (check.expr !== undefined) {
    let value: unknown;
    try {
      value = parse(check.expr)({ rows: rows.map(celRow), rowCount: BigInt(rows.length) });
    } catch (e) {
      const m = e instanceof Error ? (e.message.split('\n')[0] ?? e.message) : String(e);
      return `\`${check.expr}\` failed to evaluate: ${m}`;
    }
    if (value !== true) {
      return value === false
        ? `\`${check.expr}\` is false`
        : `\`${check.expr}\` returned ${sqlText(value)}, not a boolean`;
    }
  }
  return undefined;
}

/** A row as CEL sees it: times as ISO text, bytes as hex text, everything else as the driver gave it. */
function celRow(row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    setKey(out, k, v instanceof Date || v instanceof Uint8Array ? sqlText(v) : v);
  }
  return out;
}

/** Why a query failed, in words an SRE acts on. */
function failureMessage(check: SqlCheckDecl, f: SqlFailure): string {
  const at = f.where !== undefined ? ` (${f.where})` : '';
  if (f.phase === 'connection') return `cannot read the connection: ${f.message}`;
  if (f.phase === 'connect') return `cannot connect${at}: ${f.message}`;
  switch (f.sqlState) {
    case '57014':
      return `the query did not finish within ${check.timeoutMs} ms and was cancelled${at}; raise timeoutMs or make the query cheaper`;
    case '25006':
      return `the query tried to change the database, which a sql check never does (it runs READ ONLY)${at}: ${f.message}`;
    case '42501':
      return `permission denied${at}: ${f.message}`;
    default:
      return `the query failed${at}: ${f.message}${f.sqlState ? ` (SQLSTATE ${f.sqlState})` : ''}`;
  }
}

/**
 * Runs a `sql` check: the query, in a READ ONLY transaction bounded by `timeoutMs`, must succeed and
 * its rows meet every expectation declared (`rowCount`, `value`, `rows`, `expr`). Never throws: a
 * failure says why (permission denied, timeout, a write refused, the rows that differ). The rows
 * returned go in `evidence`, trimmed. References in the query are substituted first.
 */
export async function runSqlCheck(check: SqlCheckDecl, ctx: CheckContext): Promise<CheckResult> {
  const result = (ok: boolean, message: string, evidence?: string): CheckResult => ({
    name: check.name,
    kind: 'sql',
    ok,
    message,
    ...(evidence !== undefined ? { evidence } : {}),
    at: ctx.now().toISOString(),
  });
  if (!ctx.sql) return result(false, 'sql checks cannot run here: no SQL runner was given');
  const query = check.query.includes('${') ? ctx.resolve(check.query) : check.query;
  if (query === undefined) return result(false, 'references in the query cannot be resolved yet');
  const answer = await ctx.sql({
    connection: check.connection,
    query,
    timeoutMs: check.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  if (!answer.ok) return result(false, failureMessage(check, answer));
  const evidence = sqlEvidence(answer.rows);
  const problem = judgeSqlRows(check, answer);
  if (problem !== undefined) return result(false, problem, evidence);
  return result(true, `returned ${plural(answer.rows.length, 'row')} as expected`, evidence);
}
