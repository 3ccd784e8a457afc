import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Who changed what, when, why, and what Tend decided (issue 11, items 3 and 6): an autoscaler
// changes replicas behind Tend's back with its attribution headers; `tend drift` lists the field
// with the actor and the policy's decision, `tend apply` enforces (the default policy), `tend
// history --actor hpa` shows the entry with its decision, `tend explain` shows the field's values,
// owner and entries. Through the built CLI against a real sandbox process.
const PASSWORD = 'explain-drift-secret-password';
const env = { QUICKSTART_ADMIN_PASSWORD: PASSWORD };

interface DriftJson {
  drifted: boolean;
  fields: {
    address: string;
    field: string;
    declared: unknown;
    observed: unknown;
    changedBy?: {
      actor: string;
      actorKind?: string;
      intent?: string;
      source: string;
      motivation?: { kind: string; ref?: string; expiresAt?: string };
    };
    decision?: { decision: string; rule: string; reason: string };
  }[];
  missing: unknown[];
  claims: unknown[];
}

interface HistoryJson {
  changes: {
    seq: number;
    actor: string;
    actorKind?: string;
    source: string;
    fields: string[];
    motivation?: { kind: string; ref?: string };
    decision?: { decision: string; rule: string; reason: string; fields: string[] };
  }[];
  ledger: { ok: boolean };
}

interface ExplainJson {
  address: string;
  field?: string;
  observedFrom: string;
  fields: {
    field: string;
    state: string;
    secret: boolean;
    declared?: { written: unknown; resolved?: unknown };
    observed?: unknown;
    owner: { kind: string };
    entries: { actor: string; decision?: { decision: string } }[];
  }[];
}

describe(
  'tend drift, explain and history filters (CLI, real sandbox process)',
  { timeout: 120_000 },
  () => {
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    let ex: ReturnType<typeof copyExample>;
    let serviceId: string;

    beforeAll(async () => {
      sandbox = await startSandboxProcess();
      ex = copyExample('quickstart', sandbox.url);
      // The default policy (no Arbitration document): the example's own would yield to the autoscaler.
      rmSync(join(ex.dir, 'arbitration.yaml'));
      const r = await runCli(['apply', ex.dir, '--yes'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      serviceId = (await sandbox.objects()).find((o) => o.type === 'services')!.id;
    });
    afterAll(async () => {
      await sandbox?.stop();
      ex?.cleanup();
    });

    it('tend drift exits 0 when everything is as declared', async () => {
      const r = await runCli(['drift', ex.dir], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('no drift: every declared field is as declared');
    });

    it('tend drift exits 1 and names the field, the actor and the decision after an autoscaler scales the service', async () => {
      const res = await fetch(`${sandbox.url}/services/${serviceId}`, {
        method: 'PATCH',
        headers: {
          'content-type': 'application/json',
          'X-Tend-Actor': 'hpa',
          'X-Tend-Actor-Kind': 'controller',
          'X-Tend-Intent': 'availability',
          'X-Tend-Motivation': 'traffic:spike; ttl=1h',
        },
        body: JSON.stringify({ replicas: 5 }),
      });
      expect(res.status).toBe(200);

      const r = await runCli(['drift', ex.dir], { env });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain('sb.services/api');
      expect(r.stdout).toContain('~ replicas  declared 2, observed 5');
      expect(r.stdout).toMatch(
        /changed by hpa \(controller\), intent availability, motivation traffic:spike; expires=\S+ \(from the audit feed\)/,
      );
      expect(r.stdout).toMatch(/↳ enforce: .*rule \S+/);
      expect(r.stdout).toContain('1 drifted field on 1 resource');

      const json = await runCli(['drift', ex.dir, '--json'], { env });
      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout) as DriftJson;
      expect(report.drifted).toBe(true);
      expect(report.missing).toEqual([]);
      expect(report.fields).toEqual([
        expect.objectContaining({
          address: 'sb.services/api',
          field: 'replicas',
          declared: 2,
          observed: 5,
          changedBy: expect.objectContaining({
            actor: 'hpa',
            actorKind: 'controller',
            intent: 'availability',
            source: 'audit',
            motivation: expect.objectContaining({ kind: 'traffic', ref: 'spike' }),
          }),
          decision: expect.objectContaining({ decision: 'enforce' }),
        }),
      ]);
    });

    it('drift is read-only: the field is still drifted, nothing was recorded, and the next apply still sees the change', async () => {
      const svc = (await sandbox.objects()).find((o) => o.id === serviceId)!;
      expect(svc.fields['replicas']).toBe(5);
      const h = JSON.parse(
        (await runCli(['history', ex.dir, '--json', '--actor', 'hpa'])).stdout,
      ) as HistoryJson;
      expect(h.changes).toEqual([]);
    });

    it('tend explain shows what the policy would decide now for the drifted field', async () => {
      const r = await runCli(['explain', 'sb.services/api.replicas', ex.dir, '--json'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as ExplainJson & {
        fields: {
          decisionNow?: { decision: { decision: string }; changedBy: { actor: string } };
        }[];
      };
      expect(report.fields).toHaveLength(1);
      expect(report.fields[0]).toMatchObject({
        field: 'replicas',
        state: 'drifted',
        declared: { written: 2 },
        observed: 5,
        owner: { kind: 'intent' },
        decisionNow: { decision: { decision: 'enforce' }, changedBy: { actor: 'hpa' } },
      });
    });

    it('tend apply enforces the declared value under the default policy', async () => {
      const r = await runCli(['apply', ex.dir, '--yes'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const svc = (await sandbox.objects()).find((o) => o.id === serviceId)!;
      expect(svc.fields['replicas']).toBe(2);
      const again = await runCli(['drift', ex.dir], { env });
      expect(again.code, again.stdout + again.stderr).toBe(0);
    });

    it('tend history --actor hpa shows the entry with its decision, rule and reason', async () => {
      const r = await runCli(['history', ex.dir, '--actor', 'hpa']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const lines = r.stdout.split('\n');
      const at = lines.findIndex((l) =>
        /hpa \(controller\)\s+audit\s+update\s+sb\.services\/api/.test(l),
      );
      expect(at, r.stdout).toBeGreaterThanOrEqual(0);
      expect(lines[at]).toContain('replicas 2 → 5');
      expect(lines[at]).toMatch(/intent availability, motivation traffic:spike; expires=/);
      expect(lines[at + 1]).toMatch(/^\s+↳ enforce: .*rule \S+.* \[replicas\]$/);
      expect(r.stdout).not.toMatch(/^\s*\d+ \S+\s+tend /m);

      const json = JSON.parse(
        (await runCli(['history', ex.dir, '--json', '--actor', 'hpa'])).stdout,
      ) as HistoryJson;
      expect(json.changes).toHaveLength(1);
      expect(json.changes[0]).toMatchObject({
        actor: 'hpa',
        actorKind: 'controller',
        source: 'audit',
        motivation: { kind: 'traffic', ref: 'spike' },
        decision: { decision: 'enforce', fields: ['replicas'] },
      });
    });

    it('tend history filters combine, and accept a type glob and a duration ago', async () => {
      const count = async (...args: string[]) => {
        const r = await runCli(['history', ex.dir, '--json', ...args]);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as HistoryJson).changes;
      };
      expect(
        await count(
          '--actor-kind',
          'controller',
          '--motivation',
          'traffic',
          '--intent',
          'availability',
          '--field',
          'spec.replicas',
          '--decision',
          'enforce',
          '--source',
          'audit',
          '--address',
          'sb.services/*',
          '--since',
          '1h',
        ),
      ).toHaveLength(1);
      expect(await count('--actor', 'hpa', '--source', 'tend')).toHaveLength(0);
      expect(await count('--actor', 'hpa', '--until', '1h')).toHaveLength(0);
      const tend = await count(
        '--actor-kind',
        'tend',
        '--address',
        'sb.services',
        '--field',
        'replicas',
      );
      // The create, and the correction that put replicas back.
      expect(tend.length).toBeGreaterThanOrEqual(2);
      expect(tend.every((c) => c.actor === 'tend')).toBe(true);
      expect(await count('--limit', '1')).toHaveLength(1);

      const bad = await runCli(['history', ex.dir, '--decision', 'enforced']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('did you mean enforce?');
      const since = await runCli(['history', ex.dir, '--since', 'yesterday']);
      expect(since.code).toBe(1);
      expect(since.stderr).toContain('--since "yesterday" is neither an ISO time nor a duration');
    });

    it('tend explain shows declared, observed, owner and the entries behind a field', async () => {
      const r = await runCli(['explain', 'sb.services/api.replicas', ex.dir], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^sb\.services\/api {2}sb\.services, object \S+, read now/);
      expect(r.stdout).toContain('replicas  as declared');
      expect(r.stdout).toContain('  declared   2');
      expect(r.stdout).toContain('  observed   2');
      expect(r.stdout).toContain('  owner      the intent');
      expect(r.stdout).toMatch(
        /hpa \(controller\)\s+audit\s+update\s+sb\.services\/api\s+replicas 2 → 5/,
      );
      expect(r.stdout).toMatch(/↳ enforce: .*rule \S+/);

      const json = JSON.parse(
        (await runCli(['explain', 'sb.services/api.spec.replicas', ex.dir, '--json'], { env }))
          .stdout,
      ) as ExplainJson;
      expect(json).toMatchObject({
        address: 'sb.services/api',
        field: 'replicas',
        observedFrom: 'platform',
      });
      const [replicas] = json.fields;
      expect(replicas).toMatchObject({
        field: 'replicas',
        state: 'as-declared',
        declared: { written: 2 },
        observed: 2,
        owner: { kind: 'intent' },
      });
      const actors = replicas!.entries.map((e) => e.actor);
      expect(actors).toContain('hpa');
      expect(actors.at(-1)).toBe('tend');
      expect(replicas!.entries.find((e) => e.actor === 'hpa')?.decision?.decision).toBe('enforce');
    });

    it('tend explain of a whole resource: a reference as written and resolved, undeclared fields left alone', async () => {
      const r = await runCli(['explain', 'sb.services/api', ex.dir, '--json'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const json = JSON.parse(r.stdout) as ExplainJson;
      const network = json.fields.find((f) => f.field === 'network_id');
      expect(network?.declared).toMatchObject({ written: '${sb.networks/main.id}' });
      expect(network?.declared?.resolved).toEqual(network?.observed);
      const undeclared = json.fields.filter((f) => f.owner.kind === 'unowned');
      expect(undeclared.length).toBeGreaterThan(0);
      expect(undeclared.every((f) => f.state === 'undeclared')).toBe(true);
      const text = await runCli(['explain', 'sb.services/api', ex.dir], { env });
      expect(text.stdout).toContain('not declared (nobody owns them; Tend leaves them alone):');
    });

    it('tend explain never shows a secret', async () => {
      for (const args of [
        ['explain', 'sb.instances/web', ex.dir],
        ['explain', 'sb.instances/web.admin_password', ex.dir, '--json'],
      ]) {
        const r = await runCli(args, { env });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(r.stdout).toContain('(secret)');
        expect(r.stdout + r.stderr).not.toContain(PASSWORD);
      }
    });

    it('tend explain exits 2 with a did-you-mean for an unknown address or field', async () => {
      const address = await runCli(['explain', 'sb.services/apx', ex.dir], { env });
      expect(address.code).toBe(2);
      expect(address.stderr).toContain('did you mean sb.services/api?');
      const field = await runCli(['explain', 'sb.services/api.replica', ex.dir], { env });
      expect(field.code).toBe(2);
      expect(field.stderr).toContain('did you mean replicas?');
      const json = await runCli(['explain', 'sb.services/api.replica', ex.dir, '--json'], { env });
      expect(json.code).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({
        ok: false,
        error: { code: 'explain.unknown_field' },
      });
    });

    it('tend drift exits 2 on errors: an invalid intent, an unknown flag', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-drift-bad-'));
      try {
        writeFileSync(join(dir, 'bad.yaml'), 'kind: Resource\ntype: nope\n');
        const r = await runCli(['drift', dir]);
        expect(r.code, r.stdout + r.stderr).toBe(2);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      const flag = await runCli(['drift', ex.dir, '--bogus']);
      expect(flag.code).toBe(2);
    });

    it('tend drift and explain name a declared resource whose object was deleted', async () => {
      const bucket = (await sandbox.objects()).find((o) => o.type === 'buckets')!;
      const res = await fetch(`${sandbox.url}/buckets/${bucket.id}`, {
        method: 'DELETE',
        headers: { 'X-Tend-Actor': 'bob', 'X-Tend-Actor-Kind': 'human' },
      });
      expect(res.status).toBeLessThan(300);
      const r = await runCli(['drift', ex.dir, '--json'], { env });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect((JSON.parse(r.stdout) as DriftJson).missing).toEqual([
        expect.objectContaining({
          address: 'sb.buckets/assets',
          reason: 'deleted',
          deletedBy: expect.objectContaining({ actor: 'bob', source: 'audit' }),
        }),
      ]);
      const e = await runCli(['explain', 'sb.buckets/assets', ex.dir], { env });
      expect(e.code, e.stdout + e.stderr).toBe(0);
      expect(e.stdout).toContain('no object: it was deleted; apply creates it again');
    });
  },
);
