// The clock and sleep the HTTP client uses, injectable so that tests skip forward instead of waiting.

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
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The real monotonic clock. */
export const realClock: Clock = () => performance.now();
