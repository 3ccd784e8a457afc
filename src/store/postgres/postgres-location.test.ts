import { describe, expect, it } from 'vitest';
import { parsePostgresLocation, withApplicationName } from './postgres-location.js';

// The connections' application_name (pg_stat_activity): how an operator, or a test cutting one
// worker's connections, finds a worker's backends.
describe('the application_name of a PostgreSQL store location', () => {
  it('is `tend store` by default, PGAPPNAME when set, ?application_name= above both', () => {
    expect(parsePostgresLocation('postgres://u@h/db', {}).applicationName).toBe('tend store');
    expect(parsePostgresLocation('postgres://u@h/db', { PGAPPNAME: 'ops' }).applicationName).toBe(
      'ops',
    );
    expect(
      parsePostgresLocation('postgres://u@h/db?application_name=tend%20worker%20w1', {
        PGAPPNAME: 'ops',
      }).applicationName,
    ).toBe('tend worker w1');
  });

  it('withApplicationName sets it on a postgres:// location, keeping the rest; other locations stay', () => {
    const named = withApplicationName(
      'postgres://tend:p%40ss@db.example:6432/fleet?sslmode=require',
      'tend worker w-1',
    );
    const where = parsePostgresLocation(named, {});
    expect(where).toMatchObject({
      host: 'db.example',
      port: 6432,
      user: 'tend',
      password: 'p@ss',
      database: 'fleet',
      ssl: 'require',
      applicationName: 'tend worker w-1',
    });
    // Set again: replaced, not repeated.
    const again = withApplicationName(named, 'tend worker w-2');
    expect(parsePostgresLocation(again, {}).applicationName).toBe('tend worker w-2');
    expect(again.match(/application_name=/g)).toHaveLength(1);
    expect(withApplicationName('.tend/tend.db', 'x')).toBe('.tend/tend.db');
    expect(withApplicationName('sqlite:/var/tend.db', 'x')).toBe('sqlite:/var/tend.db');
  });
});
