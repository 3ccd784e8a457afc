import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redactor, TendError } from '../../core/index.js';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, sqlRows as sql, startPostgres } from '../../../test/support/postgres.js';
import type { FleetNotice } from '../jobs.js';
import { openFleetJobs } from '../open-store.js';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import { claimJob, MAX_NOTICE_BYTES, noticePayload, openPostgresJobs } from './postgres-jobs.js';
import { migratePostgresStore } from './postgres-store.js';
import { openPostgresRegistry } from './postgres-registry.js';

// The fleet's job table (schema version 3) and event channel on a real cluster the test starts:
// claims with SKIP LOCKED (two claimers never get one job), only under a live lease whose epoch is
// recorded, jobs of a dead epoch interrupted (never run again), NOTIFY carried to a listener that
// reconnects, and the migration from version 2. With CI=true a missing server fails the suite.

let server: PostgresHandle | undefined;
let databases = 0;

async function freshDatabase(): Promise<string> {
  databases += 1;
  const name = `jobs_${databases}`;
  await server!.createDatabase(name);
  const url = server!.url(name);
  await migratePostgresStore(url);
  return url;
}

/** A lease of `workspace` at `epoch`, live for a minute (or already expired). */
async function lease(url: string, workspace: string, epoch: number, live = true): Promise<void> {
  await sql(
    url,
    `INSERT INTO tend.leases (workspace, epoch, command, pid, host, started_at, acquired_at, expires_at, worker)
     VALUES ($1, $2, 'tend worker', 1, 'h1', '2026-01-01T00:00:00Z', now(),
             now() + ($3 || ' minutes')::interval, 'w1')
     ON CONFLICT (workspace) DO UPDATE SET epoch = excluded.epoch, expires_at = excluded.expires_at`,
    [workspace, epoch, live ? '1' : '-1'],
  );
}

const job = (id: string, workspace = 'a') => ({
  id,
  workspace,
  kind: 'apply',
  input: { plan: '20260101T000000000Z-0123abcd' },
  requestedBy: 'api:ann (operator)',
});

const until = async (what: () => boolean, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(POSTGRES.skip)(`fleet job table on PostgreSQL${POSTGRES.note}`, () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('queues a job, claims it only under a live lease (recording the epoch), finishes it once', async () => {
    const url = await freshDatabase();
    const jobs = await openPostgresJobs(url);
    try {
      const queued = await jobs.submit(job('job-1'));
      expect(queued).toMatchObject({
        id: 'job-1',
        state: 'queued',
        requestedBy: 'api:ann (operator)',
      });
      expect(queued.epoch).toBeUndefined();
      expect(await jobs.queued()).toEqual(new Map([['a', 1]]));
      // Nobody holds the workspace: nothing is claimed.
      expect(await jobs.claim('a', 1, 'w1')).toBeUndefined();
      await lease(url, 'a', 3, false);
      expect(await jobs.claim('a', 3, 'w1')).toBeUndefined();
      await lease(url, 'a', 3);
      // Another epoch than the lease's: refused.
      expect(await jobs.claim('a', 2, 'w1')).toBeUndefined();
      const claimed = await jobs.claim('a', 3, 'w1');
      expect(claimed).toMatchObject({ id: 'job-1', state: 'running', epoch: 3, worker: 'w1' });
      expect(claimed!.startedAt).toBeDefined();
      expect(await jobs.claim('a', 3, 'w1')).toBeUndefined();
      // Another epoch cannot record its end.
      expect(await jobs.finish('job-1', 2, { state: 'done', result: {} })).toBeUndefined();
      const done = await jobs.finish('job-1', 3, { state: 'done', result: { verdict: 'ok' } });
      expect(done).toMatchObject({ state: 'done', result: { verdict: 'ok' }, epoch: 3 });
      expect(done!.finishedAt).toBeDefined();
      expect(await jobs.finish('job-1', 3, { state: 'done', result: {} })).toBeUndefined();
      expect(await jobs.job('job-1')).toEqual(done);
      expect(await jobs.job('job-none')).toBeUndefined();
    } finally {
      await jobs.close();
    }
  });

  it('two claimers at once: SKIP LOCKED gives the job to one, the other passes it over without waiting', async () => {
    const url = await freshDatabase();
    const jobs = await openPostgresJobs(url);
    const a = new pg.Client({ connectionString: url });
    const b = new pg.Client({ connectionString: url });
    await a.connect();
    await b.connect();
    try {
      await lease(url, 'a', 1);
      await jobs.submit(job('job-1'));
      // A claims in a transaction still open: the row is locked.
      await a.query('BEGIN');
      const first = await claimJob(a, 'a', 1, 'w-a');
      expect(first).toMatchObject({ id: 'job-1', worker: 'w-a' });
      // B does not wait for A's lock (a 2 s lock timeout would fail it) and gets nothing.
      await b.query(`SET lock_timeout = '2s'`);
      const t0 = Date.now();
      expect(await claimJob(b, 'a', 1, 'w-b')).toBeUndefined();
      expect(Date.now() - t0).toBeLessThan(1_500);
      await a.query('COMMIT');
      expect(await claimJob(b, 'a', 1, 'w-b')).toBeUndefined();
      // Two jobs, two claimers racing: each gets a different one.
      await jobs.submit(job('job-2'));
      await jobs.submit(job('job-3'));
      const [x, y] = await Promise.all([claimJob(a, 'a', 1, 'w-a'), claimJob(b, 'a', 1, 'w-b')]);
      expect(new Set([x?.id, y?.id])).toEqual(new Set(['job-2', 'job-3']));
      const rows = await sql<{ id: string; worker: string }>(
        url,
        `SELECT id, worker FROM tend.jobs WHERE state = 'running' ORDER BY id`,
      );
      expect(rows.map((r) => r.id)).toEqual(['job-1', 'job-2', 'job-3']);
    } finally {
      await a.end();
      await b.end();
      await jobs.close();
    }
  });

  it('a job left running under an older epoch is interrupted by the next holder, never claimed again', async () => {
    const url = await freshDatabase();
    const jobs = await openPostgresJobs(url);
    try {
      await lease(url, 'a', 1);
      await lease(url, 'b', 1);
      await jobs.submit(job('job-1'));
      await jobs.submit(job('job-b', 'b'));
      await jobs.claim('a', 1, 'w1');
      await jobs.claim('b', 1, 'w1');
      // w1 dies; w2 takes workspace a over at epoch 2.
      await lease(url, 'a', 2);
      expect(await jobs.interruptStale('a', 1)).toEqual([]);
      const interrupted = await jobs.interruptStale('a', 2);
      expect(interrupted.map((j) => [j.id, j.state, j.epoch])).toEqual([
        ['job-1', 'interrupted', 1],
      ]);
      expect(interrupted[0]!.error?.code).toBe('job.interrupted');
      expect(interrupted[0]!.error?.message).toMatch(/not run again/);
      // The zombie cannot record an end over it, and nobody claims it again.
      expect(await jobs.finish('job-1', 1, { state: 'done', result: {} })).toBeUndefined();
      expect(await jobs.claim('a', 2, 'w2')).toBeUndefined();
      expect((await jobs.job('job-1'))!.state).toBe('interrupted');
      // Another workspace's running job is not touched.
      expect((await jobs.job('job-b'))!.state).toBe('running');
    } finally {
      await jobs.close();
    }
  });

  it('keeps secrets the redactor knows out of the table', async () => {
    const url = await freshDatabase();
    const redactor = new Redactor();
    redactor.add('s3cr3t-value-123');
    const jobs = await openPostgresJobs(url, { redactor });
    try {
      await lease(url, 'a', 1);
      await jobs.submit({ ...job('job-1'), input: { note: 'pw s3cr3t-value-123' } });
      await jobs.claim('a', 1, 'w1');
      await jobs.finish('job-1', 1, {
        state: 'failed',
        error: { code: 'x.failed', message: 'saw s3cr3t-value-123' },
      });
      const [row] = await sql(url, 'SELECT * FROM tend.jobs');
      expect(JSON.stringify(row)).not.toContain('s3cr3t-value-123');
    } finally {
      await jobs.close();
    }
  });

  it('carries events to a listener, cut under 8000 bytes, and listens again after its connection is terminated', async () => {
    const url = await freshDatabase();
    const jobs = await openPostgresJobs(url);
    const seen: FleetNotice[] = [];
    const woken: string[] = [];
    const states: string[] = [];
    const listener = await jobs.listen({
      onEvent: (n) => seen.push(n),
      onJob: (w) => woken.push(w),
      onConnection: (s) => states.push(s),
    });
    try {
      await jobs.publish({ workspace: 'a', worker: 'w1', event: { kind: 'pass-done', pass: 1 } });
      await jobs.publish({
        workspace: 'a',
        worker: 'w1',
        event: { kind: 'warning', message: 'x'.repeat(20_000) },
      });
      await jobs.submit(job('job-1'));
      await until(() => seen.length === 2 && woken.length === 1);
      expect(seen[0]).toEqual({
        workspace: 'a',
        worker: 'w1',
        event: { kind: 'pass-done', pass: 1 },
      });
      expect(seen[1]!.event).toMatchObject({ kind: 'warning', truncated: true });
      expect(woken).toEqual(['a']);
      // The listening backend is ended by the server: the listener notices and listens again.
      await sql(
        url,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
      );
      await until(() => states.filter((s) => s === 'listening').length >= 2, 15_000);
      expect(states).toContain('lost');
      await jobs.publish({ workspace: 'b', worker: 'w2', event: { kind: 'pass-done', pass: 2 } });
      await until(() => seen.length === 3);
      expect(seen[2]!.workspace).toBe('b');
    } finally {
      await listener.close();
      await jobs.close();
    }
  }, 30_000);

  it('migrates a version-2 database to the latest version, keeping its registry; refuses it until then', async () => {
    const name = 'jobs_v2';
    await server!.createDatabase(name);
    const url = server!.url(name);
    await migratePostgresStore(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 2) });
    await sql(
      url,
      `INSERT INTO tend.registered_workspaces (name, source, added_by) VALUES ('a', '{"kind":"dir","dir":"/srv/a"}', 'x')`,
    );
    const e = await openPostgresJobs(url).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(TendError);
    expect((e as TendError).code).toBe('store.schema-too-old');
    expect(await migratePostgresStore(url)).toEqual({ from: 2, to: POSTGRES_MIGRATIONS.length });
    const registry = await openPostgresRegistry(url);
    const jobs = await openPostgresJobs(url);
    try {
      expect((await registry.listWorkspaces()).map((w) => w.name)).toEqual(['a']);
      expect((await jobs.submit(job('job-1'))).state).toBe('queued');
    } finally {
      await registry.close();
      await jobs.close();
    }
  });
});

describe('fleet job table on anything but a shared store', () => {
  it('is refused with what to give instead', async () => {
    const e = await openFleetJobs('/tmp/x/.tend/tend.db').then(
      () => undefined,
      (err: unknown) => err as TendError,
    );
    expect({ code: e?.code, message: e?.message }).toEqual({
      code: 'fleet.shared-store-required',
      message: 'the fleet’s job table needs a shared store: --store postgres://… or TEND_STORE_URL',
    });
  });

  it('keeps a notice under the payload limit', () => {
    const big = noticePayload({
      workspace: 'a',
      worker: 'w',
      event: { kind: 'plan', plan: { steps: 'y'.repeat(50_000) } },
    });
    expect(Buffer.byteLength(big)).toBeLessThan(MAX_NOTICE_BYTES);
    expect(JSON.parse(big)).toEqual({
      workspace: 'a',
      worker: 'w',
      event: { kind: 'plan', truncated: true },
    });
  });
});
