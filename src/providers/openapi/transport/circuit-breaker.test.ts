import { describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import type { CircuitBreakerOptions } from './circuit-breaker.js';
import { CircuitBreaker } from './circuit-breaker.js';

// The circuit breaker on a hand-moved clock: Unix milliseconds, so that times read as dates.

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function breaker(extra: Partial<CircuitBreakerOptions> = {}) {
  let now = T0;
  const clock = () => now;
  const c = new CircuitBreaker({
    target: 'http://127.0.0.1:7781',
    clock,
    wallClock: clock,
    ...extra,
  });
  return {
    c,
    advance: (ms: number) => {
      now += ms;
    },
    /** One attempt that fails as "platform down". */
    fail: (error = 'GET /volumes: cannot connect (ECONNREFUSED)') =>
      c.failed(c.admit('GET /volumes'), error),
    succeed: () => c.succeeded(c.admit('GET /volumes')),
  };
}

function refusal(f: () => unknown): TendError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected the circuit to refuse');
}

describe('circuit breaker', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { c, fail, succeed } = breaker();
    for (let i = 0; i < 4; i++) fail();
    succeed();
    for (let i = 0; i < 4; i++) fail();
    expect(c.report()).toEqual({ state: 'closed', failures: 4 });
    expect(c.admit('GET /volumes')).toEqual({ probe: false });
  });

  it('opens after N consecutive failures and fails fast saying since when and until when', () => {
    const { c, fail, advance } = breaker();
    for (let i = 0; i < 4; i++) fail();
    advance(1_000);
    fail('GET /volumes: no response within 10000 ms');
    expect(c.report()).toEqual({
      state: 'open',
      since: at(1_000),
      lastError: 'GET /volumes: no response within 10000 ms',
      probeAt: at(6_000),
      failures: 5,
    });
    advance(2_000);
    const e = refusal(() => c.admit('POST /networks'));
    expect(e).toMatchObject({
      code: 'platform.circuit_open',
      retryable: true,
      outcomeUnknown: false,
      retryAfterSeconds: 3,
    });
    expect(e.message).toBe(
      `POST /networks: not sent: the platform at http://127.0.0.1:7781 is considered down since ${at(1_000)} (5 failures in a row; last: GET /volumes: no response within 10000 ms); Tend will probe it again at ${at(6_000)}`,
    );
    expect(e.hint).toMatch(/nothing was sent/);
    // check() refuses the same way, without admitting anything.
    expect(refusal(() => c.check('GET /x')).code).toBe('platform.circuit_open');
  });

  it('lets one probe through after the cool-down; its success closes the circuit', () => {
    const { c, fail, advance } = breaker();
    for (let i = 0; i < 5; i++) fail();
    advance(5_000);
    expect(c.report()).toMatchObject({ state: 'half-open', since: at(5_000) });
    expect(() => c.check('GET /volumes')).not.toThrow();
    const probe = c.admit('GET /volumes');
    expect(probe).toEqual({ probe: true });
    // While the probe is out, everything else still fails fast.
    const e = refusal(() => c.admit('GET /networks'));
    expect(e.message).toMatch(/; a probe request is checking whether it is back$/);
    expect(e.retryAfterSeconds).toBe(1);
    expect(c.report().state).toBe('half-open');
    advance(20);
    c.succeeded(probe);
    expect(c.report()).toEqual({ state: 'closed', since: at(5_020), failures: 0 });
    expect(c.admit('GET /volumes')).toEqual({ probe: false });
  });

  it('re-opens on a failed probe for twice as long, up to the longest cool-down', () => {
    const { c, fail, advance } = breaker({ cooldownMs: 5_000, maxCooldownMs: 30_000 });
    for (let i = 0; i < 5; i++) fail();
    const cooldowns: number[] = [];
    let opened = 0;
    for (let round = 0; round < 5; round++) {
      // Find when the probe may go: it is refused a millisecond before.
      let wait = 0;
      while (c.report().state === 'open') {
        advance(1_000);
        wait += 1_000;
      }
      cooldowns.push(wait);
      opened += wait;
      fail(`probe ${round} failed`);
      expect(c.report()).toMatchObject({ state: 'open', lastError: `probe ${round} failed` });
    }
    expect(cooldowns).toEqual([5_000, 10_000, 20_000, 30_000, 30_000]);
    // Re-openings keep the time the outage began.
    const e = refusal(() => c.admit('GET /volumes'));
    expect(e.message).toContain(`considered down since ${at(0)}`);
    expect(e.message).toContain(`probe it again at ${at(opened + 30_000)}`);
  });

  it('closes on a success after re-opening and starts again from the first cool-down', () => {
    const { c, fail, advance, succeed } = breaker();
    for (let i = 0; i < 5; i++) fail();
    advance(5_000);
    fail('probe failed'); // re-opens for 10 s
    advance(10_000);
    succeed(); // the probe
    expect(c.report().state).toBe('closed');
    for (let i = 0; i < 5; i++) fail();
    expect(c.report().probeAt).toBe(at(15_000 + 5_000));
  });

  it('ignores failures of attempts admitted before it opened', () => {
    const { c, fail, advance } = breaker();
    const late = c.admit('GET /volumes');
    for (let i = 0; i < 5; i++) fail();
    advance(4_000);
    c.failed(late, 'late failure');
    expect(c.report()).toMatchObject({
      state: 'open',
      probeAt: at(5_000),
      lastError: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('closes on any success, even of an attempt admitted before it opened', () => {
    const { c, fail } = breaker();
    const early = c.admit('GET /volumes');
    for (let i = 0; i < 5; i++) fail();
    c.succeeded(early);
    expect(c.report().state).toBe('closed');
  });

  it('frees the probe when it ends without a verdict (cancelled)', () => {
    const { c, fail, advance } = breaker();
    for (let i = 0; i < 5; i++) fail();
    advance(5_000);
    const probe = c.admit('GET /volumes');
    c.released(probe);
    expect(c.admit('GET /volumes')).toEqual({ probe: true });
  });

  it('never opens with threshold 0', () => {
    const { c, fail } = breaker({ threshold: 0 });
    for (let i = 0; i < 100; i++) fail();
    expect(c.report().state).toBe('closed');
  });

  it.each([
    {
      name: 'negative threshold',
      options: { threshold: -1 },
      message: 'circuitThreshold must be an integer >= 0 (0 never opens the circuit), got -1',
    },
    {
      name: 'fractional threshold',
      options: { threshold: 2.5 },
      message: 'circuitThreshold must be an integer >= 0 (0 never opens the circuit), got 2.5',
    },
    {
      name: 'zero cool-down',
      options: { cooldownMs: 0 },
      message: 'circuitCooldownMs must be a number of milliseconds > 0, got 0',
    },
    {
      name: 'longest cool-down below the first',
      options: { cooldownMs: 10_000, maxCooldownMs: 5_000 },
      message: 'circuitMaxCooldownMs must be a number of milliseconds >= 10000, got 5000',
    },
  ])('refuses a $name', ({ options, message }) => {
    const e = refusal(() => breaker(options));
    expect(e).toMatchObject({ code: 'http.bad_option', phase: 'load', message });
  });
});
