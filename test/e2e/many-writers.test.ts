import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// Issue 11, "what it must show": many writers on one service, decided by an arbitration policy on
// intent and motivation, through the built `tend` command against a real sandbox process. Each
// scenario has its own intent directory (its own workspace and store) and its own service.

interface LedgerEntry {
  seq: number;
  actor: string;
  actorKind?: string;
  source: string;
  action: string;
  address?: string;
  fields: string[];
  intent?: string;
  motivation?: { kind: string; ref?: string; expiresAt?: string };
  decision?: { decision: string; rule: string; reason: string; until?: string; fields: string[] };
}

interface Headers {
  actor?: string;
  actorKind?: string;
  intent?: string;
  motivation?: string;
}

let sandbox: SandboxHandle;
const dirs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandboxProcess();
});
afterAll(async () => {
  await sandbox?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A workspace with one service (`sb.services/<name>`, replicas 2) and optional extra documents. */
function workspace(name: string, extra = '') {
  const dir = mkdtempSync(join(tmpdir(), `tend-writers-${name}-`));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'main.yaml'),
    `kind: Provider
name: sb
type: openapi
spec: ${sandbox.url}/openapi.json
endpoint: ${sandbox.url}
---
kind: Resource
type: sb.services
name: ${name}
spec:
  name: ${name}
  image: nginx:1.27 # pinned for stability
  replicas: 2
${extra ? `---\n${extra}` : ''}`,
  );
  const address = `sb.services/${name}`;
  const tend = (args: string[]): Promise<CliResult> => runCli([...args]);
  return {
    dir,
    address,
    apply: () => tend(['apply', dir, '--yes']),
    history: async (...filters: string[]): Promise<LedgerEntry[]> => {
      const r = await tend(['history', dir, '--json', '--limit', '500', ...filters]);
      return (JSON.parse(r.stdout) as { changes: LedgerEntry[] }).changes;
    },
    decisions: async (): Promise<LedgerEntry[]> => {
      const r = await tend(['history', dir, '--json', '--limit', '500', '--address', address]);
      return (JSON.parse(r.stdout) as { changes: LedgerEntry[] }).changes.filter(
        (c) => c.decision !== undefined,
      );
    },
    status: async () => {
      const r = await tend(['status', dir, '--json', '--offline']);
      const s = JSON.parse(r.stdout) as {
        resources: { address: string; state: string; message?: string }[];
      };
      return s.resources.find((x) => x.address === address)!;
    },
    /** The service as the platform has it. */
    service: async (): Promise<Record<string, unknown>> => {
      const o = (await sandbox.objects()).find(
        (x) => x.type === 'services' && x.fields['name'] === name,
      )!;
      return o.fields;
    },
    /** Changes the service out of band, as another actor. */
    change: async (body: Record<string, unknown>, h: Headers = {}) => {
      const o = (await sandbox.objects()).find(
        (x) => x.type === 'services' && x.fields['name'] === name,
      )!;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (h.actor) headers['X-Tend-Actor'] = h.actor;
      if (h.actorKind) headers['X-Tend-Actor-Kind'] = h.actorKind;
      if (h.intent) headers['X-Tend-Intent'] = h.intent;
      if (h.motivation) headers['X-Tend-Motivation'] = h.motivation;
      const res = await fetch(`${sandbox.url}/services/${o.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until just after an ISO time (a TTL's end). */
const sleepUntil = async (iso: string | undefined) => {
  expect(iso).toBeDefined();
  await sleep(Math.max(0, Date.parse(iso!) - Date.now()) + 300);
};

/** An ISO time `ms` from now. */
const fromNow = (ms: number) => new Date(Date.now() + ms).toISOString();

const hpa = (ttl: string): Headers => ({
  actor: 'hpa',
  actorKind: 'controller',
  intent: 'availability',
  motivation: `traffic:spike 2026-11-24; ttl=${ttl}`,
});
const costOptimiser: Headers = {
  actor: 'cost-optimiser',
  actorKind: 'controller',
  intent: 'cost',
  motivation: 'budget:monthly target',
};

describe(
  'many writers, decided by the arbitration policy (CLI, real sandbox process)',
  { timeout: 180_000 },
  () => {
    it('an autoscaler raising replicas during an active traffic spike beats a cost optimiser lowering them for a budget target, and the reverse once the spike expires', async () => {
      const ws = workspace(
        'scaling',
        `kind: Arbitration
name: scaling
rules:
  - when: { actorKind: controller, motivation: [traffic, budget], field: spec.replicas }
    decide: yield
  - decide: enforce
`,
      );
      expect((await ws.apply()).code).toBe(0);

      // A TTL long enough for the next steps on a loaded machine; the test then waits for its end.
      await ws.change({ replicas: 6 }, hpa('20s'));
      // A plan shows the decision a pass would make, records nothing, and has nothing to change.
      const planned = await runCli(['plan', ws.dir]);
      expect(planned.code, planned.stdout + planned.stderr).toBe(0);
      expect(planned.stdout).toMatch(
        /sb\.services\/scaling\.replicas {2}declared 2, observed 6; changed by hpa \(controller\)[^\n]*\n\s+↳ yield/,
      );
      expect(await ws.decisions()).toEqual([]);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['replicas']).toBe(6);

      await ws.change({ replicas: 3 }, costOptimiser);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['replicas']).toBe(6);
      const kept = (await ws.decisions()).at(-1)!;
      expect(kept.actor).toBe('cost-optimiser');
      expect(kept.decision).toMatchObject({ decision: 'enforce', rule: 'precedence' });
      expect(kept.decision!.reason).toMatch(
        /kept replicas=6 from hpa over cost-optimiser's 3: motivation traffic outranks budget/,
      );

      const spike = (await ws.history('--actor', 'hpa')).at(-1)!.motivation?.expiresAt;
      await sleepUntil(spike);
      await ws.change({ replicas: 3 }, costOptimiser);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['replicas']).toBe(3);
      const after = (await ws.decisions()).at(-1)!;
      expect(after).toMatchObject({ actor: 'cost-optimiser', actorKind: 'controller' });
      expect(after.decision).toMatchObject({ decision: 'yield', rule: 'scaling#1' });
    });

    const security = (freeze: { from: string; to: string }) => `kind: Arbitration
name: security
windows:
  - { name: freeze, from: ${freeze.from}, to: ${freeze.to} }
rules:
  - when: { motivation: cve, window: freeze }
    decide: escalate
  - when: { motivation: [cve, stability] }
    decide: yield
  - decide: enforce
`;
    const scanner: Headers = {
      actor: 'scanner',
      actorKind: 'controller',
      intent: 'security',
      motivation: 'cve:CVE-2026-1234; urgency=high',
    };
    const pinning: Headers = {
      actor: 'alice',
      actorKind: 'human',
      intent: 'availability',
      motivation: 'stability:keep 1.26 until the leak is fixed',
    };

    it('a security patch for a CVE beats a stability concern', async () => {
      const ws = workspace(
        'patched',
        security({ from: fromNow(-3 * 3_600_000), to: fromNow(-2 * 3_600_000) }),
      );
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ image: 'nginx:1.26' }, pinning);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['image']).toBe('nginx:1.26');

      await ws.change({ image: 'nginx:1.27.3' }, scanner);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['image']).toBe('nginx:1.27.3');
      const last = (await ws.decisions()).at(-1)!;
      expect(last).toMatchObject({
        actor: 'scanner',
        motivation: { kind: 'cve', ref: 'CVE-2026-1234' },
      });
      expect(last.decision).toMatchObject({ decision: 'yield', rule: 'security#2' });
      expect((await ws.status()).state).toBe('converged');
    });

    it('inside a declared freeze window, the same CVE patch escalates: kept, the resource blocked for a human', async () => {
      const ws = workspace(
        'frozen',
        security({ from: fromNow(-3_600_000), to: fromNow(3_600_000) }),
      );
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ image: 'nginx:1.27.3' }, scanner);
      const r = await ws.apply();
      expect((await ws.service())['image']).toBe('nginx:1.27.3');
      const last = (await ws.decisions()).at(-1)!;
      expect(last.decision).toMatchObject({ decision: 'escalate', rule: 'security#1' });
      const s = await ws.status();
      expect(s.state).toBe('blocked');
      expect(s.message).toMatch(/image/);
      expect(r.code, 'apply exits 3: a field waits for a human').toBe(3);
    });

    const incident = (ttl: string): Headers => ({
      actor: 'alice',
      actorKind: 'human',
      intent: 'availability',
      motivation: `incident:INC-42; ttl=${ttl}`,
    });
    const hotfixPolicy = (then: string) => `kind: Arbitration
name: oncall
rules:
  - when: { motivation: incident, actorKind: human }
    decide: hold
    until: ttl
    then: ${then}
  - decide: enforce
`;

    it('an on-call hotfix with motivation incident holds for its TTL, then is reverted', async () => {
      const ws = workspace('hotfix', hotfixPolicy('enforce'));
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ replicas: 5 }, incident('15s'));
      await ws.apply();
      expect((await ws.service())['replicas']).toBe(5);
      const held = (await ws.decisions()).at(-1)!.decision!;
      expect(held).toMatchObject({ decision: 'hold', rule: 'oncall#1' });
      expect((await ws.status()).state).toBe('drifted');

      await sleepUntil(held.until);
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['replicas']).toBe(2);
      const again = (await ws.decisions()).at(-1)!;
      expect(again.decision!.decision).toBe('enforce');
      expect(again.decision!.reason).toMatch(/hold/);
      expect((await ws.status()).state).toBe('converged');
    });

    it('an on-call hotfix held for its TTL is accepted into code when the policy says so', async () => {
      const ws = workspace('accepted', hotfixPolicy('accept'));
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ replicas: 5 }, incident('15s'));
      await ws.apply();
      await sleepUntil((await ws.decisions()).at(-1)!.decision!.until);
      const accepting = await ws.apply();
      // The pass that accepts shows the patch that takes the value into code.
      expect(accepting.stdout).toMatch(/Accepted sb\.services\/accepted\.replicas into code/);
      expect(accepting.stdout).toMatch(/^\+\s+replicas: 5$/m);
      expect((await ws.service())['replicas']).toBe(5);
      expect((await ws.decisions()).at(-1)!.decision!.decision).toBe('accept');
      const diff = await runCli(['accept', ws.address, 'replicas', ws.dir]);
      expect(diff.code).toBe(0);
      expect(diff.stdout).toMatch(/^-\s+replicas: 2$/m);
      expect(diff.stdout).toMatch(/^\+\s+replicas: 5$/m);
    });

    it('two availability changes to the same value with different motivations: the incident response is the one kept on record', async () => {
      const ws = workspace('same-value');
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ replicas: 5 }, hpa('1h'));
      // The on-call engineer wants the same value, for an incident, and says so.
      const announced = await runCli([
        'announce',
        ws.address,
        '--field',
        'replicas',
        '--value',
        '5',
        '--actor',
        'alice',
        '--actor-kind',
        'human',
        '--intent',
        'availability',
        '--motivation',
        'incident',
        '--ref',
        'INC-42',
        '--ttl',
        '1h',
        ws.dir,
      ]);
      expect(announced.code, announced.stderr).toBe(0);
      await ws.apply();
      const decided = (await ws.decisions()).at(-1)!;
      expect(decided).toMatchObject({
        actor: 'alice',
        intent: 'availability',
        motivation: { kind: 'incident', ref: 'INC-42' },
      });
      expect(decided.decision).toMatchObject({ decision: 'hold', rule: 'default#1' });
      const all = await ws.history('--address', ws.address);
      expect(all.filter((c) => c.actor === 'hpa' && c.decision === undefined)).toHaveLength(1);
      expect(decided.source).toBe('announcement');
    });

    it('an unannounced console edit is enforced back to the intent; an announced one is attributed to the announcer', async () => {
      const ws = workspace('console');
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ replicas: 4 });
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.service())['replicas']).toBe(2);
      const enforced = (await ws.decisions()).at(-1)!;
      expect(enforced).toMatchObject({ actor: 'anonymous', source: 'audit' });
      expect(enforced.decision).toMatchObject({ decision: 'enforce', rule: 'default#2' });

      const announced = await runCli([
        'announce',
        ws.address,
        '--field',
        'replicas',
        '--value',
        '4',
        '--actor',
        'bob',
        '--actor-kind',
        'human',
        '--intent',
        'availability',
        '--motivation',
        'incident',
        '--ref',
        'INC-9',
        '--ttl',
        '1h',
        ws.dir,
      ]);
      expect(announced.code, announced.stderr).toBe(0);
      await ws.change({ replicas: 4 });
      await ws.apply();
      expect((await ws.service())['replicas']).toBe(4);
      const attributed = (await ws.decisions()).at(-1)!;
      expect(attributed).toMatchObject({
        actor: 'bob',
        actorKind: 'human',
        source: 'announcement',
        motivation: { kind: 'incident', ref: 'INC-9' },
      });
      expect(attributed.decision!.decision).toBe('hold');
    });

    it('a removed ownership marker is put back and recorded, whatever the policy says', async () => {
      const ws = workspace(
        'marker',
        `kind: Arbitration
name: hands-off
rules:
  - decide: yield
`,
      );
      expect((await ws.apply()).code).toBe(0);
      await ws.change({ tags: {} }, { actor: 'janitor', actorKind: 'controller' });
      expect((await ws.apply()).code).toBe(0);
      const tags = (await ws.service())['tags'] as Record<string, string>;
      expect(tags['tend.address']).toBe(ws.address);
      const restored = (await ws.decisions()).at(-1)!;
      expect(restored).toMatchObject({ actor: 'janitor' });
      expect(restored.decision).toMatchObject({ decision: 'enforce', rule: 'marker' });
    });

    it('a deletion by another actor is recorded once, and the resource is created again', async () => {
      const ws = workspace('deleted');
      expect((await ws.apply()).code).toBe(0);
      const before = await ws.history();
      const o = (await sandbox.objects()).find(
        (x) => x.type === 'services' && x.fields['name'] === 'deleted',
      )!;
      const res = await fetch(`${sandbox.url}/services/${o.id}`, {
        method: 'DELETE',
        headers: { 'X-Tend-Actor': 'carol', 'X-Tend-Actor-Kind': 'human' },
      });
      expect(res.status).toBeLessThan(300);
      expect((await ws.apply()).code).toBe(0);
      const after = await ws.history();
      const deletes = after.slice(before.length).filter((c) => c.action === 'delete');
      expect(deletes).toHaveLength(1);
      expect(deletes[0]).toMatchObject({ actor: 'carol', source: 'audit', address: ws.address });
      expect((await ws.service())['name']).toBe('deleted');
      expect((await ws.apply()).code).toBe(0);
      expect((await ws.history()).filter((c) => c.action === 'delete')).toHaveLength(1);
    });
  },
);
