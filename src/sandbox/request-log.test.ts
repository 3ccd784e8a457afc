import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createSandbox, type SandboxOptions } from './app.js';
import { MAX_USER_AGENT, requestLogLine, type RequestLogEntry } from './request-log.js';

const KEY = 'sb-key-6f1d2e9a-never-logged';
const SECRET = 'hunter2-admin-password-never-logged';
const T0 = Date.parse('2030-01-02T03:04:05.000Z');
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tend-request-log-'));
  dirs.push(dir);
  return join(dir, name);
}

/** A sandbox on a fake clock whose injected latency moves the clock instead of waiting. */
function sandboxWithLog(options: SandboxOptions = {}) {
  let clock = T0;
  const entries: RequestLogEntry[] = [];
  const sandbox = createSandbox({
    now: () => clock,
    sleep: (ms) => {
      clock += ms;
      return Promise.resolve();
    },
    onRequest: (entry) => entries.push(entry),
    ...options,
  });
  const send = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    sandbox.app.request(path, { ...init, headers: { 'X-API-Key': KEY, ...init.headers } });
  return { sandbox, entries, send, tick: (ms: number) => (clock += ms) };
}

const lines = (file: string): RequestLogEntry[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RequestLogEntry);

describe('the request log', () => {
  it('records method, path, status, User-Agent and arrival time of every API request, one line each as answered', async () => {
    const file = tempFile('requests.jsonl');
    const { sandbox, entries, send, tick } = sandboxWithLog({ apiKey: KEY, requestLog: file });
    const ua = { 'User-Agent': 'tend/0.1.0 (worker w-1; host a; pid 42)' };

    const net = await send('/networks', {
      method: 'POST',
      headers: { ...ua, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'n', cidr: '10.0.0.0/24' }),
    });
    expect(net.status).toBe(201);
    // Flushed per request: the line is in the file as soon as the answer is out.
    expect(lines(file)).toHaveLength(1);
    const { id } = (await net.json()) as { id: string };
    tick(1000);
    await send(`/networks/${id}?fields=a&token=${KEY}`, { headers: ua });
    tick(1000);
    await send('/nothing-here', { method: 'DELETE' });
    tick(1000);
    await sandbox.app.request('/networks', { headers: { ...ua, 'X-API-Key': 'wrong' } });

    const expected: RequestLogEntry[] = [
      {
        time: '2030-01-02T03:04:05.000Z',
        method: 'POST',
        path: '/networks',
        status: 201,
        userAgent: ua['User-Agent'],
        ms: 0,
      },
      {
        time: '2030-01-02T03:04:06.000Z',
        method: 'GET',
        path: `/networks/${id}`,
        status: 200,
        userAgent: ua['User-Agent'],
        ms: 0,
      },
      {
        time: '2030-01-02T03:04:07.000Z',
        method: 'DELETE',
        path: '/nothing-here',
        status: 404,
        userAgent: null,
        ms: 0,
      },
      {
        time: '2030-01-02T03:04:08.000Z',
        method: 'GET',
        path: '/networks',
        status: 401,
        userAgent: ua['User-Agent'],
        ms: 0,
      },
    ];
    expect(lines(file)).toEqual(expected);
    expect(entries).toEqual(expected);
    expect(readFileSync(file, 'utf8')).toBe(expected.map(requestLogLine).join(''));
    sandbox.close();
  });

  it('never holds the API key, a query string or a request body', async () => {
    const file = tempFile('requests.jsonl');
    const { sandbox, send } = sandboxWithLog({ apiKey: KEY, requestLog: file });
    const net = await send('/networks', {
      method: 'POST',
      headers: { 'content-type': 'application/json', Authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ name: 'n', cidr: '10.0.0.0/24' }),
    });
    const { id } = (await net.json()) as { id: string };
    const created = await send(`/instances?api_key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'User-Agent': 'tend-test' },
      body: JSON.stringify({
        name: 'vm',
        image: 'debian-12',
        size: 'small',
        network_id: id,
        admin_password: SECRET,
      }),
    });
    expect(created.status).toBe(201);
    // A refusal that quotes the secret back in its answer: the log has its status only.
    const refused = await send('/instances', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'vm2',
        image: 'i',
        network_id: id,
        admin_password: 'x'.repeat(80) + SECRET,
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(SECRET);

    const text = readFileSync(file, 'utf8');
    expect(lines(file).map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      'POST /networks 201',
      'POST /instances 201',
      'POST /instances 400',
    ]);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('sb-key');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('debian-12');
    expect(text).not.toContain('api_key');
    sandbox.close();
  });

  it('marks injected faults, withheld answers (status null) and the latency the answer took', async () => {
    const { sandbox, entries, send } = sandboxWithLog({
      faults: { latencyMs: 250, errorRate: 1, methods: ['GET'] },
    });
    const failed = await send('/buckets');
    expect([500, 503]).toContain(failed.status);
    sandbox.setFaults({ errorRate: 0, methods: ['POST'], timeoutAfterSuccessRate: 1 });
    // Committed, never answered: the request never resolves, but its line is written.
    void send('/buckets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bucket-b' }),
    });
    await vi.waitFor(() => expect(entries).toHaveLength(2));
    const oracle = (await (await send('/_sandbox/objects')).json()) as { objects: unknown[] };
    expect(oracle.objects).toMatchObject([{ type: 'buckets', id: 'bucket-b' }]);
    expect(entries).toEqual([
      {
        time: '2030-01-02T03:04:05.000Z',
        method: 'GET',
        path: '/buckets',
        status: failed.status,
        userAgent: null,
        ms: 250,
        injected: true,
      },
      {
        time: '2030-01-02T03:04:05.250Z',
        method: 'POST',
        path: '/buckets',
        status: null,
        userAgent: null,
        ms: 250,
        injected: true,
      },
    ]);
    sandbox.close();
  });

  it('leaves out the oracle and the OpenAPI document, and cuts a very long User-Agent', async () => {
    const { sandbox, entries, send } = sandboxWithLog();
    await send('/_sandbox/objects');
    await send('/_sandbox/stats');
    await send('/openapi.json');
    expect(entries).toEqual([]);
    await send('/buckets', { headers: { 'User-Agent': 'u'.repeat(MAX_USER_AGENT + 100) } });
    expect(entries.map((e) => e.userAgent)).toEqual(['u'.repeat(MAX_USER_AGENT)]);
    sandbox.close();
  });

  it('appends to an existing file, survives a reset, and stops writing once closed', async () => {
    const file = tempFile('requests.jsonl');
    writeFileSync(file, `${JSON.stringify({ earlier: true })}\n`);
    const { sandbox, send } = sandboxWithLog({ requestLog: file });
    await send('/buckets');
    sandbox.reset();
    await send('/volumes');
    sandbox.close();
    await send('/services');
    const text = readFileSync(file, 'utf8').split('\n');
    expect(text.map((l) => (l === '' ? '' : (JSON.parse(l) as { path?: string }).path))).toEqual([
      undefined,
      '/buckets',
      '/volumes',
      '',
    ]);
  });

  it('a file that cannot be opened stops the sandbox from starting, naming the file', () => {
    const blocker = tempFile('a-file');
    writeFileSync(blocker, '');
    const file = join(blocker, 'requests.jsonl');
    expect(() => createSandbox({ requestLog: file })).toThrow(
      `the request log ${file} cannot be opened for appending (`,
    );
    expect(() => createSandbox({ requestLog: file })).toThrow(
      /: give a file in a directory you can write$/,
    );
  });
});
