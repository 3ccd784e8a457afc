import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, ROOT, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// A type whose API offers no DELETE (Stripe's prices, tax rates) is managed all the same: created and
// changed in place, never deleted. A resource of it removed from the intent is a delete that cannot
// happen: the plan shows it blocked with the reason, apply sends nothing for it and exits 3.
const env = { QUICKSTART_ADMIN_PASSWORD: 'no-delete-secret' };
const REASON =
  'the API offers no DELETE for sb.buckets: remove it in the platform, or keep it in the intent';

describe('a type without DELETE (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let spec: string;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const doc = JSON.parse(readFileSync(join(ROOT, 'src', 'sandbox', 'openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
    };
    delete doc.paths['/buckets/{name}']!['delete'];
    spec = join(ex.dir, 'sandbox.openapi.json');
    writeFileSync(spec, JSON.stringify(doc));
    ex.write(
      'provider.yaml',
      ex.read('provider.yaml').replace(/spec: .*/, 'spec: ./sandbox.openapi.json'),
    );
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('inspect shows delete: none with the reason', async () => {
    const json = await runCli(['providers', 'inspect', spec, '--json']);
    expect(json.code).toBe(0);
    const buckets = (
      JSON.parse(json.stdout) as { types: { name: string; noDelete?: string; delete: unknown }[] }
    ).types.find((t) => t.name === 'buckets');
    expect(buckets).toMatchObject({ noDelete: 'no DELETE on /buckets/{name}', delete: null });
    const text = await runCli(['providers', 'inspect', spec]);
    expect(text.stdout).toMatch(
      /delete\s+none: no DELETE on \/buckets\/\{name\}; a resource removed from the intent is never deleted \(its plan step is blocked\)/,
    );
  });

  it('creates it, then never deletes it: the plan blocks the delete and apply exits 3', async () => {
    const first = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const bucket = (await sandbox.objects()).find((o) => o.type === 'buckets');
    expect(bucket).toBeDefined();

    // The bucket is removed from the intent.
    const app = ex.read('app.yaml');
    ex.write(
      'app.yaml',
      app
        .split(/^---$/m)
        .filter((d) => !d.includes('type: sb.buckets'))
        .join('---'),
    );

    const plan = await runCli(['plan', ex.dir], { env });
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(
      `  - sb.buckets/assets  cannot be deleted (${bucket!.id}; removed from the intent)`,
    );
    expect(plan.stdout).toContain(`      blocked: ${REASON}`);
    expect(plan.stdout).toMatch(/Blocked \(cannot happen\): sb\.buckets\/assets;/);

    const planJson = await runCli(['plan', ex.dir, '--json'], { env });
    const p = JSON.parse(planJson.stdout) as { blocked: unknown; gated: unknown };
    expect(p.blocked).toEqual([{ address: 'sb.buckets/assets', reason: REASON }]);
    expect(p.gated).toEqual([]);

    // No --yes and no terminal: nothing destructive would run, so nothing is asked.
    const apply = await runCli(['apply', ex.dir], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(3);
    expect(apply.stdout).toContain(
      `blocked   sb.buckets/assets: deleting sb.buckets/assets cannot happen: ${REASON}`,
    );
    // The sandbox still serves DELETE /buckets/{name}: the bucket being there shows none was sent.
    expect((await sandbox.objects()).find((o) => o.type === 'buckets')?.id).toBe(bucket!.id);
  });
});
