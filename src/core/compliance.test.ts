import { describe, expect, it } from 'vitest';
import type { CheckResult, ComplianceFinding, ComplianceState, PolicyVerdict } from './index.js';
import {
  causeOf,
  causeText,
  checkCauseOf,
  checkTransition,
  complianceTransition,
  countCompliance,
  isCheckFinding,
} from './index.js';

const src = { file: 'policies.yaml', line: 4, column: 7 };
function verdict(
  policy: string,
  rule: number,
  result: PolicyVerdict['result'],
  over: Partial<PolicyVerdict> = {},
): PolicyVerdict {
  return {
    policy,
    rule,
    address: 'sb.buckets/logs',
    moment: 'observed',
    result,
    message: `${policy} says no`,
    reason: 'Invalid',
    actions: ['warn'],
    severity: 'medium',
    fields: ['versioning'],
    source: src,
    ...over,
  };
}

describe('complianceTransition', () => {
  it('opens what is newly broken, counts passes and undecidable rules, closes nothing the first time', () => {
    const t = complianceTransition(
      undefined,
      [
        verdict('a', 0, 'pass'),
        verdict('b', 0, 'fail'),
        verdict('c', 1, 'undecidable'),
        verdict('d', 0, 'error'),
      ],
      'k1',
      'T1',
    );
    expect(t.state).toMatchObject({ key: 'k1', evaluatedAt: 'T1', passed: 1, undecidable: 1 });
    expect(t.state.findings.map((f) => [f.policy, f.result, f.since])).toEqual([
      ['b', 'fail', 'T1'],
      ['d', 'error', 'T1'],
    ]);
    expect(t.opened.map((f) => f.policy)).toEqual(['b', 'd']);
    expect(t.closed).toEqual([]);
  });

  it('keeps since, cause and entry of a violation still there (its message may change); closes the one gone', () => {
    const before: ComplianceState = {
      key: 'k1',
      evaluatedAt: 'T1',
      passed: 0,
      undecidable: 0,
      findings: [
        {
          ...complianceTransition(undefined, [verdict('b', 0, 'fail')], 'k', 'T1').state
            .findings[0]!,
          cause: { seq: 3, time: 'T0', actor: 'alice', source: 'audit' },
          recorded: 4,
        },
        {
          ...complianceTransition(undefined, [verdict('e', 2, 'fail')], 'k', 'T1').state
            .findings[0]!,
          recorded: 5,
        },
      ],
    };
    const t = complianceTransition(
      before,
      [verdict('b', 0, 'fail', { message: 'reworded' }), verdict('e', 2, 'pass')],
      'k2',
      'T2',
    );
    expect(t.opened).toEqual([]);
    expect(t.closed.map((f) => [f.policy, f.recorded])).toEqual([['e', 5]]);
    expect(t.state.findings).toHaveLength(1);
    expect(t.state.findings[0]).toMatchObject({
      policy: 'b',
      message: 'reworded',
      since: 'T1',
      recorded: 4,
      cause: { seq: 3, actor: 'alice' },
    });
  });

  it('tells rules of one policy apart by their index', () => {
    const before = complianceTransition(undefined, [verdict('b', 0, 'fail')], 'k', 'T1').state;
    const t = complianceTransition(
      before,
      [verdict('b', 0, 'pass'), verdict('b', 1, 'fail')],
      'k2',
      'T2',
    );
    expect(t.opened.map((f) => f.rule)).toEqual([1]);
    expect(t.closed.map((f) => f.rule)).toEqual([0]);
  });
});

describe('causeOf', () => {
  const entry = (seq: number, action: string, fields: string[], actor = `a${seq}`) => ({
    seq,
    time: `T${seq}`,
    actor,
    source: 'audit' as const,
    action,
    fields,
  });
  it.each([
    [
      'the newest change of a field the rule reads',
      [entry(1, 'create', []), entry(2, 'update', ['versioning']), entry(3, 'update', ['size'])],
      ['versioning'],
      2,
    ],
    [
      'a nested field under the one read',
      [entry(1, 'create', []), entry(2, 'update', ['tags.owner'])],
      ['tags'],
      2,
    ],
    [
      'the create when no later change touched the fields',
      [entry(1, 'create', []), entry(2, 'update', ['size'])],
      ['versioning'],
      1,
    ],
    [
      'any change for a rule reading the whole object',
      [entry(1, 'create', []), entry(2, 'update', ['size'])],
      ['*'],
      2,
    ],
    [
      'verdicts are not changes',
      [entry(1, 'create', []), entry(2, 'verdict', ['versioning'])],
      ['versioning'],
      1,
    ],
    [
      'none: present when Tend first saw it',
      [entry(1, 'update', ['size'])],
      ['versioning'],
      undefined,
    ],
    ['none in an empty history', [], ['versioning'], undefined],
  ])('%s', (_, history, fields, want) => {
    expect(causeOf(history, fields)?.seq).toBe(want);
  });

  it('reads a cause as a person would', () => {
    expect(causeText(undefined)).toBe('present when Tend first saw the object');
    expect(
      causeText({
        seq: 12,
        time: 'T',
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'incident', ref: 'INC-9' },
        source: 'audit',
      }),
    ).toBe('alice (human, incident:INC-9), ledger entry 12');
    expect(causeText({ seq: 3, time: 'T', actor: 'tend', source: 'tend' })).toBe(
      'tend, ledger entry 3',
    );
  });
});

describe('countCompliance', () => {
  it('counts like a PolicyReport: deny → fail, warn/audit → warn, error, undecidable → skip', () => {
    const state = complianceTransition(
      undefined,
      [
        verdict('a', 0, 'pass'),
        verdict('b', 0, 'fail', { actions: ['deny'] }),
        verdict('c', 0, 'fail', { actions: ['warn'] }),
        verdict('d', 0, 'fail', { actions: ['audit'] }),
        verdict('e', 0, 'error', { actions: ['deny'] }),
        verdict('f', 0, 'undecidable'),
      ],
      'k',
      'T',
    ).state;
    expect(
      countCompliance([
        { address: 'sb.x/x' as const, compliance: state },
        { address: 'sb.x/y' as const },
      ]),
    ).toEqual({
      pass: 1,
      fail: 1,
      warn: 2,
      error: 1,
      skip: 1,
    });
  });
});

describe('checkTransition', () => {
  const at = { file: 'consumers.yaml', line: 9, column: 5 };
  const sources = new Map([
    ['login', at],
    ['expiry', { ...at, line: 14 }],
  ]);
  const result = (name: string, ok: boolean, over: Partial<CheckResult> = {}): CheckResult => ({
    name,
    kind: 'sql',
    ok,
    message: ok ? 'query succeeded' : `${name} failed`,
    at: 'T',
    ...over,
  });
  const failing = (name: string, over: Partial<ComplianceFinding> = {}): ComplianceFinding => ({
    policy: `check:${name}`,
    rule: 0,
    result: 'fail',
    message: `${name} failed before`,
    reason: 'sql check',
    actions: ['deny'],
    severity: 'high',
    fields: [],
    source: sources.get(name) ?? at,
    since: 'T0',
    ...over,
  });
  const rule = { ...failing('x'), policy: 'buckets-keep-versioning' };
  it.each<
    [
      string,
      ComplianceFinding[],
      CheckResult[],
      { opened: string[]; closed: string[]; findings: string[]; passed: number },
    ]
  >([
    [
      'a check failing that never ran: opened',
      [],
      [result('login', false)],
      { opened: ['check:login'], closed: [], findings: ['check:login'], passed: 0 },
    ],
    [
      'a check passing that never ran: nothing to record',
      [],
      [result('login', true)],
      { opened: [], closed: [], findings: [], passed: 1 },
    ],
    [
      'passing before, failing now: opened',
      [],
      [result('login', false), result('expiry', true)],
      { opened: ['check:login'], closed: [], findings: ['check:login'], passed: 1 },
    ],
    [
      'failing before and now: kept, not opened again',
      [failing('login')],
      [result('login', false)],
      { opened: [], closed: [], findings: ['check:login'], passed: 0 },
    ],
    [
      'failing before, passing now: closed',
      [failing('login')],
      [result('login', true)],
      { opened: [], closed: ['check:login'], findings: [], passed: 1 },
    ],
    [
      'failing before, no longer declared: closed',
      [failing('gone')],
      [result('login', true)],
      { opened: [], closed: ['check:gone'], findings: [], passed: 1 },
    ],
    [
      "a policy's findings are not the checks' to close",
      [rule],
      [result('login', true)],
      { opened: [], closed: [], findings: [], passed: 1 },
    ],
    [
      'two failing, sorted by name',
      [],
      [result('login', false), result('expiry', false)],
      {
        opened: ['check:login', 'check:expiry'],
        closed: [],
        findings: ['check:expiry', 'check:login'],
        passed: 0,
      },
    ],
  ])('%s', (_, before, results, want) => {
    const t = checkTransition(before, results, sources, 'T1');
    expect({
      opened: t.opened.map((f) => f.policy),
      closed: t.closed.map((f) => f.policy),
      findings: t.findings.map((f) => f.policy),
      passed: t.passed,
    }).toEqual(want);
  });

  it('an error is a deny, high; a warning a warn, medium; at the check declared', () => {
    const t = checkTransition(
      [],
      [result('login', false), result('expiry', false, { kind: 'tls', severity: 'warning' })],
      sources,
      'T1',
    );
    expect(t.findings).toEqual([
      {
        policy: 'check:expiry',
        rule: 0,
        result: 'fail',
        message: 'expiry failed',
        reason: 'tls check',
        actions: ['warn'],
        severity: 'medium',
        fields: [],
        source: { ...at, line: 14 },
        since: 'T1',
      },
      {
        policy: 'check:login',
        rule: 0,
        result: 'fail',
        message: 'login failed',
        reason: 'sql check',
        actions: ['deny'],
        severity: 'high',
        fields: [],
        source: at,
        since: 'T1',
      },
    ]);
  });

  it('a check still failing keeps since, cause and entry, and takes the new message', () => {
    const cause = { seq: 7, time: 'T0', actor: 'ops', source: 'tend' as const };
    const t = checkTransition(
      [failing('login', { cause, recorded: 8 })],
      [result('login', false, { message: 'password authentication failed' })],
      sources,
      'T2',
    );
    expect(t.findings[0]).toMatchObject({
      message: 'password authentication failed',
      since: 'T0',
      cause,
      recorded: 8,
    });
  });

  it('tells a check from a rule by its policy name', () => {
    expect(isCheckFinding({ policy: 'check:login' })).toBe(true);
    expect(isCheckFinding({ policy: 'checks-pass' })).toBe(false);
  });
});

describe('checkCauseOf', () => {
  const entry = (
    seq: number,
    action: string,
    address: `${string}/${string}` = 'pg.schema/orders',
    after?: Record<string, unknown>,
  ) => ({
    seq,
    time: `T${seq}`,
    actor: `a${seq}`,
    source: 'tend' as const,
    action,
    address,
    ...(after ? { after } : {}),
  });
  it.each([
    ['the newest entry of the resource', [entry(1, 'create'), entry(2, 'update')], 2],
    [
      "the newest of a dependency's, whatever the order given",
      [entry(1, 'create'), entry(3, 'update', 'pg.role/app'), entry(2, 'update')],
      3,
    ],
    ['verdicts are not causes', [entry(1, 'create'), entry(2, 'verdict')], 1],
    ['none', [entry(2, 'verdict')], undefined],
    ['none in an empty history', [], undefined],
  ])('%s', (_, history, want) => {
    expect(checkCauseOf(history, 'pg.schema/orders')?.seq).toBe(want);
  });

  it('names the dependency and the action run an entry records', () => {
    const cause = checkCauseOf(
      [
        entry(1, 'create'),
        {
          ...entry(5, 'update', 'pg.role/app', {
            action: 'rotate-password',
            run: 'act-0123',
            outcome: 'done',
          }),
          actor: 'ops',
          actorKind: 'human' as const,
          motivation: { kind: 'maintenance', ref: 'rotation' },
        },
      ],
      'pg.schema/orders',
    );
    expect(cause).toEqual({
      seq: 5,
      time: 'T5',
      actor: 'ops',
      actorKind: 'human',
      motivation: { kind: 'maintenance', ref: 'rotation' },
      source: 'tend',
      address: 'pg.role/app',
      run: { action: 'rotate-password', id: 'act-0123' },
    });
    expect(causeText(cause)).toBe(
      'ops (human, maintenance:rotation), ledger entry 5 (rotate-password on pg.role/app)',
    );
  });

  it("an entry's own address is not repeated; an `after` that is not a run names none", () => {
    expect(
      checkCauseOf([entry(4, 'update', 'pg.schema/orders', { action: 'x' })], 'pg.schema/orders'),
    ).toEqual({ seq: 4, time: 'T4', actor: 'a4', source: 'tend' });
  });
});

describe('countCompliance with checks', () => {
  it("counts policy rules only: a state's failing checks are the report's to count, from the statuses' checks", () => {
    const t = checkTransition(
      [],
      [
        { name: 'a', kind: 'sql', ok: true, message: '', at: 'T' },
        { name: 'b', kind: 'sql', ok: false, message: 'no', at: 'T' },
      ],
      new Map([['b', src]]),
      'T',
    );
    const state: ComplianceState = {
      key: '',
      evaluatedAt: 'T',
      passed: 2,
      undecidable: 0,
      findings: [],
      checks: t.findings,
    };
    expect(countCompliance([{ address: 'pg.schema/x' as const, compliance: state }])).toEqual({
      pass: 2,
      fail: 0,
      warn: 0,
      error: 0,
      skip: 0,
    });
  });
});
