import { TendError } from '../../core/index.js';

/** The connection a `postgres://` store location names, with the libpq variables filling gaps. */
export interface PostgresLocation {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** A secret: never shown, never stored. */
  readonly password?: string;
  readonly ssl: 'disable' | 'require' | 'verify-full';
  /**
   * The `application_name` the server shows in `pg_stat_activity` (`?application_name=` or
   * PGAPPNAME; default `tend store`): a worker names its connections `tend worker <id>`.
   */
  readonly applicationName: string;
  /** How the location may be shown: `host:port/database`, no user-info, no password. */
  readonly shown: string;
}

function invalid(message: string): TendError {
  return new TendError('store.invalid-location', message, {
    phase: 'store',
    hint: 'write it as postgres://user:password@host:5432/database (percent-encode special characters); parts left out come from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE',
  });
}

function sslOf(text: string, where: string): PostgresLocation['ssl'] {
  // libpq's allow/prefer would fall back to plain text silently: treated as disable, said plainly.
  if (text === 'disable' || text === 'allow' || text === 'prefer') return 'disable';
  if (text === 'require') return 'require';
  if (text === 'verify-ca' || text === 'verify-full') return 'verify-full';
  throw invalid(`unknown sslmode in ${where}; use disable, require, verify-ca or verify-full`);
}

/**
 * Reads a `postgres://` or `postgresql://` store location. Parts the URL leaves out come from the
 * libpq variables in `env` (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE, PGAPPNAME), then libpq's
 * defaults (localhost, 5432, the user's name as user and database). `?host=/run/postgresql` names a
 * socket directory; `?application_name=` names the connections. Errors never repeat the location: it may hold a password.
 */
export function parsePostgresLocation(
  location: string,
  env: Readonly<Record<string, string | undefined>>,
): PostgresLocation {
  let u: URL;
  try {
    u = new URL(location.trim());
  } catch {
    throw invalid('the PostgreSQL store location is not a valid URL');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw invalid('a PostgreSQL store location starts with postgres:// or postgresql://');
  }
  const decode = (text: string, what: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw invalid(
        `the ${what} in the PostgreSQL store location is not percent-encoded correctly`,
      );
    }
  };
  let host = env['PGHOST'] || 'localhost';
  let portText = env['PGPORT'] || '5432';
  let user = env['PGUSER'] || env['USER'] || 'postgres';
  let password = env['PGPASSWORD'] || undefined;
  let database = env['PGDATABASE'] || '';
  let ssl = env['PGSSLMODE'] ? sslOf(env['PGSSLMODE'], 'PGSSLMODE') : 'disable';
  let applicationName = env['PGAPPNAME'] || 'tend store';
  if (u.hostname !== '') host = decode(u.hostname.replace(/^\[|\]$/g, ''), 'host');
  if (u.port !== '') portText = u.port;
  if (u.username !== '') user = decode(u.username, 'user');
  if (u.password !== '') password = decode(u.password, 'password');
  const path = decode(u.pathname.replace(/^\//, ''), 'database');
  if (path !== '') database = path;
  for (const [name, value] of u.searchParams) {
    if (name === 'sslmode') ssl = sslOf(value, 'the store location');
    else if (name === 'host') host = value;
    else if (name === 'application_name') applicationName = value;
    else {
      throw invalid(
        `the PostgreSQL store location has the parameter ${JSON.stringify(name)}, which Tend does not read (only sslmode, host and application_name)`,
      );
    }
  }
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw invalid('the port of the PostgreSQL store location must be 1–65535');
  }
  if (database === '') database = user;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    user,
    database,
    ...(password !== undefined ? { password } : {}),
    ssl,
    applicationName,
    shown: `${shownHost}:${port}/${database}`,
  };
}

/**
 * `location` with `?application_name=<name>` set (a PostgreSQL location only; any other is returned
 * as it is): how a worker names its connections, so that an operator — or a test cutting one
 * worker's connections — finds them in `pg_stat_activity`.
 */
export function withApplicationName(location: string, name: string): string {
  let u: URL;
  try {
    u = new URL(location.trim());
  } catch {
    return location;
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') return location;
  u.searchParams.set('application_name', name);
  return u.toString();
}
