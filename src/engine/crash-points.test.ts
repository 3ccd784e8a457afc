import { describe, expect, it } from 'vitest';
import { crashHookFrom } from './crash-points.js';

describe('crashHookFrom', () => {
  const CASES = [
    {
      spec: 'after:journal:create',
      calls: [['after', 'journal', 'create']],
      crashes: 1,
      reason: 'the first matching write',
    },
    {
      spec: 'before:settle:update@2',
      calls: [
        ['before', 'settle', 'update'],
        ['after', 'settle', 'update'],
        ['before', 'settle', 'update'],
      ],
      crashes: 1,
      reason: '@n counts matching writes only',
    },
    {
      spec: 'after:twin:delete',
      calls: [
        ['after', 'twin', 'create'],
        ['before', 'twin', 'delete'],
      ],
      crashes: 0,
      reason: 'other actions and sides do not match',
    },
    {
      spec: undefined,
      calls: [['after', 'journal', 'create']],
      crashes: 0,
      reason: 'unset: production',
    },
  ] as const;

  it.each(CASES)('$spec: $reason', ({ spec, calls, crashes }) => {
    let crashed = 0;
    const hook = crashHookFrom(spec, () => {
      crashed++;
      throw new Error('crashed');
    });
    for (const [when, point, action] of calls) {
      try {
        hook(when, point, action);
      } catch {
        // The real hook never returns (SIGKILL); here it throws.
      }
    }
    expect(crashed).toBe(crashes);
  });

  it.each([
    'after:journal',
    'after:disk:create',
    'during:journal:create',
    'after:journal:create@x',
  ])('refuses %s with a message showing the form', (spec) => {
    expect(() => crashHookFrom(spec, () => process.exit(1))).toThrow(
      `TEND_CRASH_AT must look like before:journal:create@1, got "${spec}"`,
    );
  });
});
