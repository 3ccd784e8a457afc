import { describe, expect, it } from 'vitest';
import { createProbeBudget, minimumBudget, PROBE_MIN_PER_TYPE } from './probe-budget.js';

describe('the probe budget', () => {
  it('probing stops where the requests left would no longer remove what the probe holds', () => {
    // 10 requests, 2 kept for the final look, 2 per object held: with one object, probing may use 6.
    const b = createProbeBudget(10);
    b.hold(1);
    const probing = Array.from({ length: 8 }, () => b.take('probe'));
    expect(probing).toEqual([true, true, true, true, true, true, false, false]);
    expect(b.exhausted).toBe(true);
    // Cleanup may use the rest, and no more.
    expect([
      b.take('cleanup'),
      b.take('cleanup'),
      b.take('cleanup'),
      b.take('cleanup'),
      b.take('cleanup'),
    ]).toEqual([true, true, true, true, false]);
    expect(b.used).toBe(10);
  });
  it('holding fewer objects gives probing its requests back', () => {
    const b = createProbeBudget(6, 0);
    b.hold(3);
    expect(b.take('probe')).toBe(false);
    b.hold(0);
    expect(b.take('probe')).toBe(true);
  });
  it('cleanup never marks the budget exhausted', () => {
    const b = createProbeBudget(1, 0);
    expect(b.take('cleanup')).toBe(true);
    expect(b.take('cleanup')).toBe(false);
    expect(b.exhausted).toBe(false);
  });
  it.each([
    [0, PROBE_MIN_PER_TYPE],
    [1, PROBE_MIN_PER_TYPE],
    [3, 3 * PROBE_MIN_PER_TYPE],
  ])('minimumBudget(%i types) is %i', (types, want) => expect(minimumBudget(types)).toBe(want));
});
