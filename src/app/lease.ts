import type { Lease } from '../store/index.js';
import { TendError } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { monotonicNow } from '../engine/index.js';
import type { AppContext } from './context.js';

/** How long a lease lasts without renewal; the holder renews it every third of that. */
export const LEASE_TTL_MS = 30_000;
/** How often a waiting writer tries again. */
const RETRY_MS = 250;

/** A held workspace lease. `signal` aborts when the lease is lost (taken over by another writer). */
export interface HeldLease {
  readonly lease: Lease;
  /** The lease this one took over (expired, or its holder is dead), if any. */
  readonly tookOver?: Lease;
  readonly signal: AbortSignal;
  /**
   * Stops renewing and gives the lease up. Resolves false when this process no longer held it: taken
   * over, or not renewed for longer than it lasts (a process paused past its lease: a zombie).
   */
  release(): Promise<boolean>;
}

/** Options for taking a lease. */
export interface LeaseOptions {
  /** The command holding it, as people will read it: `tend apply`. */
  readonly command: string;
  /** How long to wait for a busy workspace before giving up (0: do not wait). */
  readonly waitMs: number;
  readonly signal?: AbortSignal;
  /** Lease duration (tests shorten it; `tend worker --lease-ttl`). */
  readonly ttlMs?: number;
  /** The id of the `tend worker` taking it, recorded with the holder (docs/fleet.md). */
  readonly worker?: string;
  /** Called after each renewal the store answered: how long it took (ms), and whether it was kept. */
  readonly onRenew?: (ms: number, kept: boolean) => void;
}

/** "10:42:07" (UTC) for a lease message; the date too when it is not today. */
function when(iso: string, now: Date): string {
  const t = new Date(iso);
  const time = t.toISOString().slice(11, 19);
  return t.toISOString().slice(0, 10) === now.toISOString().slice(0, 10)
    ? `${time} UTC`
    : `${t.toISOString().slice(0, 10)} ${time} UTC`;
}

/** The error a writer gets when the workspace stays held by someone else. */
export function workspaceLockedError(ws: string, current: Lease, now: Date): TendError {
  const h = current.holder;
  return new TendError(
    'workspace.locked',
    `workspace \`${ws}\` is held by \`${h.command}\` (pid ${h.pid} on ${h.host}) since ${when(current.acquiredAt, now)}; retry, or pass --lock-timeout`,
    {
      phase: 'lease',
      retryable: true,
      hint: `the lease expires at ${when(current.expiresAt, now)} unless its holder keeps running; --lock-timeout <seconds> waits for it`,
    },
  );
}

/**
 * Takes the workspace's exclusive lease for a writing command, waiting up to `waitMs` for a busy one.
 * A lease whose holder is dead (a pid that no longer runs on this host) or expired is taken over.
 * While held it is renewed in the background; losing it aborts `signal`, and the store refuses every
 * later write of this process (fencing), so nothing more is sent. Throws `workspace.locked`, naming
 * the holder, when the wait runs out.
 */
export async function acquireWorkspaceLease(
  ctx: AppContext,
  ws: Workspace,
  options: LeaseOptions,
): Promise<HeldLease> {
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  const holder = {
    command: options.command,
    pid: ctx.process.pid,
    host: ctx.process.host,
    startedAt: ctx.process.startedAt,
    ...(options.worker !== undefined ? { worker: options.worker } : {}),
  };
  const deadline = ctx.clock.now().getTime() + options.waitMs;
  for (;;) {
    const asked = monotonicNow(ctx.clock);
    const attempt = await ws.store.acquireLease({
      workspace: ws.name,
      holder,
      ttlMs,
      takeOver: (current) =>
        current.holder.host === ctx.process.host && !ctx.process.isAlive(current.holder.pid),
    });
    if (attempt.acquired) {
      return hold(ctx, ws, attempt, {
        ttlMs,
        asked,
        ...(options.onRenew ? { onRenew: options.onRenew } : {}),
      });
    }
    const left = deadline - ctx.clock.now().getTime();
    if (left <= 0 || options.signal?.aborted) {
      throw workspaceLockedError(ws.name, attempt.current, ctx.clock.now());
    }
    await ctx.clock.sleep(Math.min(RETRY_MS, left), options.signal);
  }
}

/**
 * How long before its expiry a holder stops trusting its lease: the holder measures the lease from
 * the moment it asked for it (the store's expiry is later than that), on its own monotonic clock, and
 * leaves this much for the two clocks to differ in rate.
 */
function safetyMargin(ttlMs: number): number {
  return Math.min(2_000, Math.floor(ttlMs / 10));
}

/** The error of a mutation refused because its sender may no longer hold the lease. */
function mayHaveLost(ws: string, since: number, ttlMs: number): TendError {
  return new TendError(
    'store.lease-lost',
    `not sent: this process last secured the lease on workspace ${ws} ${Math.round(since / 1000)} s ago, and the lease lasts ${Math.round(ttlMs / 1000)} s; another writer may hold it now`,
    {
      phase: 'lease',
      hint: 'the process was paused or could not reach the store to renew its lease; the operation stays in the journal and the holder of the lease resolves it',
    },
  );
}

function hold(
  ctx: AppContext,
  ws: Workspace,
  { lease, tookOver }: { lease: Lease; tookOver?: Lease },
  how: { ttlMs: number; asked: number; onRenew?: (ms: number, kept: boolean) => void },
): HeldLease {
  const { ttlMs, asked } = how;
  const lost = new AbortController();
  const stop = new AbortController();
  // When the lease was last known to be this process's: the moment the last successful acquire or
  // renewal was asked for (monotonic ms).
  let secured = asked;
  const removeFence = ws.fence.hold(() => {
    if (lost.signal.aborted) throw lost.signal.reason;
    const since = monotonicNow(ctx.clock) - secured;
    if (since > ttlMs - safetyMargin(ttlMs)) throw mayHaveLost(ws.name, since, ttlMs);
  });
  const renewing = (async () => {
    while (!stop.signal.aborted) {
      await ctx.clock.sleep(Math.floor(ttlMs / 3), stop.signal);
      if (stop.signal.aborted) return;
      try {
        const renewAsked = monotonicNow(ctx.clock);
        const kept = await ws.store.renewLease(ws.name, lease.epoch, ttlMs);
        how.onRenew?.(monotonicNow(ctx.clock) - renewAsked, kept);
        if (!kept) {
          lost.abort(
            new TendError('store.lease-lost', `the lease on workspace ${ws.name} was taken over`, {
              phase: 'lease',
            }),
          );
          return;
        }
        secured = renewAsked;
      } catch {
        // A busy store: try again at the next tick; the lease outlives a few missed renewals.
      }
    }
  })();
  return {
    lease,
    ...(tookOver ? { tookOver } : {}),
    signal: lost.signal,
    async release() {
      stop.abort();
      await renewing;
      removeFence();
      const since = monotonicNow(ctx.clock) - secured;
      const kept = !lost.signal.aborted && since <= ttlMs - safetyMargin(ttlMs);
      await ws.store.releaseLease(ws.name, lease.epoch).catch(() => undefined);
      return kept;
    },
  };
}
