import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/postgres-migrations.js';
import type { CliResult } from '../support/cli.js';
import { copyExample, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// The quickstart through the built CLI with its store in PostgreSQL (TEND_STORE_URL), on a cluster
// that asks for a password: plan, apply, history and ledger verify work, nothing is written to a
// SQLite file, and the password shows in no output. With CI=true a missing server fails the suite.
const SECRET = 'pg-store-e2e-quickstart-secret';
const DB_PASSWORD = 'pg-store-e2e-db-password-7c1e';
const LEDGER_KEY = 'pg-store-e2e-ledger-key-0123456789abcdef';

describe.skipIf(POSTGRES.skip)(
  `tend on the quickstart with a PostgreSQL store (CLI, real sandbox, real cluster)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    let ex: ReturnType<typeof copyExample>;
    let url: string;
    const outputs: CliResult[] = [];
    const tend = async (args: string[], extra: Record<string, string> = {}) => {
      const r = await runCli(args, {
        env: {
          QUICKSTART_ADMIN_PASSWORD: SECRET,
          TEND_LEDGER_KEY: LEDGER_KEY,
          TEND_STORE_URL: url,
          ...extra,
        },
      });
      outputs.push(r);
      return r;
    };

    beforeAll(async () => {
      server = await startPostgres({ auth: 'scram-sha-256', superPassword: DB_PASSWORD });
      await server.createDatabase('tend_fleet');
      url = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${server.port}/tend_fleet`;
      sandbox = await startSandboxProcess();
      ex = copyExample('quickstart', sandbox.url);
    }, 120_000);
    afterAll(async () => {
      await sandbox?.stop();
      await server?.stop();
      ex?.cleanup();
    });

    it('plans, applies, plans nothing, shows history and verifies the ledger', async () => {
      const plan = await tend(['plan', ex.dir]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      expect(plan.stdout).toContain(
        'Plan: 5 to create, 0 to update, 0 to replace, 0 to delete, 0 unchanged.',
      );

      const apply = await tend(['apply', ex.dir, '--json']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const summary = JSON.parse(apply.stdout.slice(apply.stdout.lastIndexOf('\n{\n') + 1)) as {
        converged: number;
        workspace: { name: string; source: string };
      };
      expect(summary.converged).toBe(5);
      expect(await sandbox.objects()).toHaveLength(5);

      const again = await tend(['plan', ex.dir]);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(again.stdout).toContain('No changes.');

      const history = await tend(['history', ex.dir]);
      expect(history.code, history.stdout + history.stderr).toBe(0);
      expect(history.stdout).toContain('sb.networks/main');

      const status = await tend(['status', ex.dir]);
      expect(status.code, status.stdout + status.stderr).toBe(0);
      expect(status.stdout).toContain('sb.networks/main');

      const checkpoint = await tend(['ledger', 'checkpoint', ex.dir]);
      expect(checkpoint.code, checkpoint.stdout + checkpoint.stderr).toBe(0);
      expect(JSON.parse(checkpoint.stdout)).toMatchObject({ workspace: summary.workspace.name });

      const verify = await tend(['ledger', 'verify', ex.dir]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(
        new RegExp(`ledger intact: \\d+ entries of workspace ${summary.workspace.name}`),
      );

      // Everything is in the database, scoped by the workspace; no SQLite store was made.
      expect(existsSync(join(ex.dir, '.tend', 'tend.db'))).toBe(false);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const twin = await client.query<{ workspace: string; n: string }>(
          'SELECT workspace, count(*) AS n FROM tend.twin GROUP BY workspace',
        );
        expect(twin.rows).toEqual([{ workspace: summary.workspace.name, n: '5' }]);
        const pending = await client.query("SELECT 1 FROM tend.operations WHERE state = 'pending'");
        expect(pending.rows).toEqual([]);
        // The secrets are in no column of any table (the store redacts what it writes).
        const tables = await client.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tend'",
        );
        for (const { table_name } of tables.rows) {
          const dump = await client.query<{ t: string }>(
            `SELECT coalesce(string_agg(x::text, E'\\n'), '') AS t FROM tend.${table_name} AS x`,
          );
          expect(dump.rows[0]!.t, table_name).not.toContain(SECRET);
          expect(dump.rows[0]!.t, table_name).not.toContain(DB_PASSWORD);
        }
      } finally {
        await client.end();
      }
    }, 180_000);

    it('says the store is up to date to tend store migrate, and takes --store over TEND_STORE_URL', async () => {
      const migrate = await tend(['store', 'migrate', ex.dir, '--store', url], {
        TEND_STORE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(migrate.code, migrate.stdout + migrate.stderr).toBe(0);
      expect(migrate.stdout).toContain(
        `the postgres store is up to date: schema version ${POSTGRES_MIGRATIONS.length}`,
      );
    });

    it('refuses a database it cannot reach with a message naming host, port and database only', async () => {
      const r = await tend(['status', ex.dir], {
        TEND_STORE_URL: `postgres://postgres:${DB_PASSWORD}-wrong@127.0.0.1:${server.port}/tend_fleet`,
      });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        `cannot open the PostgreSQL store at 127.0.0.1:${server.port}/tend_fleet`,
      );
    });

    it('never prints the database password, and writes nothing with it under .tend/', () => {
      expect(outputs.length).toBeGreaterThan(0);
      for (const r of outputs) {
        expect(r.stdout + r.stderr).not.toContain(DB_PASSWORD);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
      }
      const dir = join(ex.dir, '.tend');
      const files = existsSync(dir)
        ? readdirSync(dir, { recursive: true, withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => join(e.parentPath, e.name))
        : [];
      for (const f of files) expect(readFileSync(f).includes(DB_PASSWORD), f).toBe(false);
    });
  },
);
