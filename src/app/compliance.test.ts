import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { copyExample } from '../../test/support/cli.js';
import { sarifValidator } from '../../test/support/sarif.js';
import type { SandboxHandle } from '../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../test/support/sandbox-process.js';
import type { ComplianceFinding, NewChange, ResourceStatus } from '../core/index.js';
import { reportFails } from '../core/index.js';
import type { Clock } from '../engine/index.js';
import { systemClock } from '../engine/index.js';
import { ledgerKey, openSqliteStore } from '../store/index.js';
import { compliance, complianceSarif, complianceView } from './compliance.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { defaultStorePath } from './workspace.js';

// The compliance report read back from a real SQLite store: statuses carrying the rules their
// observed object breaks and failing checks, and verdict entries in the ledger, as the engine writes
// them (docs/policies.md, "The report").

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);

function fixedClock(): Clock {
  return {
    now: () => new Date(NOW),
    sleep: (ms: number, signal?: AbortSignal) => systemClock.sleep(ms, signal),
  };
}

const POLICIES = `kind: Policy
name: buckets-keep-versioning
description: Buckets keep their object versions
severity: high
actions: [deny]
match: { types: [sb.buckets] }
validations:
  - expression: object.versioning == true
    message: buckets keep versioning on
---
kind: Policy
name: services-bounded
severity: medium
actions: [warn]
match: { types: [sb.services] }
validations:
  - expression: has(object.replicas)
    message: replicas are set
  - expression: object.replicas <= 10
    message: at most 10 replicas
`;

const ago = (hours: number): string => new Date(NOW - hours * 3_600_000).toISOString();

const alice = {
  seq: 0, // filled in from the ledger
  time: ago(3),
  actor: 'alice',
  actorKind: 'human' as const,
  motivation: { kind: 'incident', ref: 'INC-9' },
  source: 'audit' as const,
};

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
    source: { file: 'policies.yaml', line: 8, column: 17 },
    since: ago(3),
    ...over,
  };
}

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let ctx: AppContext;

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
});
afterAll(async () => {
  ex?.cleanup();
  await sandbox?.stop();
});
beforeEach(() => {
  ex?.cleanup();
  ex = copyExample('quickstart', sandbox.url);
  ex.write('policies.yaml', POLICIES);
  ctx = defaultContext({ clock: fixedClock() });
});

/** Writes the statuses and ledger entries of a workspace where two rules are broken and a check fails. */
async function seed(): Promise<{ causeSeq: number }> {
  const store = await openSqliteStore(defaultStorePath(ex.dir), {
    ledgerKey: ledgerKey('compliance-test-key-0123456789abcdef'),
  });
  try {
    const base = { source: 'audit' as const, before: {}, after: {} };
    const entry = (c: Partial<NewChange>): NewChange => ({
      time: ago(3),
      actor: 'tend',
      actorKind: 'tend',
      source: 'tend',
      type: 'sb.buckets',
      objectId: 'bkt-1',
      address: 'sb.buckets/assets',
      action: 'update',
      fields: [],
      ...c,
    });
    // An old verdict, outside the default week.
    await store.appendChange(
      entry({
        time: ago(24 * 30),
        action: 'verdict',
        compliance: {
          policy: 'buckets-keep-versioning',
          rule: 0,
          result: 'fail',
          message: 'old',
          actions: ['deny'],
          severity: 'high',
        },
      }),
    );
    const cause = await store.appendChange(
      entry({
        ...base,
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'incident', ref: 'INC-9' },
        fields: ['versioning'],
      }),
    );
    const causeRef = { ...alice, seq: cause.seq };
    const found = await store.appendChange(
      entry({
        time: ago(2),
        action: 'verdict',
        compliance: {
          policy: 'buckets-keep-versioning',
          rule: 0,
          result: 'fail',
          message: 'buckets keep versioning on',
          actions: ['deny'],
          severity: 'high',
          cause: causeRef,
        },
      }),
    );
    await store.appendChange(
      entry({
        time: ago(1),
        type: 'sb.services',
        objectId: 'svc-1',
        address: 'sb.services/api',
        action: 'verdict',
        compliance: {
          policy: 'services-bounded',
          rule: 1,
          result: 'pass',
          message: 'at most 10 replicas',
          actions: ['warn'],
          severity: 'medium',
          found: 1,
        },
      }),
    );
    const statuses: ResourceStatus[] = [
      {
        address: 'sb.buckets/assets',
        state: 'converged',
        objectId: 'bkt-1',
        checks: [],
        compliance: {
          key: 'k1',
          evaluatedAt: ago(1),
          passed: 0,
          undecidable: 0,
          findings: [finding({ cause: causeRef, recorded: found.seq })],
        },
        updatedAt: ago(2),
      },
      {
        address: 'sb.services/api',
        state: 'failing',
        objectId: 'svc-1',
        checks: [
          {
            name: 'replicas-as-declared',
            kind: 'cel',
            ok: false,
            message: 'observed.replicas == desired.replicas is false',
            at: ago(1),
          },
        ],
        compliance: {
          key: 'k2',
          evaluatedAt: ago(1),
          passed: 1,
          undecidable: 1,
          findings: [
            finding({
              policy: 'services-bounded',
              rule: 1,
              message: 'at most 10 replicas',
              actions: ['warn'],
              severity: 'medium',
              fields: ['replicas'],
              source: { file: 'policies.yaml', line: 20, column: 17 },
              since: ago(1),
            }),
          ],
        },
        updatedAt: ago(1),
      },
      {
        address: 'sb.networks/main',
        state: 'converged',
        objectId: 'net-1',
        checks: [],
        compliance: { key: 'k3', evaluatedAt: ago(1), passed: 0, undecidable: 0, findings: [] },
        updatedAt: ago(5),
      },
      {
        address: 'sb.instances/web',
        state: 'converged',
        objectId: 'i-1',
        checks: [
          { name: 'cel-1', kind: 'cel', ok: true, message: 'true', at: ago(1) },
          { name: 'http-2', kind: 'http', ok: true, message: '200', at: ago(1) },
        ],
        updatedAt: ago(5),
      },
    ];
    for (const s of statuses) await store.putStatus(s);
    return { causeSeq: cause.seq };
  } finally {
    await store.close();
  }
}

describe('compliance report', () => {
  it('lists each open result with its rule, resource and the change that introduced it', async () => {
    const { causeSeq } = await seed();
    const { report } = await compliance(ctx, { dir: ex.dir });
    expect(report.summary).toEqual({ pass: 3, fail: 2, warn: 1, error: 0, skip: 1 });
    expect(
      report.results.map((r) => [r.result, r.resource.address, r.policy, r.rule, r.introducedBy]),
    ).toEqual([
      [
        'fail',
        'sb.buckets/assets',
        'buckets-keep-versioning',
        1,
        `alice (human, incident:INC-9), ledger entry ${causeSeq}`,
      ],
      [
        'fail',
        'sb.services/api',
        'check:replicas-as-declared',
        1,
        'present when Tend first saw the object',
      ],
      ['warn', 'sb.services/api', 'services-bounded', 2, 'present when Tend first saw the object'],
    ]);
    // The rule's place is read from the intent as it is now.
    expect(report.results[0]!.ruleSource).toEqual({ file: 'policies.yaml', line: 8, column: 17 });
    expect(report.results[2]!.ruleSource).toMatchObject({ file: 'policies.yaml', line: 19 });
    // A check points at where it is written.
    expect(report.results[1]!.ruleSource).toMatchObject({ file: 'app.yaml' });
    expect(reportFails(report)).toBe(true);
  });

  it('gives the verdicts of the last week, newest last, and --since widens it', async () => {
    await seed();
    const week = (await compliance(ctx, { dir: ex.dir })).report;
    expect(week.since).toBe(ago(24 * 7));
    expect(week.history.map((e) => [e.event, e.policy, e.rule, e.address])).toEqual([
      ['found', 'buckets-keep-versioning', 1, 'sb.buckets/assets'],
      ['gone', 'services-bounded', 2, 'sb.services/api'],
    ]);
    expect(week.history[0]!.introducedBy).toMatch(/^alice \(human, incident:INC-9\)/);
    const all = (await compliance(ctx, { dir: ex.dir, since: '60d' })).report;
    expect(all.history.map((e) => e.message)).toEqual([
      'old',
      'buckets keep versioning on',
      'at most 10 replicas',
    ]);
    const one = (await compliance(ctx, { dir: ex.dir, since: '60d', limit: 1 })).report;
    expect(one.history.map((e) => e.event)).toEqual(['gone']);
  });

  it('renders a PolicyReport: summary, results with policy, rule, result, resources, timestamp', async () => {
    const { causeSeq } = await seed();
    const view = complianceView(await compliance(ctx, { dir: ex.dir }));
    expect(view).toMatchObject({ apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReport' });
    expect(view.results[0]).toMatchObject({
      source: 'tend',
      policy: 'buckets-keep-versioning',
      rule: '1',
      result: 'fail',
      severity: 'high',
      resources: [{ kind: 'sb.buckets', name: 'sb.buckets/assets', uid: 'bkt-1' }],
      message: 'buckets keep versioning on',
      timestamp: { seconds: Math.floor((NOW - 3 * 3_600_000) / 1000), nanos: 0 },
      properties: {
        location: 'policies.yaml:8:17',
        actor: 'alice',
        actorKind: 'human',
        motivation: 'incident:INC-9',
        causeSeq: String(causeSeq),
      },
    });
    for (const r of view.results) {
      for (const v of Object.values(r.properties)) expect(typeof v).toBe('string');
    }
  });

  it('passes when nothing is open, and counts passing checks', async () => {
    const store = await openSqliteStore(defaultStorePath(ex.dir));
    await store.putStatus({
      address: 'sb.instances/web',
      state: 'converged',
      checks: [{ name: 'cel-1', kind: 'cel', ok: true, message: 'true', at: ago(1) }],
      updatedAt: ago(1),
    });
    await store.close();
    const { report } = await compliance(ctx, { dir: ex.dir });
    expect(report.results).toEqual([]);
    expect(report.summary).toEqual({ pass: 1, fail: 0, warn: 0, error: 0, skip: 0 });
    expect(reportFails(report)).toBe(false);
  });

  it.each([
    [{ since: 'last tuesday' }, '--since "last tuesday" is neither an ISO time nor a duration'],
    [{ limit: -1 }, 'limit -1 is not a whole number ≥ 0'],
  ])('refuses %o: %s', async (bad, message) => {
    await expect(compliance(ctx, { dir: ex.dir, ...bad })).rejects.toThrow(message);
  });
});

describe('compliance as SARIF 2.1.0', () => {
  it('validates against the SARIF 2.1.0 schema and points at the policy file', async () => {
    await seed();
    const log = complianceSarif(await compliance(ctx, { dir: ex.dir }));
    const validate = sarifValidator();
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('tend');
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual([
      'buckets-keep-versioning/1',
      'services-bounded/1',
      'services-bounded/2',
      'check/replicas-as-declared',
    ]);
    expect(run.results.map((r) => [r.ruleId, r.level])).toEqual([
      ['buckets-keep-versioning/1', 'error'],
      ['check/replicas-as-declared', 'error'],
      ['services-bounded/2', 'warning'],
    ]);
    const first = run.results[0]!;
    expect(run.tool.driver.rules[first.ruleIndex]!.id).toBe(first.ruleId);
    expect(first.locations[0]).toEqual({
      physicalLocation: {
        artifactLocation: { uri: 'policies.yaml' },
        region: { startLine: 8, startColumn: 17 },
      },
      logicalLocations: [
        { name: 'sb.buckets/assets', fullyQualifiedName: 'sb.buckets/assets', kind: 'resource' },
      ],
    });
    expect(run.results[1]!.locations[0]!.physicalLocation?.artifactLocation.uri).toBe('app.yaml');
  });

  it('is refused by the schema when broken: the validator can fail', async () => {
    await seed();
    const log = complianceSarif(await compliance(ctx, { dir: ex.dir }));
    const validate = sarifValidator();
    expect(validate({ ...log, version: '2.0.0' })).toBe(false);
    expect(
      validate({
        ...log,
        runs: [{ ...log.runs[0], results: [{ ...log.runs[0]!.results[0], level: 'fatal' }] }],
      }),
    ).toBe(false);
  });
});
