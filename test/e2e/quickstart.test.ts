import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// The quickstart intent, applied through the real CLI against the real sandbox process.
const SECRET = 'e2e-known-secret-4f1b9c';
const env = { QUICKSTART_ADMIN_PASSWORD: SECRET };

describe('tend on the quickstart (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  const store = () => join(ex.dir, '.tend', 'tend.db');

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('validates, plans creates (exit 2), applies, and then plans nothing (exit 0)', async () => {
    const v = await runCli(['validate', ex.dir], { env });
    expect(v.stderr + v.stdout).toContain('5 resources, no errors');
    expect(v.code).toBe(0);

    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('+ sb.networks/main');
    expect(plan.stdout).toContain('network_id: (known after apply)');
    expect(plan.stdout).toContain(
      'Plan: 5 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged.',
    );

    const apply = await runCli(['apply', ex.dir, '--json'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const summary = JSON.parse(apply.stdout.slice(apply.stdout.lastIndexOf('\n{\n') + 1)) as {
      converged: number;
      workspace: { name: string; source: string };
      resources: Record<string, { state: string; checks: { ok: boolean }[] }>;
    };
    expect(summary.converged).toBe(5);
    expect(summary.resources['sb.instances/web']!.checks.map((c) => c.ok)).toEqual([true, true]);

    const objects = await sandbox.objects();
    expect(objects).toHaveLength(5);
    // No Workspace document and no --workspace: the name is the folder's, with a hash of its path.
    expect(summary.workspace.source).toBe('folder');
    expect(summary.workspace.name).toMatch(/^[a-z0-9._-]+-[0-9a-f]{6}$/);
    for (const o of objects) {
      expect(o.fields['tags']).toMatchObject({ 'tend.workspace': summary.workspace.name });
    }

    const again = await runCli(['plan', ex.dir], { env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
  });

  it('never writes the secret to the store (or anything else under .tend/)', () => {
    const files = readdirSync(join(ex.dir, '.tend'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name));
    expect(files.some((f) => f.endsWith('tend.db'))).toBe(true);
    for (const f of files) {
      expect(readFileSync(f).includes(SECRET), f).toBe(false);
    }
    expect(readFileSync(store()).length).toBeGreaterThan(0);
  });

  it('plans a volume shrink as a replace decided by the platform, and a grow as an update', async () => {
    const app = ex.read('app.yaml');
    ex.write('app.yaml', app.replace('  size: 20', '  size: 10'));
    const shrink = await runCli(['plan', ex.dir, '--json'], { env });
    expect(shrink.code).toBe(2);
    const plan = JSON.parse(shrink.stdout) as {
      steps: {
        kind: string;
        address: string;
        decidedBy?: string;
        forcedBy?: string[];
        gated?: boolean;
      }[];
      gated: string[];
    };
    expect(plan.steps.find((s) => s.address === 'sb.volumes/data')).toMatchObject({
      kind: 'replace',
      decidedBy: 'platform',
      forcedBy: ['size'],
      gated: true,
    });
    const text = await runCli(['plan', ex.dir], { env });
    expect(text.stdout).toContain('-/+ sb.volumes/data');
    expect(text.stdout).toContain("decided by the platform's lifecycle endpoint");
    expect(text.stdout).toContain('size: 20 → 10   # forces replacement');
    expect(text.stdout).toContain('gated: stateful resource; needs --approve-destroy');
    expect(text.stdout).toContain('blast radius: none (nothing declared depends on it)');

    ex.write('app.yaml', app.replace('  size: 20', '  size: 30'));
    const grow = await runCli(['plan', ex.dir, '--json'], { env });
    const growPlan = JSON.parse(grow.stdout) as { steps: { kind: string; address: string }[] };
    expect(growPlan.steps.find((s) => s.address === 'sb.volumes/data')?.kind).toBe('update');
    ex.write('app.yaml', app);
  });

  it('shows the blast radius of a replace: replacing the instance reaches the volume attached to it', async () => {
    const app = ex.read('app.yaml');
    ex.write('app.yaml', app.replace('image: debian-12', 'image: debian-13'));
    const r = await runCli(['plan', ex.dir], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('-/+ sb.instances/web');
    expect(r.stdout).toContain('blast radius: sb.volumes/data');
    expect(r.stdout).toMatch(
      /~ sb\.volumes\/data[\s\S]*instance_id: "i-[0-9a-f]+" → \(known after apply\)/,
    );
    ex.write('app.yaml', app);
  });

  it('blocks a stateful replace without approval (exit 3), then replaces create-before-destroy with it', async () => {
    const app = ex.read('app.yaml');
    ex.write('app.yaml', app.replace('  size: 20', '  size: 10'));
    const before = (await sandbox.objects()).find((o) => o.type === 'volumes')!;

    const blocked = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(blocked.code).toBe(3);
    expect(blocked.stdout).toContain('blocked');
    expect((await sandbox.objects()).filter((o) => o.type === 'volumes').map((o) => o.id)).toEqual([
      before.id,
    ]);

    const approved = await runCli(['apply', ex.dir, '--yes', '--approve-destroy'], { env });
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    const vols = (await sandbox.objects()).filter((o) => o.type === 'volumes');
    expect(vols).toHaveLength(1);
    expect(vols[0]!.id).not.toBe(before.id);
    expect(vols[0]!.fields['size']).toBe(10);
    // The replacement was created (and verified) before the old volume was deleted.
    const out = approved.stdout;
    expect(out.indexOf(`created ${vols[0]!.id}`)).toBeGreaterThan(-1);
    expect(out.indexOf(`deleted ${before.id}`)).toBeGreaterThan(
      out.indexOf(`created ${vols[0]!.id}`),
    );
    ex.write('app.yaml', app.replace('  size: 20', '  size: 10'));
    expect((await runCli(['plan', ex.dir], { env })).code).toBe(0);
  });

  it('deletes a resource removed from the intent, but never an object without its marker', async () => {
    const res = await fetch(`${sandbox.url}/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'someone-elses-bucket' }),
    });
    expect(res.status).toBe(201);
    const app = ex.read('app.yaml');
    const withoutBucket = app.replace(
      /---\nkind: Resource\ntype: sb\.buckets[\s\S]*?versioning: true\n/,
      '',
    );
    expect(withoutBucket).not.toContain('sb.buckets');
    ex.write('app.yaml', withoutBucket);
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.stdout).toContain('- sb.buckets/assets');
    expect(plan.stdout).not.toContain('someone-elses-bucket');
    const apply = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const buckets = (await sandbox.objects()).filter((o) => o.type === 'buckets').map((o) => o.id);
    expect(buckets).toEqual(['someone-elses-bucket']);
    ex.write('app.yaml', app);
  });

  it('refuses destructive steps without --yes when stdin is not a terminal', async () => {
    const app = ex.read('app.yaml');
    ex.write('app.yaml', app.replace(/---\nkind: Resource\ntype: sb\.services[\s\S]*$/, ''));
    const r = await runCli(['apply', ex.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'refusing 1 destructive step without confirmation: re-run with --yes',
    );
    expect((await sandbox.objects()).some((o) => o.type === 'services')).toBe(true);
    ex.write('app.yaml', app);
  });

  it('reports status and history with --json', async () => {
    expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
    const st = await runCli(['status', ex.dir, '--json'], { env });
    expect(st.code).toBe(0);
    const status = JSON.parse(st.stdout) as {
      resources: { address: string; state: string }[];
      orphans: unknown[];
    };
    expect(status.resources.map((r) => r.state)).toEqual(
      Array(status.resources.length).fill('converged'),
    );
    const h = await runCli(['history', ex.dir, '--json'], { env });
    const history = JSON.parse(h.stdout) as {
      changes: { actor: string; action: string }[];
      ledger: { ok: boolean };
    };
    expect(history.ledger.ok).toBe(true);
    expect(
      history.changes.filter((c) => c.actor === 'tend' && c.action === 'create').length,
    ).toBeGreaterThanOrEqual(5);
  });
});
