import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Moves and renames never destroy; adoption is never silent; another workspace's object is never
// taken over. Through the built CLI against a real sandbox process.
const env = { QUICKSTART_ADMIN_PASSWORD: 'moves-secret' };

interface JsonPlan {
  steps: { kind: string; address: string; from?: string; foundBy?: string; owner?: string }[];
}

describe('moves, adoption and conflicts (CLI, real sandbox process)', { timeout: 120_000 }, () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;

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

  const bucket = async (name: string) =>
    (await sandbox.objects()).find((o) => o.type === 'buckets' && o.id === name);

  it('renaming sb.buckets/assets to sb.buckets/static (same spec.name) moves it: zero DELETE requests, and the next plan is empty', async () => {
    const app = ex.read('app.yaml');
    ex.write('app.yaml', app.replace('name: assets\n', 'name: static\n'));
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain('→ sb.buckets/static (moved from sb.buckets/assets)');
    expect(plan.stdout).not.toContain('- sb.buckets/assets');
    expect(plan.stdout).toContain('0 to create, 0 to update, 0 to replace, 0 to delete, 1 to move');
    const json = JSON.parse((await runCli(['plan', ex.dir, '--json'], { env })).stdout) as JsonPlan;
    expect(json.steps.find((s) => s.address === 'sb.buckets/static')).toMatchObject({
      kind: 'move',
      from: 'sb.buckets/assets',
    });

    const before = await sandbox.stats();
    const apply = await runCli(['apply', ex.dir, '--yes', '--json'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const after = await sandbox.stats();
    expect(after.deletes - before.deletes).toBe(0);
    expect(after.creates - before.creates).toBe(0);
    expect(apply.stdout).not.toMatch(/"kind":"op-start"[^\n]*"action":"delete"/);
    expect((await bucket('tend-quickstart-assets'))?.fields['tags']).toMatchObject({
      'tend.address': 'sb.buckets/static',
    });

    const again = await runCli(['plan', ex.dir], { env });
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);
    // And back again, with a declared change at the same time: a move combined with an update.
    ex.write('app.yaml', app.replace('versioning: true', 'versioning: false'));
    const back = await runCli(['plan', ex.dir], { env });
    expect(back.stdout).toContain('→ sb.buckets/assets (moved from sb.buckets/static)');
    expect(back.stdout).toMatch(/then updated in place:\n\s+versioning: true → false/);
    const before2 = await sandbox.stats();
    expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
    expect((await sandbox.stats()).deletes - before2.deletes).toBe(0);
    expect((await bucket('tend-quickstart-assets'))?.fields).toMatchObject({
      versioning: false,
      tags: { 'tend.address': 'sb.buckets/assets' },
    });
    ex.write('app.yaml', app);
    expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
  });

  it('moves a marker-identified network with moved: { from }, keeping its id and everything that references it', async () => {
    const app = ex.read('app.yaml');
    const network = (await sandbox.objects()).find((o) => o.type === 'networks')!;
    const renamed = app
      .replace('name: main\nspec:', 'name: primary\nmoved: { from: sb.networks/main }\nspec:')
      .replaceAll('${sb.networks/main.', '${sb.networks/primary.');
    expect(renamed).toContain('moved: { from: sb.networks/main }');
    ex.write('app.yaml', renamed);
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain('→ sb.networks/primary (moved from sb.networks/main)');
    expect(plan.stdout).toContain('1 to move, 4 unchanged.');

    const before = await sandbox.stats();
    const apply = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const after = await sandbox.stats();
    expect([after.creates - before.creates, after.deletes - before.deletes]).toEqual([0, 0]);
    const now = (await sandbox.objects()).filter((o) => o.type === 'networks');
    expect(now.map((o) => o.id)).toEqual([network.id]);
    expect(now[0]!.fields['tags']).toMatchObject({ 'tend.address': 'sb.networks/primary' });
    const again = await runCli(['plan', ex.dir], { env });
    expect(again.stdout).toContain('No changes.');
    ex.write(
      'app.yaml',
      app.replace('name: main\nspec:', 'name: main\nmoved: { from: sb.networks/primary }\nspec:'),
    );
    expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
    ex.write('app.yaml', app);
    expect((await runCli(['plan', ex.dir], { env })).code).toBe(0);
  });

  it('reports a bad moved.from at file:line:column', async () => {
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app +
        '---\nkind: Resource\ntype: sb.buckets\nname: extra\nmoved: { from: not-an-address }\nspec:\n  name: tend-extra\n' +
        '---\nkind: Resource\ntype: sb.buckets\nname: extra2\nmoved: { from: sb.buckets/assets }\nspec:\n  name: tend-extra2\n',
    );
    const v = await runCli(['validate', ex.dir], { env });
    expect(v.code).toBe(1);
    const out = v.stdout + v.stderr;
    expect(out).toMatch(/app\.yaml:\d+:\d+.*moved\.from.*must be the resource's old address/);
    expect(out).toMatch(/app\.yaml:\d+:\d+.*names sb\.buckets\/assets, which is still declared/);
    ex.write('app.yaml', app);
  });

  it('adopts an object found by its natural key explicitly, and puts the marker on it', async () => {
    const res = await fetch(`${sandbox.url}/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hand-made-bucket' }),
    });
    expect(res.status).toBe(201);
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app +
        '---\nkind: Resource\ntype: sb.buckets\nname: handmade\nspec:\n  name: hand-made-bucket\n',
    );
    const plan = await runCli(['plan', ex.dir, '--json'], { env });
    expect(plan.code).toBe(2);
    const workspace = (JSON.parse(plan.stdout) as { workspace: { name: string } }).workspace.name;
    expect(
      (JSON.parse(plan.stdout) as JsonPlan).steps.find((s) => s.address === 'sb.buckets/handmade'),
    ).toMatchObject({
      kind: 'adopt',
      foundBy: 'natural-key',
    });
    const text = await runCli(['plan', ex.dir], { env });
    expect(text.stdout).toContain(
      '<- sb.buckets/handmade  will be adopted (hand-made-bucket): found by its natural key',
    );
    const apply = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect((await bucket('hand-made-bucket'))?.fields['tags']).toMatchObject({
      'tend.workspace': workspace,
      'tend.address': 'sb.buckets/handmade',
    });
    expect((await runCli(['plan', ex.dir], { env })).code).toBe(0);
    ex.write('app.yaml', app);
    expect((await runCli(['apply', ex.dir, '--yes'], { env })).code).toBe(0);
  });

  it("never takes over an object carrying another workspace's marker: conflict in the plan, apply exits 1", async () => {
    const tags = { 'tend.workspace': 'someone-else', 'tend.address': 'sb.buckets/theirs' };
    const res = await fetch(`${sandbox.url}/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'their-bucket', tags }),
    });
    expect(res.status).toBe(201);
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app +
        '---\nkind: Resource\ntype: sb.buckets\nname: mine\nspec:\n  name: their-bucket\n  versioning: true\n',
    );
    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.stdout).toContain('! sb.buckets/mine');
    expect(plan.stdout).toContain('belongs to workspace `someone-else`');
    const before = await sandbox.stats();
    const apply = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(apply.code).toBe(1);
    expect(apply.stdout + apply.stderr).toContain(
      "Tend never takes over another workspace's object",
    );
    const after = await sandbox.stats();
    expect([after.creates, after.updates, after.deletes]).toEqual([
      before.creates,
      before.updates,
      before.deletes,
    ]);
    expect((await bucket('their-bucket'))?.fields).toMatchObject({ versioning: false, tags });
    ex.write('app.yaml', app);
  });
});
