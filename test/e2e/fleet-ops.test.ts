import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess } from '../support/cli.js';
import { runCli, startCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { FleetJson, WorkerLine } from '../support/fleet.js';
import { serviceIntent, sleep, sqlRows } from '../support/fleet.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26 item 6 (docs/fleet.md "Operating a fleet", decision 0046), through the built CLI: one
// PostgreSQL cluster, one sandbox, four workspaces, two `tend worker --listen 127.0.0.1:0` processes
// with a 5 s lease. Each answers /healthz, /readyz and /metrics (checked by `promtool check
// metrics`); /readyz turns 503 with its reason while PostgreSQL is stopped and 200 once it is back;
// the takeover counter grows after the other worker is SIGKILLed; a worker row dead for longer than
// 10 TTLs is deleted; a third worker joining with --max-workspaces 1 holds one and the first keeps
// the rest of the second's share (none left unheld); every line of `tend worker --json` names the worker. With CI=true a missing
// PostgreSQL fails the suite, and a missing promtool (the Debian package prometheus, which .ci/run
// installs) fails its test.

const NAMES = ['ops-1', 'ops-2', 'ops-3', 'ops-4'];
const TTL_S = 5;
const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

describe.skipIf(POSTGRES.skip)(
  `operating a fleet: health, readiness, metrics${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: SandboxHandle;
    let url: string;
    let root: string;
    const workers = new Map<string, { process: CliProcess; url: string }>();
    const env = () => ({
      TEND_STORE_URL: url,
      TEND_LEDGER_KEY: 'fleet-ops-e2e-key-0123456789abcdef',
    });
    const status = async (): Promise<FleetJson> => {
      const r = await runCli(['fleet', 'status', '--json'], { env: env() });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return JSON.parse(r.stdout) as FleetJson;
    };
    const lines = (id: string): WorkerLine[] =>
      workers
        .get(id)!
        .process.output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as WorkerLine);
    const get = (id: string, path: string) => fetch(`${workers.get(id)!.url}${path}`);
    const metrics = async (id: string) => (await get(id, '/metrics')).text();
    const sample = (text: string, series: string): number | undefined => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>) {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = await probe().catch(() => undefined);
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
        await sleep(250);
      }
    }
    async function startWorker(id: string): Promise<void> {
      const p = startCli(
        ['worker', '--id', id, '--interval', '2', '--lease-ttl', String(TTL_S)].concat([
          '--listen',
          '127.0.0.1:0',
          '--json',
        ]),
        { env: env() },
      );
      await p.waitFor(/"kind":"listening"/, 60_000);
      const line = p
        .output()
        .split('\n')
        .find((l) => l.includes('"kind":"listening"'))!;
      workers.set(id, { process: p, url: (JSON.parse(line) as { url: string }).url });
    }

    beforeAll(async () => {
      server = await startPostgres();
      await server.createDatabase('ops');
      url = server.url('ops');
      sandbox = await startSandboxProcess();
      root = mkdtempSync(join(tmpdir(), 'tend-fleet-ops-'));
      for (const name of NAMES) {
        mkdirSync(join(root, name));
        writeFileSync(join(root, name, 'main.yaml'), serviceIntent(sandbox.url, name, 1));
        const r = await runCli(['workspace', 'add', name, '--dir', join(root, name)], {
          env: env(),
        });
        expect(r.code, r.stderr).toBe(0);
      }
      await startWorker('ops-a');
      await startWorker('ops-b');
      await until('every workspace converged, each worker holding some', 90_000, async () => {
        const s = await status();
        const holders = new Set(s.workspaces.map((w) => w.holder?.worker));
        const done = s.workspaces.every((w) => w.holder && w.states['converged'] === 1);
        return done && holders.has('ops-a') && holders.has('ops-b') ? true : undefined;
      });
    }, 180_000);
    afterAll(async () => {
      for (const w of workers.values()) await w.process.stop('SIGKILL');
      await sandbox?.stop();
      await server?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('answers /healthz, /readyz and /metrics; the metrics pass promtool check metrics', async () => {
      const health = await get('ops-a', '/healthz');
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true, worker: 'ops-a' });
      const ready = await get('ops-a', '/readyz');
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ ready: true, worker: 'ops-a' });
      const text = await until('the counts of a tick', 10_000, async () => {
        const t = await metrics('ops-a');
        return sample(t, 'tend_fleet_workspaces_registered') === 4 ? t : undefined;
      });
      expect(sample(text, 'tend_fleet_leases_held')).toBe(
        (await status()).workspaces.filter((w) => w.holder?.worker === 'ops-a').length,
      );
      expect(text).toMatch(/^tend_fleet_lease_renew_duration_seconds_count \d+$/m);
      expect(text).toMatch(/^tend_fleet_passes_total\{workspace="ops-\d"\} [1-9]\d*$/m);
      expect(text).toContain('# TYPE tend_fleet_takeovers_total counter');
      if (!PROMTOOL && process.env['CI'] !== 'true') return; // promtool: the Debian package prometheus
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
      expect(check.stdout + check.stderr).toBe('');
      expect((await get('ops-a', '/nothing')).status).toBe(404);
    });

    it('turns /readyz 503 with its reason while PostgreSQL is stopped, and 200 once it is back', async () => {
      await server.stopServer();
      try {
        const body = await until('503 from /readyz', 15_000, async () => {
          const r = await get('ops-a', '/readyz');
          return r.status === 503
            ? ((await r.json()) as { ready: boolean; reason: string })
            : undefined;
        });
        expect(body.ready).toBe(false);
        expect(body.reason).toMatch(/^the fleet registry: /);
        // Alive all along: the process answers.
        expect((await get('ops-a', '/healthz')).status).toBe(200);
      } finally {
        await server.startServer();
      }
      await until('200 from /readyz again', 30_000, async () =>
        (await get('ops-a', '/readyz')).status === 200 ? true : undefined,
      );
      const failures = sample(await metrics('ops-a'), 'tend_fleet_heartbeat_failures_total');
      expect(failures).toBeGreaterThanOrEqual(0);
      // The same processes, still running.
      for (const w of workers.values()) expect(w.process.child.exitCode).toBeNull();
    });

    it('counts the takeovers after the other worker is SIGKILLed; fleet status shows it dead', async () => {
      await until('both workers holding again', 60_000, async () => {
        const s = await status();
        const holders = new Set(s.workspaces.map((w) => w.holder?.worker));
        return holders.has('ops-a') && holders.has('ops-b') ? true : undefined;
      });
      const before = sample(await metrics('ops-a'), 'tend_fleet_takeovers_total') ?? NaN;
      const theirs = (await status()).workspaces.filter((w) => w.holder?.worker === 'ops-b').length;
      expect(theirs).toBeGreaterThan(0);
      await workers.get('ops-b')!.process.stop('SIGKILL');
      await until('ops-a holding every workspace', (TTL_S + 15) * 1000, async () => {
        const s = await status();
        return s.workspaces.every((w) => w.holder?.worker === 'ops-a') ? true : undefined;
      });
      const after = await until('the takeovers counted', 10_000, async () => {
        const n = sample(await metrics('ops-a'), 'tend_fleet_takeovers_total') ?? NaN;
        return n >= before + theirs ? n : undefined;
      });
      const tookOver = lines('ops-a').filter((l) => l.kind === 'took' && 'tookOver' in l).length;
      expect(after).toBe(tookOver);
      const s = await status();
      expect(s.workers.map((w) => w.id)).toEqual(['ops-a']);
      expect(s.deadWorkers.map((w) => w.id)).toEqual(['ops-b']);
    });

    it('deletes the row of a worker dead for longer than 10 TTLs at its next tick', async () => {
      await sqlRows(
        url,
        "UPDATE tend.workers SET heartbeat_at = clock_timestamp() - interval '60 s' WHERE id = 'ops-b'",
      );
      await until('ops-b forgotten', 10_000, async () => {
        const rows = await sqlRows(url, "SELECT id FROM tend.workers WHERE id = 'ops-b'");
        return rows.length === 0 ? true : undefined;
      });
      expect((await status()).deadWorkers).toEqual([]);
    });

    it('a worker joining with --max-workspaces 1 holds one, and the other takes the rest of its share', async () => {
      // Uncapped, ops-c's share would be 2 of 4; capped at 1, ops-a keeps 3 (before decision 0046 it
      // gave 2 away and one workspace stayed unheld).
      const p = startCli(
        ['worker', '--id', 'ops-c', '--interval', '2', '--lease-ttl', String(TTL_S)].concat([
          '--max-workspaces',
          '1',
          '--json',
        ]),
        { env: env() },
      );
      workers.set('ops-c', { process: p, url: '' });
      const held = await until('ops-c holding 1 and ops-a 3', 60_000, async () => {
        const s = await status();
        const of = (id: string) => s.workspaces.filter((w) => w.holder?.worker === id).length;
        return of('ops-c') === 1 && of('ops-a') === 3 ? s : undefined;
      });
      expect(held.workspaces.every((w) => w.holder !== null)).toBe(true);
      // And it stays so over the next ticks (no workspace left unheld, no flapping).
      await sleep(TTL_S * 1000);
      const later = await status();
      expect(later.workspaces.filter((w) => w.holder?.worker === 'ops-a')).toHaveLength(3);
      expect(later.workspaces.filter((w) => w.holder?.worker === 'ops-c')).toHaveLength(1);
      expect(sample(await metrics('ops-a'), 'tend_fleet_leases_held')).toBe(3);
    });

    it('names the worker on every line of its --json log, to the end', async () => {
      const a = workers.get('ops-a')!.process;
      const holding = (await status()).workspaces
        .filter((w) => w.holder?.worker === 'ops-a')
        .map((w) => w.name);
      expect(await a.stop('SIGTERM')).toBe(0);
      const all = a
        .output()
        .split('\n')
        .filter((l) => l.trim() !== '');
      const other = all.filter((l) => !l.startsWith('{'));
      // Only the signal handler's own line (stderr) is text.
      expect(other).toEqual([
        'SIGTERM: stopping after the operations in flight settle (signal again to exit now)',
      ]);
      const json = lines('ops-a');
      expect(json.length).toBeGreaterThan(10);
      for (const l of json) expect(l.worker, JSON.stringify(l)).toBe('ops-a');
      expect(json.at(-1)).toMatchObject({ kind: 'worker-stopped' });
      const stopping = json.filter((l) => l.kind === 'released' && l.reason === 'stopping');
      expect(stopping.map((l) => l.workspace).sort()).toEqual(holding);
    });
  },
);
