import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli, startCli, type CliProcess } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

const env = { QUICKSTART_ADMIN_PASSWORD: 'run-test-secret' };

describe('tend run: continuous correction of out-of-band changes (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let tend: CliProcess;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    // A long interval: a correction within 2 s can only come from the audit feed.
    tend = startCli(['run', ex.dir, '--interval', '300'], { env });
    await tend.waitFor(/pass 1 done/, 30_000);
  });
  afterAll(async () => {
    await tend?.stop('SIGKILL');
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('converges on start', async () => {
    expect(tend.output()).toMatch(/pass 1 done in \d+ ms: 5 converged/);
    expect(await sandbox.objects()).toHaveLength(5);
  });

  it('corrects a declared field changed out of band within 2 s, attributes it, and leaves undeclared fields alone', async () => {
    const svc = (await sandbox.objects()).find((o) => o.type === 'services')!;
    const tags = svc.fields['tags'] as Record<string, string>;
    const t0 = Date.now();
    const res = await fetch(`${sandbox.url}/services/${svc.id}`, {
      method: 'PATCH',
      headers: {
        'content-type': 'application/json',
        'X-Tend-Actor': 'alice',
        'X-Tend-Intent': 'availability',
        'X-Tend-Motivation': 'incident',
      },
      body: JSON.stringify({ replicas: 5, tags: { ...tags, hotfix: 'INC-42' } }),
    });
    expect(res.status).toBe(200);

    let replicas: unknown = 5;
    let current: Record<string, unknown> = {};
    while (Date.now() - t0 < 5000) {
      current = (await (await fetch(`${sandbox.url}/services/${svc.id}`)).json()) as Record<
        string,
        unknown
      >;
      replicas = current['replicas'];
      if (replicas === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const elapsed = Date.now() - t0;
    expect(replicas).toBe(2);
    expect(elapsed).toBeLessThan(2000);
    expect((current['tags'] as Record<string, string>)['hotfix']).toBe('INC-42');
    await tend.waitFor(
      /sb\.services\/api\s+updated by alice \(intent: availability, motivation: incident\): replicas 2 → 5/,
    );
    await tend.waitFor(/~ sb\.services\/api\s+updated svc-/);
  });

  it('records the change with its actor in the ledger', async () => {
    const h = await runCli(['history', ex.dir, '--json', '--address', 'sb.services/api']);
    const { changes } = JSON.parse(h.stdout) as {
      changes: {
        actor: string;
        source: string;
        intent?: string;
        motivation?: { kind: string };
        decision?: { decision: string; rule: string; fields: string[] };
        fields: string[];
      }[];
    };
    const alice = changes.find((c) => c.actor === 'alice');
    expect(alice).toMatchObject({
      source: 'audit',
      intent: 'availability',
      motivation: { kind: 'incident' },
      // The quickstart's policy puts back whatever is not the autoscaler's traffic scaling.
      decision: { decision: 'enforce', rule: 'scaling#2', fields: ['replicas'] },
    });
    expect(alice!.fields).toEqual(expect.arrayContaining(['replicas', 'tags']));
    const correction = changes.filter((c) => c.actor === 'tend').at(-1);
    expect(correction?.fields).toContain('replicas');
    expect(correction?.fields).not.toContain('tags');
  });

  it('stops cleanly on SIGINT', async () => {
    const code = await tend.stop('SIGINT');
    expect(code).toBe(0);
    expect(tend.output()).toContain('stopped cleanly.');
  });
});
