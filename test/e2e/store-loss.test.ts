import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  executePrune,
  observe,
  openWorkspace,
  planPrune,
  systemClock,
  tendActor,
} from '../../src/engine/index.js';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// The environment is the truth: losing Tend's database loses nothing but history.
const env = { QUICKSTART_ADMIN_PASSWORD: 'store-loss-secret' };

describe('losing the store (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  const loseStore = () => rmSync(join(ex.dir, '.tend'), { recursive: true, force: true });

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const r = await runCli(['apply', ex.dir], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('rediscovers every managed object by its marker: the plan is empty and apply creates nothing', async () => {
    const before = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    loseStore();
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.stdout).toContain('No changes. 5 resources match the intent.');
    expect(plan.code).toBe(0);
    loseStore();
    const apply = await runCli(['apply', ex.dir, '--json'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).not.toContain('"kind":"op-start"');
    const after = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    expect(after).toEqual(before);
  });

  it('lists objects carrying the marker that no intent declares as orphans, and never deletes them', async () => {
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app.replace(/---\nkind: Resource\ntype: sb\.buckets[\s\S]*?versioning: true\n/, ''),
    );
    loseStore();
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code).toBe(0);
    const apply = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(apply.code).toBe(0);
    expect((await sandbox.objects()).some((o) => o.type === 'buckets')).toBe(true);

    const status = await runCli(['status', ex.dir, '--json'], { env });
    const parsed = JSON.parse(status.stdout) as {
      orphans: { type: string; id: string; address?: string }[];
    };
    expect(parsed.orphans).toEqual([
      { type: 'sb.buckets', id: 'tend-quickstart-assets', address: 'sb.buckets/assets' },
    ]);
    const text = await runCli(['status', ex.dir], { env });
    expect(text.stdout).toContain(
      "1 orphan (carry Tend's marker, declared by no intent; never deleted automatically):",
    );
    expect(text.stdout).toContain('sb.buckets tend-quickstart-assets');
    ex.write('app.yaml', app);
  });

  it('prune deletes an orphan left by a resource removed before the store was lost, and nothing else', async () => {
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app.replace(/---\nkind: Resource\ntype: sb\.buckets[\s\S]*?versioning: true\n/, ''),
    );
    loseStore();
    const before = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    expect(before).toContain('buckets/tend-quickstart-assets');
    // The application layer's `tend prune` is this, over the same workspace the CLI uses.
    const ws = await openWorkspace({ dir: ex.dir, env: { ...process.env, ...env } });
    try {
      const seen = await observe(ws, { visibilityWindowMs: 0, now: new Date() });
      const plan = planPrune(ws, seen, { approveDestroy: false });
      expect(plan.toDelete.map((t) => `${t.type} ${t.id} ${t.address}`)).toEqual([
        'sb.buckets tend-quickstart-assets sb.buckets/assets',
      ]);
      const result = await executePrune(ws, plan, {
        actor: tendActor('prune'),
        clock: systemClock,
        report: () => {},
      });
      expect(result.failed).toEqual([]);
      expect(result.deleted).toHaveLength(1);
    } finally {
      await ws.close();
    }
    const after = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    expect(after).toEqual(before.filter((o) => o !== 'buckets/tend-quickstart-assets'));
    const status = await runCli(['status', ex.dir, '--json'], { env });
    expect((JSON.parse(status.stdout) as { orphans: unknown[] }).orphans).toEqual([]);
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.stdout).toContain('No changes.');
    ex.write('app.yaml', app);
  });
});
