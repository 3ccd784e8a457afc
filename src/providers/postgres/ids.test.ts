import { describe, expect, it } from 'vitest';
import type { GrantOn } from './ids.js';
import { grantId, parseGrantId, roleId } from './ids.js';

describe('grant ids', () => {
  const cases: { reason: string; on: GrantOn; role: string; id: string }[] = [
    {
      reason: 'a schema grant',
      on: { target: 'schema', name: 'app' },
      role: 'reader',
      id: 'schema:app:reader',
    },
    {
      reason: 'default privileges name the role whose objects get them',
      on: { target: 'defaultTablesInSchema', name: 'app', forRole: 'owner' },
      role: 'reader',
      id: 'defaultTablesInSchema:app:owner:reader',
    },
    {
      reason: 'colons and percent signs in names are encoded',
      on: { target: 'database', name: 'a:b%c' },
      role: 'x:y',
      id: 'database:a%3Ab%25c:x%3Ay',
    },
    {
      reason: 'quotes and spaces stay as they are',
      on: { target: 'allTablesInSchema', name: 'My "S"' },
      role: 'Read Only',
      id: 'allTablesInSchema:My "S":Read Only',
    },
  ];
  for (const c of cases) {
    it(`${c.reason}: ${c.id}, and back`, () => {
      expect(grantId(c.on, c.role)).toBe(c.id);
      expect(parseGrantId(c.id)).toEqual({ on: c.on, role: c.role });
    });
  }

  it.each([
    ['an unknown target', 'table:a:b'],
    ['too few parts', 'schema:a'],
    ['default privileges without forRole', 'defaultTablesInSchema:a:b'],
  ])('is not a grant id: %s', (_reason, id) => {
    expect(parseGrantId(id)).toBeUndefined();
  });

  it('names are the ids of named objects', () => {
    expect(roleId('x"; DROP ROLE postgres; --')).toBe('x"; DROP ROLE postgres; --');
  });
});
