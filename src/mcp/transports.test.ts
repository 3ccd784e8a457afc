import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultContext } from '../app/index.js';
import type { Clock } from '../engine/index.js';
import { mcpHttpApp, serveStdio } from './transports.js';

// MCP HTTP sessions are bounded: a session unused for `idleMs` is closed when the next request
// arrives, and past `maxSessions` a new one closes the least recently used. Driven in-process
// through the Hono app with a clock that moves only when the test moves it.

const HOST = '127.0.0.1:7799';

function fakeClock(): Clock & { t: number } {
  const clock = {
    t: Date.UTC(2026, 10, 26, 9, 0, 0),
    now: () => new Date(clock.t),
    sleep: () => Promise.resolve(),
  };
  return clock;
}

function rpc(method: string, id: number, params: Record<string, unknown> = {}) {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

async function post(
  app: ReturnType<typeof mcpHttpApp>['app'],
  body: string,
  session?: string,
): Promise<Response> {
  return app.request('/mcp', {
    method: 'POST',
    headers: {
      host: HOST,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body,
  });
}

async function initialize(app: ReturnType<typeof mcpHttpApp>['app']): Promise<string> {
  const r = await post(
    app,
    rpc('initialize', 1, {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'limits-test', version: '1' },
    }),
  );
  expect(r.status).toBe(200);
  const sid = r.headers.get('mcp-session-id');
  expect(sid).toBeTruthy();
  expect(
    (await post(app, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sid!))
      .status,
  ).toBe(202);
  return sid!;
}

function build(limits: { idleMs: number; maxSessions: number }) {
  const clock = fakeClock();
  const ctx = defaultContext({ clock, notice: () => undefined });
  const http = mcpHttpApp(
    ctx,
    { selection: { dir: '/nonexistent' }, allowApply: false, version: '0.0.0-test' },
    () => [HOST],
    limits,
  );
  return { clock, http };
}

describe('MCP HTTP session limits', () => {
  it('closes a session unused for idleMs; a used one stays open', async () => {
    const { clock, http } = build({ idleMs: 60_000, maxSessions: 8 });
    const idle = await initialize(http.app);
    const busy = await initialize(http.app);
    for (let i = 0; i < 3; i++) {
      clock.t += 40_000;
      expect((await post(http.app, rpc('tools/list', 10 + i), busy)).status).toBe(200);
    }
    const gone = await post(http.app, rpc('tools/list', 20), idle);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(
      /sat unused for 1 min.*initialize again/,
    );
    expect((await post(http.app, rpc('tools/list', 21), busy)).status).toBe(200);
    await http.close();
  });

  it('at maxSessions, a new session closes the least recently used', async () => {
    const { clock, http } = build({ idleMs: 3_600_000, maxSessions: 2 });
    const first = await initialize(http.app);
    clock.t += 1_000;
    const second = await initialize(http.app);
    clock.t += 1_000;
    // The first is used again: the second is now the least recently used.
    expect((await post(http.app, rpc('tools/list', 30), first)).status).toBe(200);
    const third = await initialize(http.app);
    expect((await post(http.app, rpc('tools/list', 31), second)).status).toBe(404);
    expect((await post(http.app, rpc('tools/list', 32), first)).status).toBe(200);
    expect((await post(http.app, rpc('tools/list', 33), third)).status).toBe(200);
    await http.close();
  });
});

// The stdio server ends when its input does: at once when nothing was asked, after the answers to
// what was asked otherwise (`tend mcp` then exits 0; test/e2e/mcp.test.ts runs the built CLI).
describe('MCP over stdio: the end of stdin', () => {
  const serve = () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const ctx = defaultContext({ clock: fakeClock(), notice: () => undefined });
    const served = serveStdio(
      ctx,
      { selection: { dir: '/nonexistent' }, allowApply: false, version: '0.0.0-test' },
      { stdin, stdout },
    );
    let out = '';
    stdout.on('data', (d: Buffer) => (out += d.toString()));
    const answers = () =>
      out
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { id: number });
    return { stdin, served, answers };
  };

  it('ends the server when stdin ends without any message', async () => {
    const { stdin, served, answers } = serve();
    stdin.end();
    await served;
    expect(answers()).toEqual([]);
  });

  it('answers the requests received before stdin ended, then ends', async () => {
    const { stdin, served, answers } = serve();
    const init = {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'eof-test', version: '1' },
    };
    stdin.write(`${rpc('initialize', 1, init)}\n`);
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    stdin.write(`${rpc('tools/list', 2)}\n`);
    // Answered after the input ended: it reads the (missing) intent directory first.
    stdin.end(`${rpc('tools/call', 3, { name: 'plan', arguments: {} })}\n`);
    await served;
    expect(answers().map((a) => a.id)).toEqual([1, 2, 3]);
  });
});
