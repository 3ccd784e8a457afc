import { describe, expect, it } from 'vitest';
import type { PolicyMatch, PolicySubject, PolicyVerdict } from './policy.js';
import { denies, policyMatches, verdictText, warns } from './policy.js';

const bucket: PolicySubject = {
  address: 'sb.buckets/logs',
  type: 'sb.buckets',
  name: 'logs',
  labels: { env: 'prod', team: 'web' },
};

describe('policyMatches', () => {
  const cases: [string, PolicyMatch, boolean][] = [
    ['an empty match selects every resource', {}, true],
    ['the type, exactly', { types: ['sb.buckets'] }, true],
    ['another type', { types: ['sb.services'] }, false],
    ['a type glob within the provider', { types: ['sb.*'] }, true],
    ['a glob does not cross the dot with one star', { types: ['*'] }, false],
    ['** crosses it', { types: ['**'] }, true],
    ['any of the types', { types: ['sb.services', 'sb.buckets'] }, true],
    ['a name glob', { names: ['lo*'] }, true],
    ['a name glob that does not match', { names: ['prod-*'] }, false],
    ['any of the names', { names: ['prod-*', 'lo*'] }, true],
    ['any of the addresses', { addresses: ['sb.services/*', 'sb.buckets/logs'] }, true],
    ['an address glob', { addresses: ['sb.buckets/*'] }, true],
    ['an address of another type', { addresses: ['sb.services/*'] }, false],
    ['labels, all equal', { labels: { env: 'prod', team: 'web' } }, true],
    ['a label with another value', { labels: { env: 'dev' } }, false],
    ['a label the resource lacks', { labels: { tier: 'x' } }, false],
    ['every criterion must hold', { types: ['sb.buckets'], names: ['other'] }, false],
    [
      'a label key named like a prototype member is not inherited',
      { labels: { toString: 'x' } },
      false,
    ],
  ];
  it.each(cases)('%s', (_what, match, expected) => {
    expect(policyMatches(match, bucket)).toBe(expected);
  });
});

describe('what a verdict does', () => {
  const v = (
    result: PolicyVerdict['result'],
    actions: PolicyVerdict['actions'],
  ): PolicyVerdict => ({
    policy: 'p',
    rule: 0,
    address: 'sb.buckets/logs',
    moment: 'predicted',
    result,
    message: 'm',
    reason: 'Invalid',
    actions,
    severity: 'high',
    fields: ['versioning'],
    source: { file: 'p.yaml', line: 1, column: 1 },
  });
  const cases: [PolicyVerdict['result'], PolicyVerdict['actions'], boolean, boolean][] = [
    ['fail', ['deny'], true, false],
    ['error', ['deny'], true, false],
    ['pass', ['deny'], false, false],
    ['undecidable', ['deny'], false, false],
    ['fail', ['warn'], false, true],
    ['error', ['warn', 'audit'], false, true],
    ['fail', ['audit'], false, false],
    ['fail', ['deny', 'audit'], true, false],
    ['pass', ['warn'], false, false],
    ['undecidable', ['warn'], false, false],
  ];
  it.each(cases)('%s with %j: denies %s, warns %s', (result, actions, deny, warn) => {
    expect(denies(v(result, actions))).toBe(deny);
    expect(warns(v(result, actions))).toBe(warn);
  });

  it('words a violation with the policy, its actions and the rule counted from 1', () => {
    expect(verdictText(v('fail', ['deny']))).toBe('policy p (deny) rule 1 violated: m');
    expect(verdictText(v('error', ['warn']))).toBe('policy p (warn) rule 1 failed: m');
    expect(verdictText(v('undecidable', ['deny', 'audit']))).toBe(
      'policy p (deny, audit) rule 1 undecidable: m',
    );
  });
});
