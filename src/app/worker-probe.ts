import type { Clock } from '../engine/index.js';
import { monotonicNow } from '../engine/index.js';
import type { Readiness } from './readiness.js';
import { answers, READINESS_TIMEOUT_MS } from './readiness.js';

// What a `tend worker` tells whoever watches it besides its log (docs/fleet.md, decision 0046): its
// HTTP endpoint's readiness (`WorkerHealth`) and its `tend_fleet_*` metrics (src/server's
// FleetMetrics). The worker loop calls a probe; the CLI hands it in (`WorkerRequest.probe`).

/** What a worker reports as it works; every callback optional. */
export interface WorkerProbe {
  /** The registry is open: how to check that it answers, and the worker's lease TTL (ms). */
  attached?(check: () => Promise<void>, ttlMs: number): void;
  /** A heartbeat was recorded (ok) or failed (with why). */
  heartbeat?(ok: boolean, message?: string): void;
  /** After each tick and each change: workspaces registered (as last read), leases held now. */
  counted?(counts: { readonly registered: number; readonly held: number }): void;
  /** A lease renewal the store answered: how long it took (s), whether the lease was kept. */
  leaseRenewed?(seconds: number, kept: boolean): void;
  /** The fleet's job table is open: how to count the jobs queued in it (every workspace). */
  jobsAttached?(queued: () => Promise<number>): void;
}

/** Several probes as one. */
export function probes(...list: readonly WorkerProbe[]): WorkerProbe {
  return {
    attached: (check, ttlMs) => list.forEach((p) => p.attached?.(check, ttlMs)),
    heartbeat: (ok, message) => list.forEach((p) => p.heartbeat?.(ok, message)),
    counted: (counts) => list.forEach((p) => p.counted?.(counts)),
    leaseRenewed: (seconds, kept) => list.forEach((p) => p.leaseRenewed?.(seconds, kept)),
    jobsAttached: (queued) => list.forEach((p) => p.jobsAttached?.(queued)),
  };
}

/**
 * A worker's readiness: ready while its registry answers now and its last heartbeat succeeded
 * within its lease TTL (measured on the process's monotonic clock, from when it succeeded).
 */
export class WorkerHealth implements WorkerProbe {
  #check: (() => Promise<void>) | undefined;
  #ttlMs = 0;
  #lastOk: number | undefined;
  #lastError: string | undefined;

  constructor(private readonly clock: Clock) {}

  attached(check: () => Promise<void>, ttlMs: number): void {
    this.#check = check;
    this.#ttlMs = ttlMs;
  }

  heartbeat(ok: boolean, message?: string): void {
    if (ok) {
      this.#lastOk = monotonicNow(this.clock);
      this.#lastError = undefined;
    } else this.#lastError = message ?? 'unknown error';
  }

  /** Whether the worker is ready, asking the registry now (at most `timeoutMs`). */
  async readiness(timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
    const check = this.#check;
    if (!check) return { ready: false, reason: 'starting: the fleet registry is not open yet' };
    const problem = await answers(check, timeoutMs);
    if (problem !== undefined) return { ready: false, reason: `the fleet registry: ${problem}` };
    if (this.#lastOk === undefined) {
      return { ready: false, reason: this.#failed('no heartbeat recorded yet') };
    }
    const age = monotonicNow(this.clock) - this.#lastOk;
    if (age > this.#ttlMs) {
      return {
        ready: false,
        reason: this.#failed(
          `the last heartbeat succeeded ${Math.round(age / 1000)} s ago; the lease TTL is ${Math.round(this.#ttlMs / 1000)} s`,
        ),
      };
    }
    return { ready: true };
  }

  #failed(what: string): string {
    return this.#lastError === undefined ? what : `${what} (last failure: ${this.#lastError})`;
  }
}
