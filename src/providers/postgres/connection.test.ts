import { describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import { describeConnection, resolveConnection } from './connection.js';

function secrets(): { add(s: string): void; all: string[] } {
  const all: string[] = [];
  return { add: (s) => all.push(s), all };
}

describe('resolveConnection', () => {
  it.each([
    {
      name: 'libpq variables alone',
      url: undefined,
      env: { PGHOST: 'db.internal', PGPORT: '6432', PGUSER: 'admin', PGDATABASE: 'app' },
      want: { host: 'db.internal', port: 6432, user: 'admin', database: 'app', sslMode: 'disable' },
    },
    {
      name: 'the URL replaces only what it names',
      url: 'postgres://ops@10.0.0.5/inventory',
      env: { PGHOST: 'db.internal', PGPORT: '6432', PGUSER: 'admin' },
      want: {
        host: '10.0.0.5',
        port: 6432,
        user: 'ops',
        database: 'inventory',
        sslMode: 'disable',
      },
    },
    {
      name: 'percent-encoded user and database, an IPv6 host, sslmode',
      url: 'postgresql://r%C3%B4le%40x@[::1]:5433/My%20DB?sslmode=verify-full',
      env: {},
      want: { host: '::1', port: 5433, user: 'rôle@x', database: 'My DB', sslMode: 'verify-full' },
    },
    {
      name: 'the database defaults to the user, as in libpq',
      url: undefined,
      env: { PGUSER: 'alice' },
      want: { host: 'localhost', port: 5432, user: 'alice', database: 'alice', sslMode: 'disable' },
    },
    {
      name: 'prefer is never a silent downgrade: it means disable',
      url: undefined,
      env: { PGUSER: 'a', PGSSLMODE: 'prefer' },
      want: { host: 'localhost', port: 5432, user: 'a', database: 'a', sslMode: 'disable' },
    },
  ])('$name', ({ url, env, want }) => {
    const c = resolveConnection(url === undefined ? {} : { url }, env);
    expect(c.summary).toEqual(want);
    expect(c.config.host).toBe(want.host);
    expect(c.config.port).toBe(want.port);
  });

  it('registers the password, from the URL or PGPASSWORD, and never shows it', () => {
    const s = secrets();
    const c = resolveConnection({ url: 'postgres://u:s3cr%2Ft@h/d' }, {}, s);
    expect(s.all).toEqual(['s3cr/t']);
    expect(c.config.password).toBe('s3cr/t');
    expect(describeConnection(c.summary)).toBe('postgres://u@h:5432/d');
    const s2 = secrets();
    resolveConnection({}, { PGPASSWORD: 'from-env', PGUSER: 'u' }, s2);
    expect(s2.all).toEqual(['from-env']);
  });

  it('a given user and password win over the URL and the libpq variables', () => {
    const s = secrets();
    const c = resolveConnection(
      { url: 'postgres://ops:url-pw@h/d', user: 'app', password: 'from-file' },
      { PGUSER: 'admin', PGPASSWORD: 'env-pw' },
      s,
    );
    expect(c.config.user).toBe('app');
    expect(c.config.password).toBe('from-file');
    expect(c.summary.user).toBe('app');
    expect(s.all).toEqual(['from-file']);
  });

  it('sets statement and lock timeouts (defaults, and declared)', () => {
    const d = resolveConnection({}, { PGUSER: 'u' }).config;
    expect([d.statement_timeout, d.lock_timeout, d.application_name]).toEqual([
      30_000,
      5_000,
      'tend',
    ]);
    const c = resolveConnection({ statementTimeoutMs: 1000, lockTimeoutMs: 200 }, {}).config;
    expect([c.statement_timeout, c.lock_timeout]).toEqual([1000, 200]);
  });

  it('maps TLS modes to node options', () => {
    expect(resolveConnection({}, {}).config.ssl).toBe(false);
    expect(resolveConnection({ sslMode: 'require' }, {}).config.ssl).toMatchObject({
      rejectUnauthorized: false,
    });
    expect(
      resolveConnection({ sslMode: 'verify-full', sslRootCert: 'PEM' }, {}).config.ssl,
    ).toEqual({
      rejectUnauthorized: true,
      ca: 'PEM',
    });
  });

  it.each([
    ['not a URL', { url: 'postgres://u:pw@h:99999999/d' }, /not a valid URL/],
    ['another scheme', { url: 'mysql://u@h/d' }, /must start with postgres:\/\//],
    [
      'an unknown parameter',
      { url: 'postgres://h/d?connect_timeout=3' },
      /unsupported connection string parameter: connect_timeout/,
    ],
    ['a bad sslmode', { url: 'postgres://h/d?sslmode=sometimes' }, /unknown sslmode `sometimes`/],
    ['a zero timeout', { statementTimeoutMs: 0 }, /statementTimeoutMs must be a positive/],
  ])('refuses %s, without repeating the URL', (_name, options, message) => {
    let err: unknown;
    try {
      resolveConnection(options, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).message).toMatch(message);
    expect((err as TendError).message).not.toContain('pw@');
  });
});
