import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Intent } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { Clock, Workspace } from '../engine/index.js';
import { createWorkspace } from '../engine/index.js';
import type { Store } from '../store/index.js';
import { openSqliteStore } from '../store/index.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { acquireWorkspaceLease, LEASE_TTL_MS } from './lease.js';

// The workspace lease as the application layer takes it: two "processes" (two store handles on one
// file, two contexts with their own pid) and a fake clock that moves only when someone sleeps.

const dir = mkdtempSync(join(tmpdir(), 'tend-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A clock that jumps forward by exactly what is slept. */
function fakeClock(start = Date.UTC(2026, 10, 25, 10, 42, 7)): Clock & { t: number } {
  const clock = {
    t: start,
    now: () => new Date(clock.t),
    sleep: (ms: number, signal?: AbortSignal) => {
      if (!signal?.aborted) clock.t += ms;
      // Yield to the event loop so other work (the renewal loop, the other writer) runs in between.
      return new Promise<void>((r) => setImmediate(r));
    },
  };
  return clock;
}

const intent: Intent = { dir, contentHash: 'h', providers: [], resources: [] };
let files = 0;
const opened: Store[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});

async function twoProcesses(clock: Clock, alive: (pid: number) => boolean = () => true) {
  const path = join(dir, `lease-${++files}.db`);
  const ws = async (): Promise<Workspace> => {
    const store = await openSqliteStore(path, { now: () => clock.now() });
    opened.push(store);
    return createWorkspace({ name: 'prod', intent, providers: new Map(), store, env: {} });
  };
  const ctx = (pid: number): AppContext =>
    defaultContext({
      clock,
      process: { pid, host: 'build-7', startedAt: clock.now().toISOString(), isAlive: alive },
    });
  return { a: { ws: await ws(), ctx: ctx(4121) }, b: { ws: await ws(), ctx: ctx(5000) } };
}

async function rejection(p: Promise<unknown>): Promise<TendError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TendError);
  return e as TendError;
}

describe('acquireWorkspaceLease', () => {
  it('refuses a second writer at once by default, naming the holder, its pid, host and since when', async () => {
    const clock = fakeClock();
    const { a, b } = await twoProcesses(clock);
    const held = await acquireWorkspaceLease(a.ctx, a.ws, { command: 'tend run', waitMs: 0 });
    expect(held.lease.epoch).toBe(1);
    const err = await rejection(
      acquireWorkspaceLease(b.ctx, b.ws, { command: 'tend apply', waitMs: 0 }),
    );
    expect(err.code).toBe('workspace.locked');
    expect(err.message).toBe(
      'workspace `prod` is held by `tend run` (pid 4121 on build-7) since 10:42:07 UTC; retry, or pass --lock-timeout',
    );
    await held.release();
  });

  it('waits up to --lock-timeout and gets the lease once the holder releases it', async () => {
    const clock = fakeClock();
    const { a, b } = await twoProcesses(clock);
    const held = await acquireWorkspaceLease(a.ctx, a.ws, { command: 'tend apply', waitMs: 0 });
    const waiting = acquireWorkspaceLease(b.ctx, b.ws, { command: 'tend apply', waitMs: 10_000 });
    // Let the waiter try a few times, then release.
    while (clock.t < Date.UTC(2026, 10, 25, 10, 42, 8)) await new Promise((r) => setImmediate(r));
    await held.release();
    const second = await waiting;
    expect(second.lease.epoch).toBe(2);
    await second.release();
  });

  it('gives up after --lock-timeout when the holder keeps the lease', async () => {
    const clock = fakeClock();
    const { a, b } = await twoProcesses(clock);
    const held = await acquireWorkspaceLease(a.ctx, a.ws, { command: 'tend run', waitMs: 0 });
    const start = clock.t;
    const err = await rejection(
      acquireWorkspaceLease(b.ctx, b.ws, { command: 'tend apply', waitMs: 2_000 }),
    );
    expect(err.code).toBe('workspace.locked');
    expect(clock.t - start).toBeGreaterThanOrEqual(2_000);
    expect(clock.t - start).toBeLessThan(LEASE_TTL_MS);
    await held.release();
  });

  it('takes over the lease of a holder whose pid is dead on this host, with the next epoch', async () => {
    const clock = fakeClock();
    const { a, b } = await twoProcesses(clock, (pid) => pid !== 4121);
    await acquireWorkspaceLease(a.ctx, a.ws, { command: 'tend run', waitMs: 0 });
    const taken = await acquireWorkspaceLease(b.ctx, b.ws, { command: 'tend apply', waitMs: 0 });
    expect(taken.lease.epoch).toBe(2);
    expect(taken.tookOver?.holder.pid).toBe(4121);
    // The old holder is fenced: its next journal write is refused, so it sends nothing more.
    const err = await rejection(
      a.ws.store.journal({
        id: 'op-x',
        address: 'sb.buckets/a',
        type: 'sb.buckets',
        action: 'create',
        desiredHash: 'h',
        marker: { workspace: 'prod', address: 'sb.buckets/a' },
        state: 'pending',
        createdAt: clock.now().toISOString(),
      }),
    );
    expect(err.code).toBe('store.lease-lost');
    await taken.release();
  });

  it('keeps the lease alive while held (renewed in the background) and aborts its signal once taken over', async () => {
    const clock = fakeClock();
    const { a, b } = await twoProcesses(clock);
    const held = await acquireWorkspaceLease(a.ctx, a.ws, {
      command: 'tend run',
      waitMs: 0,
      ttlMs: 3_000,
    });
    // Well past the first expiry: the renewals keep it.
    const until = clock.t + 10_000;
    while (clock.t < until) await new Promise((r) => setImmediate(r));
    const refused = await rejection(
      acquireWorkspaceLease(b.ctx, b.ws, { command: 'tend apply', waitMs: 0 }),
    );
    expect(refused.code).toBe('workspace.locked');
    // Renewed all along: the holder may still send.
    expect(() => a.ws.fence.check()).not.toThrow();
    // Someone with the file takes it over (as an expired lease would be): the holder notices.
    await b.ws.store.acquireLease({
      workspace: 'prod',
      holder: { command: 'tend apply', pid: 5000, host: 'build-7', startedAt: '' },
      ttlMs: 3_000,
      takeOver: () => true,
    });
    while (!held.signal.aborted) await new Promise((r) => setImmediate(r));
    expect(held.signal.aborted).toBe(true);
    // Taken over: nothing more leaves this process.
    expect(() => a.ws.fence.check()).toThrow(/was taken over/);
    // Letting it go says it was no longer held (a worker logs it lost, not released).
    expect(await held.release()).toBe(false);
  });

  it('says on release whether it still held the lease, and times each renewal', async () => {
    const clock = fakeClock();
    const { a } = await twoProcesses(clock);
    const renewals: boolean[] = [];
    const held = await acquireWorkspaceLease(a.ctx, a.ws, {
      command: 'tend run',
      waitMs: 0,
      ttlMs: 3_000,
      onRenew: (ms, kept) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        renewals.push(kept);
      },
    });
    const until = clock.t + 5_000;
    while (clock.t < until) await new Promise((r) => setImmediate(r));
    expect(renewals.length).toBeGreaterThanOrEqual(4);
    expect(renewals.every((k) => k)).toBe(true);
    expect(await held.release()).toBe(true);
  });

  it('stops sending once the holder cannot be sure of its lease: paused past its expiry, never renewed', async () => {
    // A clock whose sleeps never end (unless aborted): the renewal loop is frozen, as in a process
    // stopped with SIGSTOP; time moves only when the test moves it.
    const clock = {
      t: Date.UTC(2026, 10, 28, 12, 0, 0),
      now: () => new Date(clock.t),
      sleep: (_ms: number, signal?: AbortSignal) =>
        new Promise<void>((r) => signal?.addEventListener('abort', () => r(), { once: true })),
      monotonic: () => clock.t,
    };
    const { a } = await twoProcesses(clock);
    const held = await acquireWorkspaceLease(a.ctx, a.ws, {
      command: 'tend run',
      waitMs: 0,
      ttlMs: 10_000,
    });
    // The holder trusts its lease until 10 % (at most 2 s) before it expires, measured from asking.
    clock.t += 8_999;
    expect(() => a.ws.fence.check()).not.toThrow();
    clock.t += 2;
    let caught: unknown;
    try {
      a.ws.fence.check();
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TendError);
    const err = caught as TendError;
    expect(err.code).toBe('store.lease-lost');
    expect(err.message).toBe(
      'not sent: this process last secured the lease on workspace prod 9 s ago, and the lease lasts 10 s; another writer may hold it now',
    );
    expect(err.hint).toMatch(/paused or could not reach the store/);
    // Paused past its lease: released as no longer held.
    expect(await held.release()).toBe(false);
    // Released: the fence no longer holds a lease to check.
    expect(() => a.ws.fence.check()).not.toThrow();
  });
});
