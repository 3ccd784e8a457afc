import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { runCli } from '../support/cli.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 28, item 3 and "What it must show" 3 and 4, through the built `tend` against a real sandbox
// process: policies evaluated on what the platform holds, every pass. A deny policy outranks the
// arbitration policy (an incident change it would accept is enforced back); a violation found is
// recorded in the ledger with the change that introduced it, and again when it is gone.

interface Entry {
  seq: number;
  actor: string;
  actorKind?: string;
  action: string;
  fields: string[];
  motivation?: { kind: string; ref?: string };
  decision?: { decision: string; rule: string; reason: string };
  compliance?: {
    policy: string;
    rule: number;
    result: string;
    message: string;
    cause?: {
      seq: number;
      actor: string;
      actorKind?: string;
      motivation?: { kind: string; ref?: string };
    };
    found?: number;
  };
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

const ONCALL_ACCEPTS = `kind: Arbitration
name: oncall
rules:
  - when: { motivation: incident, actorKind: human }
    decide: accept
  - decide: enforce
`;

function workspace(name: string, documents: string[]) {
  const dir = mkdtempSync(join(tmpdir(), `tend-comply-${name}-`));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'main.yaml'),
    [
      `kind: Provider\nname: sb\ntype: openapi\nspec: ${sandbox.url}/openapi.json\nendpoint: ${sandbox.url}\n`,
      ...documents,
    ].join('---\n'),
  );
  const tend = (args: string[]): Promise<CliResult> => runCli(args);
  return {
    dir,
    apply: () => tend(['apply', dir, '--yes']),
    history: async (address: string): Promise<Entry[]> => {
      const r = await tend(['history', dir, '--json', '--limit', '500', '--address', address]);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { changes: Entry[] }).changes;
    },
    object: async (type: string, key: string, value: string) =>
      (await sandbox.objects()).find((o) => o.type === type && o.fields[key] === value)!,
    /** Changes an object out of band, as another actor says they do. */
    patch: async (
      type: string,
      id: string,
      body: Record<string, unknown>,
      who: Record<string, string>,
    ) => {
      const res = await fetch(`${sandbox.url}/${type}/${id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json', ...who },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
    },
  };
}

const INCIDENT = {
  'X-Tend-Actor': 'alice',
  'X-Tend-Actor-Kind': 'human',
  'X-Tend-Intent': 'availability',
  'X-Tend-Motivation': 'incident:INC-9',
};

describe('continuous compliance (CLI, real sandbox process)', () => {
  it('an incident change that breaks a deny policy is enforced back although the arbitration policy accepts incidents; the ledger names the engineer, the motivation and the rule', async () => {
    const ws = workspace('incident', [
      'kind: Resource\ntype: sb.buckets\nname: logs\nspec:\n  name: comply-logs.example\n  versioning: true\n',
      'kind: Policy\nname: buckets-keep-versioning\nseverity: high\nactions: [deny]\nmatch:\n  types: [sb.buckets]\nvalidations:\n  - expression: object.versioning == true\n    message: buckets keep versioning on\n',
      ONCALL_ACCEPTS,
    ]);
    const first = await ws.apply();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const bucket = await ws.object('buckets', 'name', 'comply-logs.example');
    await ws.patch('buckets', bucket.id, { versioning: false }, INCIDENT);

    const second = await ws.apply();
    expect(second.code, second.stdout + second.stderr).toBe(0);
    // The deny policy won: versioning is on again on the platform.
    expect((await ws.object('buckets', 'name', 'comply-logs.example')).fields['versioning']).toBe(
      true,
    );

    const history = await ws.history('sb.buckets/logs');
    const drift = history.find((e) => e.actor === 'alice')!;
    expect(drift).toMatchObject({
      actorKind: 'human',
      motivation: { kind: 'incident', ref: 'INC-9' },
      fields: ['versioning'],
      decision: { decision: 'enforce', rule: 'policy buckets-keep-versioning rule 1' },
    });
    expect(drift.decision!.reason).toMatch(/deny policy outranks every motivation/);
    expect(drift.decision!.reason).toMatch(/would have decided accept by oncall#1/);

    const verdicts = history.filter((e) => e.action === 'verdict');
    expect(verdicts.map((v) => v.compliance!.result)).toEqual(['fail', 'pass']);
    const [found, gone] = verdicts;
    expect(found!.compliance).toMatchObject({
      policy: 'buckets-keep-versioning',
      rule: 0,
      message: 'buckets keep versioning on',
      cause: {
        seq: drift.seq,
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'incident', ref: 'INC-9' },
      },
    });
    expect(found!.seq).toBeGreaterThan(drift.seq);
    expect(gone!.compliance!.found).toBe(found!.seq);

    // tend history says it in words.
    const text = (await runCli(['history', ws.dir, '--address', 'sb.buckets/logs'])).stdout;
    expect(text).toContain(
      `policy buckets-keep-versioning (deny) rule 1 broken: buckets keep versioning on — introduced by alice (human, incident:INC-9, availability), ledger entry ${drift.seq}`,
    );
    expect(text).toContain(`rule 1 no longer broken (found in entry ${found!.seq})`);

    // tend accept refuses to write the forbidden value into the intent.
    const accepted = await runCli([
      'accept',
      'sb.buckets/logs',
      'versioning',
      ws.dir,
      '--value',
      'false',
    ]);
    expect(accepted.code, accepted.stdout + accepted.stderr).toBe(1);
    expect(accepted.stderr).toContain(
      'sb.buckets/logs versioning = false is not written into the intent: policy buckets-keep-versioning (deny) rule 1 violated: buckets keep versioning on',
    );

    // A pass with nothing new records nothing more.
    expect((await ws.apply()).code).toBe(0);
    expect((await ws.history('sb.buckets/logs')).length).toBe(history.length);
  });

  it('a warn policy broken on the platform: found with the change that introduced it, kept (not enforced), and found once', async () => {
    const ws = workspace('warn', [
      'kind: Resource\ntype: sb.services\nname: api\nspec:\n  name: comply-api\n  image: nginx:1.27\n',
      "kind: Policy\nname: replicas-at-most-three\nactions: [warn]\nmatch:\n  types: [sb.services]\nvalidations:\n  - expression: object.replicas <= 3\n    messageExpression: \"'replicas is ' + string(object.replicas) + ', more than 3'\"\n",
    ]);
    const first = await ws.apply();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const service = await ws.object('services', 'name', 'comply-api');
    // The intent leaves replicas to the platform: a scaler's change is not drift.
    await ws.patch(
      'services',
      service.id,
      { replicas: 5 },
      {
        'X-Tend-Actor': 'autoscaler',
        'X-Tend-Actor-Kind': 'controller',
        'X-Tend-Motivation': 'cost',
      },
    );
    expect((await ws.apply()).code).toBe(0);
    expect((await ws.apply()).code).toBe(0);
    expect((await ws.object('services', 'name', 'comply-api')).fields['replicas']).toBe(5);
    const history = await ws.history('sb.services/api');
    const verdicts = history.filter((e) => e.action === 'verdict');
    expect(verdicts).toHaveLength(1);
    const scaler = history.find((e) => e.actor === 'autoscaler')!;
    expect(scaler).toBeDefined();
    expect(verdicts[0]!.compliance).toMatchObject({
      policy: 'replicas-at-most-three',
      result: 'fail',
      message: 'replicas is 5, more than 3',
      cause: { seq: scaler.seq, actor: 'autoscaler', actorKind: 'controller' },
    });
  });
});
