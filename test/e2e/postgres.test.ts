import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyExampleFiles, ROOT, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';

// Issue 14's native PostgreSQL provider through the built `tend` command, on a cluster of its own:
// examples/postgres applied from an empty cluster (plus a role whose name is an SQL injection), the
// second plan empty, hand-made DDL attributed through the declared DDL audit (Alice's ALTER SCHEMA
// held for her incident, Bob's ALTER DEFAULT PRIVILEGES put back), a hand-made ALTER ROLE seen as
// drift by `unknown` (roles fire no event triggers) and put back, a change of encoding planned
// as a gated replace with its blast radius, removed resources deleted (a database only when
// approved). The steps build on each other, in order.

const EVIL = 'x"; DROP ROLE postgres; --';

interface PlanJson {
  changes: boolean;
  gated: string[];
  blastRadius: string[];
  steps: { address: string; kind: string; gated?: boolean; forcedBy?: string[] }[];
}

describe.skipIf(POSTGRES.skip)(`PostgreSQL end to end (CLI, real cluster)${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let dir: string;
  const tend = (...args: string[]) => runCli(args, { env: server.env('postgres') });
  const query = async (text: string, database = 'postgres'): Promise<Record<string, unknown>[]> => {
    const c = new pg.Client({ connectionString: server.url(database) });
    await c.connect();
    try {
      return (await c.query(text)).rows as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };
  const one = async (text: string, database?: string): Promise<unknown> =>
    Object.values((await query(text, database))[0] ?? {})[0];
  const edit = (file: string, from: string, to: string) => {
    const p = join(dir, file);
    const text = readFileSync(p, 'utf8');
    expect(text).toContain(from);
    writeFileSync(p, text.replace(from, to));
  };

  beforeAll(async () => {
    server = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'tend-pg-e2e-'));
    copyExampleFiles(join(ROOT, 'examples', 'postgres'), dir);
    writeFileSync(
      join(dir, 'evil.yaml'),
      [
        'kind: Resource',
        'type: pg.role',
        'name: evil',
        'spec:',
        `  name: '${EVIL}'`,
        "  comment: it's a name, not SQL",
        '',
      ].join('\n'),
    );
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('plans the DDL audit installation with the rest of the example', async () => {
    const r = await tend('plan', dir, '--json');
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const plan = JSON.parse(r.stdout) as PlanJson;
    expect(plan.steps).toContainEqual(
      expect.objectContaining({ address: 'pg.audit/tend_audit', kind: 'create' }),
    );
  });

  it('applies the example to an empty cluster, its sql checks passing', async () => {
    const r = await tend('apply', dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    for (const check of [
      'pg.extension/pgcrypto  check digest-works passed',
      'pg.grant/readers-usage  check readers-can-use passed',
      'pg.grant/readers-connect  check readers-can-connect passed',
      'pg.grant/readers-future-tables  check future-tables-readable passed',
    ]) {
      expect(r.stdout).toContain(check);
    }
    expect(r.stdout).toContain('+ pg.audit/tend_audit  created tend_audit');
    expect(
      await one(`SELECT count(*)::int FROM pg_event_trigger WHERE evtname LIKE 'tend_audit%'`),
    ).toBe(2);
    expect(await one(`SELECT rolcanlogin FROM pg_roles WHERE rolname = 'app'`)).toBe(true);
    expect(await one(`SELECT rolconnlimit FROM pg_roles WHERE rolname = 'app'`)).toBe(20);
    expect(await one(`SELECT pg_has_role('app', 'app_readers', 'MEMBER')`)).toBe(true);
    expect(await one(`SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'app'`)).toBe(
      'app',
    );
    expect(
      await one(`SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'app'`),
    ).toBe('app');
    expect(await one(`SELECT extname FROM pg_extension WHERE extname = 'pgcrypto'`)).toBe(
      'pgcrypto',
    );
    expect(await one(`SELECT has_database_privilege('app_readers', 'app', 'CONNECT')`)).toBe(true);
    expect(await one(`SELECT has_schema_privilege('app_readers', 'app', 'USAGE')`)).toBe(true);
    // The default privilege: a table the app role creates later is readable by the readers.
    await query(`SET ROLE app; CREATE TABLE app.orders (id int)`);
    expect(await one(`SELECT has_table_privilege('app_readers', 'app.orders', 'SELECT')`)).toBe(
      true,
    );
    // The role named as an injection exists with exactly that name, and postgres is still there.
    expect(
      (
        await query(
          `SELECT rolname FROM pg_roles WHERE rolname IN ('postgres', '${EVIL.replace(/'/g, "''")}') ORDER BY 1`,
        )
      ).map((x) => x['rolname']),
    ).toEqual(['postgres', EVIL]);
    // Tend's marker is at the end of the comment.
    expect(
      await one(`SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'app'`),
    ).toMatch(/^\[tend:[^/]+\/pg\.role\/app#[^\]]+\]$/);
  });

  it('plans nothing the second time (exit 0)', async () => {
    const r = await tend('plan', dir, '--json');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as PlanJson).changes).toBe(false);
  });

  it("attributes a hand-made ALTER SCHEMA to the session's tend.actor and motivation", async () => {
    // Alice, a person, changes the schema's owner during an incident: the event trigger records
    // it with her settings; the default policy holds a human's incident change (rule default#1).
    await query(
      `SET tend.actor = 'alice'; SET tend.actor_kind = 'human'; SET tend.motivation = 'incident:INC-7'; ALTER SCHEMA app OWNER TO postgres`,
    );
    const d = await tend('drift', dir, '--json');
    expect(d.code, d.stderr).toBe(1);
    const text = await tend('drift', dir);
    expect(text.stdout).toContain('changed by alice (human), motivation incident:INC-7');
    expect(text.stdout).toContain('hold: held owner=postgres from alice');
    const drift = JSON.parse(d.stdout) as { fields: unknown[] };
    expect(drift.fields).toEqual([
      expect.objectContaining({
        address: 'pg.schema/app',
        field: 'owner',
        declared: 'app',
        observed: 'postgres',
        changedBy: expect.objectContaining({
          actor: 'alice',
          actorKind: 'human',
          motivation: { kind: 'incident', ref: 'INC-7' },
          source: 'audit',
        }),
        decision: expect.objectContaining({ decision: 'hold', rule: 'default#1' }),
      }),
    ]);
    // Held, not put back: apply leaves her owner, and the ledger records her change.
    const a = await tend('apply', dir);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(
      await one(`SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'app'`),
    ).toBe('postgres');
    const h = await tend('history', dir, '--actor', 'alice', '--json');
    expect(h.code, h.stderr).toBe(0);
    const history = JSON.parse(h.stdout) as { changes: Record<string, unknown>[] };
    expect(history.changes).toEqual([
      expect.objectContaining({
        actor: 'alice',
        actorKind: 'human',
        source: 'audit',
        address: 'pg.schema/app',
        motivation: { kind: 'incident', ref: 'INC-7' },
        decision: expect.objectContaining({ decision: 'hold', rule: 'default#1' }),
      }),
    ]);
    // The incident over, she puts it back herself.
    await query(`SET tend.actor = 'alice'; ALTER SCHEMA app OWNER TO app`);
  });

  it('attributes a hand-made ALTER DEFAULT PRIVILEGES to its actor, found from the statement, and puts it back', async () => {
    // PostgreSQL names no object for a grant: the provider reads the grant from the statement.
    await query(
      `SET tend.actor = 'bob'; SET tend.motivation = 'experiment'; ALTER DEFAULT PRIVILEGES FOR ROLE app IN SCHEMA app GRANT INSERT ON TABLES TO app_readers`,
    );
    const d = await tend('drift', dir, '--json');
    expect(d.code, d.stderr).toBe(1);
    expect((JSON.parse(d.stdout) as { fields: unknown[] }).fields).toEqual([
      expect.objectContaining({
        address: 'pg.grant/readers-future-tables',
        field: 'privileges',
        declared: ['SELECT'],
        observed: ['SELECT', 'INSERT'],
        changedBy: expect.objectContaining({
          actor: 'bob',
          motivation: { kind: 'experiment' },
          source: 'audit',
        }),
        decision: expect.objectContaining({ decision: 'enforce' }),
      }),
    ]);
    const a = await tend('apply', dir);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(a.stdout).toContain('check future-tables-readable passed');
    expect(
      await one(`SELECT defaclacl::text FROM pg_default_acl d JOIN pg_namespace n ON n.oid = d.defaclnamespace
        WHERE n.nspname = 'app' AND d.defaclobjtype = 'r'`),
    ).toBe('{app_readers=r/app}');
  });

  it('shows a hand-made ALTER ROLE as drift, attributed to unknown, and puts it back', async () => {
    // Roles fire no event triggers: PostgreSQL cannot say who did it, whatever the session set.
    await query(
      `SET tend.actor = 'alice'; SET tend.motivation = 'incident:INC-7'; ALTER ROLE app CONNECTION LIMIT 1`,
    );
    const d = await tend('drift', dir, '--json');
    expect(d.code, d.stderr).toBe(1);
    const drift = JSON.parse(d.stdout) as {
      fields: {
        address: string;
        field: string;
        declared: unknown;
        observed: unknown;
        changedBy: { actor: string };
      }[];
    };
    expect(drift.fields).toEqual([
      expect.objectContaining({
        address: 'pg.role/app',
        field: 'connection_limit',
        declared: 20,
        observed: 1,
        changedBy: expect.objectContaining({ actor: 'unknown' }),
        // The default policy decides it as for every provider: an unknown writer is put back.
        decision: expect.objectContaining({ decision: 'enforce' }),
      }),
    ]);
    const text = await tend('drift', dir);
    expect(text.stdout).toContain('connection_limit  declared 20, observed 1');
    const a = await tend('apply', dir);
    expect(a.code, a.stdout + a.stderr).toBe(0);
    expect(await one(`SELECT rolconnlimit FROM pg_roles WHERE rolname = 'app'`)).toBe(20);
  });

  it('plans a change of encoding as a gated replace with its blast radius', async () => {
    edit('database.yaml', 'encoding: UTF8', 'encoding: SQL_ASCII');
    const text = await tend('plan', dir);
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout).toContain('-/+ pg.database/app  must be replaced');
    expect(text.stdout).toContain('encoding: "UTF8" → "SQL_ASCII"   # forces replacement');
    expect(text.stdout).toContain('blast radius: pg.grant/readers-connect');
    expect(text.stdout).toContain('gated: stateful resource; needs --approve-destroy');
    const json = JSON.parse((await tend('plan', dir, '--json')).stdout) as PlanJson;
    // The database loses its data; the grant on it is deleted before it is made again (its key is
    // known only after the database is back): both wait for approval.
    expect(json.gated).toEqual(['pg.database/app', 'pg.grant/readers-connect']);
    expect(json.blastRadius).toEqual(['pg.grant/readers-connect']);
    expect(json.steps.find((s) => s.address === 'pg.database/app')).toMatchObject({
      kind: 'replace',
      forcedBy: ['encoding'],
      gated: true,
    });
    // Without approval nothing is destroyed.
    const a = await tend('apply', dir, '--yes');
    expect(a.code, a.stdout + a.stderr).toBe(3);
    expect(
      await one(`SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = 'app'`),
    ).toBe('UTF8');
    edit('database.yaml', 'encoding: SQL_ASCII', 'encoding: UTF8');
  });

  it('deletes a removed extension and role; a removed database only with --approve-destroy', async () => {
    // Drop the extension document and the injection-named role.
    const db = readFileSync(join(dir, 'database.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'database.yaml'),
      db
        .split('\n---\n')
        .filter((d) => !d.includes('pgcrypto'))
        .join('\n---\n'),
    );
    rmSync(join(dir, 'evil.yaml'));
    const r = await tend('apply', dir, '--yes');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await query(`SELECT 1 FROM pg_extension WHERE extname = 'pgcrypto'`)).toEqual([]);
    expect(
      await query(`SELECT 1 FROM pg_roles WHERE rolname = '${EVIL.replace(/'/g, "''")}'`),
    ).toEqual([]);

    // The database and the grant on it go; the database is stateful: gated.
    const now = readFileSync(join(dir, 'database.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'database.yaml'),
      now
        .split('\n---\n')
        .filter((d) => !d.includes('type: pg.database'))
        .join('\n---\n'),
    );
    const grants = readFileSync(join(dir, 'grants.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'grants.yaml'),
      grants
        .split('\n---\n')
        .filter((d) => !d.includes('readers-connect'))
        .join('\n---\n'),
    );
    const plan = JSON.parse((await tend('plan', dir, '--json')).stdout) as PlanJson;
    // The grant lives under the database (it references it): gated with it.
    expect(plan.gated.sort()).toEqual(['pg.database/app', 'pg.grant/readers-connect']);
    const held = await tend('apply', dir, '--yes');
    expect(held.code, held.stdout + held.stderr).toBe(3);
    expect(await one(`SELECT count(*)::int FROM pg_database WHERE datname = 'app'`)).toBe(1);
    expect(
      await one(`SELECT count(*)::int FROM pg_database, aclexplode(datacl) a
        WHERE datname = 'app' AND a.grantee = 'app_readers'::regrole`),
    ).toBe(1);
    const approved = await tend('apply', dir, '--yes', '--approve-destroy');
    expect(approved.code, approved.stdout + approved.stderr).toBe(0);
    expect(await one(`SELECT count(*)::int FROM pg_database WHERE datname = 'app'`)).toBe(0);
    const after = await tend('plan', dir, '--json');
    expect(after.code, after.stdout + after.stderr).toBe(0);
  });
  it('imports a role and a grant made by hand: intent written, objects adopted, plan empty', async () => {
    await query(
      `CREATE ROLE "Legacy User" LOGIN CONNECTION LIMIT 3; GRANT CONNECT ON DATABASE postgres TO "Legacy User"`,
    );
    const r = await tend('import', dir, '--provider', 'pg', '--match', '*Legacy*');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const written = readFileSync(join(dir, 'pg-import.yaml'), 'utf8');
    expect(written).toContain('name: Legacy User');
    expect(written).toContain('connection_limit: 3');
    expect(written).toContain('database: postgres');
    const plan = await tend('plan', dir, '--json');
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect((JSON.parse(plan.stdout) as PlanJson).changes).toBe(false);
  });
});
