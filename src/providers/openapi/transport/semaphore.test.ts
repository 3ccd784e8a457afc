import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.js';

/** Lets every pending continuation run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('semaphore', () => {
  it('holds at most `capacity` slots and serves waiters in arrival order', async () => {
    const s = new Semaphore(2);
    const order: string[] = [];
    const take = (name: string) => s.acquire().then(() => order.push(name));
    void take('a');
    void take('b');
    void take('c');
    void take('d');
    await settle();
    expect(order).toEqual(['a', 'b']);
    s.release();
    await settle();
    expect(order).toEqual(['a', 'b', 'c']);
    s.release();
    s.release();
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
  });

  it('treats a capacity below 1 as 1', async () => {
    const s = new Semaphore(0);
    let held = 0;
    void s.acquire().then(() => held++);
    void s.acquire().then(() => held++);
    await settle();
    expect(held).toBe(1);
  });

  it('drops a waiter whose signal aborts, without giving it a slot', async () => {
    const s = new Semaphore(1);
    await s.acquire();
    const ctl = new AbortController();
    const aborted = s.acquire(ctl.signal);
    let next = false;
    void s.acquire().then(() => (next = true));
    ctl.abort(new Error('cancelled'));
    await expect(aborted).rejects.toThrow('cancelled');
    s.release();
    await settle();
    expect(next).toBe(true);
  });

  it('refuses at once when the signal is already aborted', async () => {
    const s = new Semaphore(1);
    await expect(s.acquire(AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
    // The slot was not taken.
    await s.acquire();
  });

  // A pass hands one signal to all its operations: hundreds may wait for a slot at once. One listener
  // per waiter made Node warn (MaxListenersExceededWarning, `tend worker` under load).
  it('adds one abort listener to a signal however many wait with it, and none stays after', async () => {
    const s = new Semaphore(2);
    const ctl = new AbortController();
    const listeners = () => getEventListeners(ctl.signal, 'abort').length;
    const granted = Array.from({ length: 40 }, () => s.acquire(ctl.signal));
    expect(listeners()).toBeLessThanOrEqual(1);
    for (let i = 0; i < 40; i++) s.release();
    await Promise.all(granted);
    expect(listeners()).toBe(0);

    // Waiters that leave by the signal leave nothing either, and free no slot.
    const rest = [s.acquire(ctl.signal), s.acquire(ctl.signal)];
    const waiting = Array.from({ length: 20 }, () => s.acquire(ctl.signal).catch(() => 'aborted'));
    expect(listeners()).toBeLessThanOrEqual(1);
    ctl.abort(new Error('stop'));
    expect(await Promise.all(waiting)).toEqual(Array(20).fill('aborted'));
    await Promise.all(rest);
    expect(listeners()).toBe(0);
  });
});
