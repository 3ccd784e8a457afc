import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/index.js';
import { decl, fakeWorkspace, listed } from '../../test/support/fake-workspace.js';
import type { Clock } from './clock.js';
import { tendActor } from './reconciler.js';
import { runContinuously } from './runner.js';

// Work between passes (`RunOptions.between`, what `tend worker` runs a fleet's jobs with): done after
// every pass, and at once when woken while the loop waits — without starting a pass, and without
// shortening the wait for the next one. On a clock the test moves by hand: nothing sleeps.

/** A clock whose time moves only when the test says; sleepers wake when their time has come. */
function handClock(): Clock & { advance(ms: number): void; at(): number } {
  let t = 0;
  const sleepers = new Set<{ at: number; wake: () => void }>();
  return {
    now: () => new Date(Date.parse('2026-01-01T00:00:00Z') + t),
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const s = { at: t + Math.max(0, ms), wake: () => (sleepers.delete(s), resolve()) };
        sleepers.add(s);
        signal?.addEventListener('abort', () => s.wake(), { once: true });
      }),
    advance(ms: number) {
      t += ms;
      for (const s of [...sleepers]) if (s.at <= t) s.wake();
    },
    at: () => t,
  };
}

const settle = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(what()).toBe(true);
};

describe('the continuous loop does work between passes', () => {
  it('after every pass, and when woken while waiting, without starting a pass or moving the next', async () => {
    const bucket = listed('buckets', 'b', ['w', 'sb.buckets/b']);
    const ws = fakeWorkspace([decl('sb.buckets/b', 'b')], [bucket], []);
    const store = await openSqliteStore(':memory:');
    const clock = handClock();
    const passesAt: number[] = [];
    const betweenAt: { at: number; passes: number }[] = [];
    let wake: (() => void) | undefined;
    let unsubscribed = false;
    const stop = new AbortController();
    const loop = runContinuously(
      { ...ws, store },
      {
        approveDestroy: false,
        prune: true,
        actor: tendActor('drift'),
        clock,
        report: () => {},
        verifyTimeoutMs: 1000,
        visibilityWindowMs: 0,
        runChecks: false,
        intervalMs: 1000,
        feedWaitMs: 100,
        onPass: () => void passesAt.push(clock.at()),
        between: {
          run: () => {
            betweenAt.push({ at: clock.at(), passes: passesAt.length });
            return Promise.resolve();
          },
          subscribe: (w) => {
            wake = w;
            return () => (unsubscribed = true);
          },
        },
      },
      stop.signal,
    );
    // The first pass, then the work between passes right after it.
    await settle(() => betweenAt.length === 1);
    expect(betweenAt).toEqual([{ at: 0, passes: 1 }]);
    // Woken 300 ms into the wait: the work runs at once, no pass starts.
    clock.advance(300);
    wake!();
    await settle(() => betweenAt.length === 2);
    expect(betweenAt[1]).toEqual({ at: 300, passes: 1 });
    // The next pass still comes at 1000 ms (the wait went on), and the work after it.
    clock.advance(600);
    await new Promise((r) => setTimeout(r, 50));
    expect(passesAt).toEqual([0]);
    clock.advance(100);
    await settle(() => betweenAt.length === 3);
    expect(passesAt).toEqual([0, 1000]);
    expect(betweenAt[2]).toEqual({ at: 1000, passes: 2 });
    stop.abort();
    await loop;
    expect(unsubscribed).toBe(true);
    await store.close();
  });
});
