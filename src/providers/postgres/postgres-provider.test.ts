import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Marker, WriteContext } from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../test/support/postgres.js';
import { freePort } from '../../../test/support/pdns.js';
import { resolveConnection } from './connection.js';
import type { PostgresProvider } from './postgres-provider.js';
import { createPostgresProvider } from './postgres-provider.js';

// The native provider on a real cluster: what the shared contract suite does not cover — quoting,
// grants of every kind as observed from the ACLs, create-only fields, timeouts and lost servers.

const INJECTION = 'x"; DROP ROLE postgres; --';
const ACTOR = { actor: 'alice', intent: 'access', motivation: 'incident:INC-7' };
const marker = (address: string, op?: string): Marker => ({
  workspace: 'ws',
  address: address as Address,
  ...(op ? { op } : {}),
});
const ctx = (m?: Marker): WriteContext => ({ actor: ACTOR, ...(m ? { marker: m } : {}) });

async function failure(p: Promise<unknown>): Promise<TendError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TendError);
    return e as TendError;
  }
  throw new Error('expected a failure');
}

describe.skipIf(POSTGRES.skip)(`postgres provider on a real cluster${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let provider: PostgresProvider;
  const admin = async (text: string): Promise<Record<string, unknown>[]> => {
    const c = new pg.Client({ connectionString: server.url() });
    await c.connect();
    try {
      return (await c.query(text)).rows as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };

  const one = async (text: string, database: string): Promise<unknown> => {
    const c = new pg.Client({ connectionString: server.url(database) });
    await c.connect();
    try {
      return Object.values((await c.query(text)).rows[0] ?? {})[0];
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    server = await startPostgres();
    provider = createPostgresProvider({
      name: 'pg',
      connection: resolveConnection({ url: server.url(), lockTimeoutMs: 300 }, {}),
    });
  }, 120_000);
  afterAll(async () => {
    await provider?.close?.();
    await server?.stop();
  });

  it('creates a role named as SQL injection with exactly that name', async () => {
    const r = await provider.create(
      'role',
      { name: INJECTION, login: false },
      ctx(marker('pg.role/evil')),
    );
    expect(r.id).toBe(INJECTION);
    expect(r.fields['name']).toBe(INJECTION);
    const rows = await admin(`SELECT rolname FROM pg_roles WHERE rolname IN ('postgres', 'x')`);
    expect(rows.map((x) => x['rolname'])).toEqual(['postgres']);
    expect((await provider.list('role')).map((o) => o.id)).toContain(INJECTION);
    await provider.delete('role', INJECTION, ctx());
    expect(await provider.read('role', INJECTION)).toBeUndefined();
  });

  it('round-trips names with quotes, spaces and capitals, and the marker in the comment', async () => {
    const owner = await provider.create('role', { name: 'Team "Core"', member_of: [] }, ctx());
    const m = marker('pg.schema/odd', 'op-1');
    const s = await provider.create(
      'schema',
      { name: 'My Schema', owner: owner.id, comment: "team's data" },
      ctx(m),
    );
    expect(s).toMatchObject({
      id: 'My Schema',
      marker: m,
      fields: {
        name: 'My Schema',
        owner: 'Team "Core"',
        comment: "team's data [tend:ws/pg.schema/odd#op-1]",
      },
    });
    const d = await provider.create(
      'database',
      { name: 'Odd DB', owner: owner.id },
      ctx(marker('pg.database/odd')),
    );
    expect(d.fields).toMatchObject({ name: 'Odd DB', owner: 'Team "Core"' });
    expect(d.marker).toEqual(marker('pg.database/odd'));
    // An update keeps the marker's op, and the declared comment replaces the text before it.
    const u = await provider.update(
      'schema',
      s.id,
      { name: 'My Schema', comment: 'new' },
      s,
      ctx(marker('pg.schema/odd')),
    );
    expect(u.fields['comment']).toBe('new [tend:ws/pg.schema/odd#op-1]');
    await provider.delete('database', d.id, ctx());
    await provider.delete('schema', s.id, ctx());
    await provider.delete('role', owner.id, ctx());
  });

  it('observes memberships, flags, limits and expiry of a role', async () => {
    await provider.create('role', { name: 'group_a' }, ctx());
    await provider.create('role', { name: 'group_b' }, ctx());
    const r = await provider.create(
      'role',
      {
        name: 'member',
        login: true,
        createdb: true,
        connection_limit: 4,
        valid_until: '2030-01-01T00:00:00Z',
        member_of: ['group_b', 'group_a'],
        password: 'pw-of-member-0123456789',
      },
      ctx(),
    );
    expect(r.fields).toMatchObject({
      login: true,
      createdb: true,
      superuser: false,
      connection_limit: 4,
      valid_until: '2030-01-01T00:00:00Z',
      member_of: ['group_a', 'group_b'],
    });
    expect(r.fields).not.toHaveProperty('password');
    // The password was stored as a SCRAM verifier computed by Tend.
    const [row] = await admin(`SELECT rolpassword FROM pg_authid WHERE rolname = 'member'`);
    expect(String(row?.['rolpassword'])).toMatch(/^SCRAM-SHA-256\$4096:/);
    const u = await provider.update(
      'role',
      'member',
      { name: 'member', member_of: ['group_a'], connection_limit: -1 },
      r,
      ctx(),
    );
    expect(u.fields).toMatchObject({ member_of: ['group_a'], connection_limit: -1 });
    for (const n of ['member', 'group_a', 'group_b']) await provider.delete('role', n, ctx());
  });

  it('observes grants on databases, schemas, all tables in a schema and default privileges', async () => {
    await admin(`CREATE ROLE owner_r; CREATE ROLE reader; CREATE SCHEMA app AUTHORIZATION owner_r;
      CREATE TABLE app.t1 (id int); CREATE TABLE app.t2 (id int); CREATE SEQUENCE app.s1`);
    const grants = [
      { role: 'reader', on: { database: 'postgres' }, privileges: ['CONNECT'] },
      { role: 'reader', on: { schema: 'app' }, privileges: ['usage'] },
      { role: 'reader', on: { allTablesInSchema: 'app' }, privileges: ['SELECT', 'INSERT'] },
      { role: 'reader', on: { allSequencesInSchema: 'app' }, privileges: ['USAGE'] },
      {
        role: 'reader',
        on: { defaultTablesInSchema: 'app', forRole: 'owner_r' },
        privileges: ['SELECT'],
      },
    ];
    for (const g of grants) await provider.create('grant', g, ctx());
    const seen = (await provider.list('grant')).map((o) => [o.id, o.fields['privileges']]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['database:postgres:reader', ['CONNECT']],
        ['schema:app:reader', ['USAGE']],
        ['allTablesInSchema:app:reader', ['SELECT', 'INSERT']],
        ['allSequencesInSchema:app:reader', ['USAGE']],
        ['defaultTablesInSchema:app:owner_r:reader', ['SELECT']],
      ]),
    );
    // A table that lacks one privilege: the privilege is no longer held on all tables.
    await admin('REVOKE INSERT ON app.t2 FROM reader');
    expect(
      (await provider.read('grant', 'allTablesInSchema:app:reader'))?.fields['privileges'],
    ).toEqual(['SELECT']);
    // Default privileges apply to a table the owner creates later.
    await admin('SET ROLE owner_r; CREATE TABLE app.t3 (id int)');
    const [t3] = await admin(`SELECT has_table_privilege('reader', 'app.t3', 'SELECT') AS ok`);
    expect(t3?.['ok']).toBe(true);
    for (const id of [
      'database:postgres:reader',
      'schema:app:reader',
      'allTablesInSchema:app:reader',
      'allSequencesInSchema:app:reader',
      'defaultTablesInSchema:app:owner_r:reader',
    ]) {
      await provider.delete('grant', id, ctx());
      expect(await provider.read('grant', id), id).toBeUndefined();
    }
  });

  it('refuses a grant on all tables of a schema that has none, saying what to declare', async () => {
    await admin('CREATE ROLE lonely; CREATE SCHEMA empty_s');
    const e = await failure(
      provider.create(
        'grant',
        { role: 'lonely', on: { allTablesInSchema: 'empty_s' }, privileges: ['SELECT'] },
        ctx(),
      ),
    );
    expect(e.code).toBe('postgres.nothing_to_grant');
    expect(e.retryable).toBe(false);
    expect(e.message).toBe(
      'granting SELECT to lonely: schema "empty_s" has no tables, so a grant on all of them would grant nothing (and could not be seen)',
    );
    expect(e.hint).toBe(
      'declare default privileges for tables to come (on: { defaultTablesInSchema: empty_s, forRole: <creator> }); this grant applies once the schema has tables',
    );
  });

  it('moves an extension to another schema; a version PostgreSQL does not ship is refused', async () => {
    await admin('CREATE SCHEMA ext');
    const bad = await failure(
      provider.create('extension', { name: 'pgcrypto', version: '1.2' }, ctx()),
    );
    expect(bad.code).toBe('postgres.invalid_parameter');
    expect(bad.message).toMatch(
      /^creating extension "pgcrypto": extension "pgcrypto" has no installation script nor update path for version "1.2"/,
    );
    const e = await provider.create(
      'extension',
      { name: 'pgcrypto', version: '1.3' },
      ctx(marker('pg.extension/c')),
    );
    expect(e.fields).toMatchObject({ version: '1.3', schema: 'public' });
    // pgcrypto's own comment stays in front of the marker.
    expect(e.fields['comment']).toBe('cryptographic functions [tend:ws/pg.extension/c]');
    const u = await provider.update(
      'extension',
      'pgcrypto',
      { name: 'pgcrypto', schema: 'ext' },
      e,
      ctx(marker('pg.extension/c')),
    );
    expect(u.fields).toMatchObject({ version: '1.3', schema: 'ext' });
    await provider.delete('extension', 'pgcrypto', ctx());
  });

  it('sets and clears an expiry: infinity reads back as infinity', async () => {
    const r = await provider.create('role', { name: 'expiring', valid_until: '2031-06-01' }, ctx());
    expect(r.fields['valid_until']).toBe('2031-06-01T00:00:00Z');
    const u = await provider.update(
      'role',
      'expiring',
      { name: 'expiring', valid_until: 'infinity' },
      r,
      ctx(),
    );
    expect(u.fields['valid_until']).toBe('infinity');
    await provider.delete('role', 'expiring', ctx());
  });

  it('says a change of encoding replaces the database, and the owner updates it', async () => {
    const d = await provider.create('database', { name: 'enc', encoding: 'UTF8' }, ctx());
    expect(d.fields).toMatchObject({ encoding: 'UTF8', lc_collate: 'C' });
    expect(await provider.evaluate('database', d, { name: 'enc', encoding: 'LATIN1' })).toEqual({
      action: 'replace',
      fields: ['encoding'],
      source: 'annotation',
      reason: 'encoding cannot change after the database is created',
    });
    expect(
      await provider.evaluate('database', d, { name: 'enc', encoding: 'utf-8', owner: 'postgres' }),
    ).toEqual({
      action: 'none',
      fields: [],
      source: 'annotation',
    });
    expect(provider.describe().types.find((t) => t.name === 'database')?.stateful).toBe(true);
    await provider.delete('database', 'enc', ctx());
  });

  it('fails fast and retryably when another session holds a lock', async () => {
    await admin('CREATE SCHEMA locked');
    const current = await provider.read('schema', 'locked');
    const holder = new pg.Client({ connectionString: server.url() });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('ALTER SCHEMA locked OWNER TO postgres');
      await holder.query('COMMENT ON SCHEMA locked IS $$held$$');
      const e = await failure(
        provider.update('schema', 'locked', { name: 'locked', comment: 'mine' }, current!, ctx()),
      );
      expect(e.code).toBe('postgres.lock_timeout');
      expect(e.retryable).toBe(true);
      expect(e.outcomeUnknown).toBe(false);
      expect(e.message).toMatch(/^updating schema "locked": /);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('refuses a second create of the same name, and says what to do', async () => {
    await provider.create('schema', { name: 'twice' }, ctx());
    const e = await failure(provider.create('schema', { name: 'twice' }, ctx()));
    expect(e.code).toBe('postgres.already_exists');
    expect(e.retryable).toBe(false);
    expect(e.hint).toMatch(/import it/);
  });

  it('commits nothing when the fence refuses before COMMIT, and sends no CREATE/DROP DATABASE', async () => {
    let open = true;
    const fence = () => {
      if (!open) {
        throw new TendError('store.lease-lost', 'not sent: the lease may be lost', {
          phase: 'lease',
        });
      }
    };
    const fenced = { ...ctx(), fence };
    open = false;
    const refused = await failure(provider.create('role', { name: 'fenced_role' }, fenced));
    expect(refused.code).toBe('store.lease-lost');
    expect(refused.outcomeUnknown).toBeFalsy();
    expect((await provider.list('role')).map((o) => o.id)).not.toContain('fenced_role');
    // The DDL audit is installed through a connection of its own: fenced too (and left uninstalled,
    // which the audit tests below rely on).
    const noAudit = await failure(provider.create('audit', { schema: 'fenced_audit' }, fenced));
    expect(noAudit.code).toBe('store.lease-lost');
    expect((await provider.list('audit')).map((o) => o.id)).not.toContain('fenced_audit');
    const noDb = await failure(provider.create('database', { name: 'fenced_db' }, fenced));
    expect(noDb.code).toBe('store.lease-lost');
    expect((await provider.list('database')).map((o) => o.id)).not.toContain('fenced_db');
    // With the fence open the same calls go through, and a closed one keeps a database from a DROP.
    open = true;
    await provider.create('role', { name: 'fenced_role' }, fenced);
    await provider.create('database', { name: 'fenced_db' }, fenced);
    open = false;
    await failure(provider.delete('database', 'fenced_db', fenced));
    expect((await provider.list('database')).map((o) => o.id)).toContain('fenced_db');
    expect((await provider.list('role')).map((o) => o.id)).toContain('fenced_role');
  });

  it('reports a missing server as a retryable connection failure', async () => {
    const down = createPostgresProvider({
      name: 'down',
      connection: resolveConnection(
        { url: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` },
        {},
      ),
    });
    try {
      const e = await failure(down.list('role'));
      expect(e.code).toBe('postgres.connection');
      expect(e.retryable).toBe(true);
      // Never connected: nothing was sent, so the outcome is known (also outside a transaction).
      for (const [type, spec] of [
        ['schema', { name: 's' }],
        ['database', { name: 'd' }],
      ] as const) {
        const w = await failure(down.create(type, spec, ctx()));
        expect(w.code, type).toBe('postgres.connection');
        expect(w.outcomeUnknown, type).toBe(false);
      }
    } finally {
      await down.close?.();
    }
  });

  it('manages schemas and extensions in its working database', async () => {
    await provider.create('database', { name: 'work' }, ctx());
    const inWork = createPostgresProvider({
      name: 'pg-work',
      connection: resolveConnection({ url: server.url() }, {}),
      database: 'work',
    });
    try {
      expect(inWork.database).toBe('work');
      await inWork.create('schema', { name: 'only_in_work' }, ctx());
      await inWork.create('extension', { name: 'pgcrypto' }, ctx());
      expect(await inWork.read('schema', 'only_in_work')).toBeDefined();
      expect(await provider.read('schema', 'only_in_work')).toBeUndefined();
      expect(
        await one(`SELECT count(*)::int FROM pg_extension WHERE extname = 'pgcrypto'`, 'work'),
      ).toBe(1);
      // Roles and databases are the cluster's: both providers see the same ones.
      expect((await inWork.list('database')).map((o) => o.id)).toContain('work');
    } finally {
      await inWork.close?.();
    }
    await provider.delete('database', 'work', ctx());
  });

  it('offers rotate-password on roles only', () => {
    expect(provider.actions?.('role').map((a) => a.name)).toEqual(['rotate-password']);
    expect(provider.actions?.('database')).toEqual([]);
  });

  describe('the DDL audit as a resource and the change feed', () => {
    it('has no feed entries before the audit is installed, and says it has no feed', async () => {
      expect(provider.describe().auditFeed).toBe(false);
      expect(await provider.list('audit')).toEqual([]);
      expect(await provider.changes!(undefined)).toEqual({ changes: [], cursor: '0' });
    });

    it('refuses to install for a role that is not a superuser, saying a superuser is needed', async () => {
      await admin(`CREATE ROLE weak LOGIN CREATEROLE CREATEDB`);
      const weak = createPostgresProvider({
        name: 'pg',
        connection: resolveConnection({ url: server.url().replace('postgres@', 'weak@') }, {}),
      });
      try {
        const e = await failure(weak.create('audit', { schema: 'weak_audit' }, ctx()));
        expect(e.code).toBe('postgres.audit_needs_superuser');
        expect(e.message).toContain('event triggers can only be created by a superuser');
        expect(await weak.list('audit')).toEqual([]);
      } finally {
        await weak.close?.();
        await admin(`DROP SCHEMA IF EXISTS weak_audit; DROP ROLE weak`);
      }
    });

    it('installs, attributes a hand-made change to a schema and a grant, skips the rest, uninstalls', async () => {
      const made = await provider.create('audit', { schema: 'tend_audit' }, ctx());
      expect(made).toMatchObject({
        type: 'audit',
        id: 'tend_audit',
        fields: { schema: 'tend_audit', version: '1' },
      });
      expect(provider.describe().auditFeed).toBe(true);
      const start = (await provider.changes!(undefined)).cursor;
      await provider.create('schema', { name: 'Fed Schema' }, ctx(marker('pg.schema/fed')));
      await admin(`CREATE ROLE fed_reader`);
      await admin(
        `SET tend.actor = 'bob'; SET tend.motivation = 'incident:INC-9'; GRANT USAGE ON SCHEMA "Fed Schema" TO fed_reader; CREATE TABLE "Fed Schema".t (id int)`,
      );
      const page = await provider.changes!(start);
      // Tend's own create (actor alice here, from ctx), then Bob's grant; the table is not managed.
      expect(page.changes.map((c) => [c.actor, c.action, c.type, c.id])).toEqual([
        ['alice', 'create', 'schema', 'Fed Schema'],
        ['alice', 'update', 'schema', 'Fed Schema'],
        ['bob', 'update', 'grant', 'schema:Fed Schema:fed_reader'],
      ]);
      const bob = page.changes[2]!;
      expect(bob.motivation).toBe('incident:INC-9');
      expect(bob.after).toMatchObject({ privileges: ['USAGE'] });
      expect(Number(page.cursor)).toBeGreaterThan(Number(start));
      // Nothing new: the same cursor.
      expect(await provider.changes!(page.cursor)).toEqual({ changes: [], cursor: page.cursor });

      await admin(`DROP SCHEMA "Fed Schema" CASCADE; DROP ROLE fed_reader`);
      await provider.delete('audit', 'tend_audit', ctx());
      expect(await provider.list('audit')).toEqual([]);
      expect(await admin(`SELECT 1 FROM pg_namespace WHERE nspname = 'tend_audit'`)).toEqual([]);
    });

    it('waits for news by reading the table again every feedPollMs, within waitMs (fake clock)', async () => {
      let now = 0;
      let made = false;
      const slept: number[] = [];
      const waiting = createPostgresProvider({
        name: 'pg',
        connection: resolveConnection({ url: server.url() }, {}),
        feedPollMs: 500,
        clock: () => now,
        sleep: async (ms) => {
          slept.push(ms);
          now += ms;
          // During the second wait someone makes a schema.
          if (slept.length === 2 && !made) {
            made = true;
            await admin(`SET tend.actor = 'carol'; CREATE SCHEMA waited`);
          }
        },
      });
      try {
        await waiting.create('audit', { schema: 'tend_audit' }, ctx());
        const start = (await waiting.changes!(undefined)).cursor;
        const page = await waiting.changes!(start, { waitMs: 5000 });
        expect(slept).toEqual([500, 500]);
        expect(page.changes.map((c) => [c.actor, c.action, c.type, c.id])).toEqual([
          ['carol', 'create', 'schema', 'waited'],
        ]);
        // Nothing new: it gives up when the wait is over (4 × 500 ms + the rest, 200 ms).
        slept.length = 0;
        const empty = await waiting.changes!(page.cursor, { waitMs: 2200 });
        expect(empty).toEqual({ changes: [], cursor: page.cursor });
        expect(slept).toEqual([500, 500, 500, 500, 200]);
      } finally {
        await admin(`DROP SCHEMA IF EXISTS waited`);
        await waiting.delete('audit', 'tend_audit', ctx());
        await waiting.close?.();
      }
    });
  });
});
