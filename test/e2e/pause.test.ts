import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxInProcess } from '../support/sandbox-process.js';

// `tend pause` / `tend resume` (issue 15): a paused resource's drift is left alone by apply, with
// who and why in `tend status`, until it is resumed. Through the built CLI against a real sandbox.
const env = { QUICKSTART_ADMIN_PASSWORD: 'pause-e2e-admin-password' };

describe('tend pause and resume (CLI, real sandbox)', { timeout: 120_000 }, () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample>;

  beforeAll(async () => {
    sandbox = await startSandboxInProcess({ port: 0 });
    ex = copyExample('quickstart', sandbox.url);
    const r = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await sandbox.stop();
    ex.cleanup();
  });

  const replicas = async () =>
    (await sandbox.objects()).find((o) => o.type === 'services')!.fields['replicas'];

  it('a paused resource keeps its drift through apply, status says who paused it and why', async () => {
    const p = await runCli(['pause', 'sb.services/api', ex.dir, '--reason', 'load test'], { env });
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toContain('sb.services/api: reconciling stopped');
    const again = await runCli(['pause', 'sb.services/api', ex.dir], { env });
    expect(again.stdout).toContain('sb.services/api was already paused.');
    const id = (await sandbox.objects()).find((o) => o.type === 'services')!.id;
    await fetch(`${sandbox.url}/services/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-tend-actor': 'oncall' },
      body: JSON.stringify({ replicas: 6 }),
    });
    const applied = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(await replicas()).toBe(6);
    const st = await runCli(['status', ex.dir, '--offline'], { env });
    expect(st.stdout).toMatch(
      /paused: sb\.services\/api — reconciling stopped by \S+ at \S+ \(load test\)/,
    );
    const json = JSON.parse(
      (await runCli(['status', ex.dir, '--offline', '--json'], { env })).stdout,
    ) as {
      resources: { address: string; state: string; message?: string }[];
    };
    expect(json.resources.find((r) => r.address === 'sb.services/api')).toMatchObject({
      state: 'pending',
      message: expect.stringContaining('reconciling stopped by') as unknown,
    });

    const resumed = await runCli(['resume', 'sb.services/api', ex.dir], { env });
    expect(resumed.code).toBe(0);
    const fixed = await runCli(['apply', ex.dir, '--yes'], { env });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(await replicas()).toBe(2);
  });

  it('an address the intent does not declare is an error with near matches', async () => {
    const r = await runCli(['pause', 'sb.services/apj', ex.dir], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'sb.services/apj is not a resource the intent declares; did you mean sb.services/api?',
    );
  });
});
