import { describe, expect, it } from 'vitest';
import type { CheckResult } from './status.js';
import type { ComplianceReport, OpenResult } from './compliance-report.js';
import { checkResultKind, complianceEvents, reportFails, sarifLog } from './compliance-report.js';
import type { Change } from './change.js';

// The pure parts of the compliance report: which results fail a pipeline, how a check's result is
// read, the SARIF levels, and the ledger's verdict entries as events.

function result(over: Partial<OpenResult>): OpenResult {
  return {
    policy: 'p',
    kind: 'policy',
    rule: 1,
    ruleSource: { file: 'policies.yaml', line: 3, column: 5 },
    result: 'fail',
    severity: 'high',
    actions: ['deny'],
    resource: { address: 'sb.buckets/a', type: 'sb.buckets' },
    message: 'm',
    since: '2026-11-24T12:00:00.000Z',
    introducedBy: 'present when Tend first saw the object',
    ...over,
  };
}

const report = (results: OpenResult[]): ComplianceReport => ({
  workspace: 'w',
  generatedAt: '2026-11-24T12:00:00.000Z',
  summary: { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 },
  results,
  history: [],
  since: '2026-11-17T12:00:00.000Z',
});

describe('reportFails', () => {
  it.each([
    ['nothing open', [], false],
    ['a deny violation', [result({})], true],
    ['a warn violation', [result({ result: 'warn', actions: ['warn'] })], true],
    ['an audit-only violation', [result({ result: 'warn', actions: ['audit'] })], false],
    ['a warn + audit violation', [result({ result: 'warn', actions: ['warn', 'audit'] })], true],
    ['a deny rule that failed to evaluate', [result({ result: 'error' })], true],
    [
      'a warn rule that failed to evaluate',
      [result({ result: 'error', actions: ['warn'] })],
      false,
    ],
    ['a failing check', [result({ kind: 'check', policy: 'check:c', actions: [] })], true],
    [
      'a check failing as a warning',
      [result({ kind: 'check', policy: 'check:c', actions: [], result: 'warn' })],
      true,
    ],
  ] as const)('%s: %s', (_, results, fails) => {
    expect(reportFails(report([...results]))).toBe(fails);
  });
});

describe('checkResultKind', () => {
  const check = (over: Partial<CheckResult> & Record<string, unknown>): CheckResult => ({
    name: 'c',
    kind: 'cel',
    ok: false,
    message: 'm',
    at: 't',
    ...over,
  });
  it.each([
    [check({ ok: true }), 'pass'],
    [check({ ok: true, severity: 'warning' }), 'pass'],
    [check({}), 'fail'],
    [check({ severity: 'warning' }), 'warn'],
    [check({ severity: 'error' }), 'fail'],
  ])('%o is %s', (c, kind) => {
    expect(checkResultKind(c)).toBe(kind);
  });
});

describe('sarifLog levels', () => {
  it.each([
    [['deny'], 'fail', 'error'],
    [['deny', 'audit'], 'fail', 'error'],
    [['warn'], 'warn', 'warning'],
    [['audit'], 'warn', 'note'],
  ] as const)('%j → %s', (actions, r, level) => {
    const log = sarifLog(
      report([result({ actions: [...actions], result: r })]),
      { policies: [], resources: [] },
      '1.0.0',
    );
    expect(log.runs[0]!.results[0]!.level).toBe(level);
    expect(log.runs[0]!.tool.driver.rules[0]!.defaultConfiguration.level).toBe(level);
  });

  it('a failing check is an error, one failing as a warning a warning, under check/<name>', () => {
    const log = sarifLog(
      report([
        result({ kind: 'check', policy: 'check:up', actions: [] }),
        result({ kind: 'check', policy: 'check:tls', actions: [], result: 'warn' }),
      ]),
      { policies: [], resources: [] },
      '1.0.0',
    );
    expect(log.runs[0]!.results.map((r) => [r.ruleId, r.level])).toEqual([
      ['check/up', 'error'],
      ['check/tls', 'warning'],
    ]);
  });
});

describe('complianceEvents', () => {
  const entry = (over: Partial<Change>): Change => ({
    seq: 1,
    time: 't',
    actor: 'tend',
    source: 'tend',
    type: 'sb.buckets',
    objectId: 'b',
    address: 'sb.buckets/a',
    action: 'verdict',
    fields: [],
    prevHash: '',
    hash: '',
    ...over,
  });
  const record = {
    policy: 'p',
    rule: 0,
    message: 'm',
    actions: ['deny'] as const,
    severity: 'high' as const,
  };
  it('keeps verdicts, found and gone, with 1-based rules; other entries are not events', () => {
    const events = complianceEvents([
      entry({ seq: 1, action: 'update' }),
      entry({ seq: 2, compliance: { ...record, actions: ['deny'], result: 'fail' } }),
      entry({ seq: 3, compliance: { ...record, actions: ['deny'], result: 'pass', found: 2 } }),
      entry({ seq: 4 }),
    ]);
    expect(events.map((e) => [e.seq, e.event, e.rule, e.introducedBy, e.found])).toEqual([
      [2, 'found', 1, 'present when Tend first saw the object', undefined],
      [3, 'gone', 1, undefined, 2],
    ]);
  });
});
