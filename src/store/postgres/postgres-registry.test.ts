import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TendError } from '../../core/index.js';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, sqlRows as sql, startPostgres } from '../../../test/support/postgres.js';
import { openRegistry } from '../open-store.js';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import { migratePostgresStore, openPostgresStore } from './postgres-store.js';
import { openPostgresRegistry } from './postgres-registry.js';

// The fleet's registry on a real cluster the test starts: registered workspaces, workers judged alive
// by the database's clock, every lease with its worker, state counts, and the migrations to schema
// version 2 from version 1 and to version 5 (the workers' caps in a column) from version 4. With
// CI=true a missing server fails the suite instead of skipping it.

let server: PostgresHandle | undefined;
let databases = 0;

async function freshDatabase(): Promise<string> {
  databases += 1;
  const name = `registry_${databases}`;
  await server!.createDatabase(name);
  return server!.url(name);
}

async function refusal(promise: Promise<unknown>): Promise<TendError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TendError);
  return error as TendError;
}

const holder = { command: 'tend worker', pid: 42, host: 'h1', startedAt: '2026-01-01T00:00:00Z' };

describe.skipIf(POSTGRES.skip)(`fleet registry on PostgreSQL${POSTGRES.note}`, () => {
  beforeAll(async () => {
    server = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('registers, lists and removes workspaces; the same source again is no change, another is refused', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    try {
      const b = await registry.addWorkspace({
        name: 'b',
        source: { kind: 'dir', dir: '/srv/b' },
        addedBy: 'ann@h1',
      });
      expect(b).toMatchObject({
        added: true,
        workspace: { name: 'b', source: { kind: 'dir', dir: '/srv/b' }, addedBy: 'ann@h1' },
      });
      await registry.addWorkspace({
        name: 'a',
        source: { kind: 'dir', dir: '/srv/a' },
        addedBy: 'x',
      });
      const again = await registry.addWorkspace({
        name: 'b',
        source: { kind: 'dir', dir: '/srv/b' },
        addedBy: 'bob@h2',
      });
      expect(again).toMatchObject({ added: false, workspace: { addedBy: 'ann@h1' } });
      const e = await refusal(
        registry.addWorkspace({
          name: 'b',
          source: { kind: 'dir', dir: '/srv/other' },
          addedBy: 'x',
        }),
      );
      expect({ code: e.code, message: e.message, hint: e.hint }).toEqual({
        code: 'workspace.exists',
        message: 'workspace b is already registered with another source (dir /srv/b)',
        hint: 'remove it first (tend workspace remove b), or add it under another name',
      });
      expect((await registry.listWorkspaces()).map((w) => w.name)).toEqual(['a', 'b']);
      expect(await registry.removeWorkspace('b')).toBe(true);
      expect(await registry.removeWorkspace('b')).toBe(false);
      expect((await registry.listWorkspaces()).map((w) => w.name)).toEqual(['a']);
    } finally {
      await registry.close();
    }
  });

  it('judges a worker alive by its heartbeat and TTL on the database clock', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    try {
      const w = { id: 'w-1', host: 'h1', pid: 7, version: '1.0.0', ttlMs: 60_000 };
      await registry.heartbeat(w);
      await registry.heartbeat({ ...w, id: 'w-0', ttlMs: 5_000 });
      expect(await registry.listWorkers()).toMatchObject([
        { id: 'w-0', alive: true },
        { id: 'w-1', alive: true, host: 'h1', pid: 7, version: '1.0.0', ttlMs: 60_000 },
      ]);
      // Ten seconds without a heartbeat, by the database's clock: w-0 (5 s TTL) is dead, w-1 not.
      await sql(url, "UPDATE tend.workers SET heartbeat_at = clock_timestamp() - interval '10 s'");
      expect((await registry.listWorkers()).map((r) => [r.id, r.alive])).toEqual([
        ['w-0', false],
        ['w-1', true],
      ]);
      // A heartbeat brings it back; removing forgets it.
      await registry.heartbeat({ ...w, id: 'w-0', ttlMs: 5_000 });
      expect((await registry.listWorkers())[0]).toMatchObject({ id: 'w-0', alive: true });
      await registry.removeWorker('w-0');
      expect((await registry.listWorkers()).map((r) => r.id)).toEqual(['w-1']);
    } finally {
      await registry.close();
    }
  });

  it('deletes the rows of workers dead for longer than a factor of their TTL (database time)', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    try {
      const w = { host: 'h1', pid: 7, version: '1.0.0', ttlMs: 5_000 };
      await registry.heartbeat({ ...w, id: 'long-dead' });
      await registry.heartbeat({ ...w, id: 'just-dead' });
      await registry.heartbeat({ ...w, id: 'alive' });
      // 60 s and 20 s without a heartbeat: dead for 12 and 4 TTLs.
      await sql(
        url,
        "UPDATE tend.workers SET heartbeat_at = clock_timestamp() - interval '60 s' WHERE id = 'long-dead'",
      );
      await sql(
        url,
        "UPDATE tend.workers SET heartbeat_at = clock_timestamp() - interval '20 s' WHERE id = 'just-dead'",
      );
      expect(await registry.pruneWorkers(10)).toEqual(['long-dead']);
      expect((await registry.listWorkers()).map((r) => [r.id, r.alive])).toEqual([
        ['alive', true],
        ['just-dead', false],
      ]);
      expect(await registry.pruneWorkers(10)).toEqual([]);
    } finally {
      await registry.close();
    }
  });

  it('keeps a worker’s --max-workspaces with its heartbeat, the version unchanged', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    try {
      const w = { host: 'h1', pid: 7, version: '1.2.3', ttlMs: 5_000 };
      await registry.heartbeat({ ...w, id: 'capped', maxWorkspaces: 3 });
      await registry.heartbeat({ ...w, id: 'free' });
      const [capped, free] = await registry.listWorkers();
      expect(capped).toMatchObject({ id: 'capped', version: '1.2.3', maxWorkspaces: 3 });
      expect(free).toMatchObject({ id: 'free', version: '1.2.3' });
      expect(free).not.toHaveProperty('maxWorkspaces');
      // In a column of its own (schema version 5): the version column holds the version alone.
      expect(
        await sql(url, 'SELECT id, version, max_workspaces FROM tend.workers ORDER BY id'),
      ).toEqual([
        { id: 'capped', version: '1.2.3', max_workspaces: 3 },
        { id: 'free', version: '1.2.3', max_workspaces: null },
      ]);
      // A heartbeat without the cap (the worker restarted without the flag) forgets it.
      await registry.heartbeat({ ...w, id: 'capped' });
      expect((await registry.listWorkers())[0]).not.toHaveProperty('maxWorkspaces');
      expect(await sql(url, "SELECT max_workspaces FROM tend.workers WHERE id = 'capped'")).toEqual(
        [{ max_workspaces: null }],
      );
    } finally {
      await registry.close();
    }
  });

  it('lists every lease with the worker holding it, expired by the database clock', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    const store = await openPostgresStore(url, { workspace: 'a' });
    try {
      const got = await store.acquireLease({
        workspace: 'a',
        holder: { ...holder, worker: 'w-1' },
        ttlMs: 60_000,
      });
      expect(got).toMatchObject({ acquired: true, lease: { holder: { worker: 'w-1' } } });
      expect(await store.getLease('a')).toMatchObject({ holder: { worker: 'w-1' } });
      expect(await registry.fleetLeases()).toMatchObject([
        { workspace: 'a', epoch: 1, holder: { worker: 'w-1', pid: 42 }, expired: false },
      ]);
      await sql(url, "UPDATE tend.leases SET expires_at = clock_timestamp() - interval '1 s'");
      expect(await registry.fleetLeases()).toMatchObject([{ workspace: 'a', expired: true }]);
    } finally {
      await store.close();
      await registry.close();
    }
  });

  it('records a finished pass only for the lease holder of that epoch', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    const store = await openPostgresStore(url, { workspace: 'a' });
    try {
      await registry.addWorkspace({
        name: 'a',
        source: { kind: 'dir', dir: '/srv/a' },
        addedBy: 'x',
      });
      await store.acquireLease({ workspace: 'a', holder, ttlMs: 60_000 });
      await registry.passDone('a', 2); // not the holder's epoch
      expect((await registry.listWorkspaces())[0]!.lastPassAt).toBeUndefined();
      await registry.passDone('a', 1);
      const at = (await registry.listWorkspaces())[0]!.lastPassAt;
      expect(at).toBeDefined();
      expect(Math.abs(Date.parse(at!) - Date.now())).toBeLessThan(60_000);
    } finally {
      await store.close();
      await registry.close();
    }
  });

  it('registers a git workspace; the same repository, ref and path again is no change, another ref is refused; a pass records its commit', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    const store = await openPostgresStore(url, { workspace: 'g' });
    const source = {
      kind: 'git' as const,
      url: 'file:///srv/git/i.git',
      ref: 'main',
      path: 'prod',
    };
    try {
      expect(await registry.addWorkspace({ name: 'g', source, addedBy: 'x' })).toMatchObject({
        added: true,
        workspace: { name: 'g', source },
      });
      const again = await registry.addWorkspace({ name: 'g', source: { ...source }, addedBy: 'y' });
      expect(again).toMatchObject({ added: false, workspace: { addedBy: 'x' } });
      const e = await refusal(
        registry.addWorkspace({ name: 'g', source: { ...source, ref: 'prod' }, addedBy: 'x' }),
      );
      expect(e.message).toBe(
        'workspace g is already registered with another source (git file:///srv/git/i.git main path prod)',
      );
      await refusal(
        registry.addWorkspace({ name: 'g', source: { kind: 'dir', dir: '/srv/g' }, addedBy: 'x' }),
      );
      const origin = { ...source, commit: 'c'.repeat(40) };
      await store.acquireLease({ workspace: 'g', holder, ttlMs: 60_000 });
      await registry.passDone('g', 2, { ...origin, commit: 'd'.repeat(40) }); // not the holder's epoch
      expect((await registry.listWorkspaces())[0]!.lastOrigin).toBeUndefined();
      await registry.passDone('g', 1, origin);
      expect((await registry.listWorkspaces())[0]).toMatchObject({ source, lastOrigin: origin });
    } finally {
      await store.close();
      await registry.close();
    }
  });

  it('counts the resource states of every workspace', async () => {
    const url = await freshDatabase();
    const registry = await openPostgresRegistry(url);
    const a = await openPostgresStore(url, { workspace: 'a' });
    const b = await openPostgresStore(url, { workspace: 'b' });
    try {
      const at = '2026-01-01T00:00:00Z';
      await a.putStatus({ address: 'sb.x/1', state: 'converged', checks: [], updatedAt: at });
      await a.putStatus({ address: 'sb.x/2', state: 'converged', checks: [], updatedAt: at });
      await a.putStatus({ address: 'sb.x/3', state: 'error', checks: [], updatedAt: at });
      await b.putStatus({ address: 'sb.x/1', state: 'pending', checks: [], updatedAt: at });
      const counts = await registry.stateCounts();
      expect(Object.fromEntries(counts)).toEqual({
        a: { converged: 2, error: 1 },
        b: { pending: 1 },
      });
    } finally {
      await a.close();
      await b.close();
      await registry.close();
    }
  });

  it('migrates a version-4 database: a cap kept after the version moves to its own column', async () => {
    const url = await freshDatabase();
    await migratePostgresStore(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 4) });
    // Rows as the workers of a Tend of schema version 4 heartbeated them (decision 0046).
    await sql(
      url,
      `INSERT INTO tend.workers (id, host, pid, version, ttl_ms) VALUES
         ('capped', 'h1', 1, '0.1.0;max-workspaces=3', 30000),
         ('free', 'h1', 2, '0.1.0', 30000),
         ('odd', 'h1', 3, '0.1.0;max-workspaces=many', 30000)`,
    );
    const e = await refusal(openPostgresRegistry(url));
    expect({ code: e.code, message: e.message }).toEqual({
      code: 'store.schema-too-old',
      message: `the database has Tend schema version 4, but this Tend expects version ${POSTGRES_MIGRATIONS.length}; run \`tend store migrate\` to bring it up to date`,
    });
    expect(await migratePostgresStore(url)).toEqual({ from: 4, to: POSTGRES_MIGRATIONS.length });
    expect(
      await sql(url, 'SELECT id, version, max_workspaces FROM tend.workers ORDER BY id'),
    ).toEqual([
      { id: 'capped', version: '0.1.0', max_workspaces: 3 },
      { id: 'free', version: '0.1.0', max_workspaces: null },
      { id: 'odd', version: '0.1.0', max_workspaces: null },
    ]);
    const registry = await openPostgresRegistry(url);
    try {
      const [capped, free] = await registry.listWorkers();
      expect(capped).toMatchObject({ id: 'capped', version: '0.1.0', maxWorkspaces: 3 });
      expect(free).not.toHaveProperty('maxWorkspaces');
      // A worker of the older Tend still running during the upgrade heartbeats the old form again:
      // it is still read as its version and its cap.
      await sql(
        url,
        "UPDATE tend.workers SET version = '0.1.0;max-workspaces=2' WHERE id = 'free'",
      );
      expect((await registry.listWorkers())[1]).toMatchObject({
        id: 'free',
        version: '0.1.0',
        maxWorkspaces: 2,
      });
    } finally {
      await registry.close();
    }
  });

  it('migrates a version-1 database to the latest, keeping its leases (no worker)', async () => {
    const url = await freshDatabase();
    await migratePostgresStore(url, { migrations: POSTGRES_MIGRATIONS.slice(0, 1) });
    // A lease as a Tend of schema version 1 wrote it.
    await sql(
      url,
      `INSERT INTO tend.leases (workspace, epoch, command, pid, host, started_at, acquired_at, expires_at)
       VALUES ('a', 1, $1, $2, $3, $4, now(), now() + interval '1 minute')`,
      [holder.command, holder.pid, holder.host, holder.startedAt],
    );
    const e = await refusal(openPostgresRegistry(url));
    expect(e.code).toBe('store.schema-too-old');
    expect(await migratePostgresStore(url)).toEqual({ from: 1, to: POSTGRES_MIGRATIONS.length });
    const registry = await openPostgresRegistry(url);
    try {
      const [lease] = await registry.fleetLeases();
      expect(lease).toMatchObject({ workspace: 'a', epoch: 1, holder });
      expect(lease!.holder.worker).toBeUndefined();
      expect(await registry.listWorkspaces()).toEqual([]);
      expect(await registry.listWorkers()).toEqual([]);
    } finally {
      await registry.close();
    }
  });
});

describe('fleet registry on anything but a shared store', () => {
  it('is refused with what to give instead', async () => {
    for (const location of ['/tmp/x/.tend/tend.db', 'sqlite:state.db', ':memory:']) {
      const e = await refusal(openRegistry(location));
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'fleet.shared-store-required',
        message:
          'a workspace registry needs a shared store: --store postgres://… or TEND_STORE_URL',
      });
    }
  });
});
