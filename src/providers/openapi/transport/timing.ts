// The clocks and sleep the HTTP client uses, injectable so that tests skip forward instead of
// waiting; and the virtual time those tests skip forward with.
import { onAbort } from './on-abort.js';

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Milliseconds from any fixed origin; only differences are used. */
export type Clock = () => number;

/** The real sleep, built on setTimeout. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      unsubscribe?.();
      resolve();
    }, ms);
    // Every sleeper on this signal shares one listener on it (on-abort.ts).
    const unsubscribe = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason as Error);
        })
      : undefined;
  });

/** The real monotonic clock (durations). */
export const realClock: Clock = () => performance.now();

/** The real wall clock in Unix milliseconds (times shown to people). */
export const realWallClock: Clock = () => Date.now();

/**
 * Time that moves only when told to: `clock` and `sleep` to inject, `run` to drive. Nothing waits
 * for real, so a test of a minute of traffic takes as long as its computation.
 */
export interface VirtualTime {
  /** Virtual milliseconds; starts at the given origin. */
  readonly clock: Clock;
  /** Resolves when virtual time reaches now + ms (at once for ms <= 0 once `run` turns). */
  readonly sleep: Sleep;
  /**
   * Settles `work`, jumping from one pending sleep to the next whenever nothing else can run.
   * Rejects when `work` is still pending with no sleep left to wake (a deadlock in the test).
   */
  run<T>(work: Promise<T>): Promise<T>;
  /** Moves time forward by `ms`, waking, in order, every sleep due by then. */
  advance(ms: number): Promise<void>;
  /** How many sleeps are waiting. */
  readonly pending: number;
}

/** Creates virtual time starting at `origin` milliseconds (e.g. a Unix time, for readable dates). */
export function createVirtualTime(origin = 0): VirtualTime {
  let now = origin;
  let seq = 0;
  // Kept sorted by (at, seq): sleeps due at the same instant wake in the order they were made.
  const timers: { at: number; seq: number; wake: () => void }[] = [];

  const insert = (t: { at: number; seq: number; wake: () => void }): void => {
    let i = timers.length;
    while (i > 0 && timers[i - 1]!.at > t.at) i--;
    timers.splice(i, 0, t);
  };

  // Every continuation waiting on a promise (microtask) runs before a macrotask: after one turn of
  // setImmediate, everything that could run without time passing has run.
  const idle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  const wakeNext = (): void => {
    const t = timers.shift()!;
    now = Math.max(now, t.at);
    t.wake();
  };

  return {
    clock: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason as Error);
          return;
        }
        const timer = {
          at: now + Math.max(0, ms),
          seq: seq++,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = (): void => {
          const i = timers.indexOf(timer);
          if (i >= 0) timers.splice(i, 1);
          reject(signal!.reason as Error);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        insert(timer);
      }),
    async run<T>(work: Promise<T>): Promise<T> {
      let settled = false;
      const done = work.then(
        (v) => ((settled = true), v),
        (e: unknown) => {
          settled = true;
          throw e;
        },
      );
      // A rejection is handled by the caller awaiting the result, not left unhandled meanwhile.
      done.catch(() => {});
      for (;;) {
        await idle();
        if (settled) return done;
        if (timers.length === 0) {
          throw new Error('virtual time: the work is still pending but no sleep is waiting');
        }
        wakeNext();
      }
    },
    async advance(ms: number): Promise<void> {
      const until = now + ms;
      for (;;) {
        await idle();
        if (timers.length === 0 || timers[0]!.at > until) break;
        wakeNext();
      }
      now = Math.max(now, until);
      await idle();
    },
    get pending() {
      return timers.length;
    },
  };
}
