import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStorePath } from '../../src/app/workspace.js';
import type { ComplianceFinding, NewChange } from '../../src/core/index.js';
import { ledgerKey, openSqliteStore } from '../../src/store/index.js';
import { copyExample, runCli } from '../support/cli.js';
import { sarifValidator } from '../support/sarif.js';
import type { SandboxHandle } from '../support/sandbox-process.js';
import { startSandboxInProcess } from '../support/sandbox-process.js';

// `tend compliance` and `tend status` through the built CLI over a store holding what a pass writes
// (statuses with the rules their observed object breaks, verdict entries in the ledger): the text
// for a person, the PolicyReport, SARIF validated against the SARIF 2.1.0 schema, and the exit codes
// (1 with a deny or warn result open, 0 without, 2 on a usage error).

const POLICIES = `kind: Policy
name: buckets-keep-versioning
severity: high
actions: [deny]
match: { types: [sb.buckets] }
validations:
  - expression: object.versioning == true
    message: buckets keep versioning on
---
kind: Policy
name: services-audited
actions: [audit]
match: { types: [sb.services] }
validations:
  - expression: object.replicas <= 1
    message: one replica
`;

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let clean: ReturnType<typeof copyExample>;
let causeSeq = 0;

function finding(over: Partial<ComplianceFinding>): ComplianceFinding {
  return {
    policy: 'buckets-keep-versioning',
    rule: 0,
    result: 'fail',
    message: 'buckets keep versioning on',
    reason: 'Invalid',
    actions: ['deny'],
    severity: 'high',
    fields: ['versioning'],
    source: { file: 'policies.yaml', line: 7, column: 17 },
    since: new Date(Date.now() - 3_600_000).toISOString(),
    ...over,
  };
}

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
  ex = copyExample('quickstart', sandbox.url);
  ex.write('policies.yaml', POLICIES);
  clean = copyExample('quickstart', sandbox.url);
  clean.write('policies.yaml', POLICIES);
  const store = await openSqliteStore(defaultStorePath(ex.dir), {
    ledgerKey: ledgerKey('compliance-e2e-key-0123456789abcdef'),
  });
  const time = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const base: NewChange = {
    time,
    actor: 'alice',
    actorKind: 'human',
    motivation: { kind: 'incident', ref: 'INC-9' },
    source: 'audit',
    type: 'sb.buckets',
    objectId: 'bkt-1',
    address: 'sb.buckets/assets',
    action: 'update',
    fields: ['versioning'],
  };
  const cause = await store.appendChange(base);
  causeSeq = cause.seq;
  const ref = {
    seq: cause.seq,
    time,
    actor: 'alice',
    actorKind: 'human' as const,
    motivation: { kind: 'incident', ref: 'INC-9' },
    source: 'audit' as const,
  };
  const found = await store.appendChange({
    ...base,
    actor: 'tend',
    actorKind: 'tend',
    source: 'tend',
    action: 'verdict',
    fields: [],
    compliance: {
      policy: 'buckets-keep-versioning',
      rule: 0,
      result: 'fail',
      message: 'buckets keep versioning on',
      actions: ['deny'],
      severity: 'high',
      cause: ref,
    },
  });
  await store.putStatus({
    address: 'sb.buckets/assets',
    state: 'converged',
    objectId: 'bkt-1',
    checks: [],
    compliance: {
      key: 'k',
      evaluatedAt: time,
      passed: 0,
      undecidable: 0,
      findings: [finding({ cause: ref, recorded: found.seq })],
    },
    updatedAt: time,
  });
  await store.putStatus({
    address: 'sb.services/api',
    state: 'converged',
    objectId: 'svc-1',
    checks: [],
    compliance: {
      key: 'k',
      evaluatedAt: time,
      passed: 0,
      undecidable: 0,
      findings: [
        finding({
          policy: 'services-audited',
          actions: ['audit'],
          severity: 'medium',
          message: 'one replica',
        }),
      ],
    },
    updatedAt: time,
  });
  await store.close();
}, 60_000);

afterAll(async () => {
  ex?.cleanup();
  clean?.cleanup();
  await sandbox?.stop();
});

describe('tend compliance', { timeout: 60_000 }, () => {
  it('prints each open result with its rule and the change that introduced it; exit 1', async () => {
    const r = await runCli(['compliance', ex.dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^compliance of .+: 1 fail, 1 warn, 0 error, 0 pass, 0 skip$/);
    expect(lines, r.stdout).toContain(
      '✗ deny  sb.buckets/assets  buckets-keep-versioning rule 1 (policies.yaml:7:17)',
    );
    expect(lines, r.stdout).toContain('    buckets keep versioning on');
    expect(r.stdout).toContain(
      `introduced by alice (human, incident:INC-9), ledger entry ${causeSeq}`,
    );
    expect(r.stdout).toContain('· audit  sb.services/api  services-audited rule 1');
    expect(r.stdout).toContain('buckets-keep-versioning rule 1  found: buckets keep versioning on');
  });

  it('--json is the PolicyReport, with the cause', async () => {
    const r = await runCli(['compliance', ex.dir, '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      kind: string;
      summary: unknown;
      results: { policy: string; result: string; cause?: { actor: string; seq: number } }[];
    };
    expect(doc.kind).toBe('PolicyReport');
    expect(doc.summary).toEqual({ pass: 0, fail: 1, warn: 1, error: 0, skip: 0 });
    expect(doc.results[0]).toMatchObject({
      policy: 'buckets-keep-versioning',
      result: 'fail',
      cause: { actor: 'alice', seq: causeSeq },
    });
  });

  it('--format sarif validates against the SARIF 2.1.0 schema; audit is a note', async () => {
    const r = await runCli(['compliance', ex.dir, '--format', 'sarif']);
    expect(r.code).toBe(1);
    const log = JSON.parse(r.stdout) as {
      runs: { results: { ruleId: string; level: string }[] }[];
    };
    const validate = sarifValidator();
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    expect(log.runs[0]!.results.map((x) => [x.ruleId, x.level])).toEqual([
      ['buckets-keep-versioning/1', 'error'],
      ['services-audited/1', 'note'],
    ]);
  });

  it('exits 0 when nothing is open', async () => {
    const r = await runCli(['compliance', clean.dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no open violation or failing check');
  });

  it.each([
    [['--format', 'xml'], "error: option '--format <format>' argument 'xml' is invalid"],
    [['--since', 'last tuesday'], '--since "last tuesday" is neither an ISO time nor a duration'],
    [['--limit', '-3'], "argument '-3' is invalid. --limit must be a non-negative integer"],
  ])('%j is a usage error: exit 2', async (args, message) => {
    const r = await runCli(['compliance', ex.dir, ...args]);
    expect(r.stderr).toContain(message);
    expect(r.code).toBe(2);
  });
});

describe('tend status', { timeout: 60_000 }, () => {
  it('prints a compliance line under a resource with open findings', async () => {
    const r = await runCli(['status', ex.dir, '--offline']);
    expect(r.stdout).toContain(
      `  ✗ deny policy buckets-keep-versioning rule 1: buckets keep versioning on (introduced by alice (human, incident:INC-9), ledger entry ${causeSeq})`,
    );
  });

  it('--json carries the compliance state', async () => {
    const r = await runCli(['status', ex.dir, '--offline', '--json']);
    const doc = JSON.parse(r.stdout) as {
      resources: { address: string; compliance?: { findings: { policy: string }[] } }[];
    };
    const bucket = doc.resources.find((x) => x.address === 'sb.buckets/assets');
    expect(bucket?.compliance?.findings.map((f) => f.policy)).toEqual(['buckets-keep-versioning']);
  });
});
