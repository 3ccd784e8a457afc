import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sandboxClient } from './client.js';
import { startSandbox, type RunningSandbox } from './server.js';

const NET = { name: 'n', cidr: '10.0.0.0/24' };
const dirs: string[] = [];
const running: RunningSandbox[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tend-sandbox-'));
  dirs.push(dir);
  return dir;
}

async function start(options: Parameters<typeof startSandbox>[0] = {}): Promise<RunningSandbox> {
  const server = await startSandbox(options);
  running.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('startSandbox over real HTTP', () => {
  let server: RunningSandbox;
  beforeAll(async () => {
    server = await startSandbox({ port: 0 });
  });
  afterAll(() => server.close());

  it('listens on 127.0.0.1 and a free port, and serves the API and the document', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    const api = sandboxClient(server.url);
    const net = await api.post('/networks', NET);
    expect(net.status).toBe(201);
    expect(net.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await api.get(`/networks/${net.body.id}`)).body).toEqual(net.body);
    const doc = await api.get('/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
  });
});

describe('timeout after success', () => {
  it('commits the mutation, never answers, and close() cuts the hanging connection', async () => {
    const server = await start({ faults: { timeoutAfterSuccessRate: 1 } });
    const api = sandboxClient(server.url);
    const attempt = api.post('/networks', NET, { signal: AbortSignal.timeout(300) });
    await expect(attempt).rejects.toMatchObject({ name: 'TimeoutError' });
    const { objects } = (await api.get('/_sandbox/objects')).body;
    expect(objects).toMatchObject([{ type: 'networks', visible: true, fields: { name: 'n' } }]);
    expect(server.sandbox.stats().faults.timeoutAfterSuccess).toBe(1);
    // Reads are not mutations: they are answered.
    expect((await api.get('/networks')).body).toHaveLength(1);

    // A hanging request still open when the server closes must not keep close() waiting.
    const hanging = fetch(`${server.url}/buckets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hang' }),
    });
    hanging.catch(() => undefined);
    await waitFor(() => server.sandbox.state.list('buckets').length === 1);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2000);
    await expect(hanging).rejects.toThrow();
  });
});

describe('long polls and close', () => {
  it('a waiting long poll does not hold close() up', async () => {
    const server = await start();
    const poll = fetch(`${server.url}/audit?wait=30000`).then((r) => r.json());
    poll.catch(() => undefined);
    await waitFor(() => server.sandbox.stats().requests === 1);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('persistence', () => {
  it('objects, idempotency keys and the audit feed survive a restart', async () => {
    const stateFile = join(tempDir(), 'nested', 'state.json');
    const first = await start({ stateFile });
    const api1 = sandboxClient(first.url);
    const key = { headers: { 'Idempotency-Key': 'create-net', 'X-Tend-Actor': 'alice' } };
    const net = (await api1.post('/networks', NET, key)).body;
    await api1.post('/instances', {
      name: 'i',
      network_id: net.id,
      image: 'x',
      admin_password: 'pw-secret',
    });
    await first.close();
    expect(readFileSync(stateFile, 'utf8')).not.toContain('pw-secret');

    const second = await start({ stateFile });
    const api2 = sandboxClient(second.url);
    expect((await api2.get(`/networks/${net.id}`)).body).toEqual(net);
    const replay = await api2.post('/networks', NET, key);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(net);
    const audit = (await api2.get('/audit')).body as { entries: { actor: string }[] };
    expect(audit.entries.map((e) => e.actor)).toEqual(['alice', 'anonymous']);
    // New entries continue the sequence.
    await api2.post('/buckets', { name: 'after-restart' });
    expect((await api2.get('/audit?after=2')).body.entries).toMatchObject([{ seq: 3 }]);
  });

  it('flush() writes pending changes without waiting for the debounce', async () => {
    const stateFile = join(tempDir(), 'state.json');
    const server = await start({ stateFile });
    await sandboxClient(server.url).post('/buckets', { name: 'flushed' });
    server.sandbox.flush();
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).objects).toMatchObject([{ id: 'flushed' }]);
  });

  it('saves by itself shortly after a mutation', async () => {
    const stateFile = join(tempDir(), 'state.json');
    const server = await start({ stateFile });
    await sandboxClient(server.url).post('/buckets', { name: 'soon' });
    await waitFor(() => existsSync(stateFile));
    expect(readFileSync(stateFile, 'utf8')).toContain('"soon"');
  });

  it.each([
    { name: 'not JSON', content: '{oops', message: /is not valid JSON .*: fix or delete it$/ },
    {
      name: 'not a state',
      content: '{"version": 9}',
      message: /is not a version 1 sandbox state: fix or delete it$/,
    },
  ])('refuses to start on a state file that is $name', async ({ content, message }) => {
    const stateFile = join(tempDir(), 'state.json');
    writeFileSync(stateFile, content);
    await expect(startSandbox({ stateFile })).rejects.toThrow(message);
  });
});

describe('auth over HTTP', () => {
  it('requires the key on API routes', async () => {
    const server = await start({ apiKey: 'sekret' });
    expect((await fetch(`${server.url}/networks`)).status).toBe(401);
    const ok = await fetch(`${server.url}/networks`, { headers: { 'X-API-Key': 'sekret' } });
    expect(ok.status).toBe(200);
  });

  it('requires it on /_sandbox/*: a reset without it is 401', async () => {
    const server = await start({ apiKey: 'sekret' });
    const reset = (headers: Record<string, string>) =>
      fetch(`${server.url}/_sandbox/reset`, { method: 'POST', headers });
    expect((await reset({})).status).toBe(401);
    expect((await reset({ 'X-API-Key': 'not-it' })).status).toBe(401);
    expect((await reset({ 'X-API-Key': 'sekret' })).status).toBe(204);
  });
});

/** Polls a condition on the event loop (for effects of another connection), failing after 2 s. */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met within 2 s');
}
