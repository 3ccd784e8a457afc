import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualTime, realSleep } from './timing.js';

describe('virtual time', () => {
  it('wakes sleeps in time order, same instants in the order they were made', async () => {
    const vt = createVirtualTime(1_000);
    const woke: string[] = [];
    const nap = (name: string, ms: number) =>
      vt.sleep(ms).then(() => woke.push(`${name}@${vt.clock()}`));
    await vt.run(Promise.all([nap('b', 20), nap('a', 10), nap('c', 20), nap('now', 0)]));
    expect(woke).toEqual(['now@1000', 'a@1010', 'b@1020', 'c@1020']);
    expect(vt.clock()).toBe(1_020);
  });

  it('runs chains of sleeps to the end without waiting for real', async () => {
    const vt = createVirtualTime();
    const started = performance.now();
    const result = await vt.run(
      (async () => {
        for (let i = 0; i < 1_000; i++) await vt.sleep(60_000);
        return 'done';
      })(),
    );
    expect(result).toBe('done');
    expect(vt.clock()).toBe(60_000_000);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('advances by a given time, waking only what is due', async () => {
    const vt = createVirtualTime();
    let woke = 0;
    void vt.sleep(100).then(() => woke++);
    void vt.sleep(300).then(() => woke++);
    await vt.advance(200);
    expect(woke).toBe(1);
    expect(vt.clock()).toBe(200);
    expect(vt.pending).toBe(1);
  });

  it('rejects a sleep whose signal aborts, and forgets it', async () => {
    const vt = createVirtualTime();
    const ctl = new AbortController();
    const p = vt.sleep(1_000, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(vt.pending).toBe(0);
    await expect(vt.sleep(1, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });

  it('passes on the rejection of the work it runs', async () => {
    const vt = createVirtualTime();
    const failing = vt.sleep(10).then(() => {
      throw new Error('boom');
    });
    await expect(vt.run(failing)).rejects.toThrow('boom');
  });

  it('says so when the work waits on something that is not a sleep', async () => {
    const vt = createVirtualTime();
    await expect(vt.run(new Promise(() => {}))).rejects.toThrow(
      'virtual time: the work is still pending but no sleep is waiting',
    );
  });
});

// Every request holding a slot may wait for the rate limiter with the pass's signal at once (as many
// as the provider's concurrency).
describe('realSleep', () => {
  it('adds one abort listener to a signal however many sleep with it, and none stays after', async () => {
    const ctl = new AbortController();
    const listeners = () => getEventListeners(ctl.signal, 'abort').length;
    const slept = Array.from({ length: 20 }, (_, i) => realSleep(1 + (i % 3), ctl.signal));
    expect(listeners()).toBe(1);
    await Promise.all(slept);
    expect(listeners()).toBe(0);

    const stopped = Array.from({ length: 20 }, () =>
      realSleep(60_000, ctl.signal).catch((e: Error) => e.message),
    );
    expect(listeners()).toBe(1);
    ctl.abort(new Error('stop'));
    expect(await Promise.all(stopped)).toEqual(Array(20).fill('stop'));
    expect(listeners()).toBe(0);
  });
});
