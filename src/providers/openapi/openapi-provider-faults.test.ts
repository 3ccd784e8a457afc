import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Address } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { SandboxHandle } from '../../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../../test/support/sandbox-process.js';
import type { OpenApiProvider, OpenApiProviderOptions } from './openapi-provider.js';
import { loadOpenApiProvider } from './openapi-provider.js';

// Integration: the provider's fault handling against the real sandbox, faults switched on through
// its /_sandbox API, "down" being the sandbox stopped. Durations that matter run on a clock the
// test moves (the circuit's cool-down); the rate-limit case runs in real time because the
// sandbox's token bucket does.

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const ACTOR = { actor: 'tend' };

let sb: SandboxHandle;
const running: SandboxHandle[] = [];

async function start(port = 0): Promise<SandboxHandle> {
  const handle = await startSandboxInProcess({ port });
  running.push(handle);
  return handle;
}

beforeEach(async () => {
  sb = await start();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((h) => h.stop()));
});
afterAll(async () => {
  await Promise.all(running.splice(0).map((h) => h.stop()));
});

async function provider(extra: Partial<OpenApiProviderOptions> = {}): Promise<OpenApiProvider> {
  return loadOpenApiProvider({
    name: 'sb',
    spec: `${sb.url}/openapi.json`,
    endpoint: sb.url,
    workspace: 'ws',
    ...extra,
  });
}

/** A clock the test moves by hand (Unix milliseconds) and a sleep that returns at once. */
function manualTime() {
  let now = T0;
  return {
    options: { clock: () => now, wallClock: () => now, sleep: () => Promise.resolve() },
    advance: (ms: number) => {
      now += ms;
    },
    iso: () => new Date(now).toISOString(),
  };
}

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected a failure');
}

const create = (p: OpenApiProvider, i: number) =>
  p.create(
    'networks',
    { name: `n${i}`, cidr: `10.${Math.floor(i / 256)}.${i % 256}.0/24` },
    {
      actor: ACTOR,
      idempotencyKey: `op-${i}`,
      marker: { workspace: 'ws', address: `sb.networks/n${i}` as Address },
    },
  );

describe('openapi provider on the sandbox: fault handling', () => {
  it('adapts to the platform rate limit: N creates complete with few 429s after the first', async () => {
    // 50 requests/s with a burst of 50; Tend configured unlimited, 4 in flight (so that at most 4
    // requests meet each 429 round, however fast the machine).
    await sb.setFaults({ rateLimit: 50 });
    const p = await provider({ concurrency: 4, maxAttempts: 8 });
    expect(p.health()).toEqual({ circuit: 'closed', rateLimit: 0 });
    const n = 150;
    await Promise.all(Array.from({ length: n }, (_, i) => create(p, i)));
    const objects = (await sb.objects()).filter((o) => o.type === 'networks');
    expect(objects).toHaveLength(n);
    const stats = await sb.stats();
    // The first 429s (the requests in flight) teach the limit, and their Retry-After holds every
    // request back; after that, a few per adjustment, not a storm.
    expect(stats.faults.rateLimit).toBeGreaterThan(0);
    expect(stats.faults.rateLimit).toBeLessThan(n * 0.1);
    // Unlimited before; a finite, adapted limit now.
    const health = p.health();
    expect(health.circuit).toBe('closed');
    expect(health.rateLimit).toBeGreaterThan(0);
    expect(health.rateLimit).toBeLessThan(500);
  }, 20_000);

  it('rides out intermittent 5xx without opening the circuit', async () => {
    await sb.setFaults({ errorRate: 0.3, seed: 11 });
    const time = manualTime();
    const p = await provider({ ...time.options, maxAttempts: 8 });
    for (let i = 0; i < 40; i++) await create(p, i);
    expect((await sb.stats()).faults.error).toBeGreaterThan(5);
    expect(p.health().circuit).toBe('closed');
    expect((await sb.objects()).filter((o) => o.type === 'networks')).toHaveLength(40);
  });

  it('opens the circuit when every call fails with 5xx, and closes it when the platform recovers', async () => {
    const time = manualTime();
    const p = await provider(time.options);
    await sb.setFaults({ errorRate: 1 });
    const e = await failure(p.list('networks'));
    expect(e.code).toBe('platform.unavailable');
    const open = await failure(p.list('networks'));
    expect(open.code).toBe('platform.circuit_open');
    expect(p.health()).toMatchObject({
      circuit: 'open',
      lastError: expect.stringMatching(/^GET \/networks: the platform failed \(50[03]/),
    });
    await sb.setFaults({ errorRate: 0 });
    time.advance(5_000);
    expect(p.health().circuit).toBe('half-open');
    expect(await p.list('networks')).toEqual([]);
    expect(p.health()).toEqual({ circuit: 'closed', since: time.iso(), rateLimit: 0 });
  });

  it('opens the circuit when the platform is down, fails fast, and closes after it is back', async () => {
    const time = manualTime();
    const p = await provider(time.options);
    await p.list('networks');
    const port = Number(new URL(sb.url).port);
    await sb.stop();

    // The first call spends its 4 attempts; the 5th failure in a row opens the circuit.
    const down = await failure(p.list('networks'));
    expect(down.code).toMatch(/^http\.(unreachable|connection_lost)$/);
    const fast = await failure(p.list('networks'));
    expect(fast).toMatchObject({ code: 'platform.circuit_open', retryable: true });
    expect(fast.message).toBe(
      `GET /networks: not sent: the platform at ${sb.url} is considered down since ${time.iso()} (5 failures in a row; last: ${p.health().lastError}); Tend will probe it again at ${new Date(T0 + 5_000).toISOString()}`,
    );
    expect(p.health()).toMatchObject({
      circuit: 'open',
      since: time.iso(),
      lastError: expect.stringMatching(/^GET \/networks: (cannot connect|the connection was lost)/),
      probeAt: new Date(T0 + 5_000).toISOString(),
    });

    // Back up on the same port: nothing reaches it until the cool-down is over.
    sb = await start(port);
    await failure(p.list('networks'));
    expect((await sb.stats()).requests).toBe(0);
    time.advance(5_000);
    expect(p.health().circuit).toBe('half-open');
    expect(await p.list('networks')).toEqual([]);
    expect(p.health()).toEqual({ circuit: 'closed', since: time.iso(), rateLimit: 0 });
    expect((await sb.stats()).requests).toBe(1);
  });
});
