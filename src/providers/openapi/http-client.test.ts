import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import type { HttpClientOptions } from './http-client.js';
import { createHttpClient, platformReason } from './http-client.js';

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

  it('honours Retry-After on 429 and 503', async () => {
    handler = statuses(
      [429, { message: 'slow down' }, { 'retry-after': '2' }],
      [503, undefined, { 'retry-after': '1' }],
      [200, {}],
    );
    const { c, delays } = client();
    await c.request({ method: 'GET', path: '/volumes' });
    expect(delays).toEqual([2000, 1000]);
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
      'POST /volumes: no response within 50 ms after the request was sent; it may have taken effect, so it is not resent blindly',
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
