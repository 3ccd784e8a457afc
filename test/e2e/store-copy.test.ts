import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { copyExample, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';
import { startSandboxProcess } from '../support/sandbox-process.js';

// `tend store copy` through the built CLI: the quickstart applied with its default SQLite store is
// copied to PostgreSQL (a cluster that asks for a password), where the next plan is empty and the
// ledger verifies; then copied back to a new SQLite file, where the same holds. The password shows in
// no output. With CI=true a missing server fails the suite.
const SECRET = 'store-copy-e2e-quickstart-secret';
const DB_PASSWORD = 'store-copy-e2e-db-password-3b9d';
const LEDGER_KEY = 'store-copy-e2e-ledger-key-0123456789abcdef';

interface CopyJson {
  ok: boolean;
  workspace: string;
  from: { kind: string; store: string };
  to: { kind: string; store: string };
  copied: Record<string, number>;
  replaced?: Record<string, number>;
  ledger: { ok: boolean; entries: number; keyId?: string };
}

describe.skipIf(POSTGRES.skip)(
  `tend store copy of the applied quickstart, SQLite → PostgreSQL → SQLite (CLI, real sandbox, real cluster)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
    let ex: ReturnType<typeof copyExample>;
    let url: string;
    let elsewhere: string;
    let workspace: string;
    const outputs: CliResult[] = [];
    const tend = async (args: string[], extra: Record<string, string> = {}) => {
      const r = await runCli(args, {
        env: { QUICKSTART_ADMIN_PASSWORD: SECRET, TEND_LEDGER_KEY: LEDGER_KEY, ...extra },
        timeoutMs: 120_000,
      });
      outputs.push(r);
      return r;
    };
    const onPostgres = { TEND_STORE_URL: '' };

    beforeAll(async () => {
      server = await startPostgres({ auth: 'scram-sha-256', superPassword: DB_PASSWORD });
      await server.createDatabase('tend_fleet');
      url = `postgres://postgres:${DB_PASSWORD}@127.0.0.1:${server.port}/tend_fleet`;
      onPostgres.TEND_STORE_URL = url;
      sandbox = await startSandboxProcess();
      ex = copyExample('quickstart', sandbox.url);
      elsewhere = mkdtempSync(join(tmpdir(), 'tend-store-copy-e2e-'));
    }, 120_000);
    afterAll(async () => {
      await sandbox?.stop();
      await server?.stop();
      ex?.cleanup();
      if (elsewhere) rmSync(elsewhere, { recursive: true, force: true });
    });

    it('applies the quickstart on SQLite, copies it to PostgreSQL: the plan there is empty and the ledger verifies', async () => {
      const apply = await tend(['apply', ex.dir, '--json']);
      expect(apply.code, apply.stdout + apply.stderr).toBe(0);
      const summary = JSON.parse(apply.stdout.slice(apply.stdout.lastIndexOf('\n{\n') + 1)) as {
        converged: number;
        workspace: { name: string };
      };
      expect(summary.converged).toBe(5);
      workspace = summary.workspace.name;

      const sqlite = join(ex.dir, '.tend', 'tend.db');
      const started = Date.now();
      const copy = await tend(['store', 'copy', sqlite, url]);
      const tookMs = Date.now() - started;
      expect(copy.code, copy.stdout + copy.stderr).toBe(0);
      const shown = `127.0.0.1:${server.port}/tend_fleet`;
      expect(copy.stdout).toContain(
        `copied workspace ${workspace} from sqlite ${sqlite} to postgres postgres://${shown}`,
      );
      const counts = /(\d+) ledger entries, 5 twin entries, \d+ operations, 5 statuses/.exec(
        copy.stdout,
      );
      expect(counts, copy.stdout).not.toBeNull();
      const entries = Number(counts![1]);
      expect(entries).toBeGreaterThan(0);
      expect(copy.stdout).toMatch(/ledger intact on the target: \d+ entries, key id /);
      console.log(
        `tend store copy SQLite → PostgreSQL of the quickstart: ${tookMs} ms (CLI process)`,
      );

      const plan = await tend(['plan', ex.dir], onPostgres);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes.');
      const verify = await tend(['ledger', 'verify', ex.dir], onPostgres);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(
        new RegExp(`ledger intact: ${entries} entries of workspace ${workspace}`),
      );
      expect(await sandbox.objects()).toHaveLength(5);
    }, 300_000);

    it('refuses to copy onto the workspace again without --force, and replaces it with --force', async () => {
      const sqlite = join(ex.dir, '.tend', 'tend.db');
      const refused = await tend(['store', 'copy', sqlite, url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        new RegExp(
          `error: the target already holds workspace ${workspace}: \\d+ ledger entries, 5 twin entries, .*; pass --force to replace it`,
        ),
      );

      const forced = await tend(['store', 'copy', sqlite, url, '--force', '--json']);
      expect(forced.code, forced.stdout + forced.stderr).toBe(0);
      const r = JSON.parse(forced.stdout) as CopyJson;
      expect(r).toMatchObject({
        ok: true,
        workspace,
        to: { kind: 'postgres', store: `postgres://127.0.0.1:${server.port}/tend_fleet` },
        copied: { twin: 5, statuses: 5 },
        replaced: { twin: 5, statuses: 5 },
        ledger: { ok: true },
      });
      expect(r.copied).toStrictEqual(r.replaced);
    }, 120_000);

    it('copies it back to a new SQLite file, where the plan is empty and the ledger verifies', async () => {
      const back = join(elsewhere, 'tend.db');
      const noName = await tend(['store', 'copy', url, back]);
      expect(noName.code).toBe(1);
      expect(noName.stderr).toContain(
        'error: a PostgreSQL store holds many workspaces, and no workspace was named: pass --workspace <name>',
      );

      const copy = await tend(['store', 'copy', url, back, '--workspace', workspace, '--json']);
      expect(copy.code, copy.stdout + copy.stderr).toBe(0);
      const r = JSON.parse(copy.stdout) as CopyJson;
      expect(r).toMatchObject({
        ok: true,
        workspace,
        from: { kind: 'postgres' },
        to: { kind: 'sqlite', store: back },
      });

      const plan = await tend(['plan', ex.dir, '--store', back]);
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      expect(plan.stdout).toContain('No changes.');
      const verify = await tend(['ledger', 'verify', ex.dir, '--store', back]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(
        new RegExp(`ledger intact: ${r.ledger.entries} entries of workspace ${workspace}`),
      );
    }, 180_000);

    it('never prints the database password or the quickstart secret', () => {
      expect(outputs.length).toBeGreaterThan(5);
      for (const r of outputs) {
        expect(r.stdout + r.stderr).not.toContain(DB_PASSWORD);
        expect(r.stdout + r.stderr).not.toContain(SECRET);
      }
    });
  },
);
