import { describe, expect, it } from 'vitest';
import type { Permit, RateLimiterOptions } from './rate-limiter.js';
import { RateLimiter } from './rate-limiter.js';
import type { VirtualTime } from './timing.js';
import { createVirtualTime } from './timing.js';

// The adaptive rate limiter on virtual time: nothing here waits for real.

function limiter(ceiling: number, extra: Partial<RateLimiterOptions> = {}) {
  const vt = createVirtualTime();
  const l = new RateLimiter({ ceiling, clock: vt.clock, sleep: vt.sleep, ...extra });
  return { vt, l };
}

/** Takes `n` permits one after another; returns them and the times they were granted. */
async function takeMany(vt: VirtualTime, l: RateLimiter, n: number): Promise<Permit[]> {
  const out: Permit[] = [];
  for (let i = 0; i < n; i++) out.push(await vt.run(l.take()));
  return out;
}

/** Sends at the full allowed rate for `ms`, every request succeeding. */
async function succeedFor(vt: VirtualTime, l: RateLimiter, ms: number): Promise<number> {
  const end = vt.clock() + ms;
  let n = 0;
  while (vt.clock() < end) {
    l.succeeded(await vt.run(l.take()));
    n++;
  }
  return n;
}

describe('rate limiter: pacing', () => {
  it('spaces requests evenly at the configured rate, without a burst', async () => {
    const { vt, l } = limiter(10);
    const permits = await vt.run(Promise.all(Array.from({ length: 5 }, () => l.take())));
    expect(permits.map((p) => p.at)).toEqual([0, 100, 200, 300, 400]);
    expect(l.rate).toBe(10);
  });

  it('does not save up unused time for a later burst', async () => {
    const { vt, l } = limiter(10);
    await vt.run(l.take());
    await vt.advance(5_000);
    const permits = await takeMany(vt, l, 3);
    expect(permits.map((p) => p.at)).toEqual([5_000, 5_100, 5_200]);
  });

  it('lets everything through at once when unlimited, and reports rate 0', async () => {
    const { vt, l } = limiter(0);
    const permits = await vt.run(Promise.all(Array.from({ length: 100 }, () => l.take())));
    expect(new Set(permits.map((p) => p.at))).toEqual(new Set([0]));
    expect(l.rate).toBe(0);
    expect(l.state().rate).toBe(Infinity);
  });

  it('gives up a wait when the caller aborts', async () => {
    const { vt, l } = limiter(1);
    await vt.run(l.take());
    const ctl = new AbortController();
    const waiting = l.take(ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(vt.run(waiting)).rejects.toThrow('stop');
  });
});

describe('rate limiter: adapting to 429', () => {
  it('cuts the rate to 0.7x on a 429', async () => {
    const { vt, l } = limiter(100);
    const [p] = await takeMany(vt, l, 20);
    l.throttled(p!);
    expect(l.rate).toBeCloseTo(70);
    expect(l.state().decreases).toBe(1);
  });

  it('cuts once per round: a 429 to a request sent before the cut cuts nothing more', async () => {
    const { vt, l } = limiter(100);
    const before = await takeMany(vt, l, 10);
    for (const p of before) l.throttled(p);
    expect(l.rate).toBeCloseTo(70);
    const after = await vt.run(l.take());
    l.throttled(after);
    expect(l.rate).toBeCloseTo(49);
  });

  it('cuts what was really being sent when that is less than the limit', async () => {
    // Allowed 100/s, but the caller only sends 20/s (e.g. held back by its concurrency).
    const { vt, l } = limiter(100);
    let p: Permit | undefined;
    for (let i = 0; i < 20; i++) {
      p = await vt.run(l.take());
      await vt.advance(50);
    }
    l.throttled(p!);
    expect(l.rate).toBeGreaterThan(13);
    expect(l.rate).toBeLessThan(15);
  });

  it('when unlimited, starts limiting at 0.7x the rate that drew the first 429', async () => {
    const { vt, l } = limiter(0);
    // 16 at once every 20 ms: 800 requests/s.
    let last: Permit | undefined;
    for (let round = 0; round < 10; round++) {
      const ps = await vt.run(Promise.all(Array.from({ length: 16 }, () => l.take())));
      last = ps[0];
      await vt.advance(20);
    }
    l.throttled(last!);
    expect(l.rate).toBeGreaterThan(0.7 * 750);
    expect(l.rate).toBeLessThan(0.7 * 850);
  });

  it('never cuts below the floor', async () => {
    const { vt, l } = limiter(2);
    for (let i = 0; i < 10; i++) l.throttled(await vt.run(l.take()));
    expect(l.rate).toBe(1);
    const low = limiter(0.5);
    low.l.throttled(await low.vt.run(low.l.take()));
    expect(low.l.rate).toBe(0.5);
  });

  it('holds back every request for a Retry-After, not just the refused one', async () => {
    const { vt, l } = limiter(10);
    const refused = await vt.run(l.take()); // at 0
    // Two callers already waiting for their turn (100 and 200) when the 429 arrives at 50.
    const waiting = Promise.all([l.take(), l.take()]);
    await vt.advance(50);
    l.throttled(refused, 1_000);
    expect(l.pausedFor()).toBe(1_000);
    expect(l.state().pausedUntil).toBe(1_050);
    const [a, b] = await vt.run(waiting);
    const later = await vt.run(l.take());
    // Resumed after the pause, spaced at the cut rate (7/s: 143 ms apart).
    expect(a.at).toBe(1_050);
    expect(b.at).toBeCloseTo(1_050 + 1000 / 7);
    expect(later.at).toBeCloseTo(1_050 + 2000 / 7);
    expect(l.pausedFor()).toBe(0);
  });

  it('a later, shorter Retry-After does not shorten a pause', async () => {
    const { vt, l } = limiter(10);
    const p = await vt.run(l.take());
    l.throttled(p, 2_000);
    l.pause(500);
    expect(l.pausedFor()).toBe(2_000);
  });
});

describe('rate limiter: recovering', () => {
  it('recovers fast to 0.9x the cut rate, then creeps, then probes at the normal pace', async () => {
    const { vt, l } = limiter(1_000);
    // Cut from 500/s (the caller was sending 500/s: the platform's limit).
    for (let i = 0; i < 250; i++) {
      await vt.run(l.take());
      await vt.advance(2);
    }
    l.throttled(await vt.run(l.take()));
    const cut = l.rate;
    expect(cut).toBeGreaterThan(340);
    expect(cut).toBeLessThan(360);
    // Fast: 10% of 500 per second: 0.7 → 0.9 of 500 in about 2 s.
    await succeedFor(vt, l, 2_000);
    expect(l.rate).toBeGreaterThan(440);
    expect(l.rate).toBeLessThan(460);
    // Creeping: 0.25% of 500 (1.25 requests/s) per second across 0.9x..1.05x the cut rate.
    let from = l.rate;
    await succeedFor(vt, l, 10_000);
    expect(l.rate - from).toBeGreaterThan(11);
    expect(l.rate - from).toBeLessThan(14);
    from = vt.clock();
    while (l.rate < 530) await succeedFor(vt, l, 1_000);
    expect(vt.clock() - from).toBeGreaterThan(45_000);
    expect(vt.clock() - from).toBeLessThan(55_000);
    // Beyond 1.05x: 5% of 500 per second.
    const at = l.rate;
    await succeedFor(vt, l, 2_000);
    expect(l.rate - at).toBeGreaterThan(45);
    expect(l.rate - at).toBeLessThan(55);
  });

  it('never grows above the configured rate', async () => {
    const { vt, l } = limiter(50);
    l.throttled(await vt.run(l.take()));
    await succeedFor(vt, l, 120_000);
    expect(l.rate).toBe(50);
  });

  it('grows by at least 1 request/s per second, so a low rate recovers too', async () => {
    const { vt, l } = limiter(10);
    for (let i = 0; i < 10; i++) l.throttled(await vt.run(l.take()));
    expect(l.rate).toBe(1);
    await succeedFor(vt, l, 4_000);
    expect(l.rate).toBeGreaterThan(3);
    expect(l.rate).toBeLessThan(5);
  });

  it('does not grow while idle', async () => {
    const { vt, l } = limiter(100);
    l.throttled(await vt.run(l.take()));
    const cut = l.rate;
    await vt.advance(60_000);
    expect(l.rate).toBe(cut);
  });
});

/**
 * A platform with a token-bucket limit, as the sandbox implements it: `limit` tokens per second,
 * at most `burst` saved up, a 429 with Retry-After = whole seconds until the next token (at least 1).
 */
function platform(limit: number, burst: number, clock: () => number) {
  let tokens = burst;
  let last = clock();
  return (): number | undefined => {
    const now = clock();
    tokens = Math.min(burst, tokens + ((now - last) / 1000) * limit);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - tokens) / limit)) * 1000;
  };
}

describe('rate limiter: simulation against a rate-limited platform', () => {
  const cases: {
    name: string;
    reason: string;
    ceiling: number;
    burst: number;
    concurrency: number;
    atLeast: number;
  }[] = [
    {
      name: 'unlimited config, sandbox-like bucket (burst = limit)',
      reason: 'the benchmark setting: Tend must reach 90% of the limit',
      ceiling: 0,
      burst: 500,
      concurrency: 16,
      atLeast: 0.9,
    },
    {
      name: 'configured above the limit, sandbox-like bucket',
      reason: 'a rateLimit set too high adapts down to the platform',
      ceiling: 1_000,
      burst: 500,
      concurrency: 32,
      atLeast: 0.9,
    },
    {
      name: 'configured at the limit',
      reason: 'a correct rateLimit never draws a 429',
      ceiling: 500,
      burst: 500,
      concurrency: 16,
      atLeast: 0.99,
    },
    {
      name: 'unlimited config, strict bucket (burst = limit/10)',
      reason: 'every 429 costs a full 1 s pause: fewer 429s matter more than a high peak',
      ceiling: 0,
      burst: 50,
      concurrency: 16,
      atLeast: 0.9,
    },
    {
      name: 'unlimited config, no burst at all',
      reason: 'the hardest platform: the creep near the known limit keeps it above 90%',
      ceiling: 0,
      burst: 1,
      concurrency: 16,
      atLeast: 0.9,
    },
  ];

  it.each(cases)(
    '$name: $reason',
    async ({ ceiling, burst, concurrency, atLeast }) => {
      // 500 requests/s allowed, 20 ms latency, `concurrency` callers sending as fast as allowed
      // for 60 virtual seconds; the rate achieved after 10 s of learning is compared to the limit.
      const limit = 500;
      const seconds = 60;
      const { vt, l } = limiter(ceiling);
      const refuse = platform(limit, burst, vt.clock);
      const done: number[] = [];
      let throttled = 0;
      const caller = async () => {
        while (vt.clock() < seconds * 1000) {
          const permit = await l.take();
          const retryAfter = refuse();
          await vt.sleep(20);
          if (retryAfter === undefined) {
            done.push(vt.clock());
            l.succeeded(permit);
          } else {
            throttled++;
            l.throttled(permit, retryAfter);
          }
        }
      };
      await vt.run(Promise.all(Array.from({ length: concurrency }, caller)));
      const settled = done.filter((t) => t > 10_000 && t <= seconds * 1000).length / 50;
      const ratio = settled / limit;
      expect(ratio).toBeGreaterThanOrEqual(atLeast);
      // A few 429s per cut (the requests already in flight), not a storm.
      expect(throttled).toBeLessThan(done.length * 0.005);
    },
    20_000,
  );
});
