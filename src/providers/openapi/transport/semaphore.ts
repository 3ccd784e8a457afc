import { onAbort } from './on-abort.js';

/**
 * Bounds how many callers hold a slot at once; waiting callers are served in arrival order. A caller
 * whose signal aborts while waiting leaves the queue without taking a slot.
 */
export class Semaphore {
  private free: number;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.free = Math.max(1, capacity);
  }

  /** Resolves when a slot is held; the caller must `release()` it exactly once. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          unsubscribe?.();
          resolve();
        },
      };
      // Every waiter with this signal shares one listener on it (on-abort.ts).
      const unsubscribe = signal
        ? onAbort(signal, () => {
            const i = this.waiting.indexOf(entry);
            if (i >= 0) this.waiting.splice(i, 1);
            reject(signal.reason as Error);
          })
        : undefined;
      this.waiting.push(entry);
    });
  }

  /** Gives a slot back, to the longest waiting caller if there is one. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.free++;
  }
}
