import { describe, expect, it } from 'vitest';
import type { Address, Operation } from '../core/index.js';
import { decl, fakeWorkspace, listed, twinOf } from '../../test/support/fake-workspace.js';
import { steppedClock } from './clock.js';
import {
  awaitsVisibility,
  DEFAULT_VISIBILITY_WINDOW_MS,
  observe,
  visibilityWindowOf,
} from './observe.js';
import { planPass } from './planner.js';

// An object Tend created that a list does not show: still appearing (an eventually consistent
// platform, within the window) or gone (after the window, or at once on a platform whose reads see
// its writes). Time comes from a stepped clock moved by hand, never from waiting.

const NET = 'sb.networks/main' as Address;
const START = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(START + ms).toISOString();

/** The journal entry of the create of NET, settled `settledMs` after START. */
const create = (settledMs: number, over: Partial<Operation> = {}): Operation => ({
  id: 'op-create',
  address: NET,
  type: 'sb.networks',
  action: 'create',
  objectId: 'net-1',
  desiredHash: 'h',
  marker: { workspace: 'w', address: NET, op: 'op-create' },
  state: 'settled',
  createdAt: at(settledMs - 200),
  settledAt: at(settledMs),
  ...over,
});

describe('awaitsVisibility: whether a missing object is still waited for', () => {
  const CASES: {
    reason: string;
    last: Operation | undefined;
    nowMs: number;
    windowMs: number;
    want: boolean;
  }[] = [
    {
      reason: 'a create settled 1 s ago, window 10 s: may not be visible yet',
      last: create(0),
      nowMs: 1000,
      windowMs: 10_000,
      want: true,
    },
    {
      reason: 'a create settled 1 s ago, window 0 (consistent reads): gone',
      last: create(0),
      nowMs: 1000,
      windowMs: 0,
      want: false,
    },
    {
      reason: 'the window is over exactly at its end',
      last: create(0),
      nowMs: 10_000,
      windowMs: 10_000,
      want: false,
    },
    {
      reason: 'one millisecond before the end of the window: still waited for',
      last: create(0),
      nowMs: 9_999,
      windowMs: 10_000,
      want: true,
    },
    {
      reason: 'the last operation is an update: the object was visible since, so it is gone',
      last: create(0, { action: 'update' }),
      nowMs: 1000,
      windowMs: 10_000,
      want: false,
    },
    {
      reason: 'a create that failed made no object to wait for',
      last: create(0, { state: 'failed' }),
      nowMs: 1000,
      windowMs: 10_000,
      want: false,
    },
    {
      reason: 'a settled create without a settle time is not waited for',
      last: create(0, { settledAt: undefined }),
      nowMs: 1000,
      windowMs: 10_000,
      want: false,
    },
    {
      reason: 'nothing journaled (an imported object): gone',
      last: undefined,
      nowMs: 1000,
      windowMs: 10_000,
      want: false,
    },
  ];
  it.each(CASES)('$reason', ({ last, nowMs, windowMs, want }) => {
    expect(awaitsVisibility(last, new Date(START + nowMs), windowMs)).toBe(want);
  });
});

describe('visibilityWindowOf: the window of a provider', () => {
  const CASES = [
    { reason: 'reads see writes at once: no window', consistentReads: true, want: 0 },
    { reason: 'said false: the window', consistentReads: false, want: 7000 },
    { reason: 'not said: the window (the safe default)', consistentReads: undefined, want: 7000 },
  ];
  it.each(CASES)('$reason', ({ consistentReads, want }) => {
    const provider = {
      describe: () => ({
        types: [],
        auditFeed: false,
        warnings: [],
        ...(consistentReads !== undefined ? { consistentReads } : {}),
      }),
    };
    expect(visibilityWindowOf(provider, 7000)).toBe(want);
  });
});

describe('observe and plan: a missing object Tend created moments ago', () => {
  const CASES: {
    reason: string;
    consistentReads: boolean | undefined;
    /** How long after the create settled the pass runs. */
    afterMs: number;
    windowMs?: number;
    want: 'waited for' | 'gone';
  }[] = [
    {
      reason: 'consistent reads, created 1 s ago: the list is the truth, the object is gone',
      consistentReads: true,
      afterMs: 1000,
      want: 'gone',
    },
    {
      reason: 'eventually consistent, created 1 s ago: still waited for',
      consistentReads: false,
      afterMs: 1000,
      want: 'waited for',
    },
    {
      reason: 'not said, created 1 s ago: treated as eventually consistent, waited for',
      consistentReads: undefined,
      afterMs: 1000,
      want: 'waited for',
    },
    {
      reason: 'eventually consistent, after the default window: gone',
      consistentReads: false,
      afterMs: DEFAULT_VISIBILITY_WINDOW_MS,
      want: 'gone',
    },
    {
      reason: 'eventually consistent, a window of 2 s given, 3 s later: gone',
      consistentReads: false,
      afterMs: 3000,
      windowMs: 2000,
      want: 'gone',
    },
    {
      reason: 'consistent reads, a window given: still no window for this provider',
      consistentReads: true,
      afterMs: 1,
      windowMs: 60_000,
      want: 'gone',
    },
  ];
  it.each(CASES)('$reason', async ({ consistentReads, afterMs, windowMs, want }) => {
    const clock = steppedClock(START);
    const ws = fakeWorkspace(
      [decl(NET, 'main')],
      // The platform lists another object, not ours: a list that answered, without it.
      [listed('networks', 'net-other')],
      [twinOf(NET, 'net-1')],
      undefined,
      {
        ...(consistentReads !== undefined ? { consistentReads } : {}),
        operations: [create(0)],
      },
    );
    await clock.sleep(afterMs);
    const observation = await observe(ws, {
      now: clock.now(),
      ...(windowMs !== undefined ? { visibilityWindowMs: windowMs } : {}),
    });
    const { plan } = await planPass(ws, observation, { approveDestroy: false, prune: false });
    const step = plan.steps.find((s) => s.address === NET);
    if (want === 'waited for') {
      expect([...observation.pendingVisibility]).toEqual([NET]);
      expect(step).toBeUndefined();
    } else {
      expect([...observation.pendingVisibility]).toEqual([]);
      // Gone, and the intent still declares it: the plan creates it again.
      expect(step).toMatchObject({ kind: 'create', address: NET });
    }
  });
});
