import { toTendError } from '../core/index.js';
import { ingestFeed } from './feed.js';
import type { PassOptions } from './reconciler.js';
import { reconcilePass } from './reconciler.js';
import type { Workspace } from './workspace.js';

/** Options for the continuous loop. */
export interface RunOptions extends Omit<PassOptions, 'mode' | 'pass' | 'trigger' | 'confirm'> {
  /** Full pass at least this often, even with no events. */
  readonly intervalMs: number;
  /** How long one audit-feed read may wait for news (long poll). */
  readonly feedWaitMs: number;
  /** Stop after this many passes (tests); unlimited when absent. */
  readonly maxPasses?: number;
}

/**
 * The main mode: reconcile, then wait for an audit-feed event or the poll interval, and again, until
 * the signal aborts. Events only wake the loop: each pass re-reads the world (level-triggered). On
 * abort, no new operation starts; the pass in flight finishes and settles what it sent.
 */
export async function runContinuously(
  ws: Workspace,
  options: RunOptions,
  signal: AbortSignal,
): Promise<number> {
  const { clock, report } = options;
  let wake: (() => void) | undefined;
  let pendingTrigger: string | undefined;
  const trigger = (why: string) => {
    pendingTrigger ??= why;
    wake?.();
  };

  const feeds = [...ws.providers.entries()]
    .filter(([, p]) => p.changes !== undefined)
    .map(async ([name]) => {
      let backoff = 500;
      while (!signal.aborted) {
        try {
          const r = await ingestFeed(ws, name, options.actor.actor, options.feedWaitMs, signal);
          backoff = 500;
          for (const change of r.recorded) report({ kind: 'change-observed', change });
          if (r.recorded.length > 0) {
            const c = r.recorded[0]!;
            trigger(`audit: ${c.actor} ${c.action}d ${c.address ?? c.objectId}`);
          }
        } catch (e) {
          if (signal.aborted) break;
          report({ kind: 'warning', message: `audit feed of ${name}: ${toTendError(e).message}` });
          await clock.sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 10_000);
        }
      }
    });

  let pass = 0;
  let why = 'start';
  while (!signal.aborted) {
    pass++;
    let waitMs = options.intervalMs;
    try {
      await reconcilePass(ws, { ...options, mode: 'apply', pass, trigger: why, signal });
    } catch (e) {
      const err = toTendError(e);
      report({ kind: 'error', error: err });
      // A platform that asked us to wait (circuit open until its probe, Retry-After): try again then,
      // not a whole interval later.
      if (err.retryAfterSeconds !== undefined)
        waitMs = Math.min(waitMs, Math.max(100, err.retryAfterSeconds * 1000));
    }
    if (options.maxPasses !== undefined && pass >= options.maxPasses) break;
    if (signal.aborted) break;
    if (pendingTrigger === undefined) {
      const timer = new AbortController();
      await Promise.race([
        clock.sleep(waitMs, AbortSignal.any([signal, timer.signal])),
        new Promise<void>((resolve) => (wake = resolve)),
      ]);
      timer.abort();
      wake = undefined;
    }
    why = pendingTrigger ?? 'interval';
    pendingTrigger = undefined;
  }
  await Promise.allSettled(feeds);
  return pass;
}
