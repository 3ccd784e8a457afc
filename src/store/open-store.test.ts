import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { ledgerKey } from './ledger-key.js';
import { openStore } from './open-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'tend-open-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HINT =
  'give a SQLite file path (e.g. .tend/state.db or sqlite:.tend/state.db) or a postgres:// URL';

describe('openStore', () => {
  it.each([
    {
      name: 'a plain path',
      location: join(dir, 'plain', 'a.db'),
      file: join(dir, 'plain', 'a.db'),
    },
    { name: 'sqlite:<path>', location: `sqlite:${join(dir, 'b.db')}`, file: join(dir, 'b.db') },
    { name: 'sqlite://<path>', location: `sqlite://${join(dir, 'c.db')}`, file: join(dir, 'c.db') },
    { name: 'a file name with a colon', location: join(dir, 'd:e.db'), file: join(dir, 'd:e.db') },
  ])('opens SQLite for $name', async ({ location, file }) => {
    const store = await openStore(location);
    expect(store).toBeInstanceOf(SqliteStore);
    await store.close();
    expect(existsSync(file)).toBe(true);
  });

  it('opens an in-memory SQLite store for :memory: and sqlite::memory:', async () => {
    for (const location of [':memory:', 'sqlite::memory:']) {
      const store = await openStore(location);
      await store.setCursor('sb', '1');
      expect(await store.getCursor('sb')).toBe('1');
      await store.close();
    }
  });

  it.each([
    {
      name: 'an unknown scheme',
      location: 'mysql://tend:s3cret-pw@db.example/tend',
      code: 'store.unsupported',
      message: 'unknown store location scheme mysql:',
    },
    {
      name: 'an empty location',
      location: '  ',
      code: 'store.invalid-location',
      message: 'the store location is empty',
    },
    {
      name: 'sqlite: without a path',
      location: 'sqlite:',
      code: 'store.invalid-location',
      message: 'the sqlite: location has no path',
    },
  ])('refuses $name without repeating the location', async ({ location, code, message }) => {
    const error = await openStore(location).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TendError);
    const e = error as TendError;
    expect({ code: e.code, message: e.message, hint: e.hint, phase: e.phase }).toEqual({
      code,
      message,
      hint: HINT,
      phase: 'store',
    });
    expect(JSON.stringify(e.toJSON())).not.toContain('s3cret-pw');
  });

  it.each([
    {
      name: 'postgres:// without a workspace',
      location: 'postgres://tend:s3cret-pw@db.example:5432/tend',
      options: {},
      code: 'store.workspace-required',
      message: 'a PostgreSQL store holds many workspaces: it is opened for one, and none was named',
    },
    {
      name: 'postgresql:// with a port out of range',
      location: 'postgresql://tend:s3cret-pw@db.example:99999/tend',
      options: { workspace: 'prod' },
      code: 'store.invalid-location',
      message: 'the PostgreSQL store location is not a valid URL',
    },
    {
      name: 'postgres:// with a parameter Tend does not read',
      location: 'postgres://tend:s3cret-pw@db.example/tend?password=s3cret-pw',
      options: { workspace: 'prod' },
      code: 'store.invalid-location',
      message:
        'the PostgreSQL store location has the parameter "password", which Tend does not read (only sslmode, host and application_name)',
    },
  ])(
    'refuses $name before connecting, without repeating the location',
    async ({ location, options, code, message }) => {
      const error = await openStore(location, options).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TendError);
      expect({ code: (error as TendError).code, message: (error as TendError).message }).toEqual({
        code,
        message,
      });
      expect(JSON.stringify((error as TendError).toJSON())).not.toContain('s3cret-pw');
    },
  );

  it('passes the ledger key on to the store: with it the store appends, without it it refuses', async () => {
    const change = {
      time: '2031-01-01T00:00:00.000Z',
      actor: 'tend',
      source: 'tend' as const,
      type: 'sb.volumes',
      objectId: 'vol-1',
      action: 'create' as const,
      fields: [],
    };
    const key = ledgerKey('open-store-ledger-key-0123456789abcdef');
    const keyed = await openStore(':memory:', { ledgerKey: key });
    expect((await keyed.appendChange(change)).keyId).toBe(key.id);
    await keyed.close();
    const keyless = await openStore(':memory:');
    const error = await keyless.appendChange(change).catch((e: unknown) => e);
    expect((error as TendError).code).toBe('store.ledger-read-only');
    await keyless.close();
  });

  it('passes the clock on to the store', async () => {
    const path = join(dir, 'clock.db');
    const store = await openStore(path, { now: () => new Date('2031-01-01T00:00:00.000Z') });
    await store.setCursor('sb', '1');
    await store.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT updated_at FROM cursors').pluck().get()).toBe(
      '2031-01-01T00:00:00.000Z',
    );
    db.close();
  });
});
