import type {
  CheckDecl,
  Diagnostic,
  SqlCheckDecl,
  SqlConnectionDecl,
  SqlScalar,
} from '../core/index.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import {
  CHECK_KINDS,
  DNS_TYPES,
  isDnsType,
  normalizeExpected,
  normalizeName,
  parseCel,
  parseServer,
} from '../checks/index.js';
import type { TrustedDirs } from './confine.js';
import { fileKind, locate, trustedDirsHint } from './confine.js';
import { FieldReader, isRecord, typeName } from './fields.js';
import { readAllowedOrigins } from './origins.js';
import type { ParsedDocument } from './parse-documents.js';
import type { PathSegment } from './positions.js';
import { sourceOf } from './report.js';
import { didYouMean, listOf } from './suggest.js';

/** Defaults of the optional check fields. */
export const CHECK_DEFAULTS = { method: 'GET', expectStatus: [200], timeoutMs: 5000 } as const;

/** Defaults of the optional fields of a `dns` check. */
export const DNS_CHECK_DEFAULTS = { type: 'A', timeoutMs: 2000 } as const;

/** Defaults of the optional fields of a `sql` check. */
export const SQL_CHECK_DEFAULTS = { timeoutMs: 5000 } as const;

/** Defaults of the optional fields of a `tls` check. */
export const TLS_CHECK_DEFAULTS = { port: 443, minDaysLeft: 14, timeoutMs: 5000 } as const;

/** Where files named by checks (a `tls` check's `ca`) are read from. */
export interface CheckFiles {
  /** The intent directory: relative paths start there. */
  readonly dir: string;
  /** Where they may be: the intent directory and TEND_SECRET_DIRS, as for every file intent names. */
  readonly secretDirs: TrustedDirs;
}

const HTTP_FIELDS = [
  'url',
  'method',
  'expectStatus',
  'bodyContains',
  'timeoutMs',
  'allowRedirectsTo',
] as const;
const CEL_FIELDS = ['expr', 'name'] as const;
const DNS_FIELDS = ['server', 'query', 'type', 'expect', 'timeoutMs'] as const;
const SQL_FIELDS = [
  'connection',
  'query',
  'rows',
  'rowCount',
  'value',
  'expr',
  'timeoutMs',
] as const;
const TLS_FIELDS = ['host', 'port', 'servername', 'ca', 'minDaysLeft', 'timeoutMs'] as const;
const HOST_NAME = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_.])?$/;
const SQL_CONNECTION_FIELDS = [
  'fromEnv',
  'fromFile',
  'user',
  'passwordFromFile',
  'sslMode',
] as const;
const SQL_SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const REF = /\$\{[^}]*\}/g;

function validUrl(text: string): boolean {
  // References are filled in when the check runs: judge the URL with placeholders in their place.
  // A URL that starts with a reference (the whole base comes from another resource) cannot be judged.
  if (/^\$\{[^}]*\}/.test(text)) return true;
  const filled = text.replace(REF, 'ref');
  try {
    const u = new URL(filled);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function readHttp(
  r: FieldReader,
  value: unknown,
  at: readonly PathSegment[],
  name: string,
  doc: ParsedDocument,
): CheckDecl | undefined {
  if (!isRecord(value)) {
    r.report(
      'field.type',
      `an http check must be a mapping with \`url\`, got ${typeName(value)}`,
      at,
      {
        hint: 'e.g. - http: { url: http://127.0.0.1:8080/health, expectStatus: 200 }',
      },
    );
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(value, HTTP_FIELDS, at, 'an http check');
  const url = r.string(value, 'url', at, true);
  if (url !== undefined && !validUrl(url)) {
    r.report('field.invalid', `\`url\` must be an http(s) URL, got ${url}`, [...at, 'url']);
  }
  let method: string = CHECK_DEFAULTS.method;
  const m = r.string(value, 'method', at, false);
  if (m !== undefined) {
    method = m.toUpperCase();
    if (!METHODS.includes(method)) {
      r.report('field.invalid', `unknown HTTP method \`${m}\`; use one of ${listOf(METHODS)}`, [
        ...at,
        'method',
      ]);
    }
  }
  let expectStatus: number[] = [...CHECK_DEFAULTS.expectStatus];
  const es = value.expectStatus;
  if (es !== undefined && es !== null) {
    const list = Array.isArray(es) ? (es as unknown[]) : [es];
    const valid = (s: unknown) =>
      typeof s === 'number' && Number.isInteger(s) && s >= 100 && s <= 599;
    if (list.length === 0 || !list.every(valid)) {
      r.report(
        'field.invalid',
        '`expectStatus` must be an HTTP status (100-599) or a list of them',
        [...at, 'expectStatus'],
      );
    } else {
      expectStatus = list as number[];
    }
  }
  const bodyContains = r.string(value, 'bodyContains', at, false);
  const timeoutMs = r.number(value, 'timeoutMs', at, {
    integer: true,
    min: 1,
    fallback: CHECK_DEFAULTS.timeoutMs,
  });
  const allowRedirectsTo = readAllowedOrigins(r, value, at);
  if (r.diagnostics.length > before || url === undefined) return undefined;
  return {
    kind: 'http',
    name,
    url,
    method,
    expectStatus,
    ...(bodyContains !== undefined && { bodyContains }),
    timeoutMs,
    ...(allowRedirectsTo !== undefined && { allowRedirectsTo }),
    source: sourceOf(doc, at.slice(0, -1)),
  };
}

function readDns(
  r: FieldReader,
  value: unknown,
  at: readonly PathSegment[],
  name: string,
  doc: ParsedDocument,
): CheckDecl | undefined {
  if (!isRecord(value)) {
    r.report(
      'field.type',
      `a dns check must be a mapping with \`server\`, \`query\` and \`expect\`, got ${typeName(value)}`,
      at,
      {
        hint: 'e.g. - dns: { server: 127.0.0.1:53, query: www.example.org, type: A, expect: [192.0.2.10] }',
      },
    );
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(value, DNS_FIELDS, at, 'a dns check');
  // Values holding references are judged when the check runs, once they are filled in.
  const literal = (text: string) => !text.includes('${');
  const server = r.string(value, 'server', at, true);
  if (server !== undefined && literal(server) && parseServer(server) === undefined) {
    r.report(
      'field.invalid',
      `\`server\` must be host:port (port 53 when left out), got ${server}`,
      [...at, 'server'],
      { hint: 'e.g. server: 127.0.0.1:5300, or [2001:db8::53]:53 for IPv6' },
    );
  }
  const query = r.string(value, 'query', at, true);
  if (query !== undefined && literal(query) && normalizeName(query) === undefined) {
    r.report('field.invalid', `\`query\` must be a DNS name, got ${JSON.stringify(query)}`, [
      ...at,
      'query',
    ]);
  }
  let type: string = DNS_CHECK_DEFAULTS.type;
  const t = r.string(value, 'type', at, false);
  if (t !== undefined) {
    type = t.toUpperCase();
    if (!isDnsType(type)) {
      r.report(
        'field.invalid',
        `unknown record type \`${t}\`; use one of ${listOf(DNS_TYPES)}.${didYouMean(type, DNS_TYPES)}`,
        [...at, 'type'],
      );
    }
  }
  const expect: string[] = [];
  const ev = value.expect;
  if (ev === undefined || ev === null) {
    r.missing([...at, 'expect'], at);
  } else {
    const single = !Array.isArray(ev);
    const entries = single ? [ev] : (ev as unknown[]);
    entries.forEach((e, i) => {
      const path = single ? [...at, 'expect'] : [...at, 'expect', i];
      if (typeof e !== 'string' || e.trim() === '') {
        r.report(
          'field.type',
          `an expected answer must be a non-empty string, got ${typeName(e)}${typeof e === 'number' ? ` ${e}` : ''}`,
          path,
          { hint: 'quote it: expect: ["10 mail.example.org."]' },
        );
        return;
      }
      if (isDnsType(type) && literal(e)) {
        const n = normalizeExpected(type, e);
        if ('error' in n) {
          r.report('field.invalid', `expected ${type} answer ${n.error}`, path);
          return;
        }
      }
      expect.push(e);
    });
  }
  const timeoutMs = r.number(value, 'timeoutMs', at, {
    integer: true,
    min: 1,
    fallback: DNS_CHECK_DEFAULTS.timeoutMs,
  });
  if (r.diagnostics.length > before || server === undefined || query === undefined) {
    return undefined;
  }
  return {
    kind: 'dns',
    name,
    server,
    query,
    type,
    expect,
    timeoutMs,
    source: sourceOf(doc, at.slice(0, -1)),
  };
}

/** Reports a `host`/`servername` that is neither a DNS name nor an IP address (references aside). */
function checkHostName(
  r: FieldReader,
  text: string,
  key: string,
  at: readonly PathSegment[],
): void {
  if (text.includes('${') || isIP(text) !== 0 || HOST_NAME.test(text)) return;
  r.report(
    'field.invalid',
    `\`${key}\` must be a host name or an IP address, got ${JSON.stringify(text)}`,
    [...at, key],
    { hint: 'no scheme, path or port: e.g. host: db.example.org, port: 5432' },
  );
}

/** Reads `ca`: a file in the intent directory (or TEND_SECRET_DIRS); its absolute path. */
function readCa(
  r: FieldReader,
  value: Record<string, unknown>,
  at: readonly PathSegment[],
  files: CheckFiles | undefined,
): string | undefined {
  const text = r.string(value, 'ca', at, false);
  if (text === undefined) return undefined;
  const path = [...at, 'ca'];
  if (files === undefined) {
    r.report('field.invalid', '`ca` cannot be read here: no intent directory', path);
    return undefined;
  }
  const abs = resolve(files.dir, text);
  const where = locate(abs, files.secretDirs.roots);
  const variable = files.secretDirs.variable;
  if (!where.inside) {
    r.report('file.outside', `\`ca\` file ${text} is outside the intent directory`, path, {
      hint: `copy it into the intent directory, or name its directory in ${variable} (${trustedDirsHint(variable)})`,
    });
    return undefined;
  }
  if (!where.exists) {
    r.report('file.not_found', `\`ca\` file ${text} does not exist (looked at ${abs})`, path, {
      hint: 'the path is relative to the intent directory',
    });
    return undefined;
  }
  if (!where.stats.isFile()) {
    r.report('file.not_file', `\`ca\` ${text} is ${fileKind(where.stats)}, not a file`, path, {
      hint: 'name the PEM file of the CA that signed the server certificate',
    });
    return undefined;
  }
  return abs;
}

function readTls(
  r: FieldReader,
  value: unknown,
  at: readonly PathSegment[],
  name: string,
  doc: ParsedDocument,
  files: CheckFiles | undefined,
): CheckDecl | undefined {
  if (!isRecord(value)) {
    r.report(
      'field.type',
      `a tls check must be a mapping with \`host\`, got ${typeName(value)}`,
      at,
      { hint: 'e.g. - tls: { host: db.example.org, port: 5432, minDaysLeft: 30 }' },
    );
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(value, TLS_FIELDS, at, 'a tls check');
  const host = r.string(value, 'host', at, true);
  if (host !== undefined) checkHostName(r, host, 'host', at);
  let port: number = TLS_CHECK_DEFAULTS.port;
  const p = value.port;
  if (p !== undefined && p !== null) {
    if (typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 65535) port = p;
    else {
      r.report(
        'field.invalid',
        `\`port\` must be a port number (1-65535), got ${typeName(p)} ${JSON.stringify(p)}`,
        [...at, 'port'],
      );
    }
  }
  const servername = r.string(value, 'servername', at, false);
  if (servername !== undefined) checkHostName(r, servername, 'servername', at);
  const ca = readCa(r, value, at, files);
  const minDaysLeft = r.number(value, 'minDaysLeft', at, {
    integer: true,
    min: 0,
    fallback: TLS_CHECK_DEFAULTS.minDaysLeft,
  });
  const timeoutMs = r.number(value, 'timeoutMs', at, {
    integer: true,
    min: 1,
    fallback: TLS_CHECK_DEFAULTS.timeoutMs,
  });
  if (r.diagnostics.length > before || host === undefined) return undefined;
  return {
    kind: 'tls',
    name,
    host,
    port,
    ...(servername !== undefined && { servername }),
    ...(ca !== undefined && { ca }),
    minDaysLeft,
    timeoutMs,
    source: sourceOf(doc, at.slice(0, -1)),
  };
}

function isScalar(v: unknown): v is SqlScalar {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function readSqlConnection(
  r: FieldReader,
  value: Record<string, unknown>,
  at: readonly PathSegment[],
): SqlConnectionDecl {
  const c = value.connection;
  const path = [...at, 'connection'];
  if (c === undefined || c === null) return {};
  if (!isRecord(c)) {
    r.report(
      'field.type',
      `\`connection\` must be { fromEnv: VAR } or { fromFile: path } naming where the postgres:// URL is, got ${typeName(c)}`,
      path,
      {
        hint: 'a connection string holds a password and is never written in intent; leave `connection` out to use the libpq variables (PGHOST, PGUSER, …)',
      },
    );
    return {};
  }
  r.unknownFields(c, SQL_CONNECTION_FIELDS, path, 'a sql check connection');
  const fromEnv = r.string(c, 'fromEnv', path, false);
  const fromFile = r.string(c, 'fromFile', path, false);
  if (fromEnv !== undefined && fromFile !== undefined) {
    r.report('field.invalid', '`connection` takes fromEnv or fromFile, not both', path, {
      hint: 'keep the one that holds the postgres:// URL',
    });
  }
  if (fromEnv !== undefined && !ENV_NAME.test(fromEnv)) {
    r.report(
      'field.invalid',
      `\`fromEnv\` must name an environment variable (letters, digits, _), got ${JSON.stringify(fromEnv)}`,
      [...path, 'fromEnv'],
    );
  }
  const user = r.string(c, 'user', path, false);
  if (user?.trim() === '') {
    r.report('field.invalid', '`user` is blank', [...path, 'user'], {
      hint: 'name the role the check logs in as, or leave `user` out',
    });
  }
  const passwordFromFile = r.string(c, 'passwordFromFile', path, false);
  if (passwordFromFile?.trim() === '') {
    r.report('field.invalid', '`passwordFromFile` is blank', [...path, 'passwordFromFile'], {
      hint: 'name the file holding the password alone (the one a rotation writes), relative to the intent directory',
    });
  }
  const sslMode = r.string(c, 'sslMode', path, false);
  if (sslMode !== undefined && !(SQL_SSL_MODES as readonly string[]).includes(sslMode)) {
    r.report(
      'field.invalid',
      `unknown sslMode \`${sslMode}\`; use one of ${listOf(SQL_SSL_MODES)}.${didYouMean(sslMode, SQL_SSL_MODES)}`,
      [...path, 'sslMode'],
    );
  }
  return {
    ...(fromEnv !== undefined && { fromEnv }),
    ...(fromFile !== undefined && { fromFile }),
    ...(user !== undefined && user.trim() !== '' && { user }),
    ...(passwordFromFile !== undefined && passwordFromFile.trim() !== '' && { passwordFromFile }),
    ...(sslMode !== undefined && { sslMode: sslMode as SqlConnectionDecl['sslMode'] }),
  };
}

function readRowCount(
  r: FieldReader,
  v: unknown,
  path: readonly PathSegment[],
): SqlCheckDecl['rowCount'] {
  const count = (x: unknown) => typeof x === 'number' && Number.isInteger(x) && x >= 0;
  if (count(v)) return { min: v as number, max: v as number };
  if (!isRecord(v)) {
    r.report(
      'field.type',
      `\`rowCount\` must be a whole number >= 0 or { min, max }, got ${typeName(v)} ${JSON.stringify(v)}`,
      path,
      { hint: 'e.g. rowCount: 1, or rowCount: { min: 1, max: 100 }' },
    );
    return undefined;
  }
  r.unknownFields(v, ['min', 'max'], path, '`rowCount`');
  const bad = (k: 'min' | 'max') => {
    if (v[k] !== undefined && !count(v[k])) {
      r.report(
        'field.type',
        `\`rowCount.${k}\` must be a whole number >= 0, got ${typeName(v[k])} ${JSON.stringify(v[k])}`,
        [...path, k],
      );
      return true;
    }
    return false;
  };
  if (bad('min') || bad('max')) return undefined;
  const min = v.min as number | undefined;
  const max = v.max as number | undefined;
  if (min === undefined && max === undefined) {
    r.report('field.invalid', '`rowCount` needs min, max or both', path, {
      hint: 'e.g. rowCount: { min: 1 }',
    });
    return undefined;
  }
  if (min !== undefined && max !== undefined && min > max) {
    r.report('field.invalid', `\`rowCount.min\` (${min}) is greater than max (${max})`, path);
    return undefined;
  }
  return { ...(min !== undefined && { min }), ...(max !== undefined && { max }) };
}

function readSql(
  r: FieldReader,
  value: unknown,
  at: readonly PathSegment[],
  name: string,
  doc: ParsedDocument,
): CheckDecl | undefined {
  if (!isRecord(value)) {
    r.report(
      'field.type',
      `a sql check must be a mapping with \`query\`, got ${typeName(value)}`,
      at,
      {
        hint: 'e.g. - sql: { connection: { fromEnv: APP_DB_URL }, query: "SELECT count(*) FROM orders", rowCount: 1 }',
      },
    );
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(value, SQL_FIELDS, at, 'a sql check');
  const connection = readSqlConnection(r, value, at);
  const query = r.string(value, 'query', at, true);
  if (query !== undefined && query.trim() === '') {
    r.report('field.invalid', '`query` is blank', [...at, 'query']);
  }
  let rows: Record<string, SqlScalar>[] | undefined;
  if (value.rows !== undefined) {
    if (!Array.isArray(value.rows)) {
      r.report(
        'field.type',
        `\`rows\` must be a list of rows (mappings of column to value), got ${typeName(value.rows)}`,
        [...at, 'rows'],
        { hint: 'e.g. rows: [{ name: app, can_select: true }]' },
      );
    } else {
      rows = [];
      for (const [i, row] of (value.rows as unknown[]).entries()) {
        if (!isRecord(row)) {
          r.report(
            'field.type',
            `a row must be a mapping of column to value, got ${typeName(row)}`,
            [...at, 'rows', i],
          );
          continue;
        }
        for (const [col, v] of Object.entries(row)) {
          if (!isScalar(v)) {
            r.report(
              'field.type',
              `the value of column \`${col}\` must be a string, number, boolean or null, got ${typeName(v)}`,
              [...at, 'rows', i, col],
              { hint: 'compare structured values as text: quote them' },
            );
          }
        }
        rows.push(row as Record<string, SqlScalar>);
      }
    }
  }
  const rowCount =
    value.rowCount === undefined ? undefined : readRowCount(r, value.rowCount, [...at, 'rowCount']);
  let expected: { is: SqlScalar } | undefined;
  if ('value' in value) {
    if (isScalar(value.value)) expected = { is: value.value };
    else {
      r.report(
        'field.type',
        `\`value\` must be a string, number, boolean or null, got ${typeName(value.value)}`,
        [...at, 'value'],
        { hint: 'for several values use `rows`, for a condition use `expr`' },
      );
    }
  }
  const expr = r.string(value, 'expr', at, false);
  if (expr !== undefined) {
    const problem = parseCel(expr.replace(REF, 'ref'));
    if (problem !== undefined) {
      r.report('check.cel_syntax', `CEL expression does not parse: ${problem}`, [...at, 'expr'], {
        hint: 'variables are `rows` (a list of maps, one per row) and `rowCount`',
      });
    }
  }
  const timeoutMs = r.number(value, 'timeoutMs', at, {
    integer: true,
    min: 1,
    fallback: SQL_CHECK_DEFAULTS.timeoutMs,
  });
  if (r.diagnostics.length > before || query === undefined) return undefined;
  return {
    kind: 'sql',
    name,
    connection,
    query,
    ...(rows !== undefined && { rows }),
    ...(rowCount !== undefined && { rowCount }),
    ...(expected !== undefined && { value: expected }),
    ...(expr !== undefined && { expr }),
    timeoutMs,
    source: sourceOf(doc, at.slice(0, -1)),
  };
}

function readCel(
  r: FieldReader,
  value: unknown,
  at: readonly PathSegment[],
  entryName: string | undefined,
  index: number,
  doc: ParsedDocument,
): CheckDecl | undefined {
  let expr: string | undefined;
  let name = entryName;
  let exprAt = at;
  const before = r.diagnostics.length;
  if (typeof value === 'string' && value.trim() !== '') {
    expr = value;
  } else if (isRecord(value)) {
    r.unknownFields(value, CEL_FIELDS, at, 'a cel check');
    expr = r.string(value, 'expr', at, true);
    exprAt = [...at, 'expr'];
    name ??= r.string(value, 'name', at, false);
  } else {
    r.report(
      'field.type',
      `a cel check is an expression string (or { expr, name }), got ${typeName(value)}`,
      at,
      { hint: 'e.g. - cel: "observed.status == \'running\'"' },
    );
    return undefined;
  }
  if (expr !== undefined) {
    // References become text before evaluation; a placeholder identifier keeps the syntax judgeable.
    const problem = parseCel(expr.replace(REF, 'ref'));
    if (problem !== undefined) {
      r.report('check.cel_syntax', `CEL expression does not parse: ${problem}`, exprAt, {
        hint: 'CEL syntax: https://github.com/google/cel-spec; variables are `observed` and `desired`',
      });
    }
  }
  if (r.diagnostics.length > before || expr === undefined) return undefined;
  return {
    kind: 'cel',
    name: name ?? `cel-${index}`,
    expr,
    source: sourceOf(doc, at.slice(0, -1)),
  };
}

/**
 * Reads a resource's `checks` list. Each entry has exactly one kind key (`http`, `cel`, `dns`, `sql` or `tls`) and an
 * optional `name` (default `<kind>-<index>`, unique within the resource). Reports every problem;
 * returns the declarations, complete only when there are no errors. `files` says where a `tls`
 * check's `ca` may be read from.
 */
export function readChecks(
  doc: ParsedDocument,
  value: unknown,
  address?: string,
  files?: CheckFiles,
): { checks: CheckDecl[]; diagnostics: Diagnostic[] } {
  const r = new FieldReader(doc, address);
  const checks: CheckDecl[] = [];
  if (value === undefined || value === null) return { checks, diagnostics: r.diagnostics };
  if (!Array.isArray(value)) {
    r.report('field.type', `\`checks\` must be a list, got ${typeName(value)}`, ['checks']);
    return { checks, diagnostics: r.diagnostics };
  }
  const names = new Map<string, number>();
  value.forEach((entry: unknown, index) => {
    const at: PathSegment[] = ['checks', index];
    if (!isRecord(entry)) {
      r.report(
        'field.type',
        `a check must be a mapping such as { http: {...} } or { cel: "..." }, got ${typeName(entry)}`,
        at,
      );
      return;
    }
    const kinds = Object.keys(entry).filter((k) => k !== 'name');
    for (const k of kinds) {
      if ((CHECK_KINDS as readonly string[]).includes(k)) continue;
      r.report(
        'check.unknown_kind',
        `unknown check kind \`${k}\`; known kinds: ${listOf(CHECK_KINDS)}.${didYouMean(k, CHECK_KINDS)}`,
        [...at, k],
        { target: 'key' },
      );
    }
    const known = kinds.filter((k) => (CHECK_KINDS as readonly string[]).includes(k));
    if (known.length > 1) {
      r.report(
        'check.invalid',
        `a check has exactly one kind; this one has ${known.join(' and ')}`,
        at,
        {
          hint: 'split it into one list entry per check',
        },
      );
      return;
    }
    if (kinds.length === 0) {
      r.report('check.invalid', `a check needs one kind: ${listOf(CHECK_KINDS)}`, at);
      return;
    }
    const kind = known[0];
    if (kind === undefined) return;
    const entryName = r.string(entry, 'name', at, false);
    const decl =
      kind === 'http'
        ? readHttp(r, entry.http, [...at, 'http'], entryName ?? `http-${index}`, doc)
        : kind === 'dns'
          ? readDns(r, entry.dns, [...at, 'dns'], entryName ?? `dns-${index}`, doc)
          : kind === 'sql'
            ? readSql(r, entry.sql, [...at, 'sql'], entryName ?? `sql-${index}`, doc)
            : kind === 'tls'
              ? readTls(r, entry.tls, [...at, 'tls'], entryName ?? `tls-${index}`, doc, files)
              : readCel(r, entry.cel, [...at, 'cel'], entryName, index, doc);
    if (!decl) return;
    const first = names.get(decl.name);
    if (first !== undefined) {
      r.report(
        'check.duplicate_name',
        `check name \`${decl.name}\` is already used by checks[${first}]; names are unique within a resource`,
        entryName === undefined ? at : [...at, 'name'],
      );
      return;
    }
    names.set(decl.name, index);
    checks.push(decl);
  });
  return { checks, diagnostics: r.diagnostics };
}
