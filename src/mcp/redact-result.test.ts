import { describe, expect, it } from 'vitest';
import { Redactor } from '../core/index.js';
import { redactResult } from './server.js';

// Every MCP result passes through the redactor value by value: a secret that would cut through the
// JSON text of the result (merging two keys) must neither break the result nor survive in it.

describe('redactResult', () => {
  const cases = [
    {
      reason: 'a secret inside a string value',
      secret: 's3cr3t-value',
      value: { note: 'the password is s3cr3t-value' },
      want: { note: 'the password is «redacted»' },
    },
    {
      reason: 'a numeric secret shown as a number',
      secret: '98765432',
      value: { pin: 98765432, other: 1 },
      want: { pin: '«redacted»', other: 1 },
    },
    {
      reason: 'a secret that spans JSON structure when written raw',
      secret: '","b":"',
      value: { a: 'x', b: 'y', c: 'say ","b":" here' },
      want: { a: 'x', b: 'y', c: 'say «redacted» here' },
    },
    {
      reason: 'nothing to redact',
      secret: 'unrelated-secret',
      value: { list: [1, 'two', { three: null }] },
      want: { list: [1, 'two', { three: null }] },
    },
  ];
  it.each(cases)('$reason', ({ secret, value, want }) => {
    const r = new Redactor();
    r.add(secret);
    const got = redactResult(value, r);
    expect(got).toEqual(want);
    const leaves = (v: unknown): string[] =>
      v !== null && typeof v === 'object'
        ? Object.entries(v).flatMap(([k, x]) => [k, ...leaves(x)])
        : [String(v)];
    expect(leaves(got).filter((l) => l.includes(secret))).toEqual([]);
  });
});
