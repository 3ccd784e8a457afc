import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import type { HttpClientOptions } from './http-client.js';
import { createHttpClient, platformReason } from './http-client.js';
import type { VirtualTime } from './timing.js';
import { createVirtualTime } from './timing.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse, n: number) => void;

/** A real HTTP server whose behaviour each test sets; it records every request. */
let handler: Handler = (_req, res) => res.end();
let seen: Seen[] = [];
let inFlight = 0;
let maxInFlight = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const s: Seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    };
    seen.push(s);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    handler(s, res, seen.length);
  });
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen = [];
  inFlight = 0;
  maxInFlight = 0;
});

const json = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) =>
  res
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify(body));

/** Answers each request in turn with the next status; the last one repeats. */
const statuses =
  (...list: [number, unknown?, Record<string, string>?][]): Handler =>
  (_req, res, n) => {
    const [status, body, headers] = list[Math.min(n, list.length) - 1]!;
    if (body === undefined) res.writeHead(status, headers).end();
    else json(res, status, body, headers);
  };

/** A sleep that records what it was asked to wait and returns at once. */
function fakeSleep() {
  const delays: number[] = [];
  return { delays, sleep: (ms: number) => (delays.push(ms), Promise.resolve()) };
}

function client(extra: Partial<HttpClientOptions> = {}) {
  const s = fakeSleep();
  const c = createHttpClient({ baseUrl: base, sleep: s.sleep, random: () => 0.5, ...extra });
  return { c, delays: s.delays };
}

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected the request to fail');
}

describe('http client', () => {
  it('sends JSON with auth to base URL + path and returns the parsed body', async () => {
    handler = (req, res) => json(res, 201, { echo: JSON.parse(req.body) });
    const { c } = client({ auth: { header: 'X-API-Key', value: 'k-secret' } });
    const r = await c.request({
      method: 'POST',
      path: '/volumes',
      body: { size: 1 },
      query: { a: 1, b: undefined },
    });
    expect(r).toMatchObject({ status: 201, body: { echo: { size: 1 } } });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/api/volumes?a=1' });
    expect(seen[0]!.headers).toMatchObject({
      'x-api-key': 'k-secret',
      'content-type': 'application/json',
      accept: 'application/json',
    });
  });

  it('sends a form-encoded body as a form, brackets for nesting, and reads the JSON answer', async () => {
    handler = (req, res) => json(res, 200, { id: 'prod_1', echo: req.body });
    const { c } = client();
    const r = await c.request({
      method: 'POST',
      path: '/v1/products',
      body: { name: 'A & B', metadata: { 'tend.workspace': 'w' }, images: ['x'] },
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen[0]!.body).toBe('name=A%20%26%20B&metadata[tend.workspace]=w&images[0]=x');
    expect(r.body).toMatchObject({ id: 'prod_1' });
    expect(new URLSearchParams(seen[0]!.body).get('metadata[tend.workspace]')).toBe('w');
  });

  it('refuses a form body it cannot encode, sending nothing', async () => {
    const { c } = client();
    const e = await failure(
      c.request({
        method: 'POST',
        path: '/v1/products',
        body: { metadata: { 'a[b]': 'x' } },
        contentType: 'application/x-www-form-urlencoded',
      }),
    );
    expect(e.code).toBe('provider.bad_form_body');
    expect(e.message).toBe(
      'the field metadata[a[b]] cannot be sent in a form: a key holding [ or ] would be read as nesting; rename the key',
    );
    expect(seen).toHaveLength(0);
  });

  it('returns undefined for an empty body and text for a non-JSON one', async () => {
    handler = statuses([204]);
    const { c } = client();
    expect((await c.request({ method: 'DELETE', path: '/v/1' })).body).toBeUndefined();
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    expect((await c.request({ method: 'GET', path: '/v' })).body).toBe('hello');
  });

  it('retries a GET on 5xx with exponential backoff and full jitter', async () => {
    handler = statuses([500, { message: 'boom' }], [502], [503], [200, { ok: true }]);
    const { c, delays } = client();
    const r = await c.request({ method: 'GET', path: '/volumes' });
    expect(r.body).toEqual({ ok: true });
    expect(seen).toHaveLength(4);
    // random 0.5 × min(cap, 100·2ⁿ⁻¹)
    expect(delays).toEqual([50, 100, 200]);
  });

  it('caps the backoff', async () => {
    handler = statuses([503], [503], [503], [200, {}]);
    const { c, delays } = client({ random: () => 0.99, baseDelayMs: 100, maxDelayMs: 150 });
    await c.request({ method: 'GET', path: '/volumes' });
    expect(delays).toEqual([99, 148, 148]);
  });

  it('gives up after maxAttempts with a retryable error naming method and path', async () => {
    handler = statuses([503, { code: 'unavailable', message: 'try later' }]);
    const { c, delays } = client();
    const e = await failure(c.request({ method: 'GET', path: '/volumes' }));
    expect(seen).toHaveLength(4);
    expect(delays).toHaveLength(3);
    expect(e).toMatchObject({
      code: 'platform.unavailable',
      retryable: true,
      outcomeUnknown: false,
      status: 503,
    });
    expect(e.message).toBe('GET /volumes: the platform failed (503 unavailable): try later');
  });

  it('returns a Retry-After longer than it may wait to the caller', async () => {
    handler = statuses([429, { message: 'slow down' }, { 'retry-after': '120' }]);
    const { c, delays } = client();
    const e = await failure(c.request({ method: 'GET', path: '/volumes' }));
    expect(seen).toHaveLength(1);
    expect(delays).toEqual([]);
    expect(e).toMatchObject({
      code: 'platform.throttled',
      retryable: true,
      retryAfterSeconds: 120,
    });
    expect(e.message).toBe(
      'GET /volumes: throttled by the platform (429): slow down; retry after 120s',
    );
  });

  it('does not retry a POST without an idempotency key on 503', async () => {
    handler = statuses([503, { message: 'busy' }], [201, {}]);
    const { c } = client();
    const e = await failure(c.request({ method: 'POST', path: '/volumes', body: {} }));
    expect(seen).toHaveLength(1);
    expect(e).toMatchObject({
      code: 'platform.unavailable',
      retryable: true,
      outcomeUnknown: false,
    });
  });

  it('does not retry a POST without an idempotency key on 429', async () => {
    handler = statuses([429, undefined, { 'retry-after': '1' }], [201, {}]);
    const { c } = client();
    const e = await failure(c.request({ method: 'POST', path: '/volumes', body: {} }));
    expect(seen).toHaveLength(1);
    expect(e).toMatchObject({ code: 'platform.throttled', retryable: true, retryAfterSeconds: 1 });
  });

  it('treats a 500 to an unkeyed POST as possibly done', async () => {
    handler = statuses([500, { message: 'oops' }]);
    const { c } = client();
    const e = await failure(c.request({ method: 'POST', path: '/volumes', body: {} }));
    expect(seen).toHaveLength(1);
    expect(e).toMatchObject({
      code: 'platform.unavailable',
      retryable: true,
      outcomeUnknown: true,
    });
    expect(e.message).toBe(
      'POST /volumes: the platform failed (500): oops; it may have acted before failing',
    );
  });

  it('retries a POST with an idempotency key, sending the same key', async () => {
    handler = statuses([503], [500], [201, { id: 'v-1' }]);
    const { c } = client();
    const r = await c.request({
      method: 'POST',
      path: '/volumes',
      body: {},
      headers: { 'Idempotency-Key': 'op-1' },
    });
    expect(r.body).toEqual({ id: 'v-1' });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['op-1', 'op-1', 'op-1']);
  });

  it.each(['PATCH', 'PUT', 'DELETE'] as const)(
    'retries an idempotent %s on 429/5xx',
    async (method) => {
      handler = statuses([429], [500], [204]);
      const { c } = client();
      await c.request({
        method,
        path: '/volumes/v-1',
        ...(method === 'DELETE' ? {} : { body: {} }),
      });
      expect(seen).toHaveLength(3);
    },
  );

  it('passes the fence before every attempt of a mutation, and sends nothing once it throws', async () => {
    handler = statuses([503], [500], [201, { id: 'v-1' }]);
    const { c } = client();
    let checks = 0;
    const fence = () => {
      checks++;
      // The writer learns it may have lost its lease between the second and the third attempt.
      if (checks === 3) {
        throw new TendError('store.lease-lost', 'not sent: the lease may be lost', {
          phase: 'lease',
        });
      }
    };
    const err = await failure(
      c.request({
        method: 'POST',
        path: '/volumes',
        body: {},
        headers: { 'Idempotency-Key': 'op-1' },
        fence,
      }),
    );
    expect(err.code).toBe('store.lease-lost');
    expect(checks).toBe(3);
    // Two attempts went out before the fence closed; the third was never sent.
    expect(seen).toHaveLength(2);
  });

  it('sends nothing when the fence throws before the first attempt', async () => {
    handler = statuses([204]);
    const { c } = client();
    const fence = () => {
      throw new TendError('store.lease-lost', 'not sent', { phase: 'lease' });
    };
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const err = await failure(c.request({ method, path: '/volumes/v-1', body: {}, fence }));
      expect(err.code).toBe('store.lease-lost');
      expect(err.outcomeUnknown).toBeFalsy();
    }
    expect(seen).toHaveLength(0);
    // The slot was given back: the client still sends.
    await c.request({ method: 'DELETE', path: '/volumes/v-1' });
    expect(seen).toHaveLength(1);
  });

  it('does not pass the fence for reads (a GET or a safe POST)', async () => {
    handler = statuses([200, {}]);
    const { c } = client();
    const fence = () => {
      throw new Error('a read must not be fenced');
    };
    await c.request({ method: 'GET', path: '/volumes', fence });
    await c.request({ method: 'POST', path: '/query', body: {}, safe: true, fence });
    expect(seen).toHaveLength(2);
  });

  it('fails a POST that times out with outcomeUnknown and never resends it', async () => {
    handler = () => {}; // never answers
    const { c } = client({ timeoutMs: 50 });
    const e = await failure(
      c.request({
        method: 'POST',
        path: '/volumes',
        body: {},
        headers: { 'Idempotency-Key': 'k' },
      }),
    );
    expect(seen).toHaveLength(1);
    expect(e).toMatchObject({
      code: 'http.outcome_unknown',
      retryable: true,
      outcomeUnknown: true,
    });
    expect(e.message).toBe(
      `POST /volumes: no response within 50 ms after the request was sent to ${base}; it may have taken effect, so it is not resent blindly`,
    );
  });

  it('fails a mutation whose connection drops after sending with outcomeUnknown', async () => {
    handler = (_req, res) => res.socket?.destroy();
    const { c } = client();
    const e = await failure(c.request({ method: 'PATCH', path: '/volumes/v-1', body: {} }));
    expect(seen).toHaveLength(1);
    expect(e).toMatchObject({
      code: 'http.outcome_unknown',
      outcomeUnknown: true,
      retryable: true,
    });
    expect(e.message).toMatch(
      /^PATCH \/volumes\/v-1: the connection was lost \(.+\) after the request was sent/,
    );
  });

  it('retries a GET that times out, then reports the timeout', async () => {
    handler = () => {};
    const { c, delays } = client({ timeoutMs: 30, maxAttempts: 2 });
    const e = await failure(c.request({ method: 'GET', path: '/volumes' }));
    expect(seen).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(e).toMatchObject({ code: 'http.timeout', retryable: true, outcomeUnknown: false });
    expect(e.message).toBe(
      "GET /volumes: no response within 30 ms (2 attempts); check the endpoint or raise the provider's timeoutMs",
    );
  });

  it('retries even a POST when the connection was refused (nothing was sent)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const s = fakeSleep();
    const c = createHttpClient({
      baseUrl: `http://127.0.0.1:${port}`,
      sleep: s.sleep,
      random: () => 0,
    });
    const e = await failure(c.request({ method: 'POST', path: '/volumes', body: {} }));
    expect(s.delays).toHaveLength(3);
    expect(e).toMatchObject({ code: 'http.unreachable', retryable: true, outcomeUnknown: false });
    expect(e.message).toBe(
      `POST /volumes: cannot connect to http://127.0.0.1:${port} (ECONNREFUSED, 4 attempts); check the provider's endpoint and that the platform is up`,
    );
  });

  it('counts timeouts as the platform being down and opens the circuit', async () => {
    handler = () => {}; // never answers
    // Long enough that every request reaches the server before it times out, even on a loaded machine.
    const { c } = client({ timeoutMs: 250, maxAttempts: 1 });
    for (let i = 0; i < 5; i++) {
      expect((await failure(c.request({ method: 'GET', path: '/volumes' }))).code).toBe(
        'http.timeout',
      );
    }
    expect(c.health()).toMatchObject({
      circuit: 'open',
      lastError: 'GET /volumes: no response within 250 ms',
    });
    const e = await failure(c.request({ method: 'GET', path: '/volumes' }));
    expect(e.code).toBe('platform.circuit_open');
    expect(seen).toHaveLength(5);
  });

  it('treats a safe POST like a GET', async () => {
    handler = statuses([503], [200, { action: 'none' }]);
    const { c } = client();
    const r = await c.request({
      method: 'POST',
      path: '/lifecycle/evaluate',
      body: {},
      safe: true,
    });
    expect(r.body).toEqual({ action: 'none' });
    expect(seen).toHaveLength(2);
  });

  it('stops when the caller aborts', async () => {
    handler = () => {};
    const { c } = client();
    const ctl = new AbortController();
    const p = c.request({ method: 'POST', path: '/volumes', body: {}, signal: ctl.signal });
    setTimeout(() => ctl.abort(), 20);
    const e = await failure(p);
    expect(e).toMatchObject({ code: 'http.aborted', outcomeUnknown: true, retryable: false });
    expect(e.message).toBe(
      'POST /volumes: cancelled after the request was sent; it may have taken effect',
    );
  });

  const mapping: {
    name: string;
    reason: string;
    status: number;
    body?: unknown;
    code: string;
    retryable: boolean;
    message: string;
    hint?: RegExp;
  }[] = [
    {
      name: '404',
      reason: 'the provider reads it as "absent"',
      status: 404,
      body: { code: 'not_found', message: 'no volume v-1' },
      code: 'http.not_found',
      retryable: false,
      message: 'PATCH /volumes/v-1: not found (404 not_found): no volume v-1',
    },
    {
      name: '409',
      reason: "the platform's code and message are kept verbatim",
      status: 409,
      body: { code: 'shrink_not_supported', message: 'a volume cannot shrink (20 → 10 GiB)' },
      code: 'platform.refused',
      retryable: false,
      message:
        'PATCH /volumes/v-1 was refused by the platform (409 shrink_not_supported): a volume cannot shrink (20 → 10 GiB)',
    },
    {
      name: '422 problem+json',
      reason: 'RFC 7807 detail is the message',
      status: 422,
      body: { title: 'Unprocessable', detail: 'size must grow' },
      code: 'platform.refused',
      retryable: false,
      message: 'PATCH /volumes/v-1 was refused by the platform (422): size must grow',
    },
    {
      name: '400',
      reason: 'invalid requests point at the schema',
      status: 400,
      body: { code: 'invalid', message: 'size must be an integer', field: 'size' },
      code: 'platform.invalid',
      retryable: false,
      message:
        "PATCH /volumes/v-1 was rejected as invalid (400 invalid): size must be an integer; check the declared fields against the type's schema",
    },
    {
      name: '401',
      reason: 'points at the auth configuration, never shows the secret',
      status: 401,
      body: 'missing or wrong X-API-Key',
      code: 'platform.unauthorized',
      retryable: false,
      message:
        "PATCH /volumes/v-1: not authorized (401): missing or wrong X-API-Key; check the provider's auth header and the secret it reads",
      hint: /auth: \{ header, fromEnv \| fromFile \}/,
    },
    {
      name: '403',
      reason: 'same as 401',
      status: 403,
      body: { error: 'forbidden' },
      code: 'platform.unauthorized',
      retryable: false,
      message:
        "PATCH /volumes/v-1: not authorized (403): forbidden; check the provider's auth header and the secret it reads",
    },
    {
      name: '418',
      reason: 'any other status is a plain error',
      status: 418,
      code: 'platform.error',
      retryable: false,
      message: 'PATCH /volumes/v-1: unexpected response (418)',
    },
  ];

  it.each(mapping)(
    'maps $name: $reason',
    async ({ status, body, code, retryable, message, hint }) => {
      handler = (_req, res) =>
        body === undefined
          ? res.writeHead(status).end()
          : typeof body === 'string'
            ? res.writeHead(status, { 'content-type': 'text/plain' }).end(body)
            : json(res, status, body);
      const { c } = client({ auth: { header: 'X-API-Key', value: 'k-secret' } });
      const e = await failure(
        c.request({ method: 'PATCH', path: '/volumes/v-1', body: { size: 10 } }),
      );
      expect(e).toMatchObject({ code, retryable, status, outcomeUnknown: false });
      expect(e.message).toBe(message);
      if (hint) expect(e.hint).toMatch(hint);
      expect(JSON.stringify({ ...e.toJSON(), hint: e.hint })).not.toContain('k-secret');
    },
  );

  it('refuses an auth value a header cannot carry, without quoting it', () => {
    let e: unknown;
    try {
      createHttpClient({ baseUrl: base, auth: { header: 'X-API-Key', value: 'k-secret\n' } });
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(TendError);
    expect((e as TendError).code).toBe('http.bad_auth');
    expect((e as TendError).message).not.toContain('k-secret');
  });

  it('never has more requests in flight than its concurrency', async () => {
    handler = (_req, res) => setTimeout(() => json(res, 200, {}), 15);
    const { c } = client({ concurrency: 3 });
    await Promise.all(
      Array.from({ length: 10 }, () => c.request({ method: 'GET', path: '/volumes' })),
    );
    expect(seen).toHaveLength(10);
    expect(maxInFlight).toBe(3);
  });

  it('spaces requests by the rate limit on an injected clock', async () => {
    handler = (_req, res) => json(res, 200, {});
    let now = 1_000;
    const delays: number[] = [];
    const c = createHttpClient({
      baseUrl: base,
      rateLimit: 10,
      clock: () => now,
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    });
    // Five at once: each reserves the next free 100 ms slot.
    await Promise.all(Array.from({ length: 5 }, () => c.request({ method: 'GET', path: '/v' })));
    expect(delays).toEqual([100, 200, 300, 400]);
    // Later, after the clock moved past the reservations, one request goes at once, the next waits.
    now += 10_000;
    delays.length = 0;
    await c.request({ method: 'GET', path: '/v' });
    await c.request({ method: 'GET', path: '/v' });
    expect(delays).toEqual([100]);
  });
});

// Fault handling on virtual time: a platform simulated in process (fetch replaced), so that
// seconds of retries, pauses and cool-downs take no time and every instant is exact.

/** What the simulated platform does with one request. */
type Reply =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Record<string, string> }
  | { readonly network: string };

/** One request as the simulated platform saw it. */
interface Sent {
  readonly method: string;
  readonly path: string;
  readonly at: number;
}

/** A fetch answering with `reply` after `latencyMs` of virtual time; records what it was sent. */
function simulated(vt: VirtualTime, reply: (req: Sent, n: number) => Reply, latencyMs = 20) {
  const sent: Sent[] = [];
  // The client always passes the URL as a string.
  const fetchFn = (async (input: string, init?: RequestInit) => {
    const url = new URL(input);
    const req: Sent = { method: init?.method ?? 'GET', path: url.pathname, at: vt.clock() };
    sent.push(req);
    const r = reply(req, sent.length);
    await vt.sleep(latencyMs, init?.signal ?? undefined);
    if ('network' in r) {
      const cause = Object.assign(new Error(r.network), { code: r.network });
      throw new TypeError('fetch failed', { cause });
    }
    return new Response(r.body === undefined ? null : JSON.stringify(r.body), {
      status: r.status,
      headers: { 'content-type': 'application/json', ...r.headers },
    });
  }) as typeof fetch;
  return { sent, fetch: fetchFn };
}

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

/** A client on virtual time (starting at T0) in front of a simulated platform. */
function virtualClient(
  reply: (req: Sent, n: number) => Reply,
  extra: Partial<HttpClientOptions> = {},
  latencyMs = 20,
) {
  const vt = createVirtualTime(T0);
  const platform = simulated(vt, reply, latencyMs);
  const c = createHttpClient({
    baseUrl: 'http://platform.test/api',
    fetch: platform.fetch,
    clock: vt.clock,
    wallClock: vt.clock,
    sleep: vt.sleep,
    random: () => 0.5,
    ...extra,
  });
  /** Virtual milliseconds since T0. */
  const now = () => vt.clock() - T0;
  const times = () => platform.sent.map((r) => r.at - T0);
  return { vt, c, sent: platform.sent, now, times };
}

async function virtualFailure(vt: VirtualTime, p: Promise<unknown>): Promise<TendError> {
  return failure(vt.run(p));
}

const OK: Reply = { status: 200, body: {} };
const DOWN: Reply = { network: 'ECONNREFUSED' };

describe('http client: retries and Retry-After (virtual time)', () => {
  it('backs off exponentially with full jitter between attempts', async () => {
    const { vt, c, times } = virtualClient((_r, n) => (n < 4 ? { status: 503 } : OK), {
      random: () => 0.5,
    });
    await vt.run(c.request({ method: 'GET', path: '/volumes' }));
    // Each attempt takes 20 ms; then 0.5 × 100, 0.5 × 200, 0.5 × 400.
    expect(times()).toEqual([0, 70, 190, 410]);
  });

  it('honours Retry-After on 429 and on 503', async () => {
    const { vt, c, times } = virtualClient((_r, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after': '2' } }
        : n === 2
          ? { status: 503, headers: { 'retry-after': '1' } }
          : OK,
    );
    await vt.run(c.request({ method: 'GET', path: '/volumes' }));
    expect(times()).toEqual([0, 2_020, 3_040]);
  });

  it("makes a Retry-After a pause for every request, not only the refused one's", async () => {
    // The first request is refused with Retry-After: 1; the others start while it is in flight.
    const { vt, c, sent } = virtualClient((_r, n) =>
      n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : OK,
    );
    const first = c.request({ method: 'GET', path: '/a' });
    await vt.advance(10);
    const others = [
      c.request({ method: 'GET', path: '/b' }),
      vt.advance(30).then(() => c.request({ method: 'GET', path: '/c' })),
    ];
    await vt.run(Promise.all([first, ...others]));
    const at = (path: string) => sent.filter((r) => r.path === path).map((r) => r.at - T0);
    // /b went before the 429 came back (at 20); /c, asked for at 40, waited for the pause to end at
    // 1020, after the retry of /a, spaced by the rate the 429 cut (0.7 × 100/s: 14.3 ms).
    expect(at('/api/a')).toEqual([0, 1_020]);
    expect(at('/api/b')).toEqual([10]);
    expect(at('/api/c')).toHaveLength(1);
    expect(at('/api/c')[0]).toBeCloseTo(1_020 + 1000 / 70);
  });

  it('fails a request at once, sending nothing, while a pause longer than it may wait holds', async () => {
    const { vt, c, sent, now } = virtualClient((_r, n) =>
      n === 1 ? { status: 429, body: { message: 'quota' }, headers: { 'retry-after': '120' } } : OK,
    );
    const e1 = await virtualFailure(vt, c.request({ method: 'GET', path: '/a' }));
    expect(e1).toMatchObject({ code: 'platform.throttled', retryAfterSeconds: 120 });
    await vt.advance(30_000);
    const e2 = await virtualFailure(vt, c.request({ method: 'GET', path: '/b' }));
    expect(sent).toHaveLength(1);
    expect(now()).toBe(30_020);
    expect(e2).toMatchObject({
      code: 'platform.throttled',
      retryable: true,
      retryAfterSeconds: 90,
    });
    expect(e2.message).toBe(
      'GET /b: not sent: the platform asked for a pause of 90s more before further requests (Retry-After)',
    );
    expect(c.health().pausedUntil).toBe(iso(120_020));
  });

  it('does not hold a concurrency slot while waiting out a backoff', async () => {
    // One slot. /a fails and backs off 500 ms; /b uses the slot meanwhile.
    const { vt, c, sent } = virtualClient(
      (r) => (r.path === '/api/a' && sentCount(r) === 1 ? { status: 500 } : OK),
      { concurrency: 1, baseDelayMs: 1_000, random: () => 0.5 },
    );
    let aCount = 0;
    function sentCount(r: Sent): number {
      return r.path === '/api/a' ? ++aCount : 0;
    }
    const a = c.request({ method: 'GET', path: '/a' });
    await vt.advance(5);
    const b = c.request({ method: 'GET', path: '/b' });
    await vt.run(Promise.all([a, b]));
    expect(sent.map((r) => `${r.path}@${r.at - T0}`)).toEqual([
      '/api/a@0',
      '/api/b@20',
      '/api/a@520',
    ]);
  });

  it('holds a slot while waiting for the rate limiter: at most `concurrency` reserve a send time', async () => {
    const { vt, c, times } = virtualClient(() => OK, { concurrency: 2, rateLimit: 10 }, 0);
    await vt.run(
      Promise.all(Array.from({ length: 4 }, () => c.request({ method: 'GET', path: '/v' }))),
    );
    expect(times()).toEqual([0, 100, 200, 300]);
  });
});

describe('http client: adaptive rate limit (virtual time)', () => {
  it('cuts its rate on a 429 and reports it in health()', async () => {
    const { vt, c } = virtualClient(
      (_r, n) => (n === 30 ? { status: 429, headers: { 'retry-after': '1' } } : OK),
      { rateLimit: 100 },
      0,
    );
    expect(c.health().rateLimit).toBe(100);
    for (let i = 0; i < 30; i++) await vt.run(c.request({ method: 'GET', path: '/v' }));
    // Cut to 0.7 × 100, then grown a little by the retry's success (10/s per second at full rate).
    expect(c.health().rateLimit).toBeGreaterThan(70);
    expect(c.health().rateLimit).toBeLessThan(70.5);
  });

  it('reports rate 0 while unlimited and no 429 came', async () => {
    const { vt, c } = virtualClient(() => OK);
    await vt.run(c.request({ method: 'GET', path: '/v' }));
    expect(c.health()).toEqual({ circuit: 'closed', rateLimit: 0 });
  });

  it('reaches at least 90% of a 500 requests/s platform limit with 20 ms latency', async () => {
    // The benchmark's setting, end to end through the client: a sandbox-like token bucket (500/s,
    // burst 500, Retry-After in whole seconds), keyed creates, unlimited configuration.
    const vt = createVirtualTime(T0);
    let tokens = 500;
    let last = vt.clock();
    let throttled = 0;
    const platform = simulated(vt, () => {
      const t = vt.clock();
      tokens = Math.min(500, tokens + ((t - last) / 1000) * 500);
      last = t;
      if (tokens >= 1) {
        tokens -= 1;
        return { status: 201, body: { id: 'x' } };
      }
      throttled++;
      return { status: 429, headers: { 'retry-after': String(Math.ceil((1 - tokens) / 500)) } };
    });
    const c = createHttpClient({
      baseUrl: 'http://platform.test',
      fetch: platform.fetch,
      clock: vt.clock,
      wallClock: vt.clock,
      sleep: vt.sleep,
      random: () => 0.5,
      concurrency: 16,
    });
    const done: number[] = [];
    const end = T0 + 30_000;
    let key = 0;
    const worker = async () => {
      while (vt.clock() < end) {
        await c.request({
          method: 'POST',
          path: '/volumes',
          body: {},
          headers: { 'Idempotency-Key': `k-${key++}` },
        });
        done.push(vt.clock());
      }
    };
    await vt.run(Promise.all(Array.from({ length: 16 }, worker)));
    const settled = done.filter((t) => t > T0 + 5_000 && t <= end).length / 25;
    expect(settled / 500).toBeGreaterThanOrEqual(0.9);
    expect(throttled).toBeLessThan(done.length * 0.005);
  }, 20_000);
});

describe('http client: circuit breaker (virtual time)', () => {
  it('opens after 5 consecutive failures and then fails fast, sending nothing', async () => {
    const { vt, c, sent } = virtualClient(() => DOWN, { maxAttempts: 1 });
    for (let i = 0; i < 5; i++) {
      const e = await virtualFailure(vt, c.request({ method: 'GET', path: '/volumes' }));
      expect(e.code).toBe('http.unreachable');
    }
    expect(c.health()).toEqual({
      circuit: 'open',
      since: iso(100),
      lastError: 'GET /volumes: cannot connect (ECONNREFUSED)',
      probeAt: iso(5_100),
      rateLimit: 0,
    });
    const e = await virtualFailure(vt, c.request({ method: 'POST', path: '/networks', body: {} }));
    expect(sent).toHaveLength(5);
    expect(e).toMatchObject({
      code: 'platform.circuit_open',
      retryable: true,
      outcomeUnknown: false,
    });
    expect(e.message).toBe(
      `POST /networks: not sent: the platform at http://platform.test/api is considered down since ${iso(100)} (5 failures in a row; last: GET /volumes: cannot connect (ECONNREFUSED)); Tend will probe it again at ${iso(5_100)}`,
    );
  });

  it('stops retrying a request once the circuit opens under it', async () => {
    const { vt, c, sent } = virtualClient(
      () => ({ status: 502, body: { message: 'bad gateway' } }),
      {
        maxAttempts: 10,
      },
    );
    const e = await virtualFailure(vt, c.request({ method: 'GET', path: '/volumes' }));
    expect(sent).toHaveLength(5);
    expect(e.code).toBe('platform.circuit_open');
    expect(e.message).toContain('last: GET /volumes: the platform failed (502): bad gateway');
    expect((e.cause as TendError).code).toBe('platform.unavailable');
  });

  it.each([
    { name: '404', reply: { status: 404 }, reason: 'an answer from a platform that is up' },
    { name: '409', reply: { status: 409 }, reason: 'a refusal is an answer' },
    { name: '429', reply: { status: 429 }, reason: 'throttling is the rate limiter’s business' },
  ])('does not count a $name: $reason', async ({ reply }) => {
    const { vt, c } = virtualClient((_r, n) => (n % 2 === 0 ? reply : DOWN), { maxAttempts: 1 });
    for (let i = 0; i < 20; i++) {
      await vt.run(c.request({ method: 'DELETE', path: '/v/1' }).catch(() => undefined));
    }
    expect(c.health().circuit).toBe('closed');
  });

  it.each([
    { name: 'a lost connection', reply: { network: 'ECONNRESET' } },
    { name: 'a 500', reply: { status: 500 } },
    { name: 'a 503', reply: { status: 503 } },
  ])('counts $name as the platform being down', async ({ reply }) => {
    // (Timeouts run on real timers: see "counts timeouts" with the real server above.)
    const { vt, c } = virtualClient(() => reply, { maxAttempts: 1 });
    for (let i = 0; i < 5; i++) {
      await vt.run(c.request({ method: 'GET', path: '/v' }).catch(() => undefined));
    }
    expect(c.health().circuit).toBe('open');
  });

  it('after the cool-down, lets one probe through; its success closes the circuit', async () => {
    let up = false;
    const { vt, c, sent, now } = virtualClient(() => (up ? OK : DOWN), { maxAttempts: 1 });
    for (let i = 0; i < 5; i++) {
      await vt.run(c.request({ method: 'GET', path: '/v' }).catch(() => undefined));
    }
    await vt.advance(5_000);
    expect(c.health()).toMatchObject({ circuit: 'half-open', since: iso(5_100) });
    up = true;
    // Two requests at once: the first is the probe, the second fails fast while it is out.
    const probe = c.request({ method: 'GET', path: '/probe' });
    const other = c.request({ method: 'GET', path: '/other' });
    const [p, o] = await vt.run(Promise.allSettled([probe, other]));
    expect(p.status).toBe('fulfilled');
    expect(o.status).toBe('rejected');
    expect(((o as PromiseRejectedResult).reason as TendError).message).toMatch(
      /a probe request is checking whether it is back$/,
    );
    expect(sent.map((r) => r.path).at(-1)).toBe('/api/probe');
    expect(c.health()).toEqual({ circuit: 'closed', since: iso(now()), rateLimit: 0 });
    await vt.run(c.request({ method: 'GET', path: '/v' }));
  });

  it('re-opens when the probe fails, for twice the cool-down', async () => {
    const { vt, c } = virtualClient(() => DOWN, { maxAttempts: 1, circuitCooldownMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      await vt.run(c.request({ method: 'GET', path: '/v' }).catch(() => undefined));
    }
    expect(c.health().probeAt).toBe(iso(1_100));
    await vt.advance(1_000);
    const e = await virtualFailure(vt, c.request({ method: 'GET', path: '/probe' }));
    expect(e.code).toBe('http.unreachable');
    expect(c.health()).toMatchObject({ circuit: 'open', since: iso(1_120), probeAt: iso(3_120) });
  });
});

describe('platformReason', () => {
  it.each([
    { name: 'message', body: { code: 'x', message: 'm' }, want: { code: 'x', message: 'm' } },
    { name: 'detail', body: { detail: 'd', title: 't' }, want: { message: 'd' } },
    { name: 'title', body: { title: 't' }, want: { message: 't' } },
    { name: 'error string', body: { error: 'e' }, want: { message: 'e' } },
    {
      name: 'nested error',
      body: { error: { code: 'c', message: 'n' } },
      want: { code: 'c', message: 'n' },
    },
    { name: 'plain text', body: '  oops \n', want: { message: 'oops' } },
    { name: 'long text', body: 'x'.repeat(600), want: { message: `${'x'.repeat(500)}…` } },
    { name: 'nothing', body: undefined, want: {} },
    { name: 'array', body: [1], want: {} },
  ] satisfies { name: string; body: unknown; want: object }[])('reads $name', ({ body, want }) => {
    expect(platformReason(body)).toEqual(want);
  });
});

describe('the call observer (metrics)', () => {
  it('is told every attempt: its method and status, retries included, never the URL or a header', async () => {
    handler = statuses([503], [200, { ok: true }]);
    const calls: unknown[] = [];
    const { c } = client({
      observer: (call) => calls.push(call),
      auth: { header: 'X-Key', value: 'secret-key-123' },
    });
    await c.request({ method: 'GET', path: '/volumes' });
    expect(calls).toEqual([
      { method: 'GET', status: 503, ms: expect.any(Number) as unknown },
      { method: 'GET', status: 200, ms: expect.any(Number) as unknown },
    ]);
    expect(JSON.stringify(calls)).not.toContain('secret-key-123');
  });

  it('names what happened when no response came, and an observer that throws fails nothing', async () => {
    handler = (_req, res) => res.destroy();
    const calls: { error?: string }[] = [];
    const { c } = client({
      maxAttempts: 1,
      observer: (call) => {
        calls.push(call);
        throw new Error('a broken metrics sink');
      },
    });
    const e = await failure(c.request({ method: 'GET', path: '/volumes' }));
    expect(e.message).not.toContain('metrics');
    expect(calls).toEqual([
      { method: 'GET', error: 'transport', ms: expect.any(Number) as unknown },
    ]);
  });
});
