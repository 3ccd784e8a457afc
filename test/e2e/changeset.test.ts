import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseChangeset } from '../../src/core/index.js';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 9, "what it must show": `tend plan --out p.json`, then an out-of-band change to one planned
// object, then `tend apply p.json`: exit 1, zero mutations sent, the moved object named.
//

const env = { QUICKSTART_ADMIN_PASSWORD: 'changeset-secret' };

/** Every object in a parsed JSON value (depth first), to find entries whatever the summary's shape. */
function objectsIn(v: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(v)) for (const x of v) objectsIn(x, out);
  else if (v !== null && typeof v === 'object') {
    out.push(v as Record<string, unknown>);
    for (const x of Object.values(v)) objectsIn(x, out);
  }
  return out;
}

describe('saved plans (CLI, real sandbox process)', () => {
  let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  let ex: ReturnType<typeof copyExample>;
  let serviceId: string;

  beforeAll(async () => {
    sandbox = await startSandboxProcess();
    ex = copyExample('quickstart', sandbox.url);
    const r = await runCli(['apply', ex.dir], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    serviceId = (await sandbox.objects()).find((o) => o.type === 'services')!.id;
    // The change the saved plan will carry: api goes from 2 to 3 replicas.
    ex.write('app.yaml', ex.read('app.yaml').replace('replicas: 2', 'replicas: 3'));
  });
  afterAll(async () => {
    await sandbox?.stop();
    ex?.cleanup();
  });

  it('refuses a changeset whose object moved since: exit 1, nothing sent, the object named', async () => {
    const file = join(ex.dir, 'p.json');
    const plan = await runCli(['plan', ex.dir, '--out', file], { env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(existsSync(file)).toBe(true);
    const saved = parseChangeset(readFileSync(file, 'utf8'), file);
    expect(saved.kind).toBe('ok');

    // Another actor scales the service behind Tend's back.
    const r = await fetch(`${sandbox.url}/services/${serviceId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-tend-actor': 'alice' },
      body: JSON.stringify({ replicas: 5 }),
    });
    expect(r.status).toBe(200);

    const before = await sandbox.stats();
    const apply = await runCli(['apply', file], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(1);
    expect(apply.stderr).toContain('sb.services/api');
    expect(apply.stderr).toContain('replicas');
    const json = await runCli(['apply', file, '--json'], { env });
    expect(json.code).toBe(1);
    // JSON lines of events, then the summary document (pretty-printed).
    const summary = JSON.parse(json.stdout.slice(json.stdout.lastIndexOf('\n{\n') + 1)) as {
      verdict: string;
    };
    expect(summary.verdict).toBe('refused');
    expect(objectsIn(summary)).toContainEqual(
      expect.objectContaining({ kind: 'changed', address: 'sb.services/api' }),
    );
    const after = await sandbox.stats();
    expect({ creates: after.creates, updates: after.updates, deletes: after.deletes }).toEqual({
      creates: before.creates,
      updates: before.updates,
      deletes: before.deletes,
    });
    const service = (await sandbox.objects()).find((o) => o.id === serviceId)!;
    expect(service.fields['replicas']).toBe(5);
  });

  it('applies a changeset nothing moved under, exactly as planned', async () => {
    // Put the service back where the plan expects it, then plan afresh.
    ex.write('app.yaml', ex.read('app.yaml').replace('replicas: 3', 'replicas: 5'));
    const settle = await runCli(['apply', ex.dir], { env });
    expect(settle.code, settle.stdout + settle.stderr).toBe(0);
    ex.write('app.yaml', ex.read('app.yaml').replace('replicas: 5', 'replicas: 4'));
    const file = join(ex.dir, 'q.json');
    const plan = await runCli(['plan', ex.dir, '--out', file], { env });
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    const before = await sandbox.stats();
    const apply = await runCli(['apply', file], { env });
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    const after = await sandbox.stats();
    expect(after.updates - before.updates).toBe(1);
    expect(after.creates - before.creates).toBe(0);
    const service = (await sandbox.objects()).find((o) => o.id === serviceId)!;
    expect(service.fields['replicas']).toBe(4);
  });
});
