import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExampleFiles, ROOT, runCli, startCli, type CliProcess } from '../support/cli.js';
import { startUnleash, UNLEASH, type UnleashHandle } from '../support/unleash.js';

// Issue 12, item 4: feature flags on a real Unleash 6.10.1 (on a PostgreSQL cluster of its own),
// managed through the built CLI from Unleash's own OpenAPI document plus
// examples/unleash/specs/unleash.overlay.yaml, with Unleash's event log read as the audit feed. One
// server and one intent directory for the whole suite; the steps build on each other, in order.

const EXAMPLE_ENDPOINT = 'http://127.0.0.1:4242';
const STRATEGIES =
  '/api/admin/projects/default/features/checkout-v2/environments/development/strategies';

interface DriftJson {
  fields: {
    address: string;
    field: string;
    declared: unknown;
    observed: unknown;
    changedBy: { actor: string; source: string };
    decision: { decision: string };
  }[];
  drifted: boolean;
}

interface HistoryJson {
  changes: { actor: string; source: string; action: string; address: string; fields: string[] }[];
}

describe.skipIf(UNLEASH.skip)(
  `Unleash end to end (CLI, real unleash-server)${UNLEASH.note}`,
  () => {
    let unleash: UnleashHandle;
    let dir: string;
    let env: Record<string, string>;
    let run: CliProcess | undefined;

    const tend = (args: string[]) => runCli(args, { env, timeoutMs: 60_000 });
    const main = () => join(dir, 'main.yaml');

    /** The rollout strategy of checkout-v2 in development, as Unleash has it. */
    async function rollout(): Promise<{ id: string; parameters: Record<string, string> }> {
      const r = await unleash.api('GET', STRATEGIES);
      expect(r.status).toBe(200);
      const list = r.body as { id: string; title: string; parameters: Record<string, string> }[];
      const found = list.find((s) => s.title === 'gradual rollout');
      expect(found, JSON.stringify(list)).toBeDefined();
      return found!;
    }

    beforeAll(async () => {
      unleash = await startUnleash();
      dir = mkdtempSync(join(tmpdir(), 'tend-unleash-intent-'));
      copyExampleFiles(join(ROOT, 'examples', 'unleash'), dir);
      const text = readFileSync(main(), 'utf8');
      expect(text).toContain(`endpoint: ${EXAMPLE_ENDPOINT}`);
      writeFileSync(
        main(),
        text.replace(`endpoint: ${EXAMPLE_ENDPOINT}`, `endpoint: ${unleash.url}`),
      );
      env = { UNLEASH_TOKEN: unleash.tendToken };
    }, 150_000);

    afterAll(async () => {
      await run?.stop('SIGKILL');
      await unleash?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 30_000);

    it('applies two flags and their strategies from empty', async () => {
      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toContain('Apply complete: 4 converged.');

      const flag = await unleash.api('GET', '/api/admin/projects/default/features/checkout-v2');
      expect(flag.status).toBe(200);
      expect(flag.body).toMatchObject({
        name: 'checkout-v2',
        type: 'release',
        description: 'The new checkout page',
        project: 'default',
      });
      expect((await rollout()).parameters).toEqual({
        rollout: '25',
        stickiness: 'default',
        groupId: 'checkout-v2',
      });
      const banner = await unleash.api(
        'GET',
        '/api/admin/projects/default/features/maintenance-banner/environments/development/strategies',
      );
      expect(banner.body).toEqual([
        expect.objectContaining({ name: 'default', title: 'everyone' }),
      ]);
    });

    it('plans nothing afterwards', async () => {
      const plan = await tend(['plan', dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes. 4 resources match the intent.');
    });

    it("attributes a person's out-of-band changes to her through Unleash's event log, and reverts them", async () => {
      const { id } = await rollout();
      // alice, with her own token, through Unleash's own API: a strategy and a flag's description.
      const put = await unleash.api('PUT', `${STRATEGIES}/${id}`, {
        name: 'flexibleRollout',
        title: 'gradual rollout',
        parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout-v2' },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const meta = await unleash.api('PUT', '/api/admin/projects/default/features/checkout-v2', {
        type: 'release',
        description: 'alice was here',
      });
      expect(meta.status, JSON.stringify(meta.body)).toBe(200);

      const drift = await tend(['drift', dir, '--json']);
      expect(drift.code, drift.stdout + drift.stderr).toBe(1);
      const report = JSON.parse(drift.stdout) as DriftJson;
      expect(report.drifted).toBe(true);
      const fields = report.fields.map((f) => ({
        address: f.address,
        field: f.field,
        declared: f.declared,
        observed: f.observed,
        changedBy: f.changedBy,
        decision: f.decision.decision,
      }));
      expect(fields).toEqual(
        expect.arrayContaining([
          {
            address: 'unleash.features/checkout-v2',
            field: 'description',
            declared: 'The new checkout page',
            observed: 'alice was here',
            changedBy: { actor: 'alice', source: 'audit' },
            decision: 'enforce',
          },
          {
            address: 'unleash.feature-strategies/checkout-v2-rollout',
            field: 'parameters.rollout',
            declared: '25',
            observed: '100',
            changedBy: { actor: 'alice', source: 'audit' },
            decision: 'enforce',
          },
        ]),
      );
      expect(fields).toHaveLength(2);

      const apply = await tend(['apply', dir]);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      expect(apply.stdout).toMatch(/~ unleash\.feature-strategies\/checkout-v2-rollout\s+updated/);
      expect(apply.stdout).toMatch(/~ unleash\.features\/checkout-v2\s+updated/);
      expect((await rollout()).parameters['rollout']).toBe('25');
      const flag = await unleash.api('GET', '/api/admin/projects/default/features/checkout-v2');
      expect(flag.body).toMatchObject({ description: 'The new checkout page' });

      const history = await tend(['history', dir, '--json']);
      expect(history.code, history.stderr).toBe(0);
      const { changes } = JSON.parse(history.stdout) as HistoryJson;
      const by = (address: string) =>
        changes.filter((c) => c.address === address).map((c) => [c.actor, c.source, c.action]);
      expect(by('unleash.feature-strategies/checkout-v2-rollout')).toEqual([
        ['tend', 'tend', 'create'],
        ['alice', 'audit', 'update'],
        ['tend', 'tend', 'update'],
      ]);
      expect(by('unleash.features/checkout-v2')).toEqual([
        ['tend', 'tend', 'create'],
        ['alice', 'audit', 'update'],
        ['tend', 'tend', 'update'],
      ]);

      const plan = await tend(['plan', dir]);
      expect(plan.stdout).toContain('No changes. 4 resources match the intent.');
    });

    it('tend run wakes on the event log when a person changes a strategy, and puts it back', async () => {
      // An interval longer than the test: only the feed (polled, Unleash's log cannot wait) wakes it.
      run = startCli(['run', dir, '--interval', '600'], { env });
      await run.waitFor(/pass 1 done/, 30_000);
      const { id } = await rollout();
      const put = await unleash.api('PUT', `${STRATEGIES}/${id}`, {
        name: 'flexibleRollout',
        title: 'gradual rollout',
        parameters: { rollout: '75', stickiness: 'default', groupId: 'checkout-v2' },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      await run.waitFor(/audit: alice updated unleash\.feature-strategies/, 20_000);
      await run.waitFor(/~ unleash\.feature-strategies\/checkout-v2-rollout\s+updated/, 20_000);
      await run.waitFor(/pass 2 done/, 20_000);
      expect(await run.stop()).toBe(0);
      run = undefined;
      expect((await rollout()).parameters['rollout']).toBe('25');
    });

    it('a flag removed from the intent is deleted — Unleash archives it — with its strategy first', async () => {
      const text = readFileSync(main(), 'utf8');
      const cut = text.indexOf(
        '---\nkind: Resource\ntype: unleash.features\nname: maintenance-banner',
      );
      expect(cut).toBeGreaterThan(0);
      writeFileSync(main(), text.slice(0, cut));

      const apply = await tend(['apply', dir, '--yes']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const strategyAt = apply.stdout.search(
        /- unleash\.feature-strategies\/maintenance-banner-everyone\s+deleted/,
      );
      const flagAt = apply.stdout.search(/- unleash\.features\/maintenance-banner\s+deleted/);
      expect(strategyAt, apply.stdout).toBeGreaterThan(0);
      expect(flagAt).toBeGreaterThan(strategyAt);

      const gone = await unleash.api(
        'GET',
        '/api/admin/projects/default/features/maintenance-banner',
      );
      expect(gone.status).toBe(404);
      const archive = await unleash.api('GET', '/api/admin/archive/features');
      const archived = (archive.body as { features: { name: string }[] }).features.map(
        (f) => f.name,
      );
      expect(archived).toEqual(['maintenance-banner']);

      const plan = await tend(['plan', dir]);
      expect(plan.stdout).toContain('No changes. 2 resources match the intent.');
    });
  },
);
