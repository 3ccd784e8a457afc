import { describe, expect, it } from 'vitest';
import { hashValue } from '../core/index.js';
import { sentHashes, writeOnlyChanged, writeOnlyRefusal } from './write-only.js';

const ZONES = { writeOnly: ['nameservers', 'zone'] };
const NS = ['ns1.example.org.'];

describe('sentHashes', () => {
  it.each([
    { name: 'no write-only fields', info: {}, desired: { name: 'a' }, want: undefined },
    { name: 'none declared', info: ZONES, desired: { name: 'a' }, want: undefined },
    {
      name: 'each declared one, hashed',
      info: ZONES,
      desired: { name: 'a', nameservers: NS },
      want: { nameservers: hashValue(NS) },
    },
    {
      name: 'not an Unknown (known only after apply)',
      info: ZONES,
      desired: { nameservers: { $unknown: 'pdns.zones/x.id' } },
      want: undefined,
    },
  ])('$name', ({ info, desired, want }) => {
    expect(sentHashes(info, desired)).toEqual(want);
  });
});

describe('writeOnlyChanged', () => {
  const sent = { nameservers: hashValue(NS) };
  it.each([
    { name: 'same value', desired: { nameservers: NS }, sent, want: [] },
    {
      name: 'another value',
      desired: { nameservers: ['ns2.example.org.'] },
      sent,
      want: ['nameservers'],
    },
    { name: 'no longer declared: not a change', desired: {}, sent, want: [] },
    {
      name: 'nothing recorded (an adopted object): not a change',
      desired: { nameservers: ['x.'] },
      sent: undefined,
      want: [],
    },
    {
      name: 'a field never sent: not a change',
      desired: { zone: 'x' },
      sent,
      want: [],
    },
  ])('$name', ({ desired, sent: s, want }) => {
    expect(writeOnlyChanged(ZONES, desired, s)).toEqual(want);
  });
});

describe('writeOnlyRefusal', () => {
  it('says what changed, why it cannot be updated, and what to do', () => {
    const e = writeOnlyRefusal('pdns.zones/example', 'pdns.zones', ['nameservers']);
    expect(e.code).toBe('plan.write_only_changed');
    expect(e.address).toBe('pdns.zones/example');
    expect(e.message).toBe(
      'pdns.zones/example: nameservers is write-only (sent on create, never returned by the platform) and has changed in the intent since Tend created the object; an update cannot change it',
    );
    expect(e.hint).toBe(
      'put back the value the object was created with, or declare nameservers create-only (x-tend-immutable) in the overlay of pdns so that a change replaces the object',
    );
  });
  it('speaks of several fields in the plural', () => {
    expect(writeOnlyRefusal('a.b/c', 'a.b', ['x', 'y']).message).toBe(
      'a.b/c: x, y are write-only (sent on create, never returned by the platform) and have changed in the intent since Tend created the object; an update cannot change them',
    );
  });
});
