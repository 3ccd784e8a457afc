import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, ROOT, runCli, startCli, type CliProcess } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// A platform without an audit feed: Tend polls on its interval, corrects drift, and records the
// change with actor "unknown" (it cannot know who made it).
const env = { QUICKSTART_ADMIN_PASSWORD: 'polling-secret' };

describe('tend run without an audit feed (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let tend: CliProcess;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const doc = JSON.parse(
      readFileSync(join(ROOT, 'src', 'sandbox', 'openapi.json'), 'utf8'),
    ) as Record<string, unknown>;
    delete doc['x-tend-audit'];
    writeFileSync(join(ex.dir, 'sandbox.openapi.json'), JSON.stringify(doc));
    ex.write(
      'provider.yaml',
      ex.read('provider.yaml').replace(/spec: .*/, 'spec: ./sandbox.openapi.json'),
    );
    tend = startCli(['run', ex.dir, '--interval', '1'], { env });
    await tend.waitFor(/pass 1 done/, 30_000);
  });
  afterAll(async () => {
    await tend?.stop('SIGKILL');
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('says there is no feed, corrects drift on the next poll and records it as actor unknown', async () => {
    expect(tend.output()).toContain('audit feed: no; interval 1s');
    const svc = (await sandbox.objects()).find((o) => o.type === 'services')!;
    const res = await fetch(`${sandbox.url}/services/${svc.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'hpa' },
      body: JSON.stringify({ replicas: 7 }),
    });
    expect(res.status).toBe(200);
    const t0 = Date.now();
    let replicas: unknown = 7;
    while (Date.now() - t0 < 8000 && replicas !== 2) {
      await new Promise((r) => setTimeout(r, 100));
      replicas = (
        (await (await fetch(`${sandbox.url}/services/${svc.id}`)).json()) as { replicas: number }
      ).replicas;
    }
    expect(replicas).toBe(2);

    const h = await runCli(['history', ex.dir, '--json', '--address', 'sb.services/api']);
    const { changes } = JSON.parse(h.stdout) as {
      changes: {
        actor: string;
        source: string;
        fields: string[];
        before?: Record<string, unknown>;
        after?: Record<string, unknown>;
      }[];
    };
    const observed = changes.find((c) => c.source === 'unknown');
    expect(observed).toMatchObject({
      actor: 'unknown',
      fields: ['replicas'],
      before: { replicas: 2 },
      after: { replicas: 7 },
    });
    expect(changes.at(-1)).toMatchObject({ actor: 'tend', fields: ['replicas'] });
  });
});
