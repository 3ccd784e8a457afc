// A clean stop: SIGTERM lets the call in flight finish and settle and starts nothing new; a second
// signal exits at once and leaves the call journaled. Either way the next apply converges with no
// duplicate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { SCENARIOS } from './scenarios.js';
import {
  CASE_TIMEOUT_MS,
  PARALLEL,
  SandboxPool,
  WORKSPACE,
  freshDir,
  judge,
  pendingOperations,
  quiesce,
  resetSandbox,
} from './torture-kit.js';
import { runCli } from '../support/cli.js';

const scenario = SCENARIOS.create;
/** Long enough that a signal surely arrives while the first create is in flight. */
const LATENCY_MS = 1500;

describe.concurrent('torture: SIGTERM during tend apply and tend run', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
  });

  const CASES = [
    { command: 'apply', signals: 1, exit: 130, pending: [] as string[] },
    { command: 'apply', signals: 2, exit: 130, pending: ['create sb.networks/main'] },
    { command: 'run', signals: 1, exit: 0, pending: [] as string[] },
    { command: 'run', signals: 2, exit: 130, pending: ['create sb.networks/main'] },
  ];

  it.each(CASES)(
    'tend $command, $signals signal(s): exits $exit, journal pending $pending, then converges',
    ({ command, signals, exit, pending }) =>
      pool.use(async (sandbox) => {
        await resetSandbox(sandbox);
        const d = freshDir();
        try {
          d.write(scenario.target, sandbox.url, 10_000);
          await sandbox.setFaults({ latencyMs: LATENCY_MS, methods: ['POST'] });
          const args = [command, d.dir, '--workspace', WORKSPACE, '--json'];
          const tend = startCli(
            command === 'run' ? [...args, '--interval', '300'] : [...args, '--no-checks'],
          );
          const exited = new Promise<number | null>((r) => tend.child.once('exit', r));
          await tend.waitFor(/"kind":"op-start"/);
          const t0 = Date.now();
          tend.child.kill('SIGTERM');
          if (signals === 2) {
            await new Promise((r) => setTimeout(r, 100));
            tend.child.kill('SIGTERM');
          }
          const code = await exited;
          const log = tend.output();
          expect(code, log).toBe(exit);
          if (signals === 2) {
            // At once: long before the create in flight could have been answered.
            expect(Date.now() - t0, log).toBeLessThan(LATENCY_MS);
          } else {
            // The create in flight was answered and settled; nothing else was started.
            expect(log).toContain('"kind":"op-done"');
            expect(log).not.toMatch(/"kind":"op-start","address":"sb\.instances/);
          }
          expect(await pendingOperations(d.dir), log).toEqual(pending);

          await sandbox.setFaults({ latencyMs: 0, methods: null });
          const again = await runCli(['apply', d.dir, '--workspace', WORKSPACE, '--no-checks']);
          expect(again.code, again.stdout + again.stderr).toBe(0);
          if (pending.length > 0) expect(again.stdout).toContain('↺ sb.networks/main');
          await quiesce(sandbox);
          await judge(sandbox, d.dir, scenario, new Map(), `${log}\n${again.stdout}`);
        } finally {
          d.cleanup();
        }
      }),
    CASE_TIMEOUT_MS,
  );
});
