import { describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { openSqliteStore } from '../store/index.js';
import { decl, fakeWorkspace, listed } from '../../test/support/fake-workspace.js';
import { steppedClock } from './clock.js';
import { tendActor } from './reconciler.js';
import type { PassReport } from './runner.js';
import { runContinuously } from './runner.js';

// A workspace whose platform is down backs off on its own (`failureBackoffMaxMs`, what `tend worker`
// sets for each workspace it runs): the interval after the first failure, then doubling up to the
// cap, and the interval again once a pass runs. Without it (`tend run`) every failure waits the
// interval. On a fake clock: the waits are exact and nothing sleeps.

async function loop(options: { failures: number; passes: number; backoffMaxMs?: number }) {
  // One bucket, already there with Tend's marker: once the platform answers, nothing to do.
  const bucket = listed('buckets', 'b', ['w', 'sb.buckets/b']);
  const ws = fakeWorkspace([decl('sb.buckets/b', 'b')], [bucket], []);
  const store = await openSqliteStore(':memory:');
  const provider = ws.providers.get('sb')!;
  let passes = 0;
  // The platform answers nothing for the first `failures` passes, then lists the bucket.
  Object.assign(provider, {
    list: () => {
      return passes < options.failures
        ? Promise.reject(
            new TendError('platform.unreachable', 'cannot reach sb: connection refused', {
              retryable: true,
            }),
          )
        : Promise.resolve([bucket]);
    },
  });
  const clock = steppedClock();
  const at: number[] = [];
  const reports: PassReport[] = [];
  await runContinuously(
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
      maxPasses: options.passes,
      ...(options.backoffMaxMs !== undefined ? { failureBackoffMaxMs: options.backoffMaxMs } : {}),
      onPass: (p) => {
        passes++;
        at.push(clock.elapsed());
        reports.push(p);
      },
    },
    new AbortController().signal,
  );
  await store.close();
  const gaps = at.slice(1).map((t, i) => t - at[i]!);
  return { gaps, ok: reports.map((r) => r.ok) };
}

describe('the continuous loop backs off a platform that stays down', () => {
  it('waits the interval, then twice as long after each failure, up to the cap; a pass that runs resets it', async () => {
    const r = await loop({ failures: 6, passes: 9, backoffMaxMs: 8000 });
    expect(r.ok).toEqual([false, false, false, false, false, false, true, true, true]);
    expect(r.gaps).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 1000, 1000]);
  });

  it('without a back-off (tend run), every failure waits the interval', async () => {
    const r = await loop({ failures: 4, passes: 6 });
    expect(r.gaps).toEqual([1000, 1000, 1000, 1000, 1000]);
  });
});
