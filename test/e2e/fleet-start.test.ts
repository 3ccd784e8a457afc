import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess } from '../support/cli.js';
import { ROOT, runCli, startCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { FleetJson, WorkerLine } from '../support/fleet.js';
import { serviceIntent, sqlRows } from '../support/fleet.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// A worker started while PostgreSQL is down (docs/fleet.md, "What happens when PostgreSQL fails"),
// through the built CLI against a cluster that asks for a password: it logs each attempt to reach
// the store (naming itself, never the password) and keeps trying until the server is back, then
// joins and holds the workspace; one signalled while it waits exits 0; a wrong password or a missing
// database is not something waiting heals: the worker exits 1 at once. With CI=true a missing
// PostgreSQL fails the suite.

const PASSWORD = 'fleet-start-e2e-pw-4d1b9';
const TTL_S = 5;
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

describe.skipIf(POSTGRES.skip)(`a worker starting while PostgreSQL is down${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let sandbox: SandboxHandle;
  let url: string;
  let root: string;
  const started: CliProcess[] = [];
  const env = (password = PASSWORD) => ({
    TEND_STORE_URL: url,
    PGPASSWORD: password,
    TEND_LEDGER_KEY: 'fleet-start-e2e-key-0123456789abcdef',
  });
  const worker = (id: string, password?: string, extra: string[] = []): CliProcess => {
    const args = ['worker', '--id', id, '--interval', '2', '--lease-ttl', String(TTL_S)];
    const p = startCli([...args, ...extra, '--json'], { env: env(password) });
    started.push(p);
    return p;
  };
  const lines = (p: CliProcess): WorkerLine[] =>
    p
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as WorkerLine);
  const count = (p: CliProcess, kind: string) => lines(p).filter((l) => l.kind === kind).length;
  const status = async (): Promise<FleetJson> => {
    const r = await runCli(['fleet', 'status', '--json'], { env: env() });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return JSON.parse(r.stdout) as FleetJson;
  };

  beforeAll(async () => {
    server = await startPostgres({ auth: 'scram-sha-256', superPassword: PASSWORD });
    await server.createDatabase('start');
    url = server.url('start');
    sandbox = await startSandboxProcess();
    root = mkdtempSync(join(tmpdir(), 'tend-fleet-start-'));
    mkdirSync(join(root, 'late'));
    writeFileSync(join(root, 'late', 'main.yaml'), serviceIntent(sandbox.url, 'late', 2));
    const r = await runCli(['workspace', 'add', 'late', '--dir', join(root, 'late')], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    for (const p of started) await p.stop('SIGKILL');
    await sandbox?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('keeps trying while the server is down, then joins and holds the workspace; signalled while waiting, exits 0', async () => {
    await server.stopServer();
    const late = worker('late-w', undefined, ['--max-workspaces', '3', '--listen', '127.0.0.1:0']);
    const quitter = worker('quitter');
    // Attempts after 1 s and 2 s (then 4, 8 … at most 30 s): two logged within ~3 s, generous here.
    await late.waitFor(/"attempt":2/, 30_000);
    await quitter.waitFor(/"kind":"store-unreachable"/, 30_000);
    expect(late.child.exitCode).toBeNull();
    const [first] = lines(late).filter((l) => l.kind === 'store-unreachable');
    expect(first).toMatchObject({
      worker: 'late-w',
      kind: 'store-unreachable',
      attempt: 1,
      retryInMs: 1_000,
      code: 'store.open-failed',
    });
    expect(first!.message).toContain(
      `cannot open the PostgreSQL store at 127.0.0.1:${server.port}/start`,
    );
    // Alive (a liveness probe leaves it be), not ready.
    const endpoint = (lines(late).find((l) => l.kind === 'listening') as { url?: string }).url!;
    expect((await fetch(`${endpoint}/healthz`)).status).toBe(200);
    const waiting = await fetch(`${endpoint}/readyz`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toEqual({
      ready: false,
      worker: 'late-w',
      reason: 'starting: the fleet registry is not open yet',
    });
    // Signalled while it waits: stops at once, cleanly.
    expect(await quitter.stop('SIGTERM')).toBe(0);
    expect(lines(quitter).at(-1)).toMatchObject({ kind: 'worker-stopped', worker: 'quitter' });
    expect(count(quitter, 'worker-started')).toBe(0);

    await server.startServer();
    const back = Date.now();
    await late.waitFor(/"kind":"took","workspace":"late"/, 60_000);
    const joinedMs = Date.now() - back;
    await late.waitFor(/"kind":"pass","workspace":"late"/, 60_000);
    expect((await fetch(`${endpoint}/readyz`)).status).toBe(200);
    const s = await status();
    expect(s.workers.map((w) => [w.id, w.version])).toEqual([['late-w', VERSION]]);
    // Its cap in its own column (schema version 5), the version column plain.
    const withPassword = url.replace('postgres@', `postgres:${PASSWORD}@`);
    expect(await sqlRows(withPassword, 'SELECT version, max_workspaces FROM tend.workers')).toEqual(
      [{ version: VERSION, max_workspaces: 3 }],
    );
    expect(s.workspaces).toMatchObject([
      { name: 'late', holder: { worker: 'late-w' }, states: { converged: 1 } },
    ]);
    const services = (await sandbox.objects()).filter((o) => o.type === 'services');
    expect(services.map((o) => [o.fields['name'], o.fields['replicas']])).toEqual([
      ['api-late', 2],
    ]);
    expect(late.output() + quitter.output()).not.toContain(PASSWORD);
    const attempts = count(late, 'store-unreachable');
    expect(await late.stop('SIGTERM')).toBe(0);
    console.log(
      `worker joined ${joinedMs} ms after the server was back, after ${attempts} attempts`,
    );
  }, 180_000);

  it('exits 1 at once on a wrong password, saying so, and never prints it', async () => {
    const wrong = 'not-the-password-93ac';
    // Up, whatever the test before did (pg_ctl refuses to start a running server).
    await server.startServer().catch(() => undefined);
    const t0 = Date.now();
    const p = worker('wrong-pw', wrong);
    const code =
      p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
    const ms = Date.now() - t0;
    expect(code).toBe(1);
    expect(count(p, 'store-unreachable')).toBe(0);
    const [error] = lines(p).filter((l) => l.kind === 'error') as (WorkerLine & {
      error: { code: string; message: string };
    })[];
    expect(error).toMatchObject({ worker: 'wrong-pw', error: { code: 'store.open-failed' } });
    expect(error!.error.message).toBe(
      `cannot open the PostgreSQL store at 127.0.0.1:${server.port}/start: password authentication failed for user "postgres"`,
    );
    expect(p.output()).not.toContain(wrong);
    expect(p.output()).not.toContain(PASSWORD);
    // Node's start-up and one failed login: seconds, not a back-off.
    expect(ms).toBeLessThan(30_000);
  }, 60_000);

  it('exits 1 at once on a database that does not exist', async () => {
    await server.startServer().catch(() => undefined);
    const p = startCli(['worker', '--id', 'no-db', '--json'], {
      env: { ...env(), TEND_STORE_URL: server.url('nosuchdb') },
    });
    started.push(p);
    const code =
      p.child.exitCode ?? (await new Promise<number | null>((r) => p.child.once('exit', r)));
    expect(code).toBe(1);
    expect(count(p, 'store-unreachable')).toBe(0);
    const [error] = lines(p).filter((l) => l.kind === 'error') as (WorkerLine & {
      error: { message: string };
    })[];
    expect(error!.error.message).toBe(
      `cannot open the PostgreSQL store at 127.0.0.1:${server.port}/nosuchdb: database "nosuchdb" does not exist`,
    );
  }, 60_000);
});
