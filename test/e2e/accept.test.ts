import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// `tend accept` against a real sandbox process: a field changed out of band is taken into the
// intent with the smallest patch, comments and all, printed, written, or committed on a branch.

const env = {
  QUICKSTART_ADMIN_PASSWORD: 'accept-test-secret',
  GIT_AUTHOR_NAME: 'Tend Test',
  GIT_AUTHOR_EMAIL: 'tend@example.test',
  GIT_COMMITTER_NAME: 'Tend Test',
  GIT_COMMITTER_EMAIL: 'tend@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

const DECLARED = '  replicas: 2 # two is enough';

describe('tend accept (CLI, real sandbox process)', { timeout: 90_000 }, () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let original: string;

  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: ex.dir, env: { ...process.env, ...env } })
      .toString()
      .trim();

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    original = ex
      .read('app.yaml')
      .replace('  replicas: 2\n', `${DECLARED}\n`)
      .replace('  image: nginx:1.27\n', "  # the image is pinned\n  image: 'nginx:1.27'\n");
    ex.write('app.yaml', original);
    const applied = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);

    // Someone scales the service by hand.
    const svc = (await sandbox.objects()).find((o) => o.type === 'services')!;
    const res = await fetch(`${sandbox.url}/services/${svc.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'alice' },
      body: JSON.stringify({ replicas: 5, image: 'nginx:1.28' }),
    });
    expect(res.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('prints a one-line diff and writes nothing', async () => {
    const r = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('--- a/app.yaml\n+++ b/app.yaml\n');
    const changed = r.stdout.split('\n').filter((l) => /^[-+] /.test(l));
    expect(changed).toEqual([`-${DECLARED}`, '+  replicas: 5 # two is enough']);
    expect(r.stdout).toContain('run again with --write');
    expect(ex.read('app.yaml')).toBe(original);
  });

  it('keeps the quoting style of a string', async () => {
    const r = await runCli(['accept', 'sb.services/api', 'image', ex.dir, '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { diff: string };
    expect(report.diff).toContain("-  image: 'nginx:1.27'\n+  image: 'nginx:1.28'\n");
  });

  it('--json: the report', async () => {
    const r = await runCli(['accept', 'sb.services/api', 'spec.replicas', ex.dir, '--json'], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      ok: true,
      address: 'sb.services/api',
      field: 'replicas',
      outcome: 'patched',
      value: 5,
      valueSource: 'platform',
      file: 'app.yaml',
      written: false,
      notes: [],
    });
    expect(typeof report['line']).toBe('number');
    expect(report['diff']).toContain(`-${DECLARED}\n+  replicas: 5 # two is enough\n`);
  });

  it('--git: commits the patch on a new branch and returns to the original one', async () => {
    writeFileSync(join(ex.dir, '.gitignore'), '.tend/\n');
    git('init', '--quiet', '--initial-branch', 'main');
    git('add', '.');
    git('commit', '--quiet', '-m', 'intent');
    const r = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir, '--git'], { env });
    expect(r.code, r.stderr).toBe(0);
    const branch = /on branch (tend\/accept-api-replicas-[0-9a-f]{7});/.exec(r.stdout)?.[1];
    expect(branch, r.stdout).toBeDefined();
    expect(git('symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git('status', '--porcelain')).toBe('');
    expect(ex.read('app.yaml')).toBe(original);
    expect(git('log', '-1', '--format=%s', branch!)).toBe(
      'accept sb.services/api replicas=5 (observed)',
    );
    expect(git('show', `${branch!}:app.yaml`)).toBe(
      original.replace(DECLARED, '  replicas: 5 # two is enough').trimEnd(),
    );
    expect(git('diff', '--name-only', 'main', branch!)).toBe('app.yaml');

    // The same change again: the branch exists, nothing is done.
    const again = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir, '--git'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
    expect(git('symbolic-ref', '--short', 'HEAD')).toBe('main');
  });

  it('--write: writes the file, every comment byte for byte, and keeps its mode', async () => {
    const mode = statSync(join(ex.dir, 'app.yaml')).mode;
    const r = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir, '--write'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/written app\.yaml:\d+/);
    const written = ex.read('app.yaml');
    expect(written).toBe(original.replace(DECLARED, '  replicas: 5 # two is enough'));
    const comments = (t: string) => t.split('\n').filter((l) => l.includes('#'));
    expect(comments(written).filter((l) => !l.includes('replicas'))).toEqual(
      comments(original).filter((l) => !l.includes('replicas')),
    );
    expect(statSync(join(ex.dir, 'app.yaml')).mode).toBe(mode);

    const again = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already declares replicas: 5; nothing to change');
    // The intent now agrees with the platform: no drift on replicas.
    const plan = await runCli(['plan', ex.dir, '--json'], { env });
    expect(plan.stdout).not.toContain('"replicas"');
  });

  it('a field that is a reference: exits 1 and says where the change belongs', async () => {
    const r = await runCli(['accept', 'sb.services/api', 'network_id', ex.dir, '--value', '"x"'], {
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('is the reference ${sb.networks/main.id}');
    // The referenced resource's document: sb.networks/main starts app.yaml, after two comment lines.
    expect(r.stdout).toContain('the change belongs at app.yaml:3:1');
    const json = await runCli(
      ['accept', 'sb.services/api', 'network_id', ex.dir, '--value', '"x"', '--json'],
      { env },
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      outcome: 'elsewhere',
      elsewhere: { where: { file: 'app.yaml', line: 3, column: 1 } },
    });
  });

  it('a secret: refused, never printed', async () => {
    const r = await runCli(['accept', 'sb.instances/web', 'admin_password', ex.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is a secret');
    expect(r.stdout + r.stderr).not.toContain(env.QUICKSTART_ADMIN_PASSWORD);
  });

  it('usage errors exit 2 with a suggestion', async () => {
    const address = await runCli(['accept', 'sb.service/api', 'replicas', ex.dir], { env });
    expect(address.code).toBe(2);
    expect(address.stderr).toContain('did you mean sb.services/api?');
    const field = await runCli(['accept', 'sb.services/api', 'replica', ex.dir], { env });
    expect(field.code).toBe(2);
    expect(field.stderr).toContain('did you mean replicas');
    const value = await runCli(['accept', 'sb.services/api', 'replicas', ex.dir, '--value', '{'], {
      env,
    });
    expect(value.code).toBe(2);
    expect(value.stderr).toContain('--value must be JSON');
  });
});
