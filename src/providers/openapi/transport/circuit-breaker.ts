import { TendError } from '../../../core/index.js';
import type { Clock } from './timing.js';

/** When a circuit opens and how long it stays open. */
export interface CircuitBreakerOptions {
  /** What is behind the circuit, as shown in messages (a redacted base URL). */
  readonly target: string;
  /** Consecutive failures that open the circuit (default 5); 0 never opens it. */
  readonly threshold?: number;
  /** The first cool-down in milliseconds (default 5000); it doubles at each re-opening. */
  readonly cooldownMs?: number;
  /** The longest cool-down in milliseconds (default 60000). */
  readonly maxCooldownMs?: number;
  /** Durations (monotonic milliseconds). */
  readonly clock: Clock;
  /** Times shown to people (Unix milliseconds). */
  readonly wallClock: Clock;
}

/** The three states of a circuit. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** What a circuit says about its platform. */
export interface CircuitReport {
  readonly state: CircuitState;
  /** When the state last changed (ISO time); absent while it never has. */
  readonly since?: string;
  /** The failure that opened the circuit or failed its probe; absent while closed. */
  readonly lastError?: string;
  /** When the next probe may go (ISO time), while open. */
  readonly probeAt?: string;
  /** Consecutive failures counted so far. */
  readonly failures: number;
}

/** An admitted attempt; hand it back with its outcome. */
export interface CircuitTicket {
  /** True for the one attempt let through to find out whether the platform is back. */
  readonly probe: boolean;
}

/**
 * Stops hammering a platform that is down. After `threshold` consecutive failures that say the
 * platform is down (connection refused or lost, timeouts, 5xx; never a 4xx or a 429, which are
 * answers from a platform that is up) the circuit opens: attempts fail at once with the retryable
 * TendError `platform.circuit_open` instead of reaching the platform. After the cool-down one
 * attempt goes through as a probe (half-open): its success closes the circuit, its failure opens
 * it again for twice as long (up to the longest cool-down). Any success, probe or not, closes it.
 */
export class CircuitBreaker {
  private readonly threshold: number;
  private readonly baseCooldown: number;
  private readonly maxCooldown: number;
  private state: 'closed' | 'open' = 'closed';
  private failures = 0;
  private cooldown: number;
  /** When it opened (monotonic) and at what wall time; meaningful while open. */
  private openedAt = 0;
  private openedWall = 0;
  /** Wall time of the last change, for `since`. */
  private changedWall: number | undefined;
  /** Wall time the platform was first considered down in this outage (re-openings keep it). */
  private downSince = 0;
  private lastError: string | undefined;
  private probing = false;

  constructor(private readonly options: CircuitBreakerOptions) {
    const threshold = options.threshold ?? 5;
    const cooldown = options.cooldownMs ?? 5_000;
    const maxCooldown = options.maxCooldownMs ?? 60_000;
    if (!Number.isSafeInteger(threshold) || threshold < 0) {
      throw badOption('circuitThreshold', 'an integer >= 0 (0 never opens the circuit)', threshold);
    }
    if (!(Number.isFinite(cooldown) && cooldown > 0)) {
      throw badOption('circuitCooldownMs', 'a number of milliseconds > 0', cooldown);
    }
    if (!(Number.isFinite(maxCooldown) && maxCooldown >= cooldown)) {
      throw badOption(
        'circuitMaxCooldownMs',
        `a number of milliseconds >= ${cooldown}`,
        maxCooldown,
      );
    }
    this.threshold = threshold;
    this.baseCooldown = cooldown;
    this.maxCooldown = maxCooldown;
    this.cooldown = cooldown;
  }

  /**
   * Throws `platform.circuit_open` when an attempt would not be admitted now; a cheap check before
   * waiting for a slot or the rate limiter, so that a caller facing a down platform fails at once.
   */
  check(what: string): void {
    if (this.state === 'open' && (this.probing || !this.cooledDown())) throw this.openError(what);
  }

  /** Admits one attempt (the probe, when the cool-down is over) or throws `platform.circuit_open`. */
  admit(what: string): CircuitTicket {
    if (this.state === 'closed') return { probe: false };
    if (this.probing || !this.cooledDown()) throw this.openError(what);
    this.probing = true;
    return { probe: true };
  }

  /** The platform answered (anything but a 5xx): it is up. */
  succeeded(ticket: CircuitTicket): void {
    if (ticket.probe) this.probing = false;
    this.failures = 0;
    if (this.state === 'open') {
      this.state = 'closed';
      this.cooldown = this.baseCooldown;
      this.lastError = undefined;
      this.changedWall = this.options.wallClock();
    }
  }

  /** The attempt failed in a way that says the platform is down; `error` says how. */
  failed(ticket: CircuitTicket, error: string): void {
    this.failures++;
    if (ticket.probe) {
      this.probing = false;
      this.cooldown = Math.min(this.maxCooldown, this.cooldown * 2);
      this.open(error);
      return;
    }
    // Failures of attempts admitted before the circuit opened say nothing new about it.
    if (this.state === 'closed' && this.threshold > 0 && this.failures >= this.threshold) {
      this.open(error);
    }
  }

  /** The attempt ended without a verdict (the caller cancelled it): a probe may go again. */
  released(ticket: CircuitTicket): void {
    if (ticket.probe) this.probing = false;
  }

  /** The circuit's state as reported to people; `half-open` once a probe may go or is going. */
  report(): CircuitReport {
    const iso = (t: number) => new Date(t).toISOString();
    if (this.state === 'closed') {
      return {
        state: 'closed',
        failures: this.failures,
        ...(this.changedWall !== undefined ? { since: iso(this.changedWall) } : {}),
      };
    }
    const probeWall = this.openedWall + this.cooldown;
    const halfOpen = this.probing || this.cooledDown();
    return {
      state: halfOpen ? 'half-open' : 'open',
      since: iso(halfOpen ? probeWall : this.openedWall),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      ...(halfOpen ? {} : { probeAt: iso(probeWall) }),
      failures: this.failures,
    };
  }

  private open(error: string): void {
    if (this.state === 'closed') this.downSince = this.options.wallClock();
    this.state = 'open';
    this.lastError = error;
    this.openedAt = this.options.clock();
    this.openedWall = this.options.wallClock();
    this.changedWall = this.openedWall;
  }

  private cooledDown(): boolean {
    return this.options.clock() - this.openedAt >= this.cooldown;
  }

  private openError(what: string): TendError {
    const iso = (t: number) => new Date(t).toISOString();
    const remaining = Math.max(0, this.openedAt + this.cooldown - this.options.clock());
    const next = this.probing
      ? 'a probe request is checking whether it is back'
      : `Tend will probe it again at ${iso(this.openedWall + this.cooldown)}`;
    return new TendError(
      'platform.circuit_open',
      `${what}: not sent: the platform at ${this.options.target} is considered down since ${iso(this.downSince)} (${this.failures} failures in a row; last: ${this.lastError}); ${next}`,
      {
        retryable: true,
        retryAfterSeconds: Math.max(1, Math.ceil(remaining / 1000)),
        hint: 'nothing was sent; Tend tries again by itself once a probe succeeds. Check that the platform is up and reachable from here',
      },
    );
  }
}

function badOption(name: string, expected: string, got: unknown): TendError {
  return new TendError('http.bad_option', `${name} must be ${expected}, got ${String(got)}`, {
    phase: 'load',
  });
}
