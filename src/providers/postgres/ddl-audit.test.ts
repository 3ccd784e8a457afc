import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../test/support/postgres.js';
import type { AuditEntry, AuditObjectMapper } from './ddl-audit.js';
import {
  actionOfTag,
  auditInstallStatements,
  auditTriggerNames,
  auditUninstallStatements,
  AUDIT_VERSION,
  identityNames,
  installAudit,
  readAuditEntries,
  readAuditFeed,
  readAuditInstallation,
  toObservedChange,
  uninstallAudit,
} from './ddl-audit.js';

// DDL change capture against a real cluster: what the event triggers record (who, from where, the
// statement, the tend.* settings), that they never make the user's DDL fail, and the feed the
// provider reads.

const ENTRY: AuditEntry = {
  id: '7',
  at: '2026-11-26T10:00:00.000Z',
  sessionUser: 'alice',
  currentUser: 'alice',
  commandTag: 'CREATE SCHEMA',
  objectType: 'schema',
  objectIdentity: 'app',
};
const ALL: AuditObjectMapper = (objectType, identity) => ({ type: objectType, id: identity });

describe('actionOfTag', () => {
  it.each([
    ['CREATE SCHEMA', 'create', 'a CREATE creates'],
    ['CREATE EXTENSION', 'create', 'so does an extension'],
    ['SELECT INTO', 'create', 'SELECT INTO creates a table'],
    ['IMPORT FOREIGN SCHEMA', 'create', 'it creates foreign tables'],
    ['DROP SCHEMA', 'delete', 'a DROP deletes'],
    ['ALTER EXTENSION', 'update', 'an ALTER updates'],
    ['GRANT', 'update', 'a grant changes the object it is on'],
    ['REVOKE', 'update', 'so does a revoke'],
    ['ALTER DEFAULT PRIVILEGES', 'update', 'and default privileges'],
    ['COMMENT', 'update', 'a comment changes the object'],
  ] as const)('%s → %s (%s)', (tag, want, reason) => {
    expect(actionOfTag(tag), reason).toBe(want);
  });
});

describe('toObservedChange', () => {
  it.each([
    {
      reason: 'without tend.* settings the actor is the session user',
      entry: ENTRY,
      want: { actor: 'alice', action: 'create' },
    },
    {
      reason: 'tend.actor wins over the session user; the settings are carried',
      entry: {
        ...ENTRY,
        actor: 'bob',
        actorKind: 'human',
        intent: 'availability',
        motivation: 'incident:INC-7',
      },
      want: {
        actor: 'bob',
        actorKind: 'human',
        intent: 'availability',
        motivation: 'incident:INC-7',
      },
    },
    {
      reason: 'an actor kind Tend does not know is dropped',
      entry: { ...ENTRY, actorKind: 'robot' },
      want: { actor: 'alice', actorKind: undefined },
    },
    {
      reason: 'a blank tend.actor counts as unset',
      entry: { ...ENTRY, actor: '   ' },
      want: { actor: 'alice' },
    },
  ])('$reason', ({ entry, want }) => {
    const got = toObservedChange(entry, ALL);
    const defined = Object.entries(want).filter(([, v]) => v !== undefined);
    expect(got).toMatchObject({
      cursor: '7',
      time: ENTRY.at,
      type: 'schema',
      id: 'app',
      ...Object.fromEntries(defined),
    });
    for (const [k, v] of Object.entries(want))
      if (v === undefined) expect(got).not.toHaveProperty(k);
  });

  it('skips an object the provider does not manage', () => {
    expect(toObservedChange(ENTRY, () => undefined)).toBeUndefined();
  });
});

describe('identityNames', () => {
  it.each([
    ['app', ['app'], 'a plain name'],
    ['"Odd ""name"""', ['Odd "name"'], 'quotes doubled inside quotes'],
    ['"My Schema".t', ['My Schema', 't'], 'a qualified name'],
    ['"a.b"."c"', ['a.b', 'c'], 'a dot inside quotes is part of the name'],
    ['café', ['café'], 'an unquoted name beyond ASCII is read as written'],
    ['public.f(integer)', undefined, 'a function signature is not a list of names'],
    ['for role postgres in schema x on tables', undefined, 'a default ACL description'],
    ['"unterminated', undefined, 'an unterminated quote'],
    ['a.', undefined, 'a trailing dot'],
    ['""', undefined, 'an empty name'],
    ['', undefined, 'nothing'],
  ])('%s (%s)', (identity, want, reason) => {
    expect(identityNames(identity), reason).toEqual(want);
  });
});

describe('auditInstallStatements', () => {
  it.each([
    ['', 'an empty name'],
    ['x'.repeat(64), 'a name over 63 bytes'],
    ['a\0b', 'a NUL character'],
  ])('refuses %j (%s)', (schema) => {
    expect(() => auditInstallStatements(schema)).toThrow(/1 to 63 bytes without NUL/);
    expect(() => auditUninstallStatements(schema)).toThrow(/1 to 63 bytes without NUL/);
  });

  it('names the triggers after the schema, and a long schema by a hash that fits', () => {
    expect(auditTriggerNames('tend_audit')).toEqual({
      ddlEnd: 'tend_audit_ddl_end',
      sqlDrop: 'tend_audit_sql_drop',
    });
    const long = auditTriggerNames('s'.repeat(63));
    expect(Buffer.byteLength(long.ddlEnd)).toBeLessThanOrEqual(63);
    expect(long.ddlEnd).not.toBe(auditTriggerNames(`${'s'.repeat(62)}t`).ddlEnd);
  });
});

describe.skipIf(POSTGRES.skip)(`DDL audit on a real PostgreSQL${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  const open: pg.Client[] = [];

  /** A session; `as` logs in as another role, `app` sets application_name. */
  const session = async (as = 'postgres', app = 'psql'): Promise<pg.Client> => {
    const c = new pg.Client({
      host: server.host,
      port: server.port,
      user: as,
      database: 'postgres',
      application_name: app,
    });
    c.on('error', () => {});
    await c.connect();
    open.push(c);
    return c;
  };
  const sql = async (statements: string, as?: string, app?: string): Promise<void> => {
    const c = await session(as, app);
    try {
      await c.query(statements);
    } finally {
      await c.end();
    }
  };
  const lastId = async (su: pg.Client, schema = 'tend_audit'): Promise<string> => {
    const rows = await readAuditEntries(su, schema, undefined);
    return rows.at(-1)?.id ?? '0';
  };

  let su: pg.Client;
  beforeAll(async () => {
    server = await startPostgres();
    su = await session();
    await installAudit(su);
    await su.query(`CREATE ROLE bob LOGIN; GRANT CREATE ON DATABASE postgres TO bob`);
  }, 120_000);
  afterAll(async () => {
    for (const c of open) await c.end().catch(() => undefined);
    await server?.stop();
  });

  it('reports a complete, current installation with both triggers', async () => {
    const got = await readAuditInstallation(su);
    expect(got).toEqual({
      schema: 'tend_audit',
      installed: true,
      needsUpdate: false,
      table: true,
      functions: ['capture_ddl', 'capture_drop'],
      triggers: [
        { name: 'tend_audit_ddl_end', event: 'ddl_command_end', enabled: 'O' },
        { name: 'tend_audit_sql_drop', event: 'sql_drop', enabled: 'O' },
      ],
      version: AUDIT_VERSION,
    });
  });

  it("records a person's DDL with the tend.* settings of the session", async () => {
    const after = await lastId(su);
    await sql(`
      SET tend.actor = 'alice';
      SET tend.actor_kind = 'human';
      SET tend.intent = 'availability';
      SET tend.motivation = 'incident:INC-7';
      CREATE SCHEMA "Odd ""name""";
      GRANT USAGE ON SCHEMA "Odd ""name""" TO bob;
      REVOKE USAGE ON SCHEMA "Odd ""name""" FROM bob;
      ALTER DEFAULT PRIVILEGES IN SCHEMA "Odd ""name""" GRANT SELECT ON TABLES TO bob;
      COMMENT ON SCHEMA "Odd ""name""" IS 'hot fix';
      CREATE EXTENSION pgcrypto;
      ALTER EXTENSION pgcrypto SET SCHEMA "Odd ""name""";
      DROP SCHEMA "Odd ""name""" CASCADE;
    `);
    const rows = (await readAuditEntries(su, 'tend_audit', after)).filter(
      (r) => r.objectType !== 'function', // pgcrypto's member functions, one row each
    );
    const seen = rows.map((r) => [r.commandTag, r.objectType, r.objectIdentity]);
    expect(seen).toEqual([
      ['CREATE SCHEMA', 'schema', '"Odd ""name"""'],
      // GRANT reports the kind of object upper-case and no identity: only the statement names it.
      ['GRANT', 'SCHEMA', undefined],
      ['REVOKE', 'SCHEMA', undefined],
      ['ALTER DEFAULT PRIVILEGES', 'TABLES', undefined],
      ['COMMENT', 'schema', '"Odd ""name"""'],
      ['CREATE EXTENSION', 'extension', 'pgcrypto'],
      ['ALTER EXTENSION', 'extension', 'pgcrypto'],
      ['DROP SCHEMA', 'schema', '"Odd ""name"""'],
      ['DROP SCHEMA', 'default acl', 'for role postgres in schema "Odd ""name""" on tables'],
      ['DROP SCHEMA', 'extension', 'pgcrypto'],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({
        sessionUser: 'postgres',
        currentUser: 'postgres',
        applicationName: 'psql',
        clientAddr: '127.0.0.1',
        actor: 'alice',
        actorKind: 'human',
        intent: 'availability',
        motivation: 'incident:INC-7',
      });
      expect(r.statement).toContain('SET tend.actor');
    }
    const page = await readAuditFeed(su, 'tend_audit', after, {
      mapObject: (type, identity) => {
        const names = identityNames(identity);
        return type === 'schema' && names?.length === 1
          ? { type: 'schema', id: names[0]! }
          : undefined;
      },
    });
    expect(page.changes.map((c) => [c.action, c.id, c.actor, c.motivation])).toEqual([
      ['create', 'Odd "name"', 'alice', 'incident:INC-7'],
      ['update', 'Odd "name"', 'alice', 'incident:INC-7'],
      ['delete', 'Odd "name"', 'alice', 'incident:INC-7'],
    ]);
  });

  it('attributes DDL without settings to the session user, and SET ROLE to the role', async () => {
    const after = await lastId(su);
    await sql('CREATE SCHEMA plain', 'bob');
    await sql('SET ROLE bob; CREATE SCHEMA as_bob');
    const rows = await readAuditEntries(su, 'tend_audit', after);
    expect(rows.map((r) => [r.objectIdentity, r.sessionUser, r.currentUser, r.actor])).toEqual([
      ['plain', 'bob', 'bob', undefined],
      ['as_bob', 'postgres', 'bob', undefined],
    ]);
    const page = await readAuditFeed(su, 'tend_audit', after, { mapObject: ALL });
    expect(page.changes.map((c) => c.actor)).toEqual(['bob', 'postgres']);
  });

  it('stores hostile names and application names as values, never as SQL', async () => {
    const after = await lastId(su);
    const app = `x'); DROP TABLE tend_audit.ddl_log; --`;
    const name = `Robert'); DROP SCHEMA public CASCADE; -- $tend_audit$ "`;
    const quoted = `"${name.replaceAll('"', '""')}"`;
    await sql(`SET tend.actor = $$a'b"c$$; CREATE SCHEMA ${quoted}`, 'bob', app);
    const rows = await readAuditEntries(su, 'tend_audit', after);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      applicationName: app,
      objectIdentity: quoted,
      actor: `a'b"c`,
      sessionUser: 'bob',
    });
    const left = await su.query(
      `SELECT to_regnamespace('public') IS NOT NULL AS public, to_regclass('tend_audit.ddl_log') IS NOT NULL AS log`,
    );
    expect(left.rows[0]).toEqual({ public: true, log: true });
  });

  it('keeps no password a query carries next to the DDL it records', async () => {
    const after = await lastId(su);
    await sql(
      `ALTER ROLE bob PASSWORD 'Hunter2-it''s-secret'; CREATE SCHEMA pw_test; ALTER ROLE bob PASSWORD NULL`,
    );
    const rows = await readAuditEntries(su, 'tend_audit', after);
    expect(rows.map((r) => r.statement)).toEqual([
      `ALTER ROLE bob PASSWORD '***'; CREATE SCHEMA pw_test; ALTER ROLE bob PASSWORD NULL`,
    ]);
  });

  it('pages the feed by cursor, strictly after the last row read', async () => {
    const after = await lastId(su);
    await sql(
      'CREATE SCHEMA p1; CREATE SCHEMA p2; CREATE SCHEMA p3; CREATE SCHEMA p4; CREATE SCHEMA p5',
    );
    const ids: string[] = [];
    let cursor = after;
    for (let i = 0; i < 10; i++) {
      const page = await readAuditFeed(su, 'tend_audit', cursor, { limit: 2, mapObject: ALL });
      if (page.changes.length === 0) {
        expect(page.cursor).toBe(cursor);
        break;
      }
      expect(page.changes.length).toBeLessThanOrEqual(2);
      ids.push(...page.changes.map((c) => c.id));
      cursor = page.cursor;
    }
    expect(ids).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    // Rows about objects the provider does not manage are skipped, and the cursor moves past them.
    const none = await readAuditFeed(su, 'tend_audit', after, { mapObject: () => undefined });
    expect(none.changes).toEqual([]);
    expect(none.cursor).toBe(cursor);
  });

  it('refuses a cursor that is not a row id, saying what to pass', async () => {
    await expect(readAuditFeed(su, 'tend_audit', '1; DROP', { mapObject: ALL })).rejects.toThrow(
      /cursor must be a row id \(digits\), got "1; DROP"/,
    );
  });

  it('never makes DDL fail while the audit table is locked', async () => {
    const after = await lastId(su);
    const locker = await session();
    await locker.query('BEGIN; LOCK TABLE tend_audit.ddl_log IN ACCESS EXCLUSIVE MODE');
    const started = Date.now();
    await sql('CREATE SCHEMA while_locked');
    // The capture gives up on the lock after 200 ms (its own lock_timeout) instead of waiting.
    expect(Date.now() - started).toBeLessThan(10_000);
    await locker.query('COMMIT');
    const exists = await su.query(`SELECT to_regnamespace('while_locked') IS NOT NULL AS ok`);
    expect(exists.rows[0]).toEqual({ ok: true });
    // The price: that command is not in the log (its drift is then attributed `unknown`).
    const rows = await readAuditEntries(su, 'tend_audit', after);
    expect(rows.map((r) => r.objectIdentity)).not.toContain('while_locked');
  });

  it('never makes DDL fail when the audit table is gone, and reports it missing', async () => {
    await su.query('DROP TABLE tend_audit.ddl_log');
    await sql('CREATE SCHEMA while_gone', 'bob');
    await sql('DROP SCHEMA while_gone', 'bob');
    const got = await readAuditInstallation(su);
    expect(got).toMatchObject({ installed: false, needsUpdate: true, table: false });
    await expect(readAuditEntries(su, 'tend_audit', undefined)).rejects.toThrow(
      /DDL audit table "tend_audit".ddl_log does not exist/,
    );
    await installAudit(su);
    expect((await readAuditInstallation(su)).installed).toBe(true);
  });

  it('sees an older version or a disabled trigger as needing an update, and installing fixes it', async () => {
    await su.query(`COMMENT ON TABLE tend_audit.ddl_log IS 'tend-audit 0'`);
    expect(await readAuditInstallation(su)).toMatchObject({
      installed: false,
      needsUpdate: true,
      version: '0',
    });
    await installAudit(su);
    await su.query('ALTER EVENT TRIGGER tend_audit_sql_drop DISABLE');
    expect(await readAuditInstallation(su)).toMatchObject({ installed: false, needsUpdate: true });
    await installAudit(su);
    expect(await readAuditInstallation(su)).toMatchObject({ installed: true, needsUpdate: false });
  });

  it('says that installing needs a superuser when a plain role tries', async () => {
    const bob = await session('bob');
    const err = await installAudit(bob, 'bob_audit').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'postgres.audit_needs_superuser' });
    expect((err as Error).message).toMatch(
      /installing the DDL audit in schema "bob_audit" was refused: event triggers can only be created by a superuser \(permission denied/,
    );
    // One transaction: nothing of it is left behind.
    expect(await readAuditInstallation(su, 'bob_audit')).toMatchObject({
      installed: false,
      needsUpdate: false,
      table: false,
    });
  });

  it('installs in a schema with any name, and uninstalls without taking user objects along', async () => {
    const schema = `Aud"it $tend_audit$ 'x' \\ end`;
    await installAudit(su, schema);
    const names = auditTriggerNames(schema);
    expect((await readAuditInstallation(su, schema)).triggers.map((t) => t.name)).toEqual([
      names.ddlEnd,
      names.sqlDrop,
    ]);
    const after = await lastId(su, schema);
    await sql('CREATE SCHEMA seen_twice');
    // Both installations record it.
    expect((await readAuditEntries(su, schema, after)).map((r) => r.objectIdentity)).toEqual([
      'seen_twice',
    ]);
    const quoted = `"${schema.replaceAll('"', '""')}"`;
    await su.query(`CREATE TABLE ${quoted}.mine (a int)`);
    await uninstallAudit(su, schema);
    const left = await su.query(
      `SELECT to_regnamespace($1) IS NOT NULL AS schema, to_regclass($2) IS NOT NULL AS mine`,
      [quoted, `${quoted}.mine`],
    );
    expect(left.rows[0]).toEqual({ schema: true, mine: true });
    expect(await readAuditInstallation(su, schema)).toMatchObject({
      installed: false,
      needsUpdate: false,
      triggers: [],
    });
    // An emptied schema goes with the audit.
    await su.query(`DROP TABLE ${quoted}.mine`);
    await installAudit(su, schema);
    await uninstallAudit(su, schema);
    const gone = await su.query(`SELECT to_regnamespace($1) IS NULL AS gone`, [quoted]);
    expect(gone.rows[0]).toEqual({ gone: true });
    // Uninstalling twice is fine.
    await uninstallAudit(su, schema);
  });

  it('records nothing for roles and databases: PostgreSQL fires no event trigger for them', async () => {
    const after = await lastId(su);
    await sql(`
      ALTER ROLE bob CONNECTION LIMIT 3;
      COMMENT ON ROLE bob IS 'r';
      GRANT CONNECT ON DATABASE postgres TO bob;
      GRANT bob TO postgres;
      COMMENT ON DATABASE postgres IS 'd';
    `);
    await sql(`ALTER SYSTEM SET work_mem = '8MB'`);
    await sql('ALTER SYSTEM RESET work_mem');
    await sql('CREATE DATABASE other');
    await sql('DROP DATABASE other');
    expect(await readAuditEntries(su, 'tend_audit', after)).toEqual([]);
  });
});
