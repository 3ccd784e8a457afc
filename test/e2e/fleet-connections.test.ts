import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliProcess } from '../support/cli.js';
import { runCli, startCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import type { FleetJson } from '../support/fleet.js';
import { serviceIntent, sleep, sqlRows } from '../support/fleet.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// How many PostgreSQL connections one `tend worker` holds with k workspaces (docs/fleet.md,
// "Sizing"): one worker of the built CLI (`--interval 2`) holding 1, then 5, then 10 workspaces of one
// sandbox service each; its connections are counted in pg_stat_activity by application_name
// (`tend worker <id>`) every 100 ms over 10 s once every workspace converged. Prints the figures and
// checks them against the bound counted from the code (2 for the registry, 2 for the job table,
// its listener's 1, 4 per workspace's store pool). A measurement of about 3.5 minutes on two busy
// cores, so only when asked: `TEND_MEASURE=1 npx vitest run test/e2e/fleet-connections.test.ts`
// (after npm run build). With CI=true a missing PostgreSQL then fails the suite.

const MEASURE = process.env['TEND_MEASURE'] === '1';

const SIZES = [1, 5, 10];

const NOTE = MEASURE ? POSTGRES.note : ' (a measurement: TEND_MEASURE=1 runs it)';

describe.skipIf(!MEASURE || POSTGRES.skip)(`PostgreSQL connections of one worker${NOTE}`, () => {
  let server: PostgresHandle;
  let sandbox: SandboxHandle;
  let url: string;
  let root: string;
  const env = () => ({
    TEND_STORE_URL: url,
    TEND_LEDGER_KEY: 'fleet-connections-e2e-0123456789abcdef',
  });
  let worker: CliProcess | undefined;

  beforeAll(async () => {
    server = await startPostgres();
    await server.createDatabase('conn');
    url = server.url('conn');
    sandbox = await startSandboxProcess();
    root = mkdtempSync(join(tmpdir(), 'tend-fleet-conn-'));
  }, 120_000);
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await sandbox?.stop();
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('holds at most 5 + 4k connections with k workspaces (measured: printed)', async () => {
    const figures: string[] = [];
    let registered = 0;
    for (const k of SIZES) {
      for (; registered < k; registered++) {
        const name = `conn-${String(registered + 1).padStart(2, '0')}`;
        mkdirSync(join(root, name));
        writeFileSync(join(root, name, 'main.yaml'), serviceIntent(sandbox.url, name, 1));
        const r = await runCli(['workspace', 'add', name, '--dir', join(root, name)], {
          env: env(),
        });
        expect(r.code, r.stderr).toBe(0);
      }
      worker ??= startCli(['worker', '--id', 'conn-w', '--interval', '2', '--lease-ttl', '6'], {
        env: env(),
      });
      const deadline = Date.now() + 120_000;
      for (;;) {
        const r = await runCli(['fleet', 'status', '--json'], { env: env() });
        const s = JSON.parse(r.stdout) as FleetJson;
        const done = s.workspaces.every(
          (w) => w.holder?.worker === 'conn-w' && w.states['converged'] === 1,
        );
        if (done && s.workspaces.length === k) break;
        if (Date.now() > deadline) throw new Error(`not converged:\n${worker.output()}`);
        await sleep(500);
      }
      const counts: number[] = [];
      for (let i = 0; i < 100; i++) {
        const [row] = await sqlRows<{ n: number }>(
          url,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tend worker conn-w'",
        );
        counts.push(row!.n);
        await sleep(100);
      }
      const max = Math.max(...counts);
      const sorted = [...counts].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)]!;
      figures.push(`${k} workspaces: median ${median}, max ${max} connections`);
      expect(max).toBeLessThanOrEqual(5 + 4 * k);
      expect(median).toBeGreaterThanOrEqual(k);
    }
    console.log(`one worker, --interval 2, sampled every 100 ms for 10 s:\n${figures.join('\n')}`);
  }, 600_000);
});
