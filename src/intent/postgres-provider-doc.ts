// Reads a `type: postgres` Provider document: a PostgreSQL cluster the native provider manages. The
// connection URL is a secret (it may hold a password): only a `{ fromEnv }` / `{ fromFile }`
// reference is accepted, never the URL itself; without one the libpq variables are used.
import { resolve } from 'node:path';
import type { PostgresProviderDecl, SecretRef } from '../core/index.js';
import type { TrustedDirs } from './confine.js';
import { fileKind, locate, trustedDirsHint } from './confine.js';
import type { FieldReader } from './fields.js';
import { checkSecretFile } from './secret-rules.js';
import { sourceOf } from './report.js';
import { didYouMean, listOf } from './suggest.js';

/** The fields of a `type: postgres` Provider document. */
export const POSTGRES_PROVIDER_FIELDS = [
  'kind',
  'name',
  'type',
  'connection',
  'sslMode',
  'sslRootCert',
  'statementTimeoutMs',
  'lockTimeoutMs',
  'connectTimeoutMs',
  'database',
] as const;

/** Defaults of the optional fields (the same as the connection module's). */
export const POSTGRES_PROVIDER_DEFAULTS = {
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 5_000,
  connectTimeoutMs: 10_000,
} as const;

const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What reading the document needs: where files may be read from, and the environment. */
export interface PostgresProviderDocContext {
  readonly dir: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly secretDirs: TrustedDirs;
}

function readConnection(
  r: FieldReader,
  value: Record<string, unknown>,
  ctx: PostgresProviderDocContext,
): SecretRef | undefined | 'invalid' {
  if (typeof value['connection'] === 'string') {
    r.report(
      'secret.inline',
      '`connection` would put a connection string (and its password) in the intent; it is read from the environment or a file',
      ['connection'],
      {
        hint: 'write connection: { fromEnv: DATABASE_URL } or { fromFile: db.url }, or leave it out to use PGHOST, PGUSER, …',
      },
    );
    return 'invalid';
  }
  const conn = r.mapping(value, 'connection', []);
  if (conn === undefined) return value['connection'] == null ? undefined : 'invalid';
  const before = r.diagnostics.length;
  r.unknownFields(conn, ['fromEnv', 'fromFile'], ['connection'], '`connection`');
  const fromEnv = r.string(conn, 'fromEnv', ['connection'], false);
  const fromFile = r.string(conn, 'fromFile', ['connection'], false);
  if (fromEnv !== undefined && fromFile !== undefined) {
    r.report('field.invalid', '`connection` takes either `fromEnv` or `fromFile`, not both', [
      'connection',
    ]);
  } else if (fromEnv === undefined && fromFile === undefined && r.diagnostics.length === before) {
    r.report(
      'field.required',
      '`connection` needs `fromEnv` or `fromFile`: where to read the postgres:// URL',
      ['connection'],
      { target: 'key', hint: 'e.g. connection: { fromEnv: DATABASE_URL }' },
    );
  }
  if (fromEnv !== undefined && !ENV_NAME.test(fromEnv)) {
    r.report(
      'field.invalid',
      `\`connection.fromEnv\` is not an environment variable name: ${fromEnv}`,
      ['connection', 'fromEnv'],
    );
  } else if (fromEnv !== undefined && ctx.env !== undefined && ctx.env[fromEnv] === undefined) {
    r.report(
      'secret.unavailable',
      `environment variable ${fromEnv} is not set`,
      ['connection', 'fromEnv'],
      { severity: 'warning', hint: `export ${fromEnv}=postgres://… before running tend` },
    );
  }
  if (fromFile !== undefined && fromEnv === undefined) {
    checkSecretFile(r, fromFile, ['connection'], ctx);
  }
  if (r.diagnostics.length > before) return 'invalid';
  if (fromEnv !== undefined) return { fromEnv };
  if (fromFile !== undefined) return { fromFile: resolve(ctx.dir, fromFile) };
  return 'invalid';
}

function readRootCert(
  r: FieldReader,
  value: Record<string, unknown>,
  ctx: PostgresProviderDocContext,
): string | undefined {
  const text = r.string(value, 'sslRootCert', [], false);
  if (text === undefined) return undefined;
  const abs = resolve(ctx.dir, text);
  const where = locate(abs, ctx.secretDirs.roots);
  const variable = ctx.secretDirs.variable;
  if (!where.inside) {
    r.report(
      'file.outside',
      `\`sslRootCert\` file ${text} is outside the intent directory`,
      ['sslRootCert'],
      {
        hint: `copy it into the intent directory, or name its directory in ${variable} (${trustedDirsHint(variable)})`,
      },
    );
    return undefined;
  }
  if (!where.exists) {
    r.report(
      'file.not_found',
      `\`sslRootCert\` file ${text} does not exist (looked at ${abs})`,
      ['sslRootCert'],
      { hint: 'the path is relative to the intent directory' },
    );
    return undefined;
  }
  if (!where.stats.isFile()) {
    r.report(
      'file.not_file',
      `\`sslRootCert\` ${text} is ${fileKind(where.stats)}, not a file`,
      ['sslRootCert'],
      { hint: 'name the PEM file of the CA that signed the server certificate' },
    );
    return undefined;
  }
  return abs;
}

/**
 * Reads the fields of a `type: postgres` Provider document (kind, name and type already read by the
 * caller): the connection reference, TLS, timeouts and the working database. Reports every problem
 * at its field; returns the declaration only when there is none.
 */
export function readPostgresProviderFields(
  r: FieldReader,
  value: Record<string, unknown>,
  name: string | undefined,
  ctx: PostgresProviderDocContext,
): PostgresProviderDecl | undefined {
  r.unknownFields(value, POSTGRES_PROVIDER_FIELDS, [], 'a `type: postgres` Provider document');
  const connection = readConnection(r, value, ctx);
  const sslText = r.string(value, 'sslMode', [], false);
  let sslMode: PostgresProviderDecl['sslMode'];
  if (sslText !== undefined) {
    if ((SSL_MODES as readonly string[]).includes(sslText)) {
      sslMode = sslText as PostgresProviderDecl['sslMode'];
    } else {
      r.report(
        'field.invalid',
        `unknown \`sslMode\` \`${sslText}\`; known modes: ${listOf(SSL_MODES)}.${didYouMean(sslText, SSL_MODES)}`,
        ['sslMode'],
        { hint: 'verify-full checks the certificate and the host name; require only encrypts' },
      );
    }
  }
  const sslRootCert = readRootCert(r, value, ctx);
  const ms = (key: keyof typeof POSTGRES_PROVIDER_DEFAULTS) =>
    r.number(value, key, [], { integer: true, min: 1, fallback: POSTGRES_PROVIDER_DEFAULTS[key] });
  const statementTimeoutMs = ms('statementTimeoutMs');
  const lockTimeoutMs = ms('lockTimeoutMs');
  const connectTimeoutMs = ms('connectTimeoutMs');
  const database = r.string(value, 'database', [], false);
  if (r.diagnostics.some((d) => d.severity === 'error') || name === undefined) return undefined;
  if (connection === 'invalid') return undefined;
  return {
    kind: 'Provider',
    name,
    type: 'postgres',
    ...(connection !== undefined && { connection }),
    ...(sslMode !== undefined && { sslMode }),
    ...(sslRootCert !== undefined && { sslRootCert }),
    statementTimeoutMs,
    lockTimeoutMs,
    connectTimeoutMs,
    ...(database !== undefined && { database }),
    source: sourceOf(r.doc),
  };
}
