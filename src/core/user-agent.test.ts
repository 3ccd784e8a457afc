import { describe, expect, it } from 'vitest';
import { userAgent, withUserAgent } from './user-agent.js';

describe('userAgent', () => {
  it('names Tend, its version and the process', () => {
    expect(userAgent({ version: '0.1.0' })).toBe('tend/0.1.0');
    expect(userAgent({ version: '0.1.0', pid: 123 })).toBe('tend/0.1.0 (pid 123)');
    expect(userAgent({ version: '0.1.0', worker: 'w-abc', pid: 123 })).toBe(
      'tend/0.1.0 (worker w-abc; pid 123)',
    );
  });

  it('keeps a worker id to what a header may carry, 64 characters at most', () => {
    expect(userAgent({ version: '1.2.3', worker: 'host a;(x)\r\nEvil: 1' })).toBe(
      'tend/1.2.3 (worker host_a__x___Evil:_1)',
    );
    expect(userAgent({ version: '1', worker: 'w'.repeat(100) })).toBe(
      `tend/1 (worker ${'w'.repeat(64)})`,
    );
    expect(userAgent({ version: '1', worker: '   ' })).toBe('tend/1');
  });
});

describe('withUserAgent', () => {
  it('adds the User-Agent to a request', () => {
    expect(withUserAgent({ accept: 'application/json' }, 'tend/1')).toEqual({
      accept: 'application/json',
      'user-agent': 'tend/1',
    });
  });

  it('leaves an explicit User-Agent alone, whatever its case', () => {
    expect(withUserAgent({ 'User-Agent': 'mine/2' }, 'tend/1')).toEqual({ 'User-Agent': 'mine/2' });
  });

  it('adds nothing without one', () => {
    expect(withUserAgent({ a: 'b' }, undefined)).toEqual({ a: 'b' });
  });
});
