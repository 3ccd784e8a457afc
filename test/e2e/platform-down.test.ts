import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

const env = { QUICKSTART_ADMIN_PASSWORD: 'platform-down-secret' };

describe('a platform that is down (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    expect((await runCli(['apply', ex.dir], { env })).code).toBe(0);
    await sandbox.stop();
  });
  afterAll(() => ex?.cleanup());

  it('fails the pass with exit 1 and says so in status instead of a stale "converged"', async () => {
    const apply = await runCli(['apply', ex.dir], { env });
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/error/);

    const st = await runCli(['status', ex.dir, '--json'], { env });
    expect(st.code).toBe(1);
    const status = JSON.parse(st.stdout) as {
      resources: { address: string; state: string; message?: string }[];
      platformError?: string;
    };
    expect(status.platformError).toBeDefined();
    for (const r of status.resources) {
      expect(r.state).toBe('error');
      expect(r.message).toMatch(/^cannot observe sb/);
    }
  });
});
