import { describe, expect, it } from 'vitest';
import { canonicalPrivileges } from './grant.js';
import { normalizeValue } from './registry.js';

describe('how PostgreSQL values compare', () => {
  const cases: {
    reason: string;
    type: string;
    path: string;
    a: unknown;
    b: unknown;
    object?: Record<string, unknown>;
  }[] = [
    {
      reason: 'memberships as a set',
      type: 'role',
      path: 'member_of',
      a: ['b', 'a', 'a'],
      b: ['a', 'b'],
    },
    {
      reason: 'an expiry as an instant',
      type: 'role',
      path: 'valid_until',
      a: '2027-01-01',
      b: '2027-01-01T00:00:00Z',
    },
    {
      reason: 'an expiry with an offset',
      type: 'role',
      path: 'valid_until',
      a: '2027-01-01T02:00:00+02:00',
      b: '2027-01-01T00:00:00Z',
    },
    { reason: 'encodings by name', type: 'database', path: 'encoding', a: 'utf-8', b: 'UTF8' },
    {
      reason: "a comment without Tend's marker",
      type: 'schema',
      path: 'comment',
      a: 'app data',
      b: 'app data [tend:ws/pg.schema/app]',
    },
    {
      reason: 'privileges as a set, in any case, TEMP for TEMPORARY',
      type: 'grant',
      path: 'privileges',
      a: ['temp', 'connect', 'CONNECT'],
      b: ['CONNECT', 'TEMPORARY'],
      object: { on: { database: 'd' } },
    },
    {
      reason: 'ALL as every privilege of the target',
      type: 'grant',
      path: 'privileges',
      a: ['ALL'],
      b: ['CREATE', 'USAGE'],
      object: { on: { schema: 's' } },
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      expect(normalizeValue(c.type, c.path, c.a, c.object)).toEqual(
        normalizeValue(c.type, c.path, c.b, c.object),
      );
    });
  }

  it('keeps different values different', () => {
    expect(normalizeValue('role', 'member_of', ['a'], {})).not.toEqual(
      normalizeValue('role', 'member_of', ['a', 'b'], {}),
    );
    expect(canonicalPrivileges(['SELECT'], 'allTablesInSchema')).not.toEqual(
      canonicalPrivileges(['SELECT', 'INSERT'], 'allTablesInSchema'),
    );
  });
});
