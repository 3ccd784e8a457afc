import { describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import { parseListen } from './worker.js';

describe('tend worker --listen', () => {
  it.each([
    ['9464', { host: '127.0.0.1', port: 9464 }],
    ['0', { host: '127.0.0.1', port: 0 }],
    ['0.0.0.0:9464', { host: '0.0.0.0', port: 9464 }],
    ['localhost:80', { host: 'localhost', port: 80 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
  ])('reads %s', (given, want) => {
    expect(parseListen(given)).toEqual(want);
  });

  it.each(['', 'host:', ':9464x', '9464:host', '70000', '::1:9464', 'a b:1'])(
    'refuses %j, saying what it takes',
    (given) => {
      let caught: unknown;
      try {
        parseListen(given);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(TendError);
      const e = caught as TendError;
      expect(e.code).toBe('cli.invalid-flag');
      expect(e.message).toBe(
        `--listen must be [host:]port (a port from 0 to 65535), got ${JSON.stringify(given)}`,
      );
      expect(e.hint).toContain('--listen 0.0.0.0:9464');
    },
  );
});
