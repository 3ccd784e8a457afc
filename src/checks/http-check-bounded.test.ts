import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpCheckDecl } from '../core/index.js';
import type { CheckContext } from './index.js';
import { runCheck } from './index.js';

// An http check reads a body only to look for `bodyContains`, and never more of it than the limit
// (16 MiB unless the context says otherwise): an endless body fails the check at once, its
// connection closed. Its requests carry Tend's User-Agent (decision 0040).

const NOW = new Date('2024-05-01T12:00:00.000Z');
let server: Server;
let base: string;
let headers: IncomingHttpHeaders[] = [];
let closedAfter: number | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    headers.push(req.headers);
    if (req.url === '/exact') return void res.writeHead(200).end('x'.repeat(999) + 'Z');
    if (req.url !== '/endless') return void res.writeHead(200).end('ready');
    res.writeHead(200);
    let written = 0;
    let open = true;
    res.on('close', () => ((open = false), (closedAfter = written)));
    const block = Buffer.alloc(16 * 1024, 'a');
    const more = () => {
      while (open) {
        written += block.length;
        if (!res.write(block)) return void res.once('drain', more);
      }
    };
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function check(partial: Partial<HttpCheckDecl>): HttpCheckDecl {
  return {
    kind: 'http',
    name: 'probe',
    url: `${base}/endless`,
    method: 'GET',
    expectStatus: [200],
    timeoutMs: 20_000,
    source: { file: 'main.yaml', line: 1, column: 1 },
    ...partial,
  };
}

const context = (extra: Partial<CheckContext> = {}): CheckContext => ({
  observed: {},
  desired: {},
  resolve: (t) => t,
  now: () => NOW,
  ...extra,
});

describe('http check: bounded body', () => {
  it('fails on a body past the limit, closing the connection instead of reading on', async () => {
    closedAfter = undefined;
    const started = performance.now();
    const r = await runCheck(
      check({ bodyContains: 'never there' }),
      context({ maxResponseBytes: 256 * 1024 }),
    );
    expect(r.ok).toBe(false);
    expect(r.message).toBe(
      `GET ${base}/endless answered 200 with a body larger than 256 KiB; reading stopped there and the connection was closed`,
    );
    expect(performance.now() - started).toBeLessThan(10_000);
    await expect.poll(() => closedAfter, { timeout: 5_000 }).toBeDefined();
    expect(closedAfter!).toBeLessThan(64 * 1024 * 1024);
  });

  it('reads a body of exactly the limit', async () => {
    const r = await runCheck(
      check({ url: `${base}/exact`, bodyContains: 'Z' }),
      context({ maxResponseBytes: 1000 }),
    );
    expect(r.ok).toBe(true);
    const over = await runCheck(
      check({ url: `${base}/exact`, bodyContains: 'Z' }),
      context({ maxResponseBytes: 999 }),
    );
    expect(over.ok).toBe(false);
    expect(over.message).toContain('with a body larger than 999 bytes');
  });

  it('does not read an endless body it does not need (no bodyContains)', async () => {
    const r = await runCheck(check({}), context({ maxResponseBytes: 1024 }));
    expect(r.ok).toBe(true);
    expect(r.message).toBe(`GET ${base}/endless answered 200`);
  });
});

describe('http check: User-Agent', () => {
  it('sends the one it is given', async () => {
    headers = [];
    await runCheck(check({ url: `${base}/ready` }), context({ userAgent: 'tend/1.0.0 (pid 7)' }));
    expect(headers.map((h) => h['user-agent'])).toEqual(['tend/1.0.0 (pid 7)']);
  });
});
