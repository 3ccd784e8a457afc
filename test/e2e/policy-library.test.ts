import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// examples/policies (issue 28, item 6) through the built `tend`: the quickstart with two library
// files copied in as a user would (buckets-keep-versioning, deny; required-tags, warn), against a
// real sandbox process (validate reads the provider's OpenAPI document from it). A violating intent
// is refused at its file:line:column naming the policy; a complying one loads.

const LIBRARY = join(ROOT, 'examples', 'policies');
const POLICIES = ['buckets-keep-versioning.yaml', 'required-tags.yaml'];

/** 1-based line and column of the first occurrence of `text` in `file`'s lines. */
function where(file: string, text: string): { line: number; column: number } {
  const lines = file.split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`\`${text}\` is not in the file`);
  return { line: i + 1, column: lines[i]!.indexOf(text) + 1 };
}

describe('the policy library on the quickstart (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let shipped: string;
  const env = { QUICKSTART_ADMIN_PASSWORD: 'policy-library-secret' };

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    for (const f of POLICIES) copyFileSync(join(LIBRARY, f), join(ex.dir, f));
    shipped = ex.read('app.yaml');
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('a bucket with versioning off is refused at its field, naming the policy and its rule; the tags are warned about', async () => {
    const app = shipped.replace('versioning: true', 'versioning: false');
    expect(app).not.toBe(shipped);
    ex.write('app.yaml', app);
    const r = await runCli(['validate', ex.dir], { env });
    expect(r.code).toBe(1);
    const value = where(app, 'false');
    const rule = where(ex.read('buckets-keep-versioning.yaml'), 'object.versioning == true');
    expect(r.stderr).toContain(
      `${join(ex.dir, 'app.yaml')}:${value.line}:${value.column}: error[policy.denied]: policy buckets-keep-versioning (deny) rule 1 violated: bucket tend-quickstart-assets has versioning off (at spec.versioning)\n` +
        `  hint: the rule is at ${join(ex.dir, 'buckets-keep-versioning.yaml')}:${rule.line}:${rule.column}; change the resource, or the policy if the rule is wrong`,
    );
    const tags = where(app, '{ team: platform }');
    const tagsRule = where(ex.read('required-tags.yaml'), 'variables.missing.size() == 0');
    expect(r.stderr).toContain(
      `${join(ex.dir, 'app.yaml')}:${tags.line}:${tags.column}: warning[policy.warned]: policy required-tags (warn) rule 1 violated: tags lack owner, cost-center (at spec.tags)\n` +
        `  hint: the rule is at ${join(ex.dir, 'required-tags.yaml')}:${tagsRule.line}:${tagsRule.column}\n`,
    );
    expect(r.stderr).toContain('1 error; nothing was sent to any API.');
    expect(await sandbox.objects()).toEqual([]);
  });

  it('the shipped quickstart loads: the warn policy refuses nothing', async () => {
    ex.write('app.yaml', shipped);
    const r = await runCli(['validate', ex.dir], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning[policy.warned]: policy required-tags (warn) rule 1');
    expect(r.stderr).not.toContain('error');
  });

  it('a complying intent loads with no policy diagnostic', async () => {
    const app = shipped.replace(
      '{ team: platform }',
      "{ team: platform, owner: platform, cost-center: 'cc-42' }",
    );
    expect(app).not.toBe(shipped);
    ex.write('app.yaml', app);
    const r = await runCli(['validate', ex.dir], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('5 resources, no errors');
    expect(r.stderr).not.toContain('policy');
  });

  it('plan: a tags map the intent leaves out is undecidable before the create, and judged once the platform holds one', async () => {
    const planned = await runCli(['plan', ex.dir], { env });
    expect(planned.code).toBe(2);
    expect(planned.stdout).toContain("Policies on the plan's result:");
    expect(planned.stdout).toContain(
      '? sb.instances/web: required-tags rule 1 undecidable: reads `tags`, known only after apply: decided when the platform answers',
    );
    expect(planned.stdout).not.toContain('! warn');

    const applied = await runCli(['apply', ex.dir], { env });
    expect(applied.code).toBe(0);
    // The sandbox gives every object a tags map ({} when none is sent): now each is judged.
    const again = await runCli(['plan', ex.dir], { env });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /! warn\s+sb\.instances\/web: required-tags rule 1: tags lack owner, cost-center \(.*required-tags\.yaml:\d+:\d+\)/,
    );
    expect(again.stdout).not.toMatch(/! warn\s+sb\.networks\/main/);
  });
});
