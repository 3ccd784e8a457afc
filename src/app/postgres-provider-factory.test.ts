import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PostgresProviderDecl } from '../core/index.js';
import { Redactor, TendError } from '../core/index.js';
import { connectProvider, defaultProviders } from './providers.js';

// Connecting a `type: postgres` Provider through the registry: the URL read from its secret
// reference, its password registered with the redactor before anything is sent; nothing is sent
// until the first observe, so a bad URL is an error here and an unreachable server is not.

const dir = mkdtempSync(join(tmpdir(), 'tend-pgfactory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const decl = (extra: Partial<PostgresProviderDecl> = {}): PostgresProviderDecl => ({
  kind: 'Provider',
  name: 'pg',
  type: 'postgres',
  statementTimeoutMs: 1000,
  lockTimeoutMs: 500,
  connectTimeoutMs: 1000,
  source: { file: join(dir, 'p.yaml'), line: 1, column: 1 },
  ...extra,
});

describe('the postgres provider factory', () => {
  it('reads the URL from a file and registers its password before anything is shown', async () => {
    writeFileSync(join(dir, 'db.url'), 'postgres://admin:S3cret-pass@127.0.0.1:1/app\n');
    const redactor = new Redactor();
    const p = await connectProvider(defaultProviders, {
      decl: decl({ connection: { fromFile: join(dir, 'db.url') }, database: 'other' }),
      workspace: 'ws',
      env: {},
      dir,
      redactor,
    });
    try {
      expect(p.name).toBe('pg');
      expect(p.describe().types.map((t) => t.name)).toEqual([
        'role',
        'database',
        'schema',
        'extension',
        'grant',
        'audit',
      ]);
      expect(redactor.text('login S3cret-pass failed')).not.toContain('S3cret-pass');
      // The server is not there: the failure names the connection without its password.
      const e = await p.list('role').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TendError);
      expect((e as TendError).code).toBe('postgres.connection');
      expect((e as TendError).message).not.toContain('S3cret-pass');
    } finally {
      await p.close?.();
    }
  });

  it('refuses a URL that is not one, without repeating it', async () => {
    const e = await connectProvider(defaultProviders, {
      decl: decl({ connection: { fromEnv: 'DB_URL' } }),
      workspace: 'ws',
      env: { DB_URL: 'mysql://u:hidden@h/db' },
      dir,
      redactor: new Redactor(),
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TendError);
    expect((e as TendError).code).toBe('connection.invalid');
    expect((e as TendError).message).toBe(
      'the connection string must start with postgres:// or postgresql://, not mysql://',
    );
  });

  it('says which variable is missing', async () => {
    const e = await connectProvider(defaultProviders, {
      decl: decl({ connection: { fromEnv: 'DB_URL' } }),
      workspace: 'ws',
      env: {},
      dir,
      redactor: new Redactor(),
    }).catch((x: unknown) => x);
    expect((e as TendError).code).toBe('secret.missing');
    expect((e as TendError).message).toBe('environment variable DB_URL is not set');
  });
});
