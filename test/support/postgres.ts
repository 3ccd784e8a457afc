// A real PostgreSQL cluster for tests: initdb/pg_ctl in a temporary directory, listening on
// 127.0.0.1 only (and a socket in that directory), trust authentication for the `postgres`
// superuser; run as `postgres` when the tests run as root, since PostgreSQL refuses root. Used by the
// Unleash suite (Unleash keeps its data in PostgreSQL) and by the native PostgreSQL provider's tests.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { freePort } from './pdns.js';
import { findIn } from './process.js';
import pg from 'pg';

/** A running cluster as tests see it. */
export interface PostgresHandle {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** The superuser (trust authentication on 127.0.0.1: no password). */
  readonly user: 'postgres';
  /** The temporary directory holding the cluster (`data/`), its log and its socket. */
  readonly dir: string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>` (default database `postgres`). */
  url(database?: string): string;
  /** The libpq variables for the superuser (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`). */
  env(database?: string): Record<string, string>;
  /** Creates a database owned by the superuser. */
  createDatabase(name: string): Promise<void>;
  /** Everything PostgreSQL's programs printed so far (for failure messages). */
  log(): string;
  /**
   * Restarts the server as `pg_ctl restart -m fast` does (same data directory, port and settings):
   * every connection is cut; resolves once it accepts connections again.
   */
  restart(): Promise<void>;
  /**
   * Stops the server (fast shutdown) but keeps its data directory: every connection is cut and new
   * ones are refused until `startServer()`.
   */
  stopServer(): Promise<void>;
  /** Starts a server stopped by `stopServer()` again (same data, port and settings). */
  startServer(): Promise<void>;
  /** Stops the server (fast shutdown) and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
}

/** The directories PostgreSQL's programs may be in: PATH, then Debian's versioned bin folders. */
function postgresDirs(): string[] {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort().reverse();
    for (const v of versions) dirs.push(join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    // not a Debian layout
  }
  return dirs;
}

const DIRS = postgresDirs();
const INITDB = findIn(DIRS, 'initdb');
// pg_ctl and createdb of the same installation as initdb.
const BIN = INITDB === undefined ? undefined : resolve(INITDB, '..');
const PG_CTL = BIN === undefined ? undefined : findIn([BIN, ...DIRS], 'pg_ctl');
const CREATEDB = BIN === undefined ? undefined : findIn([BIN, ...DIRS], 'createdb');
const AS_ROOT = process.getuid?.() === 0;
const RUNUSER = AS_ROOT ? findIn([...DIRS, '/usr/sbin', '/sbin'], 'runuser') : undefined;

/** Why PostgreSQL cannot be started here, or undefined when it can. */
export function postgresMissing(): string | undefined {
  const missing: string[] = [];
  if (!INITDB || !PG_CTL || !CREATEDB) {
    missing.push(
      'PostgreSQL (initdb, pg_ctl, createdb on PATH or in /usr/lib/postgresql/*/bin): install the Debian package postgresql',
    );
  }
  if (AS_ROOT && !RUNUSER) missing.push('runuser (PostgreSQL must run as postgres, not root)');
  return missing.length === 0 ? undefined : missing.join('; ');
}

/**
 * Whether PostgreSQL suites can run here, and why not. In CI (`CI=true`) a missing server is never a
 * reason to skip: `skip` is then false and `startPostgres` throws, so the suite fails.
 */
export const POSTGRES = (() => {
  const missing = postgresMissing();
  const reason = missing === undefined ? '' : `not found: ${missing}`;
  const ci = process.env['CI'] === 'true';
  return {
    available: missing === undefined,
    skip: missing !== undefined && !ci,
    reason,
    note: missing !== undefined && !ci ? ` (skipped: ${reason})` : '',
  } as const;
})();

interface Ran {
  readonly code: number | null;
  readonly output: string;
}

/** Runs a PostgreSQL program, as `postgres` under root. */
function runPg(program: string, args: string[], timeoutMs = 60_000): Promise<Ran> {
  const [command, argv] = AS_ROOT
    ? [RUNUSER!, ['-u', 'postgres', '--', program, ...args]]
    : [program, args];
  return new Promise((resolvePromise, reject) => {
    // A directory everyone may enter: postgres cannot work in root's current directory.
    const child = spawn(command, argv, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
}

async function mustRun(program: string, args: string[], what: string): Promise<string> {
  const r = await runPg(program, args);
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.output}`);
  return r.output;
}

export interface StartPostgresOptions {
  /** Extra `-c name=value` server settings. */
  readonly settings?: Readonly<Record<string, string>>;
  /**
   * Authentication for TCP connections (`trust` by default). With `scram-sha-256` every login over
   * 127.0.0.1 needs a password — the superuser's is `superPassword` — while the socket stays trust.
   */
  readonly auth?: 'trust' | 'scram-sha-256';
  readonly superPassword?: string;
}

/**
 * Creates a cluster in a new temporary directory and starts it on a free port; resolves once it
 * accepts connections. Throws when PostgreSQL is missing (suites use `POSTGRES.skip` to skip outside
 * CI), or with the programs' output when it does not come up; whatever was started is stopped.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresHandle> {
  const missing = postgresMissing();
  if (missing !== undefined) throw new Error(`cannot start PostgreSQL: not found: ${missing}`);
  const dir = mkdtempSync(join(tmpdir(), 'tend-pg-'));
  const data = join(dir, 'data');
  let output = '';
  let started = false;
  let stopping: Promise<void> | undefined;
  const stopAll = async (): Promise<void> => {
    if (started) {
      const r = await runPg(PG_CTL!, ['-D', data, '-m', 'fast', '-w', 'stop']);
      if (r.code !== 0) output += `\npg_ctl stop: ${r.output}`;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (AS_ROOT) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    }
    const auth = options.auth ?? 'trust';
    const initArgs = ['-D', data, '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'];
    if (auth === 'trust') initArgs.push('--auth=trust');
    else {
      if (options.superPassword === undefined) throw new Error('scram-sha-256 needs superPassword');
      // The password goes through a file only postgres reads, never the command line.
      const pwfile = join(dir, 'pwfile');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(pwfile, `${options.superPassword}\n`, { mode: 0o600 });
      if (AS_ROOT) {
        const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
        const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
        chownSync(pwfile, uid, gid);
      }
      initArgs.push('--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
    }
    output += await mustRun(INITDB!, initArgs, 'initdb');
    const port = await freePort();
    const settings = Object.entries({ fsync: 'off', ...options.settings })
      .map(([k, v]) => ` -c ${k}=${v}`)
      .join('');
    const startArgs = [
      '-D',
      data,
      '-l',
      join(dir, 'postgres.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${settings}`,
      '-w',
      'start',
    ];
    output += await mustRun(PG_CTL!, startArgs, 'pg_ctl start');
    started = true;
    const handle: PostgresHandle = {
      host: '127.0.0.1',
      port,
      user: 'postgres',
      dir,
      url: (database = 'postgres') =>
        `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      env: (database = 'postgres') => ({
        PGHOST: '127.0.0.1',
        PGPORT: String(port),
        PGUSER: 'postgres',
        PGDATABASE: database,
      }),
      createDatabase: async (name) => {
        // Over the socket: trust authentication there whatever `auth` says.
        output += await mustRun(
          CREATEDB!,
          ['-h', dir, '-p', String(port), '-U', 'postgres', name],
          'createdb',
        );
      },
      log: () => output,
      restart: async () => {
        // pg_ctl restart reuses the options the server was started with (postmaster.opts); the log
        // file is named again so that the server never writes to pg_ctl's pipe.
        output += await mustRun(
          PG_CTL!,
          ['-D', data, '-l', join(dir, 'postgres.log'), '-m', 'fast', '-w', 'restart'],
          'pg_ctl restart',
        );
      },
      stopServer: async () => {
        output += await mustRun(PG_CTL!, ['-D', data, '-m', 'fast', '-w', 'stop'], 'pg_ctl stop');
      },
      startServer: async () => {
        output += await mustRun(PG_CTL!, startArgs, 'pg_ctl start');
      },
      stop: () => (stopping ??= stopAll()),
    };
    return handle;
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e instanceof Error ? new Error(`${e.message}\n${output}`) : e;
  }
}

/** Runs one statement on a connection of its own and returns its rows. */
export async function sqlRows<R extends Record<string, unknown>>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
