import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 28, "What it must show", points 1 and 2, through the built `tend` against a real sandbox
// process: a deny policy refuses an intent that declares a violating value (validate, at the
// bucket's file:line:column), and a plan whose predicted result violates it (a bucket that leaves
// versioning to the sandbox's default, false) — before anything is sent.

const POLICY = [
  'kind: Policy',
  'name: buckets-keep-versioning',
  'severity: high',
  'actions: [deny]',
  'match:',
  '  types: [sb.buckets]',
  'validations:',
  '  - expression: object.versioning == true',
  '    message: buckets keep versioning on',
  '',
].join('\n');

const bucket = (name: string, extra = '') =>
  `kind: Resource\ntype: sb.buckets\nname: ${name}\nspec:\n  name: ${name}.example\n${extra}`;

describe('policies before the change (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let logDir: string;
  const env = { QUICKSTART_ADMIN_PASSWORD: 'policy-admission-secret' };
  const mutations = () => sandbox.requests().filter((r) => r.method !== 'GET');

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'tend-policy-log-'));
    sandbox = await startSandboxProcess([], { requestLog: join(logDir, 'requests.jsonl') });
    ex = copyExample('quickstart', sandbox.url);
    // The quickstart's services and volumes are not what this test is about.
    ex.write('app.yaml', '');
    ex.write('policy.yaml', POLICY);
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('validate: a bucket declaring versioning: false is refused at its field, naming the policy; nothing is sent', async () => {
    ex.write('buckets.yaml', bucket('logs', '  versioning: false\n'));
    const r = await runCli(['validate', ex.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toContain(
      `${join(ex.dir, 'buckets.yaml')}:6:15: error[policy.denied]: policy buckets-keep-versioning (deny) rule 1 violated: buckets keep versioning on (at spec.versioning)`,
    );
    expect(r.stderr + r.stdout).toContain(`the rule is at ${join(ex.dir, 'policy.yaml')}:8:17`);
    const json = await runCli(['validate', ex.dir, '--json'], { env });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as {
      diagnostics: { code: string; line: number; column: number; address: string }[];
    };
    expect(report.diagnostics).toMatchObject([
      { code: 'policy.denied', line: 6, column: 15, address: 'sb.buckets/logs' },
    ]);
    // plan and apply load the same intent: refused the same way, nothing sent.
    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code).toBe(1);
    expect(mutations()).toEqual([]);
  });

  it("plan: a bucket that leaves versioning to the platform's default (false) violates it on the predicted result: exit 1, and apply sends nothing", async () => {
    ex.write('buckets.yaml', bucket('logs'));
    const validated = await runCli(['validate', ex.dir], { env });
    expect(validated.code).toBe(0);

    const planned = await runCli(['plan', ex.dir], { env });
    expect(planned.code).toBe(1);
    expect(planned.stdout).toContain("Policies on the plan's result:");
    expect(planned.stdout).toMatch(
      /✗ deny\s+sb\.buckets\/logs: buckets-keep-versioning rule 1: buckets keep versioning on \(.*policy\.yaml:8:17\)/,
    );
    expect(planned.stdout).toContain(
      '1 deny violation: apply refuses this plan (nothing would be sent)',
    );

    const json = await runCli(['plan', ex.dir, '--json'], { env });
    expect(json.code).toBe(1);
    const view = JSON.parse(json.stdout) as { policies: Record<string, unknown>[] };
    expect(view.policies).toMatchObject([
      {
        policy: 'buckets-keep-versioning',
        rule: 0,
        address: 'sb.buckets/logs',
        moment: 'predicted',
        result: 'fail',
        message: 'buckets keep versioning on',
        actions: ['deny'],
        fields: ['versioning'],
      },
    ]);

    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code).toBe(1);
    expect(applied.stdout + applied.stderr).toContain(
      "1 policy rule with action deny is violated by the plan's result: nothing was sent",
    );
    expect(mutations()).toEqual([]);
    expect(await sandbox.objects()).toEqual([]);
  });

  it('a complying bucket is created; the policy then passes on the observed object', async () => {
    ex.write('buckets.yaml', bucket('logs', '  versioning: true\n'));
    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code).toBe(0);
    expect((await sandbox.objects()).map((o) => [o.type, o.fields['versioning']])).toEqual([
      ['buckets', true],
    ]);
    const again = await runCli(['plan', ex.dir, '--json'], { env });
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as { policies: unknown[] }).policies).toEqual([]);
  });

  it('a saved plan records the verdicts it was computed with; apply refuses it once the policies changed, sending nothing', async () => {
    // A warn rule the new bucket breaks: the plan is saved with that verdict.
    ex.write(
      'warn.yaml',
      'kind: Policy\nname: short-names\nactions: [warn]\nmatch:\n  types: [sb.buckets]\nvalidations:\n  - expression: size(object.name) < 14\n    message: bucket names stay short\n',
    );
    ex.write(
      'buckets.yaml',
      `${bucket('logs', '  versioning: true\n')}---\n${bucket('archive', '  versioning: true\n')}`,
    );
    const file = join(logDir, 'saved.json');
    const planned = await runCli(['plan', ex.dir, '--out', file], { env });
    expect(planned.code, planned.stdout + planned.stderr).toBe(2);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      intent: { policies?: string };
      policyVerdicts?: string[];
    };
    expect(saved.intent.policies).toMatch(/^[0-9a-f]{64}$/);
    expect(saved.policyVerdicts).toEqual([
      'sb.buckets/archive: policy short-names (warn) rule 1 violated: bucket names stay short',
    ]);
    // The policy is changed (not the resources): the saved plan was judged by another one.
    ex.write('warn.yaml', ex.read('warn.yaml').replace('< 14', '< 40'));
    const before = mutations().length;
    const applied = await runCli(['apply', file], { env });
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    expect(applied.stderr).toContain(
      'the policies changed since the plan was made (its verdicts were computed with others); run tend plan again',
    );
    expect(mutations().length).toBe(before);
    // Planned again, it applies.
    expect((await runCli(['plan', ex.dir, '--out', file], { env })).code).toBe(2);
    const again = await runCli(['apply', file], { env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    ex.write('warn.yaml', '');
  });
});
