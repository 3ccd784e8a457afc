import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';

// examples/policies/pg-roles-least-privilege.yaml (issue 28, item 6) on examples/postgres's roles,
// through the built `tend`, on a cluster of its own: the example complies; a role made superuser by
// hand (the intent does not declare `superuser`) is refused on the plan, and `apply` sends nothing,
// until the intent declares `superuser: false`; a `connection_limit: -1` is refused on validate at
// its field. The steps build on each other, in order.

const EXAMPLE = join(ROOT, 'examples', 'postgres');
const POLICY = 'pg-roles-least-privilege.yaml';

describe.skipIf(POSTGRES.skip)(
  `the PostgreSQL role policy of the library (CLI, real cluster)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let dir: string;
    const tend = (...args: string[]) => runCli(args, { env: server.env('postgres') });
    const superuser = async (role: string): Promise<unknown> => {
      const c = new pg.Client({ connectionString: server.url('postgres') });
      await c.connect();
      try {
        const r = await c.query('SELECT rolsuper FROM pg_roles WHERE rolname = $1', [role]);
        return (r.rows[0] as { rolsuper: boolean } | undefined)?.rolsuper;
      } finally {
        await c.end();
      }
    };
    const sql = async (text: string): Promise<void> => {
      const c = new pg.Client({ connectionString: server.url('postgres') });
      await c.connect();
      try {
        await c.query(text);
      } finally {
        await c.end();
      }
    };
    const edit = (from: string, to: string) => {
      const p = join(dir, 'roles.yaml');
      const text = readFileSync(p, 'utf8');
      expect(text).toContain(from);
      writeFileSync(p, text.replace(from, to));
    };

    beforeAll(async () => {
      server = await startPostgres();
      dir = mkdtempSync(join(tmpdir(), 'tend-pg-policy-'));
      // The example's roles only: its database, grants and audit are not what this is about.
      for (const f of ['provider.yaml', 'roles.yaml']) copyFileSync(join(EXAMPLE, f), join(dir, f));
      copyFileSync(join(ROOT, 'examples', 'policies', POLICY), join(dir, POLICY));
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("the example's roles comply: validate passes, and apply creates them", async () => {
      const validated = await tend('validate', dir);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
      expect(validated.stderr).not.toContain('policy');
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(await superuser('app')).toBe(false);
      const planned = await tend('plan', dir, '--json');
      expect(planned.code, planned.stdout + planned.stderr).toBe(0);
      expect((JSON.parse(planned.stdout) as { policies: unknown[] }).policies).toEqual([]);
    });

    it('a role made superuser by hand is refused on the plan; apply sends nothing', async () => {
      await sql('ALTER ROLE app SUPERUSER');
      const planned = await tend('plan', dir);
      expect(planned.code, planned.stdout + planned.stderr).toBe(1);
      expect(planned.stdout).toMatch(
        /✗ deny\s+pg\.role\/app: pg-roles-least-privilege rule 1: roles are not superusers \(.*pg-roles-least-privilege\.yaml:\d+:\d+\)/,
      );
      const applied = await tend('apply', dir);
      expect(applied.code).toBe(1);
      expect(applied.stdout + applied.stderr).toContain(
        "1 policy rule with action deny is violated by the plan's result: nothing was sent",
      );
      expect(await superuser('app')).toBe(true);
    });

    it('declaring superuser: false makes the plan comply, and apply takes the superuser away', async () => {
      edit('  login: true\n', '  login: true\n  superuser: false\n');
      const planned = await tend('plan', dir);
      expect(planned.code, planned.stdout + planned.stderr).toBe(2);
      expect(planned.stdout).not.toContain('deny');
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(await superuser('app')).toBe(false);
    });

    it('connection_limit -1 is refused on validate, at the field', async () => {
      edit('connection_limit: 20', 'connection_limit: -1');
      const r = await tend('validate', dir);
      expect(r.code).toBe(1);
      const lines = readFileSync(join(dir, 'roles.yaml'), 'utf8').split('\n');
      const line = lines.findIndex((l) => l.includes('connection_limit: -1')) + 1;
      const column = lines[line - 1]!.indexOf('-1') + 1;
      expect(r.stderr).toContain(
        `${join(dir, 'roles.yaml')}:${line}:${column}: error[policy.denied]: policy pg-roles-least-privilege (deny) rule 3 violated: connection_limit -1 is no limit; give the role a number of connections (at spec.connection_limit)`,
      );
    });
  },
);
