/** Time, passed in so that timing logic can be tested with a fake clock. */
export interface Clock {
  now(): Date;
  /** Resolves after `ms`, or early (without throwing) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Milliseconds from an arbitrary origin that never jump (the wall clock can be stepped by NTP or
   * by hand); for measuring how long something lasted. Absent: `now()` is used.
   */
  monotonic?(): number;
}

/** The clock's monotonic time, or its wall-clock time when it has none. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic ? clock.monotonic() : clock.now().getTime();
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/**
 * A clock for tests: time moves only when someone sleeps on it, by exactly what is slept, and
 * sleeping never waits. `elapsed()` says how far it moved.
 */
export function steppedClock(
  start = Date.parse('2026-01-01T00:00:00Z'),
): Clock & { elapsed(): number } {
  let t = start;
  return {
    now: () => new Date(t),
    sleep: (ms) => {
      t += Math.max(0, ms);
      return Promise.resolve();
    },
    elapsed: () => t - start,
  };
}
