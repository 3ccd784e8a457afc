import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresHandle } from '../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../test/support/postgres.js';
import { reconcilePass, steppedClock, tendActor } from '../engine/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { openWorkspaceAt } from './index.js';

// The `sql` check wired through a pass: the workspace the application layer opens runs sql checks
// over the connection the intent names (a URL in an environment variable), with references
// resolved, and the results — evidence included — land in the resource's status.

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');

describe.skipIf(POSTGRES.skip)(`sql checks in a pass${POSTGRES.note}`, () => {
  let sb: RunningSandbox;
  let server: PostgresHandle;
  let dir: string;

  beforeAll(async () => {
    [sb, server] = await Promise.all([startSandbox({ port: 0 }), startPostgres()]);
    dir = mkdtempSync(join(tmpdir(), 'tend-sql-pass-'));
  }, 120_000);
  afterAll(async () => {
    await sb?.close();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs them after the change and records their results with evidence', async () => {
    writeFileSync(
      join(dir, 'intent.yaml'),
      `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}
---
kind: Resource
type: sb.buckets
name: a
spec: { name: sqlcheck-a, versioning: false }
checks:
  - name: superuser-exists
    sql:
      connection: { fromEnv: CHECK_DB_URL }
      query: SELECT count(*) AS n FROM pg_roles WHERE rolname = 'postgres'
      value: 1
  - name: bucket-name
    sql:
      connection: { fromEnv: CHECK_DB_URL }
      query: SELECT '\${sb.buckets/a.name}' AS bucket
      rows: [{ bucket: sqlcheck-a }]
  - name: no-rows
    sql:
      connection: { fromEnv: CHECK_DB_URL }
      query: SELECT 1 AS one WHERE false
      rowCount: { min: 1 }
`,
    );
    const ws = await openWorkspaceAt({
      dir,
      name: 'sql-pass',
      env: { TEND_SPEC_DIRS: dirname(SPEC), CHECK_DB_URL: server.url() },
    });
    try {
      await reconcilePass(ws, {
        mode: 'apply',
        approveDestroy: false,
        prune: true,
        actor: tendActor(),
        report: () => {},
        verifyTimeoutMs: 2000,
        visibilityWindowMs: 0,
        runChecks: true,
        clock: steppedClock(),
      });
      const [status] = await ws.store.listStatus();
      expect(status?.checks.map(({ at: _, ...c }) => c)).toEqual([
        {
          name: 'superuser-exists',
          kind: 'sql',
          ok: true,
          message: 'returned 1 row as expected',
          evidence: '1 row: {"n":"1"}',
        },
        {
          name: 'bucket-name',
          kind: 'sql',
          ok: true,
          message: 'returned 1 row as expected',
          evidence: '1 row: {"bucket":"sqlcheck-a"}',
        },
        {
          name: 'no-rows',
          kind: 'sql',
          ok: false,
          message: 'returned 0 rows, expected at least 1',
          evidence: '0 rows',
        },
      ]);
    } finally {
      await ws.close();
    }
  });
});
