/**
 * SQLite's busy handler waits for a lock only where waiting cannot deadlock. A few moments return
 * `SQLITE_BUSY` at once instead, whatever the timeout: a connection closing as the last one holds an
 * exclusive lock while it checkpoints and removes the write-ahead log, a connection opening then
 * recovers the log under the same lock, and two processes opening a new file together race to make
 * it a WAL database. Each is over in milliseconds, and what failed changed nothing (a statement or a
 * transaction that could not start), so it is tried again — for reads, for opening and for the
 * lease's transaction — until a deadline, never for a write that may have been half made.
 */

/** How long a busy moment is retried in all, and the first pause (doubled, capped at 100 ms). */
export interface BusyRetry {
  readonly deadlineMs: number;
  readonly firstPauseMs?: number;
  /** A synchronous pause (tests pass a fake). */
  readonly pause?: (ms: number) => void;
  /** Milliseconds now (tests pass a fake clock). */
  readonly now?: () => number;
}

/** True when `e` is SQLite's `SQLITE_BUSY` (or one of its extended codes). */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const cell = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` (what SQLite's own busy handler does). */
export function pauseSync(ms: number): void {
  Atomics.wait(cell, 0, 0, ms);
}

/**
 * Runs `body`, again after a short pause each time it fails with `SQLITE_BUSY`, until `deadlineMs`
 * has passed: then the last failure is thrown. Any other failure is thrown at once.
 */
export function retryBusy<T>(body: () => T, options: BusyRetry): T {
  const now = options.now ?? Date.now;
  const pause = options.pause ?? pauseSync;
  const until = now() + options.deadlineMs;
  let wait = options.firstPauseMs ?? 5;
  for (;;) {
    try {
      return body();
    } catch (e) {
      if (!isBusy(e) || now() >= until) throw e;
      pause(Math.min(wait, Math.max(1, until - now())));
      wait = Math.min(100, wait * 2);
    }
  }
}
