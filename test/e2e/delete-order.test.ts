import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Deletes respect dependencies in both directions: a removed resource is deleted only after what
// referenced it has moved away, and a delete the platform refuses makes `tend apply` exit 1.
const env = { QUICKSTART_ADMIN_PASSWORD: 'delete-order-secret' };

const network = (name: string, cidr: string) =>
  `---\nkind: Resource\ntype: sb.networks\nname: ${name}\nspec:\n  name: ${name}\n  cidr: ${cidr}\n`;
const service = (name: string, networkRef: string) =>
  `---\nkind: Resource\ntype: sb.services\nname: ${name}\nspec:\n  name: ${name}\n  image: busybox:1\n  replicas: 1\n  network_id: \${${networkRef}.id}\n`;

interface Summary {
  resources: Record<string, { state: string; message?: string }>;
}
const summaryOf = (stdout: string) =>
  JSON.parse(stdout.slice(stdout.lastIndexOf('\n{\n') + 1)) as Summary;

describe(
  'delete order and failed deletes (CLI, real sandbox process)',
  { timeout: 120_000 },
  () => {
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    let ex: ReturnType<typeof copyExample>;
    let app: string;

    beforeAll(async () => {
      sandbox = await startSandboxProcess();
      ex = copyExample('quickstart', sandbox.url);
      app = ex.read('app.yaml');
    });
    afterAll(async () => {
      await sandbox?.stop();
      ex?.cleanup();
    });

    it('removes a network while its dependent is re-pointed: the update runs first, no 409, exit 0', async () => {
      ex.write(
        'app.yaml',
        app + network('old', '10.20.0.0/16') + service('worker', 'sb.networks/old'),
      );
      const first = await runCli(['apply', ex.dir], { env });
      expect(first.code, first.stdout + first.stderr).toBe(0);
      const oldId = (await sandbox.objects()).find(
        (o) => o.type === 'networks' && o.fields['name'] === 'old',
      )!.id;

      ex.write('app.yaml', app + service('worker', 'sb.networks/main'));
      const plan = await runCli(['plan', ex.dir, '--json'], { env });
      const steps = (
        JSON.parse(plan.stdout) as {
          steps: { kind: string; address: string; waitsFor?: string[] }[];
        }
      ).steps;
      expect(steps.find((s) => s.address === 'sb.networks/old')).toMatchObject({
        kind: 'delete',
        waitsFor: ['sb.services/worker'],
      });
      expect(steps.find((s) => s.address === 'sb.services/worker')?.kind).toBe('update');

      const before = await sandbox.stats();
      const apply = await runCli(['apply', ex.dir, '--yes', '--json'], { env });
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const after = await sandbox.stats();
      expect((after.byStatus['409'] ?? 0) - (before.byStatus['409'] ?? 0)).toBe(0);
      expect(after.deletes - before.deletes).toBe(1);
      expect((await sandbox.objects()).some((o) => o.id === oldId)).toBe(false);
      // The update was done before the delete was sent.
      const out = apply.stdout;
      const updated = out.search(
        /"kind":"op-done","address":"sb\.services\/worker","action":"update"/,
      );
      const deleting = out.search(
        /"kind":"op-start","address":"sb\.networks\/old","action":"delete"/,
      );
      expect(updated).toBeGreaterThan(-1);
      expect(deleting).toBeGreaterThan(updated);
      expect((await runCli(['plan', ex.dir], { env })).code).toBe(0);
    });

    it('a delete the platform refuses makes the resource error and tend apply exit 1', async () => {
      // (The worker of the previous case is removed here too.)
      ex.write('app.yaml', app + network('doomed', '10.30.0.0/16'));
      const setup = await runCli(['apply', ex.dir, '--yes'], { env });
      expect(setup.code, setup.stdout + setup.stderr).toBe(0);
      const doomed = (await sandbox.objects()).find(
        (o) => o.type === 'networks' && o.fields['name'] === 'doomed',
      )!;
      // Someone else's service, unknown to Tend, still uses the network: the platform answers 409.
      const res = await fetch(`${sandbox.url}/services`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'squatter', image: 'busybox:1', network_id: doomed.id }),
      });
      expect(res.status).toBe(201);

      ex.write('app.yaml', app);
      const apply = await runCli(['apply', ex.dir, '--yes', '--json'], { env });
      expect(apply.code, apply.stdout + apply.stderr).toBe(1);
      const summary = summaryOf(apply.stdout);
      expect(summary.resources['sb.networks/doomed']).toMatchObject({ state: 'error' });
      expect(summary.resources['sb.networks/doomed']!.message).toContain('still used by');
      expect((await sandbox.objects()).some((o) => o.id === doomed.id)).toBe(true);
    });
  },
);
