import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change, ResourceStatus } from '../../src/core/index.js';
import { ROOT, runCli } from '../support/cli.js';
import type { PostgresHandle } from '../support/postgres.js';
import { POSTGRES, startPostgres } from '../support/postgres.js';

// The secret-rotation story of the design, as examples/postgres-rotation tells it (issue 28, item 5),
// through the built `tend` against a real cluster that checks passwords (scram-sha-256 over TCP):
// "rotation completed but half the consumers never picked up the new value". `rotate-password`
// runs; the next pass finds the consumer pinned to a copy of the old password failing its check,
// and the ledger records it with the rotation as its cause; the consumer reading the secret file
// has no verdict. Given the new value, the consumer's check passes and the ledger says so. The
// steps build on each other, in order.

const EXAMPLE = join(ROOT, 'examples', 'postgres-rotation');
const SUPER = 'super-Secret-0123456789';
const OLD = 'Old0password0of0app0role0x';
const CHECK = 'check:app-logs-in';

describe.skipIf(POSTGRES.skip)(
  `secret rotation: the stale consumer in the compliance record (CLI, real cluster)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let dir: string;
    const tend = (...args: string[]) =>
      runCli(args, { env: { ...server.env('postgres'), PGPASSWORD: SUPER } });
    const history = async (): Promise<Change[]> => {
      const r = await tend('history', dir, '--json', '--limit', '500');
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { changes: Change[] }).changes;
    };
    const verdicts = async (address: string) =>
      (await history()).filter((c) => c.action === 'verdict' && c.address === address);
    const checks = async () => {
      const r = await tend('status', dir, '--json');
      expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
      const out = JSON.parse(r.stdout) as {
        resources: { address: string; checks: { name: string; ok: boolean; message: string }[] }[];
      };
      return Object.fromEntries(
        out.resources.map((s) => [s.address, s.checks.map((c) => `${c.name}:${String(c.ok)}`)]),
      );
    };
    let rotationSeq = 0;
    let foundSeq = 0;

    beforeAll(async () => {
      server = await startPostgres({ auth: 'scram-sha-256', superPassword: SUPER });
      dir = mkdtempSync(join(tmpdir(), 'tend-pg-rotation-'));
      cpSync(EXAMPLE, dir, { recursive: true });
      rmSync(join(dir, 'README.md'), { force: true });
      // The role's secret, and the copy billing was deployed with.
      writeFileSync(join(dir, 'app.password'), `${OLD}\n`, { mode: 0o600 });
      writeFileSync(join(dir, 'billing.password'), `${OLD}\n`, { mode: 0o600 });
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('apply: the role and both consumers; both log in as app', async () => {
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(await checks()).toEqual({
        'pg.role/app': [],
        'pg.schema/orders': ['app-logs-in:true'],
        'pg.schema/billing': ['app-logs-in:true'],
      });
      expect((await history()).filter((c) => c.action === 'verdict')).toEqual([]);
    });

    it('rotate-password runs, and writes its ledger entry with who and why', async () => {
      const r = await tend(
        'action',
        'pg.role/app',
        'rotate-password',
        dir,
        '--actor',
        'alice',
        '--actor-kind',
        'human',
        '--motivation',
        'scheduled:quarterly',
        '--json',
      );
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as { state: string; ledgerSeq: number };
      expect(report.state).toBe('done');
      rotationSeq = report.ledgerSeq;
      const entry = (await history()).find((c) => c.seq === rotationSeq)!;
      expect(entry).toMatchObject({
        actor: 'alice',
        actorKind: 'human',
        motivation: { kind: 'scheduled', ref: 'quarterly' },
        address: 'pg.role/app',
        after: { action: 'rotate-password', outcome: 'done' },
      });
      expect(readFileSync(join(dir, 'app.password'), 'utf8').trim()).not.toBe(OLD);
    });

    it('the next pass: the stale consumer fails its check, recorded with the rotation as cause; the fresh one has no verdict', async () => {
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(1);
      expect(await checks()).toEqual({
        'pg.role/app': [],
        'pg.schema/orders': ['app-logs-in:true'],
        'pg.schema/billing': ['app-logs-in:false'],
      });
      expect(await verdicts('pg.schema/orders')).toEqual([]);
      const found = await verdicts('pg.schema/billing');
      expect(found).toHaveLength(1);
      expect(found[0]!.compliance).toMatchObject({
        policy: CHECK,
        rule: 0,
        result: 'fail',
        actions: ['deny'],
        severity: 'high',
        cause: {
          seq: rotationSeq,
          actor: 'alice',
          actorKind: 'human',
          motivation: { kind: 'scheduled', ref: 'quarterly' },
          address: 'pg.role/app',
          run: { action: 'rotate-password' },
        },
      });
      expect(found[0]!.compliance!.message).toContain('password authentication failed');
      // Neither password reaches the ledger, the status or the output.
      const fresh = readFileSync(join(dir, 'app.password'), 'utf8').trim();
      const status = await tend('status', dir, '--json');
      for (const text of [
        JSON.stringify(await history()),
        status.stdout,
        applied.stdout + applied.stderr,
      ]) {
        expect(text).not.toContain(OLD);
        expect(text).not.toContain(fresh);
      }
      foundSeq = found[0]!.seq;
      // The status keeps it while it fails: since when, the rotation before it, the entry.
      const statuses = (JSON.parse(status.stdout) as { resources: ResourceStatus[] }).resources;
      const billing = statuses.find((r) => r.address === 'pg.schema/billing')!;
      expect(billing.compliance?.checks).toMatchObject([
        {
          policy: CHECK,
          recorded: foundSeq,
          cause: { seq: rotationSeq, actor: 'alice', address: 'pg.role/app' },
        },
      ]);
      expect(statuses.find((r) => r.address === 'pg.schema/orders')!.compliance).toBeUndefined();
      // tend history words it: the check, and the rotation it came after.
      const text = await tend('history', dir, '--address', 'pg.schema/billing');
      expect(text.stdout).toContain(`↳ check app-logs-in (deny) failing: cannot connect (`);
      expect(text.stdout).toContain(
        `— after alice (human, scheduled:quarterly), ledger entry ${rotationSeq} (rotate-password on pg.role/app)`,
      );
      // Still failing on the next pass (a new process): nothing new is written, since is kept.
      const since = billing.compliance!.checks![0]!.since;
      const again = await tend('apply', dir);
      expect(again.code).toBe(1);
      expect(await verdicts('pg.schema/billing')).toHaveLength(1);
      const after = (
        JSON.parse((await tend('status', dir, '--json')).stdout) as { resources: ResourceStatus[] }
      ).resources.find((r) => r.address === 'pg.schema/billing')!;
      expect(after.compliance?.checks?.[0]?.since).toBe(since);

      // tend compliance names the stale consumer, its check and the rotation before it.
      const report = await tend('compliance', dir, '--json');
      expect(report.code, report.stderr).toBe(1);
      const doc = JSON.parse(report.stdout) as {
        results: {
          policy: string;
          result: string;
          resources: { name: string }[];
          properties?: Record<string, unknown>;
        }[];
      };
      expect(doc.results).toEqual([
        expect.objectContaining({
          policy: CHECK,
          result: 'fail',
          resources: [expect.objectContaining({ name: 'pg.schema/billing' })],
        }),
      ]);
      expect(JSON.stringify(doc.results[0])).toContain(
        `alice (human, scheduled:quarterly), ledger entry ${rotationSeq} (rotate-password on pg.role/app)`,
      );
      const words = await tend('compliance', dir);
      expect(words.stdout).toContain('pg.schema/billing');
      expect(words.stdout).toContain('rotate-password on pg.role/app');
    });

    it('given the new value, the consumer passes again, and the ledger says so', async () => {
      writeFileSync(join(dir, 'billing.password'), readFileSync(join(dir, 'app.password')), {
        mode: 0o600,
      });
      const applied = await tend('apply', dir);
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      const records = await verdicts('pg.schema/billing');
      expect(records.map((c) => c.compliance?.result)).toEqual(['fail', 'pass']);
      expect(records[1]!.compliance).toMatchObject({ policy: CHECK, found: foundSeq });
      const text = await tend('history', dir, '--address', 'pg.schema/billing');
      expect(text.stdout).toContain(
        `↳ check app-logs-in (deny) passes again (found in entry ${foundSeq})`,
      );
      expect(await verdicts('pg.schema/orders')).toEqual([]);
    });
  },
);
