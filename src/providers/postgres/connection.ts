// How Tend connects to a PostgreSQL cluster: the native provider, the `sql` check and Day-2 actions
// all build their `pg` client configuration here, so that timeouts, TLS and the rule "a connection
// string is a secret" hold in one place.
//
// The connection comes from a `postgres://` URL (in an environment variable or a file) or, when
// neither is named, from the libpq variables (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`,
// `PGDATABASE`, `PGSSLMODE`, `PGSSLROOTCERT`, `PGAPPNAME`). The password — whether inside the URL or
// in PGPASSWORD — is registered with the process's secret registry before anything else happens, and
// `describeConnection` is the only way a connection is shown: without it.
import type { ClientConfig } from 'pg';
import { TendError } from '../../core/index.js';

/** TLS modes, as libpq names them (`allow` and `prefer` are treated as `disable`: no silent downgrade). */
export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** What a declaration says about the connection (all optional: the libpq variables fill the rest). */
export interface PgConnectionOptions {
  /** The connection URL itself, already read from `fromEnv`/`fromFile` by the caller (a secret). */
  readonly url?: string;
  /** The user to log in as; overrides the URL's and PGUSER. */
  readonly user?: string;
  /** The password (a secret); overrides the URL's and PGPASSWORD. */
  readonly password?: string;
  /** TLS mode; overrides `sslmode` in the URL and PGSSLMODE. */
  readonly sslMode?: SslMode;
  /** PEM text of the CA to trust (read by the caller from a file). */
  readonly sslRootCert?: string;
  /** Longest a statement may run (`statement_timeout`): a pass never hangs on one. Default 30 s. */
  readonly statementTimeoutMs?: number;
  /** Longest a statement waits for a lock (`lock_timeout`): a blocked ALTER fails fast. Default 5 s. */
  readonly lockTimeoutMs?: number;
  /** Longest connecting may take. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** `application_name` the server records (default `tend`). */
  readonly applicationName?: string;
}

export const CONNECTION_DEFAULTS = {
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 5_000,
  connectTimeoutMs: 10_000,
  applicationName: 'tend',
} as const;

/** Where secrets are registered so no output can carry them (the process's redactor). */
export interface SecretSink {
  add(secret: string): void;
}

/** The parts of a connection that may be shown. */
export interface ConnectionSummary {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  readonly sslMode: SslMode;
}

/** A resolved connection: the `pg` configuration and what of it may be shown. */
export interface PgConnection {
  readonly config: ClientConfig;
  readonly summary: ConnectionSummary;
}

function bad(message: string, hint: string): TendError {
  return new TendError('connection.invalid', message, { hint });
}

function sslModeOf(text: string, where: string): SslMode {
  if (text === 'allow' || text === 'prefer') return 'disable';
  if ((SSL_MODES as readonly string[]).includes(text)) return text as SslMode;
  throw bad(`unknown sslmode \`${text}\` in ${where}`, `use one of ${SSL_MODES.join(', ')}`);
}

function positiveMs(value: number | undefined, fallback: number, name: string): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v <= 0) {
    throw bad(
      `${name} must be a positive whole number of milliseconds, not ${String(v)}`,
      `e.g. ${name}: ${fallback}`,
    );
  }
  return v;
}

/**
 * Builds the `pg` configuration. `env` is the environment to read the libpq variables from (the
 * process's in production, a literal map in tests). Throws `connection.invalid` for a malformed URL
 * — without repeating it, since it may hold a password.
 */
export function resolveConnection(
  options: PgConnectionOptions,
  env: Readonly<Record<string, string | undefined>>,
  secrets?: SecretSink,
): PgConnection {
  let host = env['PGHOST'] || 'localhost';
  let port = env['PGPORT'] ? Number(env['PGPORT']) : 5432;
  let user = env['PGUSER'] || env['USER'] || 'postgres';
  let password = env['PGPASSWORD'] || undefined;
  let database = env['PGDATABASE'] || '';
  let sslMode: SslMode = env['PGSSLMODE'] ? sslModeOf(env['PGSSLMODE'], 'PGSSLMODE') : 'disable';
  if (options.url !== undefined) {
    let u: URL;
    try {
      u = new URL(options.url.trim());
    } catch {
      throw bad(
        'the connection string is not a valid URL',
        'write it as postgres://user:password@host:5432/database (percent-encode special characters)',
      );
    }
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
      throw bad(
        `the connection string must start with postgres:// or postgresql://, not ${u.protocol}//`,
        'write it as postgres://user:password@host:5432/database',
      );
    }
    // Only the fields the URL names replace the libpq variables (as libpq does).
    if (u.hostname !== '') host = decodeURIComponent(u.hostname.replace(/^\[|\]$/g, ''));
    if (u.port !== '') port = Number(u.port);
    if (u.username !== '') user = decodeURIComponent(u.username);
    if (u.password !== '') password = decodeURIComponent(u.password);
    const path = decodeURIComponent(u.pathname.replace(/^\//, ''));
    if (path !== '') database = path;
    const mode = u.searchParams.get('sslmode');
    if (mode !== null) sslMode = sslModeOf(mode, 'the connection string');
    const unknown = [...u.searchParams.keys()].filter((k) => k !== 'sslmode');
    if (unknown.length > 0) {
      throw bad(
        `unsupported connection string parameter${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
        'only sslmode is read from the URL; timeouts and TLS files are provider options',
      );
    }
  }
  if (options.user !== undefined) user = options.user;
  if (options.password !== undefined) password = options.password;
  if (password !== undefined) secrets?.add(password);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw bad(`port must be 1–65535, not ${String(port)}`, 'check PGPORT or the URL');
  }
  if (database === '') database = user;
  if (options.sslMode !== undefined) sslMode = options.sslMode;
  const rootCert = options.sslRootCert;
  const ssl: ClientConfig['ssl'] =
    sslMode === 'disable'
      ? false
      : {
          // require: encrypted, the certificate not checked (libpq's meaning, unless a CA is given).
          rejectUnauthorized: sslMode !== 'require' || rootCert !== undefined,
          ...(rootCert !== undefined ? { ca: rootCert } : {}),
          // verify-ca checks the chain but not the host name.
          ...(sslMode === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}),
        };
  const statementTimeout = positiveMs(
    options.statementTimeoutMs,
    CONNECTION_DEFAULTS.statementTimeoutMs,
    'statementTimeoutMs',
  );
  const lockTimeout = positiveMs(
    options.lockTimeoutMs,
    CONNECTION_DEFAULTS.lockTimeoutMs,
    'lockTimeoutMs',
  );
  const connectTimeout = positiveMs(
    options.connectTimeoutMs,
    CONNECTION_DEFAULTS.connectTimeoutMs,
    'connectTimeoutMs',
  );
  const config: ClientConfig = {
    host,
    port,
    user,
    database,
    ssl,
    statement_timeout: statementTimeout,
    lock_timeout: lockTimeout,
    connectionTimeoutMillis: connectTimeout,
    application_name:
      options.applicationName ?? env['PGAPPNAME'] ?? CONNECTION_DEFAULTS.applicationName,
    ...(password !== undefined ? { password } : {}),
  };
  return { config, summary: { host, port, user, database, sslMode } };
}

/** A connection as it may be shown: never the password. */
export function describeConnection(summary: ConnectionSummary): string {
  const host = summary.host.includes(':') ? `[${summary.host}]` : summary.host;
  const ssl = summary.sslMode === 'disable' ? '' : `?sslmode=${summary.sslMode}`;
  return `postgres://${encodeURIComponent(summary.user)}@${host}:${summary.port}/${encodeURIComponent(summary.database)}${ssl}`;
}
