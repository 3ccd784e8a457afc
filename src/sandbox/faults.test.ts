import { describe, expect, it } from 'vitest';
import { createSandbox, type SandboxOptions } from './app.js';
import { sandboxClient } from './client.js';
import { SandboxError } from './errors.js';
import { mergeFaults, mulberry32, NO_FAULTS, TokenBucket } from './faults.js';

function fresh(options: SandboxOptions = {}) {
  const sandbox = createSandbox(options);
  return { sandbox, api: sandboxClient(sandbox.app) };
}

const NET = { name: 'n', cidr: '10.0.0.0/24' };

describe('mulberry32', () => {
  it('is repeatable per seed and stays in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(mulberry32(43)()).not.toBe(xs[0]);
    // Roughly uniform: a broken generator would cluster.
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});

describe('TokenBucket (fake clock)', () => {
  it.each([
    {
      name: 'burst of rate, then refused with the wait to the next token',
      rate: 2,
      steps: [
        [0, true],
        [0, true],
        [0, 1],
        [499, 1],
        [1, true],
        [0, 1],
      ],
    },
    {
      name: 'a rate below one still admits one request, then makes you wait',
      rate: 0.5,
      steps: [
        [0, true],
        [0, 2],
        [1000, 1],
        [1000, true],
      ],
    },
    {
      name: 'idle time refills no further than the burst',
      rate: 1,
      steps: [
        [60_000, true],
        [0, 1],
      ],
    },
  ] as { name: string; rate: number; steps: [number, true | number][] }[])(
    '$name',
    ({ rate, steps }) => {
      let now = 0;
      const bucket = new TokenBucket(rate, () => now);
      for (const [advance, want] of steps) {
        now += advance;
        const got = bucket.take();
        expect(got).toEqual(want === true ? { ok: true } : { ok: false, retryAfterSeconds: want });
      }
    },
  );
});

describe('mergeFaults', () => {
  it.each([
    {
      name: 'rate above 1',
      partial: { errorRate: 1.5 },
      field: 'errorRate',
      message: 'errorRate must be a number between 0 and 1',
    },
    {
      name: 'negative rate',
      partial: { rate429: -0.1 },
      field: 'rate429',
      message: 'rate429 must be a number between 0 and 1',
    },
    {
      name: 'rate as text',
      partial: { timeoutAfterSuccessRate: '0.5' },
      field: 'timeoutAfterSuccessRate',
      message: 'timeoutAfterSuccessRate must be a number between 0 and 1',
    },
    {
      name: 'negative latency',
      partial: { latencyMs: -5 },
      field: 'latencyMs',
      message: 'latencyMs must be a number >= 0',
    },
    {
      name: 'fractional Retry-After',
      partial: { retryAfterSeconds: 1.5 },
      field: 'retryAfterSeconds',
      message: 'retryAfterSeconds must be an integer >= 0',
    },
    {
      name: 'fractional seed',
      partial: { seed: 0.5 },
      field: 'seed',
      message: 'seed must be an integer',
    },
    {
      name: 'unknown method',
      partial: { methods: ['GET', 'FETCH'] },
      field: 'methods',
      message:
        'methods must list HTTP methods from GET, POST, PUT, PATCH, DELETE (or be null for all)',
    },
    {
      name: 'unknown setting',
      partial: { chaos: true },
      field: 'chaos',
      message:
        'unknown fault setting "chaos" (known: seed, latencyMs, latencyJitterMs, errorRate, rate429, retryAfterSeconds, timeoutAfterSuccessRate, eventualConsistencyMs, rateLimit, methods)',
    },
  ])('refuses $name', ({ partial, field, message }) => {
    let caught: unknown;
    try {
      mergeFaults(NO_FAULTS, partial);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SandboxError);
    expect((caught as SandboxError).body()).toEqual({ code: 'invalid', field, message });
  });

  it('merges valid settings and upper-cases methods', () => {
    expect(mergeFaults(NO_FAULTS, { errorRate: 0.25, methods: ['post'] })).toEqual({
      ...NO_FAULTS,
      errorRate: 0.25,
      methods: ['POST'],
    });
  });
});

/** The statuses of `n` sequential creates. */
async function statuses(options: SandboxOptions, n: number): Promise<number[]> {
  const { api } = fresh(options);
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await api.post('/networks', NET)).status);
  return out;
}

describe('injected faults', () => {
  it('errorRate: 500/503 before doing anything, the same sequence for the same seed', async () => {
    const options = { faults: { seed: 7, errorRate: 0.5 } };
    const first = await statuses(options, 30);
    expect(await statuses(options, 30)).toEqual(first);
    expect(await statuses({ faults: { seed: 8, errorRate: 0.5 } }, 30)).not.toEqual(first);
    expect(new Set(first)).toEqual(new Set([201, 500, 503]));

    const { api, sandbox } = fresh({ faults: { seed: 7, errorRate: 1 } });
    const reply = await api.post('/networks', NET);
    expect([500, 503]).toContain(reply.status);
    expect(reply.body.message).toMatch(/^injected fault: .*, safe to retry$/);
    expect(sandbox.state.all()).toEqual([]);
    expect(sandbox.stats().faults.error).toBe(1);
  });

  it('rate429: 429 with the configured Retry-After, nothing done', async () => {
    const { api, sandbox } = fresh({ faults: { rate429: 1, retryAfterSeconds: 7 } });
    const reply = await api.post('/networks', NET);
    expect(reply.status).toBe(429);
    expect(reply.headers.get('Retry-After')).toBe('7');
    expect(reply.body).toEqual({
      code: 'rate_limited',
      message: 'injected fault: too many requests, retry after 7s',
    });
    expect(sandbox.state.all()).toEqual([]);
  });

  it('latency: waits latencyMs plus seeded jitter before API requests only', async () => {
    const waits = async () => {
      const slept: number[] = [];
      const { api } = fresh({
        faults: { seed: 3, latencyMs: 100, latencyJitterMs: 50 },
        sleep: (ms) => {
          slept.push(ms);
          return Promise.resolve();
        },
      });
      for (let i = 0; i < 5; i++) await api.get('/networks');
      await api.get('/openapi.json');
      await api.get('/_sandbox/objects');
      return slept;
    };
    const slept = await waits();
    expect(slept).toHaveLength(5);
    expect(slept.every((ms) => ms >= 100 && ms <= 150)).toBe(true);
    expect(new Set(slept).size).toBeGreaterThan(1);
    expect(await waits()).toEqual(slept);
  });

  it('methods restricts faults to the listed methods', async () => {
    const { api } = fresh({ faults: { errorRate: 1, methods: ['POST'] } });
    expect((await api.get('/networks')).status).toBe(200);
    expect([500, 503]).toContain((await api.post('/networks', NET)).status);
  });

  it('never faults the document or the admin routes', async () => {
    const { api } = fresh({ faults: { errorRate: 1, rateLimit: 1 } });
    for (let i = 0; i < 3; i++) {
      expect((await api.get('/openapi.json')).status).toBe(200);
      expect((await api.get('/_sandbox/objects')).status).toBe(200);
      expect((await api.get('/_sandbox/faults')).status).toBe(200);
    }
  });

  it('rateLimit (fake clock): excess requests get 429 with Retry-After from the bucket', async () => {
    let now = 0;
    const { api, sandbox } = fresh({ now: () => now, faults: { rateLimit: 2 } });
    expect((await api.get('/networks')).status).toBe(200);
    expect((await api.get('/networks')).status).toBe(200);
    const limited = await api.get('/networks');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('Retry-After')).toBe('1');
    expect(limited.body).toEqual({
      code: 'rate_limited',
      message: 'rate limit of 2 requests per second exceeded: retry after 1s',
    });
    now += 500;
    expect((await api.get('/networks')).status).toBe(200);
    expect((await api.get('/networks')).status).toBe(429);
    expect(sandbox.stats().faults.rateLimit).toBe(2);
  });
});

describe('admin: /_sandbox/faults, /_sandbox/reset, /_sandbox/stats', () => {
  it('reads, merges, validates and resets fault settings', async () => {
    const { api } = fresh({ faults: { seed: 5, latencyMs: 0, errorRate: 0.1 } });
    expect((await api.get('/_sandbox/faults')).body).toEqual({
      ...NO_FAULTS,
      seed: 5,
      errorRate: 0.1,
    });
    const merged = await api.put('/_sandbox/faults', { rate429: 0.5, methods: ['get'] });
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({
      ...NO_FAULTS,
      seed: 5,
      errorRate: 0.1,
      rate429: 0.5,
      methods: ['GET'],
    });
    const bad = await api.put('/_sandbox/faults', { errorRate: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      code: 'invalid',
      field: 'errorRate',
      message: 'errorRate must be a number between 0 and 1',
    });
    expect((await api.get('/_sandbox/faults')).body.errorRate).toBe(0.1);

    expect((await api.post('/_sandbox/reset', undefined)).status).toBe(204);
    expect((await api.get('/_sandbox/faults')).body).toEqual({
      ...NO_FAULTS,
      seed: 5,
      errorRate: 0.1,
    });
  });

  it('reset forgets objects, idempotency keys, audit and counters', async () => {
    const { api, sandbox } = fresh();
    const key = { headers: { 'Idempotency-Key': 'k' } };
    await api.post('/networks', NET, key);
    await api.post('/_sandbox/reset', undefined);
    expect((await api.get('/_sandbox/objects')).body).toEqual({ objects: [] });
    expect(sandbox.stats().requests).toBe(0);
    expect((await api.get('/audit')).body.entries).toEqual([]);
    const again = await api.post('/networks', { ...NET, name: 'other' }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBeNull();
  });

  it('counts requests by status, faults by kind, and mutations', async () => {
    const { api } = fresh({ faults: { seed: 1 } });
    const net = (await api.post('/networks', NET)).body;
    await api.patch(`/networks/${net.id}`, { name: 'b' });
    await api.patch(`/networks/${net.id}`, { name: 'b' }); // no change: not an update
    await api.get('/networks/net-00000000');
    await api.put('/_sandbox/faults', { rate429: 1 });
    await api.get('/networks');
    await api.delete(`/networks/${net.id}`);
    expect((await api.get('/_sandbox/stats')).body).toEqual({
      requests: 6,
      byStatus: { '201': 1, '200': 2, '404': 1, '429': 2 },
      faults: { latency: 0, error: 0, rate429: 2, rateLimit: 0, timeoutAfterSuccess: 0 },
      creates: 1,
      updates: 1,
      deletes: 0,
    });
  });
});
