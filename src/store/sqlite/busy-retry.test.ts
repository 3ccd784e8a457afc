import { describe, expect, it } from 'vitest';
import { isBusy, retryBusy } from './busy-retry.js';

const busy = (code = 'SQLITE_BUSY') => Object.assign(new Error('database is locked'), { code });

/** A fake clock moved only by the pauses. */
function fakeTime() {
  let t = 1_000;
  const pauses: number[] = [];
  return {
    now: () => t,
    pause: (ms: number) => {
      pauses.push(ms);
      t += ms;
    },
    pauses,
  };
}

describe('retryBusy', () => {
  it.each([
    ['SQLITE_BUSY', true],
    ['SQLITE_BUSY_RECOVERY', true],
    ['SQLITE_BUSY_SNAPSHOT', true],
    ['SQLITE_LOCKED', false],
    ['SQLITE_CONSTRAINT', false],
    [undefined, false],
  ])('isBusy(%s) is %s', (code, want) => {
    expect(isBusy(Object.assign(new Error('x'), { code }))).toBe(want);
  });

  it('tries again after busy moments, pausing 5, 10, 20 … ms, and returns the answer', () => {
    const time = fakeTime();
    let calls = 0;
    const got = retryBusy(
      () => {
        calls++;
        if (calls < 4) throw busy(calls === 2 ? 'SQLITE_BUSY_RECOVERY' : 'SQLITE_BUSY');
        return 'opened';
      },
      { deadlineMs: 5_000, ...time },
    );
    expect(got).toBe('opened');
    expect(calls).toBe(4);
    expect(time.pauses).toEqual([5, 10, 20]);
  });

  it('caps a pause at 100 ms and stops at the deadline with the last failure', () => {
    const time = fakeTime();
    let calls = 0;
    expect(() =>
      retryBusy(
        () => {
          calls++;
          throw busy();
        },
        { deadlineMs: 500, ...time },
      ),
    ).toThrow('database is locked');
    expect(Math.max(...time.pauses)).toBe(100);
    expect(time.pauses.reduce((a, b) => a + b, 0)).toBe(500);
    expect(calls).toBe(time.pauses.length + 1);
  });

  it('throws any other failure at once, without a pause', () => {
    const time = fakeTime();
    let calls = 0;
    expect(() =>
      retryBusy(
        () => {
          calls++;
          throw Object.assign(new Error('no such table: twin'), { code: 'SQLITE_ERROR' });
        },
        { deadlineMs: 5_000, ...time },
      ),
    ).toThrow('no such table');
    expect(calls).toBe(1);
    expect(time.pauses).toEqual([]);
  });
});
