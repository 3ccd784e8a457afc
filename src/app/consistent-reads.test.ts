import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresHandle } from '../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../test/support/postgres.js';
import type { Address } from '../core/index.js';
import type { Clock } from '../engine/index.js';
import { systemClock } from '../engine/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { apply, defaultContext, plan } from './index.js';

// The visibility window per provider, through the application layer's `apply` and `plan`, against
// real platforms, on a clock that does not move: whatever the window, no time passes between the
// create and the plan, so only the provider's promise decides. A role dropped right after Tend
// created it (PostgreSQL, reads see writes) is planned again at once; so is a bucket of a sandbox
// whose served document promises consistent reads; a bucket of one whose document promises nothing
// is still waited for.

const ROLE_INTENT = `kind: Provider
name: pg
type: postgres
---
kind: Resource
type: pg.role
name: probe
spec:
  name: tend_probe_app
  login: false
`;

/**
 * A clock that never moves: whatever waits sleeps for real (the lease's renewal, verify's re-reads),
 * but no time passes between the create and the plan, so no window, however short, is ever over.
 */
const frozen: Clock = {
  now: () => new Date('2026-01-01T00:00:00Z'),
  sleep: (ms, signal) => systemClock.sleep(ms, signal),
};

const request = (dir: string) => ({
  dir,
  approveDestroy: false,
  prune: true,
  runChecks: false,
  verifyTimeoutMs: 2000,
  lockTimeoutMs: 0,
});

describe.skipIf(POSTGRES.skip)(
  `a delete right after a create, seen by the next plan (PostgreSQL)${POSTGRES.note}`,
  () => {
    let server: PostgresHandle;
    let dir: string;

    beforeAll(async () => {
      server = await startPostgres();
      dir = mkdtempSync(join(tmpdir(), 'tend-consistent-reads-pg-'));
      writeFileSync(join(dir, 'intent.yaml'), ROLE_INTENT);
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('plans the dropped role again with no time passed: no visibility window', async () => {
      const ctx = defaultContext({
        env: { ...server.env('postgres'), TEND_LEDGER_KEY: 'k'.repeat(64) },
        clock: frozen,
        notice: () => {},
      });
      const applied = await apply(ctx, request(dir));
      expect(applied.outcomes['pg.role/probe' as Address]?.state).toBe('converged');

      const c = new pg.Client({ connectionString: server.url('postgres') });
      await c.connect();
      try {
        await c.query('DROP ROLE tend_probe_app');
      } finally {
        await c.end();
      }

      const planned = await plan(ctx, request(dir));
      expect(planned.plan.steps).toContainEqual(
        expect.objectContaining({ address: 'pg.role/probe', kind: 'create' }),
      );
    });
  },
);

describe('a delete right after a create, as the served document of the sandbox promises or not', () => {
  const CASES = [
    {
      reason:
        'started with eventual consistency switchable, its document promises nothing: the object a create settled moments ago is waited for, not created twice',
      consistentReads: false,
      want: [],
    },
    {
      reason:
        'started without eventual consistency, its document promises consistent reads: the object is gone and is created again at once',
      consistentReads: true,
      want: ['create'],
    },
  ];
  let sb: RunningSandbox | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(CASES)('$reason', async ({ consistentReads, want }) => {
    sb = await startSandbox({ port: 0, consistentReads });
    dir = mkdtempSync(join(tmpdir(), 'tend-consistent-reads-sb-'));
    writeFileSync(
      join(dir, 'intent.yaml'),
      `kind: Provider
name: sb
type: openapi
spec: ${sb.url}/openapi.json
endpoint: ${sb.url}
---
kind: Resource
type: sb.buckets
name: logs
spec: { name: tend-consistent-reads-logs, versioning: false }
`,
    );
    const ctx = defaultContext({
      env: { TEND_LEDGER_KEY: 'k'.repeat(64) },
      clock: frozen,
      notice: () => {},
    });
    const applied = await apply(ctx, request(dir));
    expect(applied.outcomes['sb.buckets/logs' as Address]?.state).toBe('converged');
    // Gone from the platform without an audit entry, as an object not visible yet looks: removed
    // from the sandbox's own state, not through its API (whose feed would say who deleted it).
    sb.sandbox.state.remove('buckets', 'tend-consistent-reads-logs');

    const planned = await plan(ctx, request(dir));
    const steps = planned.plan.steps.filter((s) => s.address === 'sb.buckets/logs');
    expect(steps.map((s) => s.kind)).toEqual(want);
  });
});
