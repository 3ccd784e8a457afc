import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, ROOT, runCli, startCli, type CliProcess } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// Tend is not alone: other tend processes, other folders, edits of the intent while `tend run` is
// going, and platforms that refuse credentials. Every case runs the built CLI against a real sandbox
// process.

const env = { QUICKSTART_ADMIN_PASSWORD: 'not-alone-secret' };
const HOLDER =
  /workspace `[a-z0-9._-]+` is held by `tend (apply|run)` \(pid \d+ on [^)]+\) since \d\d:\d\d:\d\d UTC; retry, or pass --lock-timeout/;

/** The final JSON document of `tend apply --json` (after the JSON lines of events). */
function applySummary(stdout: string): {
  verdict: string;
  converged: number;
  errors: number;
  workspace: { name: string; source: string };
} {
  return JSON.parse(stdout.slice(stdout.lastIndexOf('\n{\n') + 1)) as ReturnType<
    typeof applySummary
  >;
}

describe('one writer per workspace', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  let tend: CliProcess | undefined;

  beforeAll(async () => {
    // Slow requests keep the first apply busy long enough for the second to find it holding the lease.
    sandbox = await startSandboxProcess(['--latency', '150']);
  });
  afterEach(async () => {
    await tend?.stop('SIGKILL');
    tend = undefined;
    ex?.cleanup();
    await fetch(`${sandbox.url}/_sandbox/reset`, { method: 'POST' });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it('two applies started together: one object per declared resource; the second exits 1 naming the holder', async () => {
    ex = copyExample('quickstart', sandbox.url);
    const [a, b] = await Promise.all([
      runCli(['apply', ex.dir], { env }),
      runCli(['apply', ex.dir], { env }),
    ]);
    const codes = [a.code, b.code].sort();
    expect(codes, a.stdout + a.stderr + b.stdout + b.stderr).toEqual([0, 1]);
    const loser = a.code === 1 ? a : b;
    expect(loser.stderr).toMatch(HOLDER);
    expect(loser.stderr).toContain('`tend apply`');
    const objects = await sandbox.objects();
    expect(objects).toHaveLength(5);
    expect((await sandbox.stats()).creates).toBe(5);
  });

  it('with --lock-timeout the second apply waits for the first, then finds nothing to do', async () => {
    ex = copyExample('quickstart', sandbox.url);
    const [a, b] = await Promise.all([
      runCli(['apply', ex.dir, '--lock-timeout', '60'], { env }),
      runCli(['apply', ex.dir, '--lock-timeout', '60'], { env }),
    ]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(await sandbox.objects()).toHaveLength(5);
    expect((await sandbox.stats()).creates).toBe(5);
  });

  it('apply while tend run holds the workspace exits 1 naming tend run; read-only commands do not wait', async () => {
    ex = copyExample('quickstart', sandbox.url);
    tend = startCli(['run', ex.dir, '--interval', '300'], { env });
    await tend.waitFor(/pass 1 done/, 60_000);
    const apply = await runCli(['apply', ex.dir], { env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(HOLDER);
    expect(apply.stderr).toContain('`tend run`');

    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code, plan.stderr).toBe(0);
    const status = await runCli(['status', ex.dir, '--json'], { env });
    const parsed = JSON.parse(status.stdout) as { lease?: { holder: { command: string } } };
    expect(parsed.lease?.holder.command).toBe('tend run');
    expect((await sandbox.stats()).creates).toBe(5);
  });

  it('takes over the lease of a writer killed with SIGKILL (its pid is gone)', async () => {
    ex = copyExample('quickstart', sandbox.url);
    tend = startCli(['run', ex.dir, '--interval', '300'], { env });
    await tend.waitFor(/pass 1 done/, 60_000);
    await tend.stop('SIGKILL');
    tend = undefined;
    const apply = await runCli(['apply', ex.dir, '--json'], { env });
    expect(apply.code, apply.stderr).toBe(0);
    expect(applySummary(apply.stdout).verdict).toBe('ok');
  });
});

describe('two folders side by side on one platform', () => {
  let sandbox: SandboxHandle;
  const dirs: ReturnType<typeof copyExample>[] = [];
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  });
  afterAll(async () => {
    for (const d of dirs) d.cleanup();
    await sandbox?.stop();
  });

  it('each gets its own workspace: neither deletes, adopts nor lists the other’s objects', async () => {
    const a = copyExample('quickstart', sandbox.url);
    const b = copyExample('quickstart', sandbox.url);
    dirs.push(a, b);
    // The same addresses in both folders, other platform names in the second.
    const renamed = a
      .read('app.yaml')
      .replace('\n  name: main\n', '\n  name: main-b\n')
      .replace('\n  name: web-1\n', '\n  name: web-b\n')
      .replace('\n  name: web-data\n', '\n  name: web-data-b\n')
      .replace('\n  name: tend-quickstart-assets\n', '\n  name: tend-quickstart-assets-b\n')
      .replace('\n  name: api\n', '\n  name: api-b\n');
    expect(renamed.match(/-b\n/g)).toHaveLength(5);
    b.write('app.yaml', renamed);

    const first = await runCli(['apply', a.dir, '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    const second = await runCli(['apply', b.dir, '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    const wa = applySummary(first.stdout).workspace;
    const wb = applySummary(second.stdout).workspace;
    expect(wa.source).toBe('folder');
    expect(wa.name).not.toBe(wb.name);

    const objects = await sandbox.objects();
    expect(objects).toHaveLength(10);
    expect((await sandbox.stats()).deletes).toBe(0);
    const owners = objects.map(
      (o) => (o.fields['tags'] as Record<string, string>)['tend.workspace'],
    );
    expect(owners.filter((w) => w === wa.name)).toHaveLength(5);
    expect(owners.filter((w) => w === wb.name)).toHaveLength(5);

    for (const dir of [a.dir, b.dir]) {
      const plan = await runCli(['plan', dir, '--json'], { env });
      expect(plan.code, plan.stdout).toBe(0);
      expect((JSON.parse(plan.stdout) as { orphans: unknown[] }).orphans).toEqual([]);
    }
  });

  it('identical copies: the second never takes over the first’s objects (a conflict, exit 1)', async () => {
    await fetch(`${sandbox.url}/_sandbox/reset`, { method: 'POST' });
    const a = copyExample('quickstart', sandbox.url);
    const b = copyExample('quickstart', sandbox.url);
    dirs.push(a, b);
    const first = await runCli(['apply', a.dir, '--json'], { env });
    expect(first.code, first.stderr).toBe(0);
    const wa = applySummary(first.stdout).workspace.name;
    const before = await sandbox.stats();

    // The bucket's name is its identity (natural key): b finds a's bucket, carrying a's marker.
    const plan = await runCli(['plan', b.dir, '--json'], { env });
    const steps = (
      JSON.parse(plan.stdout) as { steps: { address: string; kind: string; owner?: string }[] }
    ).steps;
    expect(steps.find((s) => s.address === 'sb.buckets/assets')).toMatchObject({
      kind: 'conflict',
      owner: wa,
    });
    const second = await runCli(['apply', b.dir], { env });
    expect(second.code).toBe(1);
    expect(second.stdout + second.stderr).toContain(wa);

    const after = await sandbox.stats();
    expect(after.deletes - before.deletes).toBe(0);
    const bucket = (await sandbox.objects()).find((o) => o.type === 'buckets')!;
    expect((bucket.fields['tags'] as Record<string, string>)['tend.workspace']).toBe(wa);
    const again = await runCli(['plan', a.dir], { env });
    expect(again.code, again.stdout).toBe(0);
  });

  it('a Workspace document names the workspace', async () => {
    const c = copyExample('quickstart', sandbox.url);
    dirs.push(c);
    c.write('workspace.yaml', 'kind: Workspace\nname: shop-prod\n');
    const v = await runCli(['validate', c.dir, '--json']);
    expect(v.code, v.stderr).toBe(0);
    expect((JSON.parse(v.stdout) as { workspace: unknown }).workspace).toEqual({
      name: 'shop-prod',
      source: 'intent',
    });
    c.write('workspace.yaml', 'kind: Workspace\nname: Shop Prod\n');
    const bad = await runCli(['validate', c.dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('workspace.yaml:2:7');
    expect(bad.stderr).toContain('workspace name "Shop Prod" is not valid');
  });
});

describe('tend run follows the intent and stops when told', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  let tend: CliProcess | undefined;
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  });
  afterEach(async () => {
    await tend?.stop('SIGKILL');
    tend = undefined;
    ex?.cleanup();
    await fetch(`${sandbox.url}/_sandbox/reset`, { method: 'POST' });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it('--max-passes 2 exits after two passes although the platform has an audit feed', async () => {
    ex = copyExample('quickstart', sandbox.url);
    const t0 = Date.now();
    const r = await runCli(['run', ex.dir, '--max-passes', '2', '--interval', '1'], {
      env,
      timeoutMs: 60_000,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('ran 2 passes.');
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('picks up an added resource, keeps the last valid intent while a file is broken (no prune), and recovers', async () => {
    ex = copyExample('quickstart', sandbox.url);
    tend = startCli(['run', ex.dir, '--interval', '1'], { env });
    await tend.waitFor(/pass 1 done/, 60_000);
    expect(await sandbox.objects()).toHaveLength(5);

    ex.write(
      'extra.yaml',
      'kind: Resource\ntype: sb.buckets\nname: logs\nspec:\n  name: tend-quickstart-logs\n',
    );
    await tend.waitFor(/intent changed: reloaded \(6 resources\)/, 30_000);
    await waitUntil(async () => (await sandbox.objects()).length === 6);

    // A broken edit of the file that declares everything: the loop keeps the last valid intent.
    const app = ex.read('app.yaml');
    ex.write('app.yaml', `${app}\n  broken: [\n`);
    await tend.waitFor(/does not load; the last valid intent stays in force/, 30_000);
    const before = tend.output().length;
    await waitUntil(() => /pass \d+ done/.test(tend!.output().slice(before)));
    expect(await sandbox.objects()).toHaveLength(6);
    expect((await sandbox.stats()).deletes).toBe(0);

    // Fixed, with the bucket removed: now it is deleted (a valid intent prunes what it dropped).
    ex.write('app.yaml', app);
    writeFileSync(join(ex.dir, 'extra.yaml'), '# nothing here any more\n');
    await tend.waitFor(/intent changed: reloaded \(5 resources\)/, 30_000);
    await waitUntil(async () => (await sandbox.objects()).length === 5);
  });
});

describe('a platform that refuses the credentials', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;
  beforeAll(async () => {
    sandbox = await startSandboxProcess(['--api-key-from-env', 'SB_KEY'], {
      env: { SB_KEY: 'the-right-key' },
    });
    ex = copyExample('quickstart', sandbox.url);
    // The document from a file: the platform would refuse to serve it with the wrong key.
    copyFileSync(
      join(ROOT, 'src', 'sandbox', 'openapi.json'),
      join(ex.dir, 'sandbox.openapi.json'),
    );
    ex.write(
      'provider.yaml',
      readFileSync(join(ex.dir, 'provider.yaml'), 'utf8')
        .replace(/^spec: .*$/m, 'spec: ./sandbox.openapi.json')
        .concat('auth: { header: X-API-Key, fromEnv: SB_KEY }\n'),
    );
  });
  afterAll(async () => {
    ex?.cleanup();
    await sandbox?.stop();
  });

  it('apply exits 1; status names the provider unauthorized; run keeps going and exits 1 after its passes', async () => {
    const wrong = { ...env, SB_KEY: 'a-wrong-key' };
    const apply = await runCli(['apply', ex.dir], { env: wrong });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toContain('not authorized');

    const status = await runCli(['status', ex.dir, '--json', '--offline'], { env: wrong });
    expect(status.code).toBe(1);
    const parsed = JSON.parse(status.stdout) as {
      providers: { name: string; state: string }[];
      resources: { state: string; message: string }[];
    };
    expect(parsed.providers).toMatchObject([{ name: 'sb', state: 'unauthorized' }]);
    expect(parsed.resources[0]!.message).toMatch(/^unauthorized: cannot observe sb/);

    const run = await runCli(['run', ex.dir, '--max-passes', '2', '--interval', '1'], {
      env: wrong,
      timeoutMs: 60_000,
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('ran 2 passes.');
    expect(run.stdout).toMatch(/the last pass \(2\) could not run: .*not authorized/);

    const key = { ...env, SB_KEY: 'the-right-key' };
    const right = await runCli(['apply', ex.dir, '--no-checks'], { env: key });
    expect(right.code, right.stderr).toBe(0);
    const after = await runCli(['status', ex.dir, '--json', '--offline'], { env: key });
    expect(JSON.parse(after.stdout)).toMatchObject({ providers: [{ name: 'sb', state: 'ok' }] });
  });
});

async function waitUntil(cond: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 100));
  }
}
