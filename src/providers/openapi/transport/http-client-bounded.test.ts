import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import type { HttpCall, HttpClientOptions } from './http-client.js';
import { createHttpClient } from './http-client.js';

// Every answer the client reads is bounded by maxResponseBytes, counted as it streams in (decision
// 0040), against a real HTTP server: exactly the limit passes, one more byte fails, a chunked body
// that never ends is cut off with its connection closed, a Content-Length above the limit is refused
// before the body is read; and every request carries Tend's User-Agent.

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let handler: Handler = (_req, res) => res.end();
let requests: IncomingMessage[] = [];
/** Resolves when the server sees a response's connection closed (by the client). */
let closed: Promise<number> = Promise.resolve(0);
let closedAt: (t: number) => void = () => undefined;
const server = createServer((req, res) => {
  requests.push(req);
  res.on('close', () => closedAt(performance.now()));
  handler(req, res);
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
  requests = [];
  closed = new Promise((resolve) => (closedAt = resolve));
});

const client = (options: Partial<HttpClientOptions> = {}) =>
  createHttpClient({
    baseUrl: base,
    provider: 'sb',
    maxAttempts: 4,
    baseDelayMs: 1,
    sleep: () => Promise.resolve(),
    ...options,
  });

/** Sends `body` as JSON: with a Content-Length, or chunked in pieces of `chunk` bytes. */
function answer(body: string, how: { chunk?: number; status?: number } = {}): Handler {
  return (_req, res) => {
    const status = how.status ?? 200;
    if (how.chunk === undefined) {
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    for (let i = 0; i < body.length; i += how.chunk) res.write(body.slice(i, i + how.chunk));
    res.end();
  };
}

/** `[` and then `{"id":n},` forever, written as fast as the socket takes it, until it closes. */
const endless: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  let n = 0;
  let open = true;
  res.on('close', () => (open = false));
  const more = () => {
    while (open) {
      let chunk = '';
      for (let i = 0; i < 200; i++) chunk += `{"id":${n++}},`;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  res.write('[');
  more();
};

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TendError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

/** A JSON list of exactly `bytes` bytes. */
function listOf(bytes: number): string {
  const text = `["${'x'.repeat(bytes - 4)}"]`;
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

describe('http client: maxResponseBytes', () => {
  it('reads an answer of exactly the limit, with a Content-Length or chunked', async () => {
    for (const how of [{}, { chunk: 7 }]) {
      handler = answer(listOf(1000), how);
      const r = await client({ maxResponseBytes: 1000 }).request({ method: 'GET', path: '/items' });
      expect(r.body).toEqual(['x'.repeat(996)]);
    }
  });

  it('refuses one byte more, naming the provider, the request and the limit, and sends it once', async () => {
    handler = answer(listOf(1001), { chunk: 100 });
    const e = await failure(
      client({ maxResponseBytes: 1000 }).request({
        method: 'GET',
        path: '/items',
        query: { api_key: 'sekret-in-query' },
      }),
    );
    expect(e.code).toBe('provider.response_too_large');
    expect(e.message).toBe(
      'provider sb: GET /items: the answer (status 200) is larger than maxResponseBytes, 1000 bytes: reading stopped after 1001 bytes and the connection was closed',
    );
    expect(e.hint).toBe(
      'raise maxResponseBytes on provider sb if this answer is legitimate; otherwise the platform is misbehaving',
    );
    expect(e.message).not.toContain('sekret');
    expect(e.retryable).toBe(false);
    expect(e.outcomeUnknown).toBe(false);
    expect(requests).toHaveLength(1);
  });

  it('refuses a Content-Length above the limit without reading the body', async () => {
    // The server announces 10 MiB, sends 10 bytes and then nothing: only the header can end this
    // request before the timeout.
    handler = (_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': 10 * 1024 * 1024,
      });
      res.write('[1,2,3,4,5');
    };
    const started = performance.now();
    const e = await failure(
      client({ maxResponseBytes: 1024 * 1024, timeoutMs: 30_000 }).request({
        method: 'GET',
        path: '/items',
      }),
    );
    expect(e.code).toBe('provider.response_too_large');
    expect(e.message).toContain('the platform announced 10 MiB (Content-Length); not read');
    expect(e.message).toContain('larger than maxResponseBytes, 1 MiB (1048576 bytes)');
    await closed;
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('cuts an endless answer off at the limit and closes the connection at once', async () => {
    handler = endless;
    const started = performance.now();
    const e = await failure(
      client({ maxResponseBytes: 256 * 1024, timeoutMs: 30_000 }).request({
        method: 'GET',
        path: '/items',
      }),
    );
    const failedAt = performance.now();
    expect(e.code).toBe('provider.response_too_large');
    expect(e.message).toMatch(
      /reading stopped after 2\d\d(\.\d)? KiB and the connection was closed/,
    );
    // The server sees its connection closed (it would write forever otherwise).
    const closedTime = await closed;
    expect(closedTime - failedAt).toBeLessThan(2_000);
    expect(failedAt - started).toBeLessThan(10_000);
    expect(requests).toHaveLength(1);
  });

  it('bounds error answers too', async () => {
    handler = answer(JSON.stringify({ message: 'y'.repeat(5000) }), { status: 500, chunk: 500 });
    const e = await failure(
      client({ maxResponseBytes: 1000 }).request({ method: 'GET', path: '/items' }),
    );
    expect(e.code).toBe('provider.response_too_large');
    expect(e.message).toContain('the answer (status 500)');
  });

  it('leaves the outcome of a write unknown: the platform may have acted', async () => {
    handler = answer(listOf(2000));
    const e = await failure(
      client({ maxResponseBytes: 1000 }).request({ method: 'POST', path: '/items', body: {} }),
    );
    expect(e.code).toBe('provider.response_too_large');
    expect(e.outcomeUnknown).toBe(true);
    expect(e.message).toMatch(/; the platform may have acted$/);
  });

  it('defaults to 16 MiB', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-length': 16 * 1024 * 1024 + 1 });
      res.write('[');
    };
    const e = await failure(client().request({ method: 'GET', path: '/items' }));
    expect(e.message).toContain('larger than maxResponseBytes, 16 MiB (16777216 bytes)');
  });

  it('tells the observer the attempt ended too large', async () => {
    handler = answer(listOf(2000));
    const calls: HttpCall[] = [];
    await failure(
      client({ maxResponseBytes: 1000, observer: (c) => calls.push(c) }).request({
        method: 'GET',
        path: '/items',
      }),
    );
    expect(calls).toEqual([{ method: 'GET', error: 'too_large', ms: calls[0]!.ms }]);
  });
});

describe('http client: User-Agent', () => {
  it('sends the given User-Agent on every request', async () => {
    handler = answer('[]');
    const c = client({ userAgent: 'tend/9.9.9 (worker w-1; pid 42)' });
    await c.request({ method: 'GET', path: '/items' });
    await c.request({ method: 'POST', path: '/items', body: { a: 1 } });
    expect(requests.map((r) => r.headers['user-agent'])).toEqual([
      'tend/9.9.9 (worker w-1; pid 42)',
      'tend/9.9.9 (worker w-1; pid 42)',
    ]);
  });

  it('lets a request name its own', async () => {
    handler = answer('[]');
    await client({ userAgent: 'tend/1' }).request({
      method: 'GET',
      path: '/items',
      headers: { 'User-Agent': 'custom/1' },
    });
    expect(requests[0]!.headers['user-agent']).toBe('custom/1');
  });
});
