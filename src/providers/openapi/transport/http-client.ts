import type { ProviderHealth, Redactor, RedirectPolicy } from '../../../core/index.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  displayUrl,
  fetchFollowingRedirects,
  formatBytes,
  readBoundedText,
  setKey,
  TendError,
  withUserAgent,
} from '../../../core/index.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { CircuitTicket } from './circuit-breaker.js';
import { encodeRequestBody } from './request-media.js';
import type { Permit } from './rate-limiter.js';
import { RateLimiter } from './rate-limiter.js';
import { Semaphore } from './semaphore.js';
import type { Clock, Sleep } from './timing.js';
import { realClock, realSleep, realWallClock } from './timing.js';

/** How to reach one API and how hard to push it. */
export interface HttpClientOptions {
  /** Base URL; request paths are appended to it (`http://host/api/v1` + `/volumes`). */
  readonly baseUrl: string;
  /** The resolved auth header. Its value is sent, never logged, never put in an error. */
  readonly auth?: { readonly header: string; readonly value: string };
  /** Per-attempt timeout in milliseconds (default 10000). */
  readonly timeoutMs?: number;
  /** Attempts per request, the first included (default 4). */
  readonly maxAttempts?: number;
  /** Backoff base in milliseconds (default 100): attempt n waits up to base·2ⁿ⁻¹. */
  readonly baseDelayMs?: number;
  /** Backoff cap in milliseconds (default 5000). */
  readonly maxDelayMs?: number;
  /** Longest Retry-After waited inside one call (default 30000); longer ones go back to the caller. */
  readonly maxRetryAfterMs?: number;
  /** Most requests in flight at once (default 8). */
  readonly concurrency?: number;
  /**
   * The most requests per second ever sent; 0 for no configured limit (default 0). The limit in
   * force adapts below it on 429s (see RateLimiter).
   */
  readonly rateLimit?: number;
  /** Consecutive "platform down" failures that open the circuit (default 5); 0 never opens it. */
  readonly circuitThreshold?: number;
  /** How long an opened circuit fails fast before a probe, in ms (default 5000); doubles per re-opening. */
  readonly circuitCooldownMs?: number;
  /** The longest cool-down, in ms (default 60000). */
  readonly circuitMaxCooldownMs?: number;
  /**
   * Which redirects are followed (default: at most 5, within the base URL's origin). The auth
   * header and request bodies never go to another origin, whatever the policy.
   */
  readonly redirects?: RedirectPolicy;
  /**
   * The most bytes of one answer read (default 16 MiB), error answers and each page of a list
   * included: counted as the body streams in; past it the connection is closed and the request
   * fails with `provider.response_too_large`.
   */
  readonly maxResponseBytes?: number;
  /** The provider's name, for messages that tell the user which setting to change. */
  readonly provider?: string;
  /** Sent as User-Agent on every request unless the request names its own (core `userAgent`). */
  readonly userAgent?: string;
  readonly fetch?: typeof fetch;
  /** Monotonic milliseconds, for every duration (default performance.now). */
  readonly clock?: Clock;
  /** Unix milliseconds, for the times health and errors show (default Date.now). */
  readonly wallClock?: Clock;
  readonly sleep?: Sleep;
  /** Uniform in [0, 1): the jitter source. */
  readonly random?: () => number;
  /** What a platform's error body passes through before it is quoted in an error message. */
  readonly redactor?: Pick<Redactor, 'value'>;
  /** Told about every attempt sent (metrics); must not throw. Default: nobody. */
  readonly observer?: HttpCallObserver;
}

/**
 * One attempt as an observer sees it: the method, the HTTP status (absent when no response came:
 * a timeout, a lost connection, a redirect not followed, an answer past maxResponseBytes: `error`
 * names which) and how long it took. Never a URL, a header or a body.
 */
export interface HttpCall {
  readonly method: string;
  readonly status?: number;
  readonly error?: 'timeout' | 'transport' | 'aborted' | 'redirect' | 'too_large';
  readonly ms: number;
}

/** Receives each attempt of an HTTP client (see `HttpClientOptions.observer`). */
export type HttpCallObserver = (call: HttpCall) => void;

/** The HTTP methods a resource type uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request. */
export interface HttpRequest {
  readonly method: HttpMethod;
  /** The path below the base URL, parameters already filled in. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Sent as JSON, or as a form when `contentType` is `application/x-www-form-urlencoded`. */
  readonly body?: unknown;
  /** Media type of the body (default `application/json`); it decides the encoding too. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout (long polls). */
  readonly timeoutMs?: number;
  /** True for a POST that changes nothing (a query): it is retried and timed out like a GET. */
  readonly safe?: boolean;
  /**
   * A mutation's last check (WriteContext.fence): called right before each attempt is sent; when it
   * throws, that attempt is not sent and the error is the request's.
   */
  readonly fence?: () => void;
}

/** A successful (2xx) response. */
export interface HttpResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, or the text when it is not JSON, or undefined when empty. */
  readonly body: unknown;
}

/** The client's view of its platform: ProviderHealth plus what it knows about the next steps. */
export interface HttpClientHealth extends ProviderHealth {
  /** While the circuit is open: when the next probe may go (ISO time). */
  readonly probeAt?: string;
  /** While a Retry-After holds every request back: until when (ISO time). */
  readonly pausedUntil?: string;
}

/**
 * A small JSON-over-HTTP client with retries, a concurrency bound, an adaptive rate limit and a
 * circuit breaker.
 */
export interface HttpClient {
  /**
   * Sends a request and returns a 2xx response; anything else is a TendError saying what happened.
   * Retries only what is safe to retry: reads, idempotent writes (PUT/PATCH/DELETE), and a POST that
   * the platform refused before acting (429/503) when it carries an Idempotency-Key. A write whose
   * outcome is unknown (timeout or lost connection after sending) is never resent: it fails with
   * `outcomeUnknown` so the journal can look the object up. While the circuit is open, it fails at
   * once with the retryable `platform.circuit_open`, having sent nothing.
   */
  request(req: HttpRequest): Promise<HttpResponse>;
  /** The circuit's state and the rate limit in force now. */
  health(): HttpClientHealth;
}

/** Connection errors that happen before a request is sent: retrying cannot cause a duplicate. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const REFUSAL_HINT = 'the platform refused the request; its reason is in the message';

/**
 * Creates a client; the concurrency bound, rate limit and circuit are per client, so one client
 * per endpoint.
 *
 * A concurrency slot is held from the moment a request is next to be sent (waiting for the rate
 * limiter or a shared Retry-After pause included) until its answer has been read. A request
 * waiting out a backoff between attempts holds none, so a failing request never starves others.
 * Holding the slot across the rate limiter's wait is deliberate: at most `concurrency` requests
 * reserve a send time, so a cut in the rate applies within `concurrency` requests.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const doFetch = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? realSleep;
  const clock = options.clock ?? realClock;
  const wallClock = options.wallClock ?? realWallClock;
  const random = options.random ?? Math.random;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const baseDelay = options.baseDelayMs ?? 100;
  const maxDelay = options.maxDelayMs ?? 5_000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 30_000;
  const slots = new Semaphore(options.concurrency ?? 8);
  const limiter = new RateLimiter({ ceiling: options.rateLimit ?? 0, clock, sleep });
  const base = options.baseUrl.replace(/\/+$/, '');
  const shownBase = displayUrl(base);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const circuit = new CircuitBreaker({
    target: shownBase,
    clock,
    wallClock,
    ...(options.circuitThreshold !== undefined ? { threshold: options.circuitThreshold } : {}),
    ...(options.circuitCooldownMs !== undefined ? { cooldownMs: options.circuitCooldownMs } : {}),
    ...(options.circuitMaxCooldownMs !== undefined
      ? { maxCooldownMs: options.circuitMaxCooldownMs }
      : {}),
  });
  if (options.auth && !isHeaderSafe(options.auth.value)) {
    // fetch would reject the header with a message that quotes the secret: refuse it here instead.
    throw new TendError(
      'http.bad_auth',
      `the auth value for header ${options.auth.header} contains line breaks or characters a header cannot carry; check the secret (a trailing newline in a secret file is a common cause)`,
      { phase: 'load' },
    );
  }

  const backoff = (attempt: number): number =>
    Math.floor(random() * Math.min(maxDelay, baseDelay * 2 ** (attempt - 1)));

  return {
    async request(req: HttpRequest): Promise<HttpResponse> {
      const what = `${req.method} ${req.path}`;
      const mutation = req.method !== 'GET' && !req.safe;
      const hasKey = Object.keys(req.headers ?? {}).some(
        (h) => h.toLowerCase() === 'idempotency-key',
      );
      // May a definite "not done" answer (429, 5xx) be retried? Reads and idempotent writes: yes.
      // A POST only with an idempotency key, which makes a second delivery harmless.
      const retryRefusals = !mutation || req.method !== 'POST' || hasKey;
      const url = buildUrl(base, req.path, req.query);
      const headers = withUserAgent(
        { accept: 'application/json', ...req.headers },
        options.userAgent,
      );
      if (req.body !== undefined) headers['content-type'] = req.contentType ?? 'application/json';
      if (options.auth) setKey(headers, options.auth.header, options.auth.value);
      const body =
        req.body === undefined ? undefined : await encodeRequestBody(req.body, req.contentType);

      for (let attempt = 1; ; attempt++) {
        const last = attempt >= maxAttempts;
        circuit.check(what);
        // A pause longer than this call may wait (another request's Retry-After) goes back now.
        const paused = limiter.pausedFor();
        if (paused > maxRetryAfter) throw pausedError(what, paused);
        let outcome: Attempt;
        let permit: Permit;
        let ticket: CircuitTicket;
        try {
          await slots.acquire(req.signal);
        } catch {
          throw aborted(what, false);
        }
        try {
          try {
            permit = await limiter.take(req.signal);
          } catch {
            // The rate limiter's wait throws only when the caller aborted.
            throw aborted(what, false);
          }
          // The last moment before sending: a writer that may have lost its lease sends nothing.
          if (mutation) req.fence?.();
          // The circuit may have opened while this request waited: admit() fails fast then.
          ticket = circuit.admit(what);
          const started = clock();
          outcome = await send(doFetch, url, {
            what,
            method: req.method,
            headers,
            body,
            callerSignal: req.signal,
            timeoutMs: req.timeoutMs ?? timeoutMs,
            redirects: options.redirects,
            credentialHeaders: options.auth ? [options.auth.header] : [],
            maxResponseBytes,
          });
          reportAttempt(options.observer, req.method, outcome, clock() - started);
        } finally {
          slots.release();
        }

        if (outcome.kind === 'response') {
          const { response, body: parsed } = outcome;
          const status = response.status;
          const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
          if (status < 500) circuit.succeeded(ticket);
          if (status === 429) limiter.throttled(permit, retryAfterMs(retryAfter));
          else if (status < 500) limiter.succeeded(permit);
          if (status >= 200 && status < 300) {
            return { status, headers: response.headers, body: parsed };
          }
          const err = httpError(
            what,
            status,
            options.redactor ? options.redactor.value(parsed) : parsed,
            retryAfter,
            req.method === 'POST' && mutation && !hasKey,
          );
          if (status >= 500) {
            circuit.failed(ticket, err.message);
            // A 503's Retry-After is the platform asking every client to come back later.
            if (status === 503 && retryAfter !== undefined) limiter.pause(retryAfter * 1000);
          }
          const transient = status === 429 || status >= 500;
          if (!transient || !retryRefusals || last || err.outcomeUnknown) throw err;
          const honoured = (status === 429 || status === 503) && retryAfter !== undefined;
          if (honoured && retryAfter * 1000 > maxRetryAfter) throw err;
          failFast(circuit, what, err);
          // An honoured Retry-After is waited out in the rate limiter, by every request alike.
          if (!honoured) await pause(sleep, backoff(attempt), req.signal, what);
          continue;
        }

        if (outcome.kind === 'too_large') {
          // The platform answered: it is up, and asking again would bring the same flood.
          circuit.succeeded(ticket);
          limiter.succeeded(permit);
          throw tooLarge(what, outcome, maxResponseBytes, options.provider, mutation);
        }
        if (outcome.kind === 'refused') {
          // The platform answered (with a redirect Tend does not follow): it is up, and retrying
          // would meet the same redirect.
          circuit.succeeded(ticket);
          limiter.succeeded(permit);
          throw refusedRedirect(outcome.error, mutation);
        }
        if (outcome.kind === 'aborted') {
          circuit.released(ticket);
          throw aborted(what, mutation);
        }
        const sent = outcome.kind === 'timeout' || !NOT_SENT.has(outcome.code);
        const how =
          outcome.kind === 'timeout'
            ? `no response within ${req.timeoutMs ?? timeoutMs} ms`
            : NOT_SENT.has(outcome.code)
              ? `cannot connect (${outcome.code})`
              : `the connection was lost (${outcome.code})`;
        circuit.failed(ticket, `${what}: ${how}`);
        if (mutation && sent) {
          throw new TendError(
            'http.outcome_unknown',
            `${what}: ${how} after the request was sent to ${shownBase}; it may have taken effect, so it is not resent blindly`,
            {
              retryable: true,
              outcomeUnknown: true,
              hint: 'the journal resolves this by looking the object up before trying again',
            },
          );
        }
        if (last)
          throw transportError(what, outcome, attempt, shownBase, req.timeoutMs ?? timeoutMs);
        failFast(circuit, what, undefined);
        await pause(sleep, backoff(attempt), req.signal, what);
      }
    },

    health(): HttpClientHealth {
      const c = circuit.report();
      const paused = limiter.pausedFor();
      return {
        circuit: c.state,
        ...(c.since !== undefined ? { since: c.since } : {}),
        ...(c.lastError !== undefined ? { lastError: c.lastError } : {}),
        rateLimit: limiter.rate,
        ...(c.probeAt !== undefined ? { probeAt: c.probeAt } : {}),
        ...(paused > 0 ? { pausedUntil: new Date(wallClock() + paused).toISOString() } : {}),
      };
    },
  };
}

/** Tells the observer about one attempt (an observer that throws is not the request's problem). */
function reportAttempt(
  observer: HttpCallObserver | undefined,
  method: string,
  outcome: Attempt,
  ms: number,
): void {
  if (!observer) return;
  const call: HttpCall =
    outcome.kind === 'response'
      ? { method, status: outcome.response.status, ms }
      : outcome.kind === 'too_large'
        ? { method, error: 'too_large', ms }
        : outcome.kind === 'refused'
          ? { method, error: 'redirect', ms }
          : {
              method,
              error:
                outcome.kind === 'timeout'
                  ? 'timeout'
                  : outcome.kind === 'aborted'
                    ? 'aborted'
                    : 'transport',
              ms,
            };
  try {
    observer(call);
  } catch {
    // Metrics must never fail a request.
  }
}

/** Before waiting to retry: when the circuit has opened meanwhile, the retry would fail anyway. */
function failFast(circuit: CircuitBreaker, what: string, cause: TendError | undefined): void {
  try {
    circuit.check(what);
  } catch (e) {
    if (cause && e instanceof TendError) {
      throw new TendError(e.code, e.message, {
        retryable: e.retryable,
        ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
        ...(e.hint !== undefined ? { hint: e.hint } : {}),
        cause,
      });
    }
    throw e;
  }
}

/** Waits before a retry; a caller that aborts meanwhile gets `http.aborted` (nothing in flight). */
async function pause(
  sleep: Sleep,
  ms: number,
  signal: AbortSignal | undefined,
  what: string,
): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch {
    throw aborted(what, false);
  }
}

/** An answer whose body passed the limit: the connection was closed without reading the rest. */
interface TooLarge {
  readonly kind: 'too_large';
  readonly status: number;
  /** The Content-Length that gave it away (nothing was read then). */
  readonly declared?: number;
  readonly received: number;
}

type Attempt =
  | { readonly kind: 'response'; readonly response: Response; readonly body: unknown }
  | { readonly kind: 'refused'; readonly error: TendError }
  | TooLarge
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'network'; readonly code: string };

/**
 * One attempt, redirects included (followed by `fetchFollowingRedirects`: within the origin unless
 * the policy allows others, never with credentials or a body to another origin); never throws:
 * every way it can end is a value.
 */
async function send(
  doFetch: typeof fetch,
  url: string,
  init: {
    what: string;
    method: string;
    headers: Record<string, string>;
    body: string | undefined;
    callerSignal: AbortSignal | undefined;
    timeoutMs: number;
    redirects: RedirectPolicy | undefined;
    credentialHeaders: readonly string[];
    maxResponseBytes: number;
  },
): Promise<Attempt> {
  const timeout = AbortSignal.timeout(init.timeoutMs);
  // Aborted when an answer passes the limit: the connection is closed, the rest never downloaded.
  const flood = new AbortController();
  const signal = AbortSignal.any([
    timeout,
    flood.signal,
    ...(init.callerSignal ? [init.callerSignal] : []),
  ]);
  try {
    const { response } = await fetchFollowingRedirects(
      doFetch,
      url,
      {
        method: init.method,
        headers: init.headers,
        ...(init.body !== undefined ? { body: init.body } : {}),
        signal,
      },
      {
        ...init.redirects,
        what: init.what,
        credentialHeaders: init.credentialHeaders,
        optIn: "the provider's allowRedirectsTo",
        urlSetting: "the provider's endpoint",
      },
    );
    // The body is read under the same signal: a response that stalls midway is a timeout too. Its
    // bytes are counted as they come (never buffered first and measured after).
    const read = await readBoundedText(response, init.maxResponseBytes, () => flood.abort());
    if (!read.ok) {
      return {
        kind: 'too_large',
        status: response.status,
        received: read.received,
        ...(read.declared !== undefined ? { declared: read.declared } : {}),
      };
    }
    return { kind: 'response', response, body: parseBody(read.text) };
  } catch (e) {
    if (e instanceof TendError) return { kind: 'refused', error: e };
    if (init.callerSignal?.aborted) return { kind: 'aborted' };
    if (timeout.aborted) return { kind: 'timeout' };
    return { kind: 'network', code: networkCode(e) };
  }
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The platform's own words about an error: its code and message, verbatim. */
export function platformReason(body: unknown): { code?: string; message?: string } {
  if (typeof body === 'string') {
    const text = body.trim();
    return text ? { message: text.length > 500 ? `${text.slice(0, 500)}…` : text } : {};
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const b = body as Record<string, unknown>;
  const nested =
    b['error'] !== null && typeof b['error'] === 'object'
      ? (b['error'] as Record<string, unknown>)
      : undefined;
  const message = [b['message'], b['detail'], b['title'], b['error'], nested?.['message']].find(
    (m): m is string => typeof m === 'string' && m !== '',
  );
  const code = [b['code'], nested?.['code']].find((c): c is string => typeof c === 'string');
  return { ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}) };
}

/** The one place HTTP statuses become TendErrors. */
function httpError(
  what: string,
  status: number,
  body: unknown,
  retryAfter: number | undefined,
  unkeyedPost: boolean,
): TendError {
  const reason = platformReason(body);
  const label = reason.code ? `${status} ${reason.code}` : `${status}`;
  const said = reason.message ? `: ${reason.message}` : '';
  const base = { status, ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}) };
  if (status === 404) {
    return new TendError('http.not_found', `${what}: not found (${label})${said}`, base);
  }
  if (status === 409 || status === 422) {
    return new TendError(
      'platform.refused',
      `${what} was refused by the platform (${label})${said}`,
      { ...base, hint: REFUSAL_HINT },
    );
  }
  if (status === 400) {
    return new TendError(
      'platform.invalid',
      `${what} was rejected as invalid (${label})${said}; check the declared fields against the type's schema`,
      base,
    );
  }
  if (status === 401 || status === 403) {
    return new TendError(
      'platform.unauthorized',
      `${what}: not authorized (${label})${said}; check the provider's auth header and the secret it reads`,
      {
        ...base,
        hint: 'set auth: { header, fromEnv | fromFile } on the Provider and make sure the secret is valid for this endpoint',
      },
    );
  }
  if (status === 429) {
    const wait = retryAfter !== undefined ? `; retry after ${retryAfter}s` : '';
    return new TendError(
      'platform.throttled',
      `${what}: throttled by the platform (${label})${said}${wait}`,
      { ...base, retryable: true },
    );
  }
  if (status >= 500) {
    // 500/502/504 may come after the platform acted; without an idempotency key a POST that got one
    // is treated as possibly done, so the journal looks before it creates again.
    const mayHaveActed = unkeyedPost && status !== 503;
    return new TendError(
      'platform.unavailable',
      `${what}: the platform failed (${label})${said}${mayHaveActed ? '; it may have acted before failing' : ''}`,
      { ...base, retryable: true, outcomeUnknown: mayHaveActed },
    );
  }
  return new TendError('platform.error', `${what}: unexpected response (${label})${said}`, base);
}

function transportError(
  what: string,
  outcome: Attempt,
  attempts: number,
  shownBase: string,
  timeoutMs: number,
): TendError {
  const tries = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
  if (outcome.kind === 'timeout') {
    return new TendError(
      'http.timeout',
      `${what}: no response within ${timeoutMs} ms (${tries}); check the endpoint or raise the provider's timeoutMs`,
      { retryable: true },
    );
  }
  const code = outcome.kind === 'network' ? outcome.code : 'unknown';
  if (NOT_SENT.has(code)) {
    return new TendError(
      'http.unreachable',
      `${what}: cannot connect to ${shownBase} (${code}, ${tries}); check the provider's endpoint and that the platform is up`,
      { retryable: true },
    );
  }
  return new TendError(
    'http.connection_lost',
    `${what}: the connection to ${shownBase} was lost (${code}, ${tries})`,
    { retryable: true },
  );
}

/**
 * A redirect Tend did not follow. After a 307/308 the platform has not acted (it asked for the
 * request elsewhere); after a 301/302/303 to a write it may have (a 303 is how some platforms say
 * "done, see there"), so the journal looks the object up before anything is sent again.
 */
function refusedRedirect(e: TendError, mutation: boolean): TendError {
  const mayHaveActed = mutation && (e.status === 301 || e.status === 302 || e.status === 303);
  if (!mayHaveActed) return e;
  return new TendError(e.code, `${e.message}; the platform may have acted before redirecting`, {
    outcomeUnknown: true,
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.hint !== undefined ? { hint: e.hint } : {}),
  });
}

/**
 * An answer larger than `maxResponseBytes`. Not retried: the same request would bring the same
 * flood. After a write the platform may have acted (its answer was never read), so the journal
 * looks the object up before sending anything again.
 */
function tooLarge(
  what: string,
  outcome: TooLarge,
  limit: number,
  provider: string | undefined,
  mutation: boolean,
): TendError {
  const who = provider !== undefined ? `provider ${provider}: ` : '';
  const shownLimit = limit < 1024 ? formatBytes(limit) : `${formatBytes(limit)} (${limit} bytes)`;
  const how =
    outcome.declared !== undefined
      ? `the platform announced ${formatBytes(outcome.declared)} (Content-Length); not read`
      : `reading stopped after ${formatBytes(outcome.received)}`;
  return new TendError(
    'provider.response_too_large',
    `${who}${what}: the answer (status ${outcome.status}) is larger than maxResponseBytes, ${shownLimit}: ${how} and the connection was closed${mutation ? '; the platform may have acted' : ''}`,
    {
      status: outcome.status,
      outcomeUnknown: mutation,
      hint: `raise maxResponseBytes on ${provider !== undefined ? `provider ${provider}` : 'the Provider'} if this answer is legitimate; otherwise the platform is misbehaving`,
    },
  );
}

function aborted(what: string, inFlightMutation: boolean): TendError {
  return new TendError(
    'http.aborted',
    inFlightMutation
      ? `${what}: cancelled after the request was sent; it may have taken effect`
      : `${what}: cancelled`,
    { outcomeUnknown: inFlightMutation },
  );
}

function networkCode(e: unknown): string {
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  const own = (e as { code?: unknown } | undefined)?.code;
  return typeof own === 'string' ? own : 'network error';
}

function retryAfterMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1000;
}

function pausedError(what: string, pausedMs: number): TendError {
  const seconds = Math.ceil(pausedMs / 1000);
  return new TendError(
    'platform.throttled',
    `${what}: not sent: the platform asked for a pause of ${seconds}s more before further requests (Retry-After)`,
    { retryable: true, retryAfterSeconds: seconds },
  );
}

/** Retry-After in seconds (the delta-seconds form); undefined when absent or a date. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}

function buildUrl(
  base: string,
  path: string,
  query: Readonly<Record<string, string | number | undefined>> | undefined,
): string {
  const url = base + (path.startsWith('/') ? path : `/${path}`);
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${url}?${qs}` : url;
}

/** True when a value can be sent as an HTTP header value as it is. */
export function isHeaderSafe(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}
