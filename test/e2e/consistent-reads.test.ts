import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';

// A platform whose reads see its writes at once (PostgreSQL: ProviderDescription.consistentReads)
// needs no visibility window: a role Tend has just created and someone drops at once is gone, and
// the very next `tend plan` and `tend drift` say so — no audit feed declared, so nothing but the
// catalog can tell. Before the window depended on the provider, both waited 10 s for the role to
// "become visible" and showed nothing (docs/decisions/0034).

const INTENT = `kind: Provider
name: pg
type: postgres
---
kind: Resource
type: pg.role
name: probe
spec:
  name: tend_probe
  login: false
`;

interface PlanJson {
  changes: boolean;
  steps: { address: string; kind: string }[];
}

describe.skipIf(POSTGRES.skip)(
  `an out-of-band delete right after a create (PostgreSQL, CLI)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let dir: string;
    const tend = (...args: string[]) => runCli(args, { env: server.env('postgres') });
    const sql = async (text: string): Promise<Record<string, unknown>[]> => {
      const c = new pg.Client({ connectionString: server.url('postgres') });
      await c.connect();
      try {
        return (await c.query(text)).rows as Record<string, unknown>[];
      } finally {
        await c.end();
      }
    };
    const roleExists = async () =>
      (await sql(`SELECT 1 FROM pg_roles WHERE rolname = 'tend_probe'`)).length === 1;

    beforeAll(async () => {
      server = await startPostgres();
      dir = mkdtempSync(join(tmpdir(), 'tend-consistent-reads-'));
      writeFileSync(join(dir, 'intent.yaml'), INTENT);
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('the next plan shows the dropped role as gone and creates it again, at once', async () => {
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(await roleExists()).toBe(true);

      // Someone drops it moments after Tend created it.
      const dropped = Date.now();
      await sql('DROP ROLE tend_probe');

      const drift = await tend('drift', dir, '--json');
      const report = JSON.parse(drift.stdout) as { missing: { address: string; reason: string }[] };
      expect(report.missing, drift.stdout + drift.stderr).toEqual([
        { address: 'pg.role/probe', reason: 'deleted' },
      ]);

      const planned = await tend('plan', dir, '--json');
      const seenAfterMs = Date.now() - dropped;
      expect(planned.code, planned.stdout + planned.stderr).toBe(2);
      const plan = JSON.parse(planned.stdout) as PlanJson;
      expect(plan.steps).toContainEqual(
        expect.objectContaining({ address: 'pg.role/probe', kind: 'create' }),
      );
      // Well inside the 10 s an eventually consistent platform is given: no window was waited out.
      expect(seenAfterMs).toBeLessThan(10_000);

      const again = await tend('apply', dir);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect(await roleExists()).toBe(true);
    }, 120_000);
  },
);
