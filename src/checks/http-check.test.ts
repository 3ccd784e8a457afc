import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpCheckDecl } from '../core/index.js';
import type { CheckContext } from './index.js';
import { runCheck } from './index.js';

const NOW = new Date('2024-05-01T12:00:00.000Z');
let server: Server;
let base: string;
let refusedPort: number;
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/health') res.writeHead(200).end('status: ready');
    else if (req.url === '/down') res.writeHead(503).end('maintenance');
    else if (req.url === '/created' && req.method === 'POST') res.writeHead(201).end();
    else if (req.url === '/slow')
      held.push(res); // never answers (until afterAll)
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port nobody listens on: bind one, then close it.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  refusedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

afterAll(async () => {
  for (const res of held) res.end();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function check(partial: Partial<HttpCheckDecl>): HttpCheckDecl {
  return {
    kind: 'http',
    name: 'probe',
    url: `${base}/health`,
    method: 'GET',
    expectStatus: [200],
    timeoutMs: 2000,
    source: { file: 'main.yaml', line: 1, column: 1 },
    ...partial,
  };
}

function context(resolve: CheckContext['resolve'] = (t) => t): CheckContext {
  return { observed: {}, desired: {}, resolve, now: () => NOW };
}

describe('http check', () => {
  const cases: {
    name: string;
    reason: string;
    check: () => Partial<HttpCheckDecl>;
    ok: boolean;
    message: () => string;
  }[] = [
    {
      name: 'expected status',
      reason: 'a 200 from /health is what the default expects',
      check: () => ({}),
      ok: true,
      message: () => `GET ${base}/health answered 200`,
    },
    {
      name: 'status and body text',
      reason: 'bodyContains is looked for in the body',
      check: () => ({ bodyContains: 'ready' }),
      ok: true,
      message: () => `GET ${base}/health answered 200 and the body contains "ready"`,
    },
    {
      name: 'one of several statuses, other method',
      reason: 'expectStatus is a set; the method is sent as declared',
      check: () => ({ url: `${base}/created`, method: 'POST', expectStatus: [200, 201] }),
      ok: true,
      message: () => `POST ${base}/created answered 201`,
    },
    {
      name: 'wrong status',
      reason: 'the message says what was expected and what came',
      check: () => ({ url: `${base}/down` }),
      ok: false,
      message: () => `GET ${base}/down: expected status 200, got 503`,
    },
    {
      name: 'body mismatch',
      reason: 'the right status with the wrong body still fails',
      check: () => ({ bodyContains: 'healthy' }),
      ok: false,
      message: () => `GET ${base}/health answered 200 but the body does not contain "healthy"`,
    },
    {
      name: 'connection refused',
      reason: 'the network error is named',
      check: () => ({ url: `http://127.0.0.1:${refusedPort}/` }),
      ok: false,
      message: () =>
        `GET http://127.0.0.1:${refusedPort}/ failed: connect ECONNREFUSED 127.0.0.1:${refusedPort}`,
    },
    {
      name: 'timeout',
      reason: 'a server that never answers fails after timeoutMs',
      check: () => ({ url: `${base}/slow`, timeoutMs: 100 }),
      ok: false,
      message: () => `GET ${base}/slow: no answer within 100 ms`,
    },
  ];
  it.each(cases)('$name', async (c) => {
    const result = await runCheck(check(c.check()), context());
    expect(result, c.reason).toEqual({
      name: 'probe',
      kind: 'http',
      ok: c.ok,
      message: c.message(),
      at: NOW.toISOString(),
    });
  });

  it('substitutes references in the url and the expected text', async () => {
    const values: Record<string, string> = {
      '${sb.x/y.path}': 'health',
      '${sb.x/y.word}': 'ready',
    };
    const resolve = (text: string) => text.replace(/\$\{[^}]*\}/g, (ref) => values[ref] ?? ref);
    const result = await runCheck(
      check({ url: `${base}/\${sb.x/y.path}`, bodyContains: '${sb.x/y.word}' }),
      context(resolve),
    );
    expect(result.ok).toBe(true);
    expect(result.message).toContain(`${base}/health`);
  });

  it('fails without sending when a reference cannot be resolved yet', async () => {
    let sent = false;
    const result = await runCheck(check({ url: `${base}/\${sb.x/y.path}` }), {
      ...context(() => undefined),
      fetch: () => {
        sent = true;
        return Promise.resolve(new Response('x'));
      },
    });
    expect(sent).toBe(false);
    expect(result).toMatchObject({
      ok: false,
      message: `references in the check cannot be resolved yet (${base}/\${sb.x/y.path})`,
    });
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const running = runCheck(check({ url: `${base}/slow`, timeoutMs: 10_000 }), {
      ...context(),
      signal: controller.signal,
    });
    controller.abort();
    expect(await running).toMatchObject({ ok: false, message: `GET ${base}/slow: check aborted` });
  });
});
