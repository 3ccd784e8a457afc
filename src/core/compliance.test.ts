import { describe, expect, it } from 'vitest';
import type { ComplianceState, PolicyVerdict } from './index.js';
import { causeOf, causeText, complianceTransition, countCompliance } from './index.js';

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
