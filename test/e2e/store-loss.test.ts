import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  it('rediscovers every managed object by its marker: the plan adopts them explicitly, apply sends nothing, then the plan is empty', async () => {
    const before = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    loseStore();
    const plan = await runCli(['plan', ex.dir], { env });
    // Adoption is never silent: Tend had no record of these objects.
    expect(plan.stdout).toContain('<- sb.networks/main  will be adopted');
    expect(plan.stdout).toContain(
      '0 to create, 0 to update, 0 to replace, 0 to delete, 5 to adopt',
    );
    expect(plan.code).toBe(2);
    loseStore();
    const stats = await sandbox.stats();
    const apply = await runCli(['apply', ex.dir, '--json'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const sent = await sandbox.stats();
    // Recording an adopted object whose marker is already right sends nothing to the platform.
    expect([sent.creates, sent.updates, sent.deletes]).toEqual([
      stats.creates,
      stats.updates,
      stats.deletes,
    ]);
    const after = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    expect(after).toEqual(before);
    const again = await runCli(['plan', ex.dir], { env });
    expect(again.stdout).toContain('No changes. 5 resources match the intent.');
    expect(again.code).toBe(0);
  });

  it('lists objects carrying the marker that no intent declares as orphans, and never deletes them', async () => {
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app.replace(/---\nkind: Resource\ntype: sb\.buckets[\s\S]*?versioning: true\n/, ''),
    );
    loseStore();
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.stdout).toContain('4 to adopt');
    // The bucket removed before the store was lost is an orphan: listed, never planned for deletion.
    expect(plan.stdout).not.toMatch(/^\s*-\s+sb\.buckets/m);
    expect(plan.stdout).toContain('? sb.buckets tend-quickstart-assets  (was sb.buckets/assets)');
    expect(plan.code).toBe(2);
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
      "1 orphan (carry this workspace's marker, declared by nothing; never deleted by apply — see tend prune):",
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
    const listed = await runCli(['plan', ex.dir, '--json'], { env });
    expect((JSON.parse(listed.stdout) as { orphans: unknown[] }).orphans).toEqual([
      { type: 'sb.buckets', id: 'tend-quickstart-assets', address: 'sb.buckets/assets' },
    ]);
    // Without --yes (and no terminal to ask on), prune lists and deletes nothing.
    const asked = await runCli(['prune', ex.dir], { env });
    expect(asked.code).toBe(1);
    expect(asked.stdout).toContain('- sb.buckets tend-quickstart-assets  (was sb.buckets/assets)');
    expect(asked.stderr).toContain('refusing to delete without confirmation: re-run with --yes');
    expect((await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort()).toEqual(before);

    const pruned = await runCli(['prune', ex.dir, '--yes', '--json'], { env });
    expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0);
    const report = JSON.parse(pruned.stdout) as {
      verdict: string;
      result: { deleted: { type: string; id: string; address: string }[]; failed: unknown[] };
    };
    expect(report.verdict).toBe('ok');
    expect(report.result.failed).toEqual([]);
    expect(report.result.deleted.map((t) => `${t.type} ${t.id} ${t.address}`)).toEqual([
      'sb.buckets tend-quickstart-assets sb.buckets/assets',
    ]);
    const after = (await sandbox.objects()).map((o) => `${o.type}/${o.id}`).sort();
    expect(after).toEqual(before.filter((o) => o !== 'buckets/tend-quickstart-assets'));
    const status = await runCli(['status', ex.dir, '--json'], { env });
    expect((JSON.parse(status.stdout) as { orphans: unknown[] }).orphans).toEqual([]);
    // Nothing else was touched: the declared resources are only to be adopted (the store was lost).
    const plan = await runCli(['plan', ex.dir, '--json'], { env });
    const counts = (JSON.parse(plan.stdout) as { counts: Record<string, number> }).counts;
    expect(counts).toMatchObject({ create: 0, update: 0, replace: 0, delete: 0, adopt: 4 });
    const again = await runCli(['prune', ex.dir, '--yes'], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No orphans: nothing to prune.');
    ex.write('app.yaml', app);
  });
});
