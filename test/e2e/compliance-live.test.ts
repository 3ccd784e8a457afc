import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { sarifValidator } from '../support/sarif.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// Issue 28 "What it must show" 3 and 4 as `tend compliance` shows them, through the built `tend`
// against a real sandbox process and the engine's continuous compliance: an on-call engineer's
// incident change that breaks a deny policy is enforced back, and the report's history names the
// engineer, the motivation and the rule; a warn policy broken on the platform is an open result
// with the ledger entry of the change that introduced it, exit 1, and its SARIF validates.

interface Report {
  kind: string;
  summary: { pass: number; fail: number; warn: number; error: number; skip: number };
  results: {
    policy: string;
    rule: string;
    result: string;
    resources: { name: string }[];
    message: string;
    properties: Record<string, string>;
    cause?: { seq: number; actor: string; actorKind?: string; motivation?: { kind: string } };
  }[];
  history: {
    seq: number;
    event: string;
    policy: string;
    rule: number;
    address: string;
    cause?: { actor: string; actorKind?: string; motivation?: { kind: string; ref?: string } };
    found?: number;
  }[];
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

function workspace(name: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), `tend-report-${name}-`));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'provider.yaml'),
    `kind: Provider\nname: sb\ntype: openapi\nspec: ${sandbox.url}/openapi.json\nendpoint: ${sandbox.url}\n`,
  );
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

async function objectId(type: string, key: string, value: string): Promise<string> {
  return (await sandbox.objects()).find((o) => o.type === type && o.fields[key] === value)!.id;
}

async function patch(
  type: string,
  id: string,
  body: Record<string, unknown>,
  who: Record<string, string>,
) {
  const res = await fetch(`${sandbox.url}/${type}/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...who },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

async function apply(dir: string): Promise<void> {
  const r = await runCli(['apply', dir, '--yes']);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

async function report(dir: string): Promise<{ code: number | null; doc: Report }> {
  const r = await runCli(['compliance', dir, '--json']);
  expect(r.stderr).toBe('');
  return { code: r.code, doc: JSON.parse(r.stdout) as Report };
}

describe(
  'tend compliance on what the engine found (CLI, real sandbox process)',
  { timeout: 120_000 },
  () => {
    it('an incident change enforced back by a deny policy: the report is clean, its history names the engineer, the motivation and the rule', async () => {
      const dir = workspace('incident', {
        'bucket.yaml':
          'kind: Resource\ntype: sb.buckets\nname: logs\nspec:\n  name: report-logs.example\n  versioning: true\n',
        'policies.yaml':
          'kind: Policy\nname: buckets-keep-versioning\nseverity: high\nactions: [deny]\nmatch:\n  types: [sb.buckets]\nvalidations:\n  - expression: object.versioning == true\n    message: buckets keep versioning on\n',
        'arbitration.yaml':
          'kind: Arbitration\nname: oncall\nrules:\n  - when: { motivation: incident, actorKind: human }\n    decide: accept\n  - decide: enforce\n',
      });
      await apply(dir);
      await patch(
        'buckets',
        await objectId('buckets', 'name', 'report-logs.example'),
        { versioning: false },
        {
          'X-Tend-Actor': 'alice',
          'X-Tend-Actor-Kind': 'human',
          'X-Tend-Intent': 'availability',
          'X-Tend-Motivation': 'incident:INC-9',
        },
      );
      await apply(dir);

      const { code, doc } = await report(dir);
      expect(code).toBe(0);
      expect(doc.results).toEqual([]);
      expect(doc.summary).toMatchObject({ fail: 0, warn: 0, pass: 1 });
      const [found, gone] = doc.history;
      expect(doc.history.map((e) => [e.event, e.policy, e.rule, e.address])).toEqual([
        ['found', 'buckets-keep-versioning', 1, 'sb.buckets/logs'],
        ['gone', 'buckets-keep-versioning', 1, 'sb.buckets/logs'],
      ]);
      expect(found!.cause).toMatchObject({
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'incident', ref: 'INC-9' },
      });
      expect(gone!.found).toBe(found!.seq);

      const text = await runCli(['compliance', dir]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        /sb\.buckets\/logs {2}buckets-keep-versioning rule 1 {2}found: buckets keep versioning on \(introduced by alice \(human, incident:INC-9, availability\), ledger entry \d+\)/,
      );
      expect(text.stdout).toMatch(/sb\.buckets\/logs {2}buckets-keep-versioning rule 1 {2}gone/);
    });

    it('a warn policy broken on the platform: an open result with the change that introduced it, exit 1, and SARIF that validates', async () => {
      const dir = workspace('warn', {
        'service.yaml':
          'kind: Resource\ntype: sb.services\nname: api\nspec:\n  name: report-api\n  image: nginx:1.27\n',
        'policies.yaml':
          "kind: Policy\nname: replicas-at-most-three\nactions: [warn]\nmatch:\n  types: [sb.services]\nvalidations:\n  - expression: object.replicas <= 3\n    messageExpression: \"'replicas is ' + string(object.replicas) + ', more than 3'\"\n",
      });
      await apply(dir);
      await patch(
        'services',
        await objectId('services', 'name', 'report-api'),
        { replicas: 5 },
        {
          'X-Tend-Actor': 'autoscaler',
          'X-Tend-Actor-Kind': 'controller',
          'X-Tend-Motivation': 'cost',
        },
      );
      await apply(dir);

      const { code, doc } = await report(dir);
      expect(code).toBe(1);
      expect(doc.summary).toMatchObject({ fail: 0, warn: 1 });
      expect(doc.results).toHaveLength(1);
      const [r] = doc.results;
      expect(r).toMatchObject({
        policy: 'replicas-at-most-three',
        rule: '1',
        result: 'warn',
        resources: [{ name: 'sb.services/api' }],
        message: 'replicas is 5, more than 3',
        properties: {
          location: 'policies.yaml:7:17',
          actor: 'autoscaler',
          actorKind: 'controller',
        },
        cause: { actor: 'autoscaler', actorKind: 'controller', motivation: { kind: 'cost' } },
      });
      // The cause is the ledger entry of the autoscaler's change.
      const h = await runCli(['history', dir, '--json', '--actor', 'autoscaler']);
      const [change] = (JSON.parse(h.stdout) as { changes: { seq: number }[] }).changes;
      expect(r!.cause!.seq).toBe(change!.seq);
      expect(r!.properties['causeSeq']).toBe(String(change!.seq));

      const sarif = await runCli(['compliance', dir, '--format', 'sarif']);
      expect(sarif.code).toBe(1);
      const log = JSON.parse(sarif.stdout) as {
        runs: {
          results: {
            ruleId: string;
            level: string;
            locations: {
              physicalLocation: { artifactLocation: { uri: string }; region: unknown };
            }[];
          }[];
        }[];
      };
      const validate = sarifValidator();
      expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
      expect(log.runs[0]!.results).toHaveLength(1);
      expect(log.runs[0]!.results[0]).toMatchObject({
        ruleId: 'replicas-at-most-three/1',
        level: 'warning',
        locations: [
          {
            physicalLocation: {
              artifactLocation: { uri: 'policies.yaml' },
              region: { startLine: 7, startColumn: 17 },
            },
          },
        ],
      });

      // tend status names it under the service.
      const status = await runCli(['status', dir, '--offline']);
      expect(status.stdout).toMatch(
        /! warn policy replicas-at-most-three rule 1: replicas is 5, more than 3 \(introduced by autoscaler \(controller, cost\), ledger entry \d+\)/,
      );
    });
  },
);
