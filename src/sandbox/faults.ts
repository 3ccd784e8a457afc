import { SandboxError } from './errors.js';

/** The faults the sandbox injects into its API routes. All rates are probabilities in 0..1. */
export interface FaultSettings {
  /** Seeds the random draws, so the same requests in the same order meet the same faults. */
  readonly seed: number;
  /** Delay before handling a request. */
  readonly latencyMs: number;
  /** Up to this many more milliseconds of delay, drawn per request. */
  readonly latencyJitterMs: number;
  /** Chance of answering 500 or 503 before doing anything. */
  readonly errorRate: number;
  /** Chance of answering 429 with Retry-After before doing anything. */
  readonly rate429: number;
  /** The Retry-After of injected 429s, in seconds. */
  readonly retryAfterSeconds: number;
  /**
   * Chance, for a mutation, of committing it and then never answering. Meant for HTTP (the client
   * times out; close() cuts the socket): in-process, `app.request()` would never resolve.
   */
  readonly timeoutAfterSuccessRate: number;
  /** How long a created object stays missing from reads. Not restricted by `methods`. */
  readonly eventualConsistencyMs: number;
  /** Requests per second allowed (a global token bucket with burst = rateLimit); 0 = unlimited. */
  readonly rateLimit: number;
  /** When set, only requests with these HTTP methods meet faults (the rate limit included). */
  readonly methods: readonly string[] | null;
}

/** Settings that inject nothing. */
export const NO_FAULTS: FaultSettings = {
  seed: 1,
  latencyMs: 0,
  latencyJitterMs: 0,
  errorRate: 0,
  rate429: 0,
  retryAfterSeconds: 1,
  timeoutAfterSuccessRate: 0,
  eventualConsistencyMs: 0,
  rateLimit: 0,
  methods: null,
};

type Rule = (value: unknown) => string | undefined;

const rate: Rule = (v) =>
  typeof v === 'number' && v >= 0 && v <= 1 ? undefined : 'must be a number between 0 and 1';
const nonNegative: Rule = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? undefined : 'must be a number >= 0';
const nonNegativeInteger: Rule = (v) =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? undefined : 'must be an integer >= 0';
const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

const RULES: Record<keyof FaultSettings, Rule> = {
  seed: (v) => (Number.isSafeInteger(v) ? undefined : 'must be an integer'),
  latencyMs: nonNegative,
  latencyJitterMs: nonNegative,
  errorRate: rate,
  rate429: rate,
  retryAfterSeconds: nonNegativeInteger,
  timeoutAfterSuccessRate: rate,
  eventualConsistencyMs: nonNegative,
  rateLimit: nonNegative,
  methods: (v) =>
    v === null ||
    (Array.isArray(v) &&
      v.every((m) => typeof m === 'string' && HTTP_METHODS.includes(m.toUpperCase())))
      ? undefined
      : `must list HTTP methods from ${HTTP_METHODS.join(', ')} (or be null for all)`,
};

/**
 * Merges a partial fault setting into `base`, refusing unknown names and bad values with a 400
 * `invalid` SandboxError that names the setting.
 */
export function mergeFaults(base: FaultSettings, partial: unknown): FaultSettings {
  if (partial === null || typeof partial !== 'object' || Array.isArray(partial)) {
    throw new SandboxError(400, 'invalid', 'fault settings must be a JSON object');
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [name, value] of Object.entries(partial)) {
    const rule = RULES[name as keyof FaultSettings] as Rule | undefined;
    if (!rule) {
      throw new SandboxError(
        400,
        'invalid',
        `unknown fault setting "${name}" (known: ${Object.keys(RULES).join(', ')})`,
        name,
      );
    }
    const problem = rule(value);
    if (problem) throw new SandboxError(400, 'invalid', `${name} ${problem}`, name);
    merged[name] = Array.isArray(value) ? value.map((m: string) => m.toUpperCase()) : value;
  }
  return merged as unknown as FaultSettings;
}

/** A seeded pseudo-random generator (mulberry32): the same seed gives the same numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A token bucket refilling `rate` tokens per second of the given clock, holding at most `rate` (but
 * at least one, so that a rate below 1 still lets a request through now and then). Starts full.
 */
export class TokenBucket {
  private readonly capacity: number;
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly now: () => number,
  ) {
    this.capacity = Math.max(1, rate);
    this.tokens = this.capacity;
    this.last = now();
  }

  /** Takes one token; when there is none, says how many whole seconds until there is. */
  take(): { ok: true } | { ok: false; retryAfterSeconds: number } {
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - this.tokens) / this.rate)) };
  }
}

/** The kinds of fault the sandbox counts in its stats. */
export type FaultKind = 'latency' | 'error' | 'rate429' | 'rateLimit' | 'timeoutAfterSuccess';

/** What to do with one API request, decided when it arrives. */
export type FaultDecision =
  | { readonly kind: 'proceed'; readonly delayMs: number; readonly hangAfterCommit: boolean }
  | {
      readonly kind: 'reject';
      readonly delayMs: number;
      readonly error: SandboxError;
      readonly retryAfterSeconds?: number;
    };

/** Decides, deterministically from the seed and the order of requests, which faults each request meets. */
export class FaultInjector {
  private settingsNow: FaultSettings;
  private random: () => number;
  private bucket: TokenBucket | undefined;
  /** How many faults of each kind were injected. */
  readonly counts: Record<FaultKind, number> = {
    latency: 0,
    error: 0,
    rate429: 0,
    rateLimit: 0,
    timeoutAfterSuccess: 0,
  };

  constructor(
    settings: FaultSettings,
    private readonly now: () => number,
  ) {
    this.settingsNow = settings;
    this.random = mulberry32(settings.seed);
    this.bucket = settings.rateLimit > 0 ? new TokenBucket(settings.rateLimit, now) : undefined;
  }

  /** The settings in force. */
  get settings(): FaultSettings {
    return this.settingsNow;
  }

  /** Replaces the settings; a new seed restarts the draws, a new rate limit starts a full bucket. */
  set(settings: FaultSettings): void {
    const old = this.settingsNow;
    this.settingsNow = settings;
    if (settings.seed !== old.seed) this.random = mulberry32(settings.seed);
    if (settings.rateLimit !== old.rateLimit) {
      this.bucket =
        settings.rateLimit > 0 ? new TokenBucket(settings.rateLimit, this.now) : undefined;
    }
  }

  /** Back to `settings` as if freshly created: draws restart from the seed, the bucket is full. */
  reset(settings: FaultSettings): void {
    this.settingsNow = settings;
    this.random = mulberry32(settings.seed);
    this.bucket =
      settings.rateLimit > 0 ? new TokenBucket(settings.rateLimit, this.now) : undefined;
    for (const kind of Object.keys(this.counts) as FaultKind[]) this.counts[kind] = 0;
  }

  /** Decides the faults of one API request (`mutation`: a create, update or delete). */
  decide(method: string, mutation: boolean): FaultDecision {
    const s = this.settingsNow;
    if (s.methods && !s.methods.includes(method.toUpperCase())) {
      return { kind: 'proceed', delayMs: 0, hangAfterCommit: false };
    }
    if (this.bucket) {
      const taken = this.bucket.take();
      if (!taken.ok) {
        this.counts.rateLimit++;
        return {
          kind: 'reject',
          delayMs: 0,
          retryAfterSeconds: taken.retryAfterSeconds,
          error: new SandboxError(
            429,
            'rate_limited',
            `rate limit of ${s.rateLimit} requests per second exceeded: retry after ${taken.retryAfterSeconds}s`,
          ),
        };
      }
    }
    const jitter = s.latencyJitterMs > 0 ? Math.floor(this.random() * (s.latencyJitterMs + 1)) : 0;
    const delayMs = s.latencyMs + jitter;
    if (delayMs > 0) this.counts.latency++;
    if (s.errorRate > 0 && this.random() < s.errorRate) {
      this.counts.error++;
      const error =
        this.random() < 0.5
          ? new SandboxError(500, 'internal', 'injected fault: internal error, safe to retry')
          : new SandboxError(
              503,
              'unavailable',
              'injected fault: service unavailable, safe to retry',
            );
      return { kind: 'reject', delayMs, error };
    }
    if (s.rate429 > 0 && this.random() < s.rate429) {
      this.counts.rate429++;
      return {
        kind: 'reject',
        delayMs,
        retryAfterSeconds: s.retryAfterSeconds,
        error: new SandboxError(
          429,
          'rate_limited',
          `injected fault: too many requests, retry after ${s.retryAfterSeconds}s`,
        ),
      };
    }
    const hangAfterCommit =
      mutation && s.timeoutAfterSuccessRate > 0 && this.random() < s.timeoutAfterSuccessRate;
    return { kind: 'proceed', delayMs, hangAfterCommit };
  }
}
