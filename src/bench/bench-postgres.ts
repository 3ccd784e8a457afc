// A PostgreSQL cluster of the benchmark's own (the fleet benchmark): initdb and pg_ctl in a temporary
// directory, on 127.0.0.1 and a free port, trust authentication for `postgres`, run as `postgres`
// when the benchmark runs as root (PostgreSQL refuses root). The same steps as the tests'
// test/support/postgres.ts, which src/ cannot import.
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { onTeardown } from './teardown.js';

/** A running cluster. */
export interface BenchPostgres {
  /** The temporary directory of the cluster (`data/`, the log, the socket). */
  readonly dir: string;
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database: string): string;
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const AS_ROOT = process.getuid?.() === 0;

function find(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

function postgresDirs(): string[] {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((d) => d !== '');
  try {
    for (const v of readdirSync('/usr/lib/postgresql').sort().reverse()) {
      dirs.push(join('/usr/lib/postgresql', v, 'bin'));
    }
  } catch {
    // not a Debian layout
  }
  return dirs;
}

/** The programs, or why they cannot be found. */
function programs(): { initdb: string; pgCtl: string; createdb: string; runuser?: string } {
  const dirs = postgresDirs();
  const initdb = find('initdb', dirs);
  const bin = initdb === undefined ? [] : [resolve(initdb, '..')];
  const pgCtl = find('pg_ctl', [...bin, ...dirs]);
  const createdb = find('createdb', [...bin, ...dirs]);
  const runuser = AS_ROOT ? find('runuser', [...dirs, '/usr/sbin', '/sbin']) : undefined;
  if (!initdb || !pgCtl || !createdb || (AS_ROOT && !runuser)) {
    throw new Error(
      'the fleet benchmark needs PostgreSQL (initdb, pg_ctl, createdb on PATH or in /usr/lib/postgresql/*/bin; install the Debian package postgresql) and, as root, runuser',
    );
  }
  return { initdb, pgCtl, createdb, ...(runuser ? { runuser } : {}) };
}

function run(runuser: string | undefined, program: string, args: string[]): Promise<string> {
  const [command, argv] = runuser
    ? [runuser, ['-u', 'postgres', '--', program, ...args]]
    : [program, args];
  return new Promise((done, fail) => {
    const child = spawn(command, argv, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done(output) : fail(new Error(`${program} exited ${code}: ${output}`)),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Creates and starts a cluster with these server settings; resolves once it accepts connections. */
export async function startBenchPostgres(
  settings: Readonly<Record<string, string>>,
): Promise<BenchPostgres> {
  const p = programs();
  const dir = mkdtempSync(join(tmpdir(), 'tend-bench-pg-'));
  const data = join(dir, 'data');
  if (AS_ROOT) {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  let started = false;
  let stopping: Promise<void> | undefined;
  // Stopped by the benchmark's teardown too (SIGINT, SIGTERM: pg_ctl detached the server, which
  // would otherwise outlive the benchmark); once only, whoever asks first.
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      untear();
      if (started) await run(p.runuser, p.pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']);
      started = false;
      rmSync(dir, { recursive: true, force: true });
    })());
  const untear = onTeardown(stop);
  try {
    await run(p.runuser, p.initdb, [
      ...['-D', data, '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C', '--auth=trust'],
    ]);
    const port = await freePort();
    const options = Object.entries({ fsync: 'off', ...settings })
      .map(([k, v]) => ` -c ${k}=${v}`)
      .join('');
    await run(p.runuser, p.pgCtl, [
      ...['-D', data, '-l', join(dir, 'postgres.log'), '-w', 'start'],
      ...['-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${options}`],
    ]);
    started = true;
    return {
      dir,
      port,
      url: (database) => `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      createDatabase: async (name) => {
        await run(p.runuser, p.createdb, ['-h', dir, '-p', String(port), '-U', 'postgres', name]);
      },
      stop,
    };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}
