import { toTendError } from '../core/index.js';
import type { AppContext } from './context.js';
import type { RunReport, RunRequest } from './run.js';
import { run } from './run.js';
import { IntentError } from './workspace.js';

/** How soon a loop that could not restart tries again (at most; the interval when shorter). */
const RETRY_MS = 5_000;

/** The continuous loop of `tend serve`, which a foreground write can pause. */
export interface ServeLoop {
  /** Settles when the first run holds the lease and starts; rejects when it cannot (held elsewhere). */
  readonly started: Promise<void>;
  /**
   * Runs `work` while the loop is stopped and its lease released (an apply of a saved plan, an
   * action: they take the lease themselves), then starts the loop again. One at a time, in order.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Stops the loop (the operations in flight settle, the lease is released). */
  stop(): Promise<RunReport | undefined>;
}

/**
 * Runs `run` until stopped, restarting it around exclusive work. A run that ends by itself (the
 * lease taken over, an error) is reported through `request.report` and not restarted.
 */
export function startServeLoop(
  ctx: AppContext,
  request: Omit<RunRequest, 'signal' | 'onStart'>,
): ServeLoop {
  let abort = new AbortController();
  let stopped = false;
  let queue: Promise<unknown> = Promise.resolve();
  let resolveStart!: () => void;
  let rejectStart!: (e: unknown) => void;
  const started = new Promise<void>((res, rej) => {
    resolveStart = res;
    rejectStart = rej;
  });
  let first = true;
  const start = (): Promise<RunReport | undefined> => {
    abort = new AbortController();
    const isFirst = first;
    first = false;
    return run(ctx, {
      ...request,
      signal: abort.signal,
      onStart: () => {
        if (isFirst) resolveStart();
      },
    }).catch(async (e: unknown): Promise<RunReport | undefined> => {
      if (isFirst) {
        rejectStart(e);
        return undefined;
      }
      // A restart that fails (the intent broken meanwhile, the workspace taken by another writer)
      // is reported and tried again a little later: the server stays up and says why.
      if (e instanceof IntentError) {
        request.report?.({ kind: 'intent-invalid', diagnostics: e.diagnostics, contentHash: '' });
      } else request.report?.({ kind: 'error', error: toTendError(e) });
      const signal = abort.signal;
      await ctx.clock.sleep(Math.min(request.intervalMs, RETRY_MS), signal).catch(() => undefined);
      return signal.aborted || stopped ? undefined : start();
    });
  };
  let current = start();
  return {
    started,
    exclusive<T>(work: () => Promise<T>): Promise<T> {
      const next = queue.then(async () => {
        abort.abort();
        await current;
        try {
          return await work();
        } finally {
          if (!stopped) current = start();
        }
      });
      queue = next.catch(() => undefined);
      return next;
    },
    async stop() {
      stopped = true;
      abort.abort();
      await queue;
      return current;
    },
  };
}
