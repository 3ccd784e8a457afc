import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess, CliResult } from '../support/cli.js';
import { runCli, startCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { Seen } from '../support/endless-platform.js';
import { DOCUMENT, flood } from '../support/endless-platform.js';
import type { FleetJson, WorkerLine } from '../support/fleet.js';
import { serviceIntent, sleep, sqlRows } from '../support/fleet.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 26, "What it must show": a platform that streams an endless answer, inside a fleet. One
// PostgreSQL cluster, one sandbox process, one node:http server on 127.0.0.1 that answers its list
// with `200`, `[` and then objects forever; three registered workspaces — `bad` on the endless
// server, `good-1` and `good-2` on the sandbox — and ONE `tend worker --max-workspaces 3` holding all
// three. `bad`'s passes fail with `provider.response_too_large` (a clear message, in the worker's
// --json log), again and again but backing off (the gaps grow: 2, 4, 8, 16 s); meanwhile
// `good-1`'s and `good-2`'s intents change and they converge within 30 s (the sandbox's objects,
// `tend fleet status --json`); the worker's peak RSS (VmHWM, sampled from /proc over the whole test)
// stays under 500 MB; it is alive at the end and exits 0 on SIGTERM, releasing every lease. With
// CI=true a missing PostgreSQL fails the suite.

const LEDGER_KEY = 'fleet-endless-ledger-key-0123456789abcdef';
const WORKER = 'w-endless';
const GOOD = ['good-1', 'good-2'];
const NAMES = ['bad', ...GOOD];
const INTERVAL_S = 2;
const MB = 1024 * 1024;

// The endless platform's OpenAPI document (as test/e2e/endless-answer.test.ts builds it).
function badIntent(endless: string): string {
  return [
    'kind: Workspace',
    'name: bad',
    '---',
    'kind: Provider',
    'name: flood',
    'type: openapi',
    'spec: ./flood.json',
    `endpoint: ${endless}`,
    '---',
    'kind: Resource',
    'type: flood.items',
    'name: one',
    'spec: { name: one }',
    '',
  ].join('\n');
}

/** The peak resident set of a process so far, in bytes (Linux: VmHWM); undefined once it is gone. */
function peakRss(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

describe.skipIf(POSTGRES.skip)(
  `a fleet worker holding a workspace whose platform streams an endless answer${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: SandboxHandle;
    let endless: Server;
    let endlessUrl = '';
    const seen: Seen[] = [];
    let url: string;
    let root: string;
    let worker: CliProcess | undefined;
    let sampler: ReturnType<typeof setInterval> | undefined;
    let peak = 0;
    let samples = 0;
    const dirOf = (name: string) => join(root, name);
    const env = () => ({ TEND_STORE_URL: url, TEND_LEDGER_KEY: LEDGER_KEY });
    const tend = (args: string[]): Promise<CliResult> => runCli(args, { env: env() });
    const status = async (): Promise<FleetJson> => {
      const r = await tend(['fleet', 'status', '--json']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      return JSON.parse(r.stdout) as FleetJson;
    };
    const lines = (): WorkerLine[] =>
      worker!
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as WorkerLine);
    const failures = () => lines().filter((l) => l.kind === 'failed' && l.workspace === 'bad');
    const sql = <R extends Record<string, unknown>>(text: string, values: unknown[] = []) =>
      sqlRows<R>(url, text, values);
    const replicasOf = async (name: string): Promise<unknown> =>
      (await sandbox.objects()).find(
        (o) => o.type === 'services' && o.fields['name'] === `api-${name}`,
      )?.fields['replicas'];
    const goodConverged = (s: FleetJson) =>
      GOOD.every((n) => {
        const w = s.workspaces.find((x) => x.name === n);
        return (
          w?.holder?.worker === WORKER &&
          w.states['converged'] === 1 &&
          Object.keys(w.states).length === 1
        );
      });

    beforeAll(async () => {
      server = await startPostgres();
      await server.createDatabase('fleet_endless');
      url = server.url('fleet_endless');
      sandbox = await startSandboxProcess();
      endless = createServer((req, res) => {
        if (req.method === 'GET' && req.url?.startsWith('/items')) return flood(seen, req, res);
        res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
      endlessUrl = `http://127.0.0.1:${(endless.address() as AddressInfo).port}`;
      root = mkdtempSync(join(tmpdir(), 'tend-fleet-endless-'));
      mkdirSync(dirOf('bad'));
      writeFileSync(join(dirOf('bad'), 'flood.json'), JSON.stringify(DOCUMENT));
      writeFileSync(join(dirOf('bad'), 'main.yaml'), badIntent(endlessUrl));
      for (const name of GOOD) {
        mkdirSync(dirOf(name));
        writeFileSync(join(dirOf(name), 'main.yaml'), serviceIntent(sandbox.url, name, 2));
      }
      for (const name of NAMES) {
        const r = await tend(['workspace', 'add', name, '--dir', dirOf(name)]);
        expect(r.code, r.stdout + r.stderr).toBe(0);
      }
    }, 120_000);
    afterAll(async () => {
      if (sampler) clearInterval(sampler);
      await worker?.stop('SIGKILL');
      endless?.closeAllConnections();
      await new Promise<void>((resolve) => (endless ? endless.close(() => resolve()) : resolve()));
      await sandbox?.stop();
      await server?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('bad fails clearly and backs off; good-1 and good-2 keep converging; under 500 MB; SIGTERM exits 0', async () => {
      const started = Date.now();
      worker = startCli(
        [
          'worker',
          '--id',
          WORKER,
          '--max-workspaces',
          '3',
          '--lease-ttl',
          '5',
          '--interval',
          String(INTERVAL_S),
          '--json',
        ],
        { env: env() },
      );
      const pid = worker.child.pid!;
      sampler = setInterval(() => {
        const rss = peakRss(pid);
        if (rss !== undefined) {
          peak = Math.max(peak, rss);
          samples++;
        }
      }, 50);
      const alive = () => worker!.child.exitCode === null && worker!.child.signalCode === null;

      // 1. The good ones converge and the bad one has failed once: all three held by the worker.
      let s: FleetJson;
      for (;;) {
        s = await status();
        if (goodConverged(s) && failures().length >= 1) break;
        if (!alive() || Date.now() - started > 45_000) {
          throw new Error(
            `not converged, or bad never failed, after ${Date.now() - started} ms:\n${JSON.stringify(s, null, 2)}\n${worker.output()}`,
          );
        }
        await sleep(300);
      }
      expect(s.workers.map((w) => w.id)).toEqual([WORKER]);
      expect(s.workspaces.map((w) => [w.name, w.holder?.worker])).toEqual(
        NAMES.map((n) => [n, WORKER]),
      );
      for (const name of GOOD) expect(await replicasOf(name)).toBe(2);
      console.log(
        `fleet-endless: good-1 and good-2 converged, bad failed once, ${((Date.now() - started) / 1000).toFixed(1)} s after the worker started`,
      );

      // 2. While bad keeps failing, change good-1's and good-2's intent: they converge within 30 s.
      const changedAt = Date.now();
      const failuresBefore = failures().length;
      for (const name of GOOD) {
        writeFileSync(join(dirOf(name), 'main.yaml'), serviceIntent(sandbox.url, name, 4));
      }
      for (;;) {
        s = await status();
        const scaled = (await Promise.all(GOOD.map(replicasOf))).every((r) => r === 4);
        const passedSince = GOOD.every((n) => {
          const at = s.workspaces.find((w) => w.name === n)?.lastPassAt;
          return at !== null && at !== undefined && Date.parse(at) >= changedAt - 1_000;
        });
        if (scaled && passedSince && goodConverged(s)) break;
        if (!alive() || Date.now() - changedAt > 30_000) {
          throw new Error(
            `good-1/good-2 not converged 30 s after the change:\n${JSON.stringify(s, null, 2)}\n${worker.output()}`,
          );
        }
        await sleep(300);
      }
      const convergedMs = Date.now() - changedAt;
      console.log(
        `fleet-endless: good-1 and good-2 scaled 2 → 4 and converged ${(convergedMs / 1000).toFixed(1)} s after their intent changed (bad had failed ${failuresBefore} times)`,
      );

      // 3. bad keeps failing, backing off: wait for five failures (gaps of 2, 4, 8, 16 s).
      const deadline = Date.now() + 60_000;
      while (failures().length < 5) {
        if (!alive() || Date.now() > deadline) {
          throw new Error(`bad did not fail five times:\n${worker.output()}`);
        }
        await sleep(300);
      }
      const failed = failures();
      const paces: string[] = [];
      for (const f of failed) {
        expect(f.message).toMatch(
          /^provider flood: GET \/items: the answer \(status 200\) is larger than maxResponseBytes, 16 MiB \(16777216 bytes\): reading stopped after .+ and the connection was closed$/,
        );
        expect(f.code).toBe('provider.response_too_large');
        expect(f.hint).toBe(
          'raise maxResponseBytes on provider flood if this answer is legitimate; otherwise the platform is misbehaving',
        );
      }
      const times = failed.map((f) => Date.parse(f.time));
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      console.log(
        `fleet-endless: bad failed ${failed.length} times with provider.response_too_large, gaps ${gaps.map((g) => (g / 1000).toFixed(1)).join(', ')} s`,
      );
      gaps.slice(0, 4).forEach((gap, i) => {
        const backoff = INTERVAL_S * 1000 * 2 ** i;
        // Each wait at least its back-off (the pass's own time comes on top), never far beyond.
        expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(backoff - 100);
        expect(gap, `gap ${i + 1}`).toBeLessThan(backoff + 10_000);
      });
      expect(gaps[3]!).toBeGreaterThan(2 * gaps[0]!);
      // The failing workspace's run is never dropped: it stays held, no lease lost, no restart.
      expect(lines().filter((l) => l.kind === 'lost' || l.kind === 'released')).toEqual([]);
      expect(
        lines()
          .filter((l) => l.kind === 'took')
          .map((l) => l.workspace)
          .sort(),
      ).toEqual(NAMES);

      // The good ones kept their pace all along, a pass every interval (plus the pass's own time),
      // while bad's waits grew to 16 s; and ended converged.
      for (const name of GOOD) {
        const passes = lines().filter((l) => l.kind === 'pass' && l.workspace === name);
        const at = passes.map((p) => Date.parse(p.time));
        const longest = Math.max(...at.slice(1).map((t, i) => t - at[i]!));
        expect(passes.length, name).toBeGreaterThanOrEqual(8);
        expect(longest, name).toBeLessThan(INTERVAL_S * 1000 + 8_000);
        const states = Object.entries(passes.at(-1)!.states!).filter(([, n]) => n > 0);
        expect(states, name).toEqual([['converged', 1]]);
        paces.push(`${name} ${passes.length} passes, longest gap ${(longest / 1000).toFixed(1)} s`);
      }
      expect(lines().filter((l) => l.kind === 'failed' && l.workspace !== 'bad')).toEqual([]);
      console.log(`fleet-endless: meanwhile ${paces.join('; ')}`);

      // Each endless answer was cut off and its connection closed; every request named the worker.
      const closed = seen.filter((x) => x.closedAfter !== undefined);
      expect(closed.length).toBeGreaterThanOrEqual(failed.length);
      for (const x of closed) expect(x.closedAfter!).toBeLessThan(64 * MB);
      for (const x of seen)
        expect(x.userAgent).toMatch(new RegExp(`\\(worker ${WORKER}; pid ${pid}\\)$`));
      // Not retried within a pass: one request per failed pass (one more may be in flight).
      expect(seen.length).toBeLessThanOrEqual(failed.length + 1);

      // 4. The worker is alive, under 500 MB all along, and exits 0 on SIGTERM releasing the leases.
      expect(alive()).toBe(true);
      clearInterval(sampler);
      sampler = undefined;
      peak = Math.max(peak, peakRss(pid) ?? 0);
      expect(samples).toBeGreaterThan(100);
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThan(500 * MB);
      const code = await worker.stop('SIGTERM');
      expect(code, worker.output()).toBe(0);
      expect(lines().at(-1)).toMatchObject({ kind: 'worker-stopped' });
      expect(await sql('SELECT workspace FROM tend.leases')).toEqual([]);
      expect(await sql('SELECT id FROM tend.workers')).toEqual([]);
      for (const x of seen) expect(x.closedAfter).toBeDefined();
      console.log(
        `fleet-endless: worker peak RSS ${Math.round(peak / MB)} MB (VmHWM, ${samples} samples over ${((Date.now() - started) / 1000).toFixed(1)} s), ${seen.length} endless answers cut off (at most ${Math.round(Math.max(...closed.map((x) => x.closedAfter!)) / MB)} MB written each); exit 0 on SIGTERM`,
      );
    }, 150_000);
  },
);
