import type { Clock, Sleep } from './timing.js';

/** How the limiter adapts; every field has a default tuned for token-bucket platforms. */
export interface RateLimiterOptions {
  /** The configured rate (requests/s), which the limiter never exceeds; 0 = no configured limit. */
  readonly ceiling: number;
  readonly clock: Clock;
  readonly sleep: Sleep;
  /** Factor applied to the sending rate on a 429 (default 0.7). */
  readonly decrease?: number;
  /**
   * The normal growth per second of sending at the full rate without a 429, as a fraction of the
   * rate the last 429 cut (default 0.05). Below 0.9× that rate growth is twice as fast; from 0.9×
   * to 1.05× it creeps at a twentieth of it.
   */
  readonly increase?: number;
  /** Least growth per second in requests/s (default 1), so that a low rate recovers too. */
  readonly minIncrease?: number;
  /** Lowest rate a 429 can cut to, in requests/s (default 1, or the ceiling when lower). */
  readonly floor?: number;
}

/** A grant to send one request; hand it back with the request's outcome. */
export interface Permit {
  /** When the request was let through (the limiter's clock). */
  readonly at: number;
  /** The limiter's decrease count at that time: a 429 to an older permit cuts nothing more. */
  readonly epoch: number;
}

/** The limiter's state, for health reports and tests. */
export interface RateLimiterState {
  /** Requests/s now allowed; Infinity when there is no limit (configured 0 and no 429 yet). */
  readonly rate: number;
  /** Until when (the limiter's clock) a Retry-After holds every request back; absent when none. */
  readonly pausedUntil?: number;
  /** How many times a 429 cut the rate. */
  readonly decreases: number;
}

/** Below CREEP_FROM × the rate a 429 cut, the rate recovers at RECOVER × the normal pace. */
const CREEP_FROM = 0.9;
const RECOVER = 2;
/** From CREEP_FROM to CREEP_TO × that rate it creeps at CREEP × the normal pace. */
const CREEP_TO = 1.05;
const CREEP = 0.05;

/** How many recent grants the measured sending rate looks back over. */
const RECENT = 256;

/**
 * An adaptive rate limit for one endpoint: additive increase, multiplicative decrease (as TCP
 * does for congestion), with a creep near the rate that last drew a 429 (as CUBIC does).
 *
 * It paces requests at most `rate` per second, evenly, without bursts, starting at the configured
 * ceiling (unlimited when the ceiling is 0). A 429 cuts the rate to 0.7× what was really being
 * sent, once per round of requests: 429s to requests let through before the cut say nothing new.
 * The 429's Retry-After holds back every request, not only the refused one. Each success then
 * adds a little, never above the ceiling: fast back to 0.9× the rate that was cut, slowly across
 * it (the platform's limit is most likely there, and every 429 costs a Retry-After pause), at the
 * normal pace beyond 1.05× (the limit has moved). Against a token-bucket platform it settles at
 * the platform's limit instead of oscillating far below it (see the simulation in the tests).
 */
export class RateLimiter {
  private current: number;
  private readonly ceiling: number;
  private readonly floor: number;
  private readonly decrease: number;
  private readonly increase: number;
  private readonly minIncrease: number;
  /** The next free instant to send at: pacing reserves instants one interval apart. */
  private next = Number.NEGATIVE_INFINITY;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private epoch = 0;
  /** The rate the last 429 cut from: the scale of the recovery. */
  private cutFrom = 0;
  /** The last RECENT grant times, oldest first. */
  private readonly recent: number[] = [];
  /** When the last pause ended: grants before it say nothing about the rate since. */
  private resumedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: RateLimiterOptions) {
    this.ceiling = options.ceiling > 0 ? options.ceiling : Number.POSITIVE_INFINITY;
    this.current = this.ceiling;
    this.floor = Math.min(options.floor ?? 1, this.ceiling);
    this.decrease = options.decrease ?? 0.7;
    this.increase = options.increase ?? 0.05;
    this.minIncrease = options.minIncrease ?? 1;
  }

  /** Requests per second now allowed; 0 when unlimited (the ProviderHealth convention). */
  get rate(): number {
    return Number.isFinite(this.current) ? this.current : 0;
  }

  /** The current state, for health reports. */
  state(): RateLimiterState {
    const now = this.options.clock();
    return {
      rate: this.current,
      ...(this.pausedUntil > now ? { pausedUntil: this.pausedUntil } : {}),
      decreases: this.epoch,
    };
  }

  /** Milliseconds until a Retry-After pause ends; 0 when none holds. */
  pausedFor(): number {
    return Math.max(0, this.pausedUntil - this.options.clock());
  }

  /**
   * Resolves when the caller may send, with the permit to report the outcome with. Callers are
   * spaced one interval apart in arrival order; one that was waiting when a pause began waits for
   * the pause too. Rejects with the signal's reason when it aborts first.
   */
  async take(signal?: AbortSignal): Promise<Permit> {
    for (;;) {
      const now = this.options.clock();
      const at = Math.max(now, this.next, this.pausedUntil);
      this.next = at + (Number.isFinite(this.current) ? 1000 / this.current : 0);
      if (at > now) {
        const pauseSeen = this.pausedUntil;
        await this.options.sleep(at - now, signal);
        // A pause that began while this caller slept applies to it too: it reserves again.
        if (this.pausedUntil > pauseSeen && this.pausedUntil > this.options.clock()) continue;
      }
      const granted = this.options.clock();
      this.record(granted);
      return { at: granted, epoch: this.epoch };
    }
  }

  /** The platform accepted the request (any answer but a 429): the rate grows a little. */
  succeeded(_permit: Permit): void {
    if (!Number.isFinite(this.current)) return;
    // Back fast to just below the rate that drew the 429, creep across it (the platform's limit is
    // most likely there, and every 429 costs a Retry-After pause), then, well past it, probe at the
    // normal pace (the limit has moved).
    const near = this.current / this.cutFrom;
    const pace = near < CREEP_FROM ? RECOVER : near < CREEP_TO ? CREEP : 1;
    const step = Math.max(this.minIncrease, pace * this.increase * this.cutFrom);
    // Growth per success of step/rate makes a second at the full rate grow it by `step`; a client
    // sending less than it may (app-limited, idle) grows proportionally less.
    this.current = Math.min(this.ceiling, this.current + step / this.current);
  }

  /**
   * The platform answered 429. Its Retry-After (milliseconds) holds back every request; the rate is
   * cut unless a cut already followed this permit's sending.
   */
  throttled(permit: Permit, retryAfterMs?: number): void {
    if (permit.epoch === this.epoch) {
      // Cut what was really being sent: a client held back by its concurrency (or an unlimited
      // one) sends less than its rate allows, and cutting the allowance alone would take rounds.
      const sending = Math.min(this.current, this.measured());
      this.cutFrom = sending;
      this.current = Math.max(this.floor, sending * this.decrease);
      this.epoch++;
    }
    if (retryAfterMs !== undefined && retryAfterMs > 0) this.pause(retryAfterMs);
  }

  /** Holds back every request for `ms` (a Retry-After the platform sent, with a 429 or a 503). */
  pause(ms: number): void {
    const now = this.options.clock();
    if (this.pausedUntil <= now) this.resumedAt = Math.max(this.resumedAt, this.pausedUntil);
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
  }

  private record(at: number): void {
    if (this.recent.length === RECENT) this.recent.shift();
    this.recent.push(at);
  }

  /**
   * Requests/s sent lately: the recent grants since the last pause ended, over the time from the
   * oldest of them to now (so a burst of simultaneous sends counts over the round trip it took).
   */
  private measured(): number {
    const now = this.options.clock();
    const since = Math.max(this.resumedAt, this.pausedUntil <= now ? this.pausedUntil : -Infinity);
    let i = 0;
    while (i < this.recent.length && this.recent[i]! < since) i++;
    const count = this.recent.length - i;
    if (count === 0) return this.floor;
    return (count * 1000) / Math.max(1, now - this.recent[i]!);
  }
}
