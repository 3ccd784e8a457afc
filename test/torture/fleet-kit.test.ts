// The fleet torture's judge on histories written by hand: what it must flag, and what it must let pass.
import { describe, expect, it } from 'vitest';
import type { LeaseEvent, Mutation } from './fleet-kit.js';
import { leaseHistory, unleasedMutations, workerOf, zombieMutations } from './fleet-kit.js';

let seq = 0;
const ev = (
  op: LeaseEvent['op'],
  at: number,
  epoch: number,
  worker: string,
  expiresAt: number,
  acquiredAt = at,
): LeaseEvent => ({ seq: ++seq, at, op, workspace: 'w', epoch, worker, acquiredAt, expiresAt });
const mut = (time: number, worker: string): Mutation => ({
  time,
  workspace: 'w',
  worker,
  method: 'PATCH',
  path: '/services/svc-1',
});

describe('the fleet torture judge', () => {
  // a holds epoch 1 from 0, renews at 1,000 (to 5,000), stops renewing; b takes over at 6,000.
  const events = [
    ev('INSERT', 0, 1, 'a', 4_000),
    ev('UPDATE', 1_000, 1, 'a', 5_000, 0),
    ev('UPDATE', 6_000, 2, 'b', 10_000),
    ev('UPDATE', 8_000, 2, 'b', 12_000, 6_000),
    ev('DELETE', 9_000, 2, 'b', 12_000, 6_000),
  ];

  it('gives each epoch its valid span: acquired, renewed, cut at expiry, takeover or release', () => {
    const { held, steals } = leaseHistory(events);
    expect(held).toEqual([
      { workspace: 'w', epoch: 1, worker: 'a', from: 0, to: 5_000 },
      { workspace: 'w', epoch: 2, worker: 'b', from: 6_000, to: 9_000 },
    ]);
    expect(steals).toEqual([]);
  });

  it('flags a mutation that arrived after its sender’s lease ended, beyond the slack', () => {
    const { held } = leaseHistory(events);
    const r = unleasedMutations(
      [mut(4_000, 'a'), mut(5_300, 'a'), mut(7_000, 'a'), mut(7_000, 'b'), mut(500, 'b')],
      held,
      500,
    );
    expect(r.inside).toBe(2);
    expect(r.late.map((l) => [l.mutation.time, l.mutation.worker, l.lagMs])).toEqual([
      [7_000, 'a', 2_000],
      [500, 'b', Number.POSITIVE_INFINITY],
    ]);
  });

  it('a renewal after expiry leaves the gap unheld', () => {
    const { held } = leaseHistory([
      ev('INSERT', 0, 1, 'a', 4_000),
      ev('UPDATE', 7_000, 1, 'a', 11_000, 0),
    ]);
    expect(held.map((h) => [h.from, h.to])).toEqual([
      [0, 4_000],
      [7_000, 11_000],
    ]);
    expect(unleasedMutations([mut(6_000, 'a')], held, 1_000).late).toHaveLength(1);
  });

  it('reports a takeover of a live lease, unless its holder had been killed', () => {
    const stolen = [ev('INSERT', 0, 1, 'a', 4_000), ev('UPDATE', 2_000, 2, 'b', 6_000)];
    expect(leaseHistory(stolen).steals).toHaveLength(1);
    expect(leaseHistory(stolen, new Map([['a', 1_500]])).steals).toEqual([]);
    expect(leaseHistory(stolen, new Map([['a', 2_500]])).steals).toHaveLength(1);
  });

  it('a zombie: what the continued worker sent for a workspace taken over while it was stopped', () => {
    const { held } = leaseHistory([
      ...events.slice(0, 4),
      ev('UPDATE', 20_000, 3, 'a', 24_000), // a takes it back later: legitimate again
    ]);
    const pause = { worker: 'a', stoppedAt: 2_000, continuedAt: 8_000 };
    const r = zombieMutations(
      [mut(1_500, 'a'), mut(8_500, 'a'), mut(21_000, 'a'), mut(8_500, 'b')],
      held,
      [pause],
    );
    expect(r.takenOver).toEqual([{ pause, workspace: 'w' }]);
    expect(r.sent.map((m) => m.time)).toEqual([8_500]);
    // Not taken over while stopped: nothing to judge.
    expect(
      zombieMutations([mut(3_500, 'a')], held, [{ ...pause, continuedAt: 3_000 }]).takenOver,
    ).toEqual([]);
  });

  it('reads the worker from the User-Agent', () => {
    expect(workerOf('tend/0.1.0 (worker t-3; pid 42)')).toBe('t-3');
    expect(workerOf('tend/0.1.0 (pid 42)')).toBeNull();
    expect(workerOf(null)).toBeNull();
  });
});
