import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ComplianceFinding, ResourceStatus } from '../core/index.js';
import { violationCounts } from '../core/index.js';
import { Metrics } from './metrics.js';

// tend_policy_violations{policy,severity}: the open findings of the statuses counted per policy and
// severity (core violationCounts), set on serve's registry, and the exposition checked by
// `promtool check metrics` (the Debian package prometheus, which .ci/run installs: with CI=true a
// missing promtool fails, elsewhere the check is skipped).

const PROMTOOL = spawnSync('promtool', ['--version']).status === 0;

function status(...findings: Partial<ComplianceFinding>[]): Pick<ResourceStatus, 'compliance'> {
  return {
    compliance: {
      key: 'k',
      evaluatedAt: '2026-11-24T12:00:00.000Z',
      passed: 0,
      undecidable: 0,
      findings: findings.map((f) => ({
        policy: 'p',
        rule: 0,
        result: 'fail',
        message: 'm',
        reason: 'Invalid',
        actions: ['deny'],
        severity: 'high',
        fields: [],
        source: { file: 'policies.yaml', line: 1, column: 1 },
        since: '2026-11-24T12:00:00.000Z',
        ...f,
      })),
    },
  };
}

describe('violationCounts', () => {
  it.each([
    {
      name: 'nothing open: every policy at 0',
      statuses: [],
      policies: ['a', 'b'],
      want: { a: 0, b: 0 },
    },
    {
      name: 'findings of several resources add up per policy',
      statuses: [status({ policy: 'a' }, { policy: 'b', rule: 1 }), status({ policy: 'a' }), {}],
      policies: ['a', 'b', 'c'],
      want: { a: 2, b: 1, c: 0 },
    },
    {
      name: 'a policy the intent no longer has still counts while a status names it',
      statuses: [status({ policy: 'gone' })],
      policies: [],
      want: { gone: 1 },
    },
  ])('$name', ({ statuses, policies, want }) => {
    const got = violationCounts(
      statuses,
      policies.map((name) => ({ name, severity: 'high' as const })),
    );
    expect(Object.fromEntries(got.map((c) => [c.policy, c.count]))).toEqual(want);
  });

  it('keeps a series per severity the finding carries', () => {
    expect(
      violationCounts(
        [status({ policy: 'a', severity: 'low' })],
        [{ name: 'a', severity: 'high' }],
      ),
    ).toEqual([
      { policy: 'a', severity: 'high', count: 0 },
      { policy: 'a', severity: 'low', count: 1 },
    ]);
  });
});

describe('tend_policy_violations', () => {
  it('is a gauge per policy and severity, replaced on each update', async () => {
    const m = new Metrics();
    m.policyViolations([
      { policy: 'buckets-keep-versioning', severity: 'high', count: 2 },
      { policy: 'services-bounded', severity: 'medium', count: 0 },
    ]);
    let text = (await m.render()).text;
    expect(text).toContain('# TYPE tend_policy_violations gauge');
    expect(text).toContain(
      'tend_policy_violations{policy="buckets-keep-versioning",severity="high"} 2',
    );
    expect(text).toContain('tend_policy_violations{policy="services-bounded",severity="medium"} 0');
    m.policyViolations([{ policy: 'services-bounded', severity: 'medium', count: 1 }]);
    text = (await m.render()).text;
    expect(text).not.toContain('buckets-keep-versioning');
    expect(text).toContain('tend_policy_violations{policy="services-bounded",severity="medium"} 1');
  });

  it.skipIf(!PROMTOOL && process.env['CI'] !== 'true')(
    'passes promtool check metrics',
    async () => {
      expect(PROMTOOL, 'promtool is not installed (the Debian package prometheus)').toBe(true);
      const m = new Metrics();
      m.policyViolations([{ policy: 'buckets-keep-versioning', severity: 'high', count: 1 }]);
      const r = spawnSync('promtool', ['check', 'metrics'], {
        input: (await m.render()).text,
        encoding: 'utf8',
      });
      expect(`${r.stdout}${r.stderr}`).toBe('');
      expect(r.status).toBe(0);
    },
  );
});
