import type { TendError } from '../core/index.js';
import { toTendError } from '../core/index.js';
import type { PassOptions, PassResult } from './reconciler.js';
import { reconcilePass } from './reconciler.js';
import type { Workspace } from './workspace.js';

/** Options for the continuous loop. */
export interface RunOptions extends Omit<PassOptions, 'mode' | 'pass' | 'trigger' | 'confirm'> {
  /** Full pass at least this often, even with no events. */
  readonly intervalMs: number;
  /** How long one audit-feed read may wait for news (long poll). */
  readonly feedWaitMs: number;
  /** Stop after this many passes; unlimited when absent. */
  readonly maxPasses?: number;
  /** Number the first pass this (a loop restarted on a new intent continues the count). */
  readonly firstPass?: number;
  /** The trigger of the first pass (default `start`). */
  readonly firstTrigger?: string;
  /**
   * Between full passes, an audit-feed event runs a focused pass that re-reads and re-plans only the
   * objects the feed names (default true); a full pass still runs every `intervalMs`.
   */
  readonly incremental?: boolean;
  /** Called after every pass with what it did or why it failed. */
  readonly onPass?: (pass: PassReport) => void | Promise<void>;
  /**
   * Called before every pass but the first (a git workspace fetches its ref here: `tend worker`).
   * When the loop's signal is aborted by the time it returns, the loop stops without that pass.
   */
  readonly beforePass?: () => Promise<void>;
  /**
   * Back off a pass that keeps failing (the platform down): wait the interval after the first
   * failure, then twice as long after each next one, up to this (and at least what the platform
   * asked for); a pass that runs resets it. Absent (`tend run`): every failure waits the interval.
   */
  readonly failureBackoffMaxMs?: number;
  /** Work done between passes, under the same lease (a fleet's queued jobs): see BetweenPasses. */
  readonly between?: BetweenPasses;
}

/**
 * Work a loop does between its passes, while it holds its lease and no pass is in flight (the jobs a
 * fleet's API queued for the holder: docs/fleet.md). `run` is called after every pass, and whenever
 * the wake `subscribe` hands out is called while the loop waits: then the wait goes on afterwards (a
 * wake starts no pass). A wake during a pass is kept for the end of the pass. `run` must not throw.
 */
export interface BetweenPasses {
  run(): Promise<void>;
  /** Hands the loop's wake to the caller; returns how to stop. */
  subscribe(wake: () => void): () => void;
}

/** How one pass of the loop ended. */
export type PassReport =
  | { readonly pass: number; readonly ok: true; readonly result: PassResult }
  | { readonly pass: number; readonly ok: false; readonly error: TendError };

/** What the loop did when it stopped. */
export interface RunOutcome {
  /** Passes run (counting from `firstPass`). */
  readonly passes: number;
  readonly last?: PassReport;
}

/** Longest wait between passes while a platform refuses our credentials. */
const UNAUTHORIZED_MAX_WAIT_MS = 5 * 60_000;

/**
 * The main mode: reconcile, then wait for an audit-feed event or the poll interval, and again, until
 * the signal aborts or `maxPasses` passes ran (with or without an audit feed). Events only wake the
 * loop: each pass re-reads the world (level-triggered). On abort, no new operation starts; the pass in
 * flight finishes and settles what it sent. A platform that refuses the credentials (401/403) is
 * retried with a growing wait (a service keeps running; someone may fix the secret).
 */
export async function runContinuously(
  ws: Workspace,
  options: RunOptions,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { clock, report } = options;
  // The feeds stop with the loop, whether it was stopped or ran its passes.
  const loopDone = new AbortController();
  const feedSignal = AbortSignal.any([signal, loopDone.signal]);
  const waiter = new Waiter(clock, signal, options.between);
  const trigger = (why: string) => waiter.trigger(why);

  // The feeds only wake the loop: each pass reads them from the stored cursors and records what they
  // say together with what it decides. The watch keeps its own cursor in memory.
  const feeds = [...ws.providers.entries()]
    .filter(([, p]) => p.changes !== undefined)
    .map(async ([name, provider]) => {
      let backoff = 500;
      let cursor = await ws.store.getCursor(name).catch(() => undefined);
      while (!feedSignal.aborted) {
        try {
          const page = await provider.changes!(cursor, {
            waitMs: options.feedWaitMs,
            signal: feedSignal,
          });
          backoff = 500;
          cursor = page.cursor;
          const other = page.changes.find((c) => c.actor !== options.actor.actor);
          if (other)
            trigger(`audit: ${other.actor} ${other.action}d ${name}.${other.type} ${other.id}`);
        } catch (e) {
          if (feedSignal.aborted) break;
          report({ kind: 'warning', message: `audit feed of ${name}: ${toTendError(e).message}` });
          await clock.sleep(backoff, feedSignal);
          backoff = Math.min(backoff * 2, 10_000);
        }
      }
    });

  const first = options.firstPass ?? 1;
  let pass = first - 1;
  let why = options.firstTrigger ?? 'start';
  let last: PassReport | undefined;
  let unauthorizedWait = 0;
  let failedInARow = 0;
  // When the next full pass is due; until then, passes the feed triggers are focused.
  let nextFullAt = 0;
  let fromFeed = false;
  /**
   * One pass: reconciles, reports it to `onPass` and returns how long to wait before the next. A
   * function of its own, and `last` a variable the loop clears before each pass, so that nothing of
   * a finished pass (its observation, plan and outcomes: a few KB per resource) stays referenced from
   * the loop's frame while the next one runs: one pass's worth is live at a time, not two.
   */
  const passOnce = async (focused: boolean): Promise<number> => {
    let waitMs = options.intervalMs;
    try {
      const result = await reconcilePass(ws, {
        ...options,
        mode: 'apply',
        pass,
        trigger: why,
        signal,
        ...(focused ? { focused: true } : {}),
      });
      if (result.focused) waitMs = Math.max(0, nextFullAt - clock.now().getTime());
      else nextFullAt = clock.now().getTime() + options.intervalMs;
      last = { pass, ok: true, result };
      unauthorizedWait = 0;
      failedInARow = 0;
    } catch (e) {
      const err = toTendError(e);
      last = { pass, ok: false, error: err };
      report({ kind: 'error', error: err });
      if (err.code === 'platform.unauthorized') {
        // Credentials do not heal by themselves: back off, up to a few minutes.
        unauthorizedWait = Math.min(
          UNAUTHORIZED_MAX_WAIT_MS,
          unauthorizedWait === 0 ? Math.min(options.intervalMs, 1000) : unauthorizedWait * 2,
        );
        waitMs = Math.max(unauthorizedWait, Math.min(options.intervalMs, 1000));
      } else if (options.failureBackoffMaxMs !== undefined) {
        failedInARow++;
        const backoff = options.intervalMs * 2 ** Math.min(failedInARow - 1, 30);
        waitMs = Math.max(
          Math.min(options.failureBackoffMaxMs, backoff),
          (err.retryAfterSeconds ?? 0) * 1000,
        );
      } else if (err.retryAfterSeconds !== undefined) {
        // A platform that asked us to wait (circuit open until its probe, Retry-After): try again
        // then, not a whole interval later.
        waitMs = Math.min(waitMs, Math.max(100, err.retryAfterSeconds * 1000));
      }
    }
    await options.onPass?.(last);
    return waitMs;
  };

  try {
    while (!signal.aborted) {
      if (options.beforePass && pass >= first) {
        await options.beforePass();
        if (signal.aborted) break;
      }
      pass++;
      const focused =
        options.incremental !== false && fromFeed && clock.now().getTime() < nextFullAt;
      last = undefined;
      const waitMs = await passOnce(focused);
      if (options.between) await waiter.runBetween();
      if (options.maxPasses !== undefined && pass - first + 1 >= options.maxPasses) break;
      if (signal.aborted) break;
      await waiter.waitForNext(waitMs);
      const pending = waiter.takeTrigger();
      why = pending ?? 'interval';
      fromFeed = pending !== undefined;
    }
  } finally {
    waiter.close();
    loopDone.abort();
    await Promise.allSettled(feeds);
  }
  return { passes: pass - first + 1, ...(last ? { last } : {}) };
}

/**
 * How the loop waits between passes: for the interval, or until the audit feed triggers a pass
 * (`trigger`), doing the work between passes (`BetweenPasses`) whenever it is asked meanwhile.
 */
class Waiter {
  #wake: (() => void) | undefined;
  #wakeBetween: (() => void) | undefined;
  #pending: string | undefined;
  #betweenAsked = false;
  readonly #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly clock: RunOptions['clock'],
    private readonly signal: AbortSignal,
    private readonly between: BetweenPasses | undefined,
  ) {
    this.#unsubscribe = between?.subscribe(() => {
      this.#betweenAsked = true;
      this.#wakeBetween?.();
    });
  }

  /** The feed asks for a pass (the first reason is kept). */
  trigger(why: string): void {
    this.#pending ??= why;
    this.#wake?.();
  }

  /** Why the next pass runs, if the feed asked for it (and forgets it). */
  takeTrigger(): string | undefined {
    const why = this.#pending;
    this.#pending = undefined;
    return why;
  }

  async runBetween(): Promise<void> {
    this.#betweenAsked = false;
    if (!this.signal.aborted) await this.between?.run();
  }

  /** Waits `waitMs`, or until the feed triggers a pass; does the work between passes asked meanwhile. */
  async waitForNext(waitMs: number): Promise<void> {
    const until = this.clock.now().getTime() + waitMs;
    while (!this.signal.aborted && this.#pending === undefined) {
      if (this.#betweenAsked) {
        await this.runBetween();
        continue;
      }
      const remaining = until - this.clock.now().getTime();
      if (remaining <= 0) return;
      const timer = new AbortController();
      await Promise.race([
        this.clock.sleep(remaining, AbortSignal.any([this.signal, timer.signal])),
        new Promise<void>((resolve) => (this.#wake = resolve)),
        new Promise<void>((resolve) => (this.#wakeBetween = resolve)),
      ]);
      timer.abort();
      this.#wake = undefined;
      this.#wakeBetween = undefined;
      if (!this.#betweenAsked) return;
    }
  }

  close(): void {
    this.#unsubscribe?.();
  }
}
