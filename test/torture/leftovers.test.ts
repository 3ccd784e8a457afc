// What the journal explains and what it does not: the old object of an interrupted replace is
// finished (deleted) by the next plain `tend apply`, without --yes or --approve-destroy again (the
// replace was approved when it started); an extra object that no journaled replace explains is a
// duplicate, reported by `tend status` and never deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { NETWORK, SCENARIOS } from './scenarios.js';
import {
  CASE_TIMEOUT_MS,
  PARALLEL,
  SandboxPool,
  WORKSPACE,
  freshDir,
  resetSandbox,
  runCase,
} from './torture-kit.js';

describe.concurrent('torture: interrupted replaces and duplicates', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it.each([
    { scenario: 'replace' as const, reason: 'an instance replaced create-before-destroy' },
    { scenario: 'shrink' as const, reason: 'a stateful volume replaced with --approve-destroy' },
  ])(
    'a plain apply finishes the $scenario a crash interrupted ($reason)',
    async ({ scenario }) => {
      const result = await pool.use((sandbox) =>
        runCase(sandbox, {
          scenario: SCENARIOS[scenario],
          crashAt: 'after:ledger:replace-create',
          recoveryFlags: [],
          label: `interrupted ${scenario}, recovered by a plain apply`,
        }),
      );
      expect(result.killed, result.log).toBe(true);
      expect(result.runs, result.log).toBe(2);
      expect(result.log).toMatch(/- sb\.\w+\/\w+ {2}deleted/);
    },
    CASE_TIMEOUT_MS,
  );

  it(
    'reports a duplicate no journaled replace explains, and never deletes it',
    () =>
      pool.use(async (sandbox) => {
        await resetSandbox(sandbox);
        const d = freshDir();
        try {
          d.write(SCENARIOS.create.target, sandbox.url);
          const first = await runCli(['apply', d.dir, '--workspace', WORKSPACE, '--no-checks']);
          expect(first.code, first.stdout + first.stderr).toBe(0);
          // Someone (or a bug) made a second network carrying Tend's marker for the same address.
          const res = await fetch(`${sandbox.url}/networks`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              name: 'main',
              cidr: '10.10.0.0/16',
              tags: {
                'tend.workspace': WORKSPACE,
                'tend.address': NETWORK,
                'tend.op': 'op-elsewhere',
              },
            }),
          });
          expect(res.status).toBe(201);
          const extra = ((await res.json()) as { id: string }).id;

          const apply = await runCli([
            'apply',
            d.dir,
            '--workspace',
            WORKSPACE,
            '--no-checks',
            '--yes',
            '--approve-destroy',
          ]);
          expect(apply.code, apply.stdout + apply.stderr).toBe(0);
          const networks = (await sandbox.objects()).filter((o) => o.type === 'networks');
          expect(networks.map((o) => o.id)).toContain(extra);
          expect(networks).toHaveLength(2);

          const status = await runCli(['status', d.dir, '--workspace', WORKSPACE, '--json']);
          const parsed = JSON.parse(status.stdout) as {
            duplicates: { address: string; objectIds: string[] }[];
          };
          expect(parsed.duplicates).toEqual([{ address: NETWORK, objectIds: [extra] }]);
        } finally {
          d.cleanup();
        }
      }),
    CASE_TIMEOUT_MS,
  );
});
