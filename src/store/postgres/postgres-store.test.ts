import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewChange } from '../../core/index.js';
import { REDACTED, Redactor, TendError } from '../../core/index.js';
import type { PostgresHandle } from '../../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../../test/support/postgres.js';
import { SUITE_LEDGER_KEY, describeStore } from '../../../test/support/store-contract.js';
import { openStore } from '../open-store.js';
import { withTwinCache } from '../twin-cache.js';
import { POSTGRES_MIGRATIONS } from './postgres-migrations.js';
import type { PostgresMigration } from './postgres-migrations.js';
import { parsePostgresLocation } from './postgres-location.js';
import {
  connectPool,
  migratePostgresStore,
  openPostgresStore,
  storeError,
  withClient,
} from './postgres-store.js';

// The PostgreSQL store on a real cluster the test starts (test/support/postgres.ts): the shared
// conformance suite, unchanged, then what only a shared database has — workspaces side by side,
// versioned migrations, the twin cache told about other workers' commits. With CI=true a missing
// server fails the suite instead of skipping it.

let server: PostgresHandle | undefined;
let databases = 0;
let workspaces = 0;

/** A new, empty database on the cluster; its URL. */
async function freshDatabase(): Promise<string> {
  databases += 1;
  const name = `store_${databases}`;
  await server!.createDatabase(name);
  return server!.url(name);
}

const change: NewChange = {
  time: '2026-01-01T00:00:00.000Z',
  actor: 'tend',
  source: 'tend',
  address: 'sb.volumes/data',
  type: 'sb.volumes',
  objectId: 'vol-1',
  action: 'update',
  fields: ['size'],
  before: { size: 1 },
  after: { size: 2 },
};

/** A clock the stores decide leases by, moved by hand. */
function handClock(): { now: () => Date; advance: (ms: number) => void } {
  let now = Date.UTC(2026, 0, 1);
  return { now: () => new Date(now), advance: (ms) => (now += ms) };
}

/** A lease holder as `tend run` writes it. */
const holder = (pid: number) => ({ command: 'tend run', pid, host: 'h', startedAt: change.time });

/** Two stores of one workspace on a fresh database, on one hand-moved clock, and a plain client. */
async function twoStoresAndAClient(workspace: string) {
  const url = await freshDatabase();
  const clock = handClock();
  const a = await openPostgresStore(url, { workspace, now: clock.now });
  const b = await openPostgresStore(url, { workspace, now: clock.now });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const close = async () => {
    await client.end();
    await a.close();
    await b.close();
  };
  return { a, b, client, clock, close };
}

describe.skipIf(POSTGRES.skip)(`PostgreSQL store${POSTGRES.note}`, () => {
  let shared: string;
  beforeAll(async () => {
    server = await startPostgres();
    shared = await freshDatabase();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  // Every store of the suite is a new workspace in one shared database: fresh and empty only if
  // every query is scoped by workspace.
  describeStore(
    'postgres',
    (options) => {
      workspaces += 1;
      return openPostgresStore(shared, { workspace: `suite-${workspaces}`, ...options });
    },
    async (now, options) => {
      const url = await freshDatabase();
      const [a, b] = options ?? [{ ledgerKey: SUITE_LEDGER_KEY }, { ledgerKey: SUITE_LEDGER_KEY }];
      return [
        await openPostgresStore(url, { workspace: 'suite', now, ...a }),
        await openPostgresStore(url, { workspace: 'suite', now, ...b }),
      ];
    },
  );

  describe('workspaces sharing one database', () => {
    it('keeps each workspace’s twin, journal, ledger and settings apart', async () => {
      const url = await freshDatabase();
      const prod = await openStore(url, { workspace: 'prod', ledgerKey: SUITE_LEDGER_KEY });
      const dev = await openStore(url, { workspace: 'dev', ledgerKey: SUITE_LEDGER_KEY });
      try {
        const twin = {
          address: 'sb.volumes/data' as const,
          type: 'sb.volumes',
          objectId: 'vol-prod',
          fields: { size: 1 },
          stateful: false,
          dependsOn: [],
          observedAt: '2026-01-01T00:00:00.000Z',
        };
        await prod.putTwin(twin);
        await dev.putTwin({ ...twin, objectId: 'vol-dev' });
        await prod.appendChange(change);
        await prod.appendChange(change);
        await dev.appendChange(change);
        await prod.setMeta('workspace', 'prod');
        expect((await prod.getTwin('sb.volumes/data'))?.objectId).toBe('vol-prod');
        expect((await dev.listTwin()).map((t) => t.objectId)).toEqual(['vol-dev']);
        expect((await prod.changes()).map((c) => c.seq)).toEqual([1, 2]);
        expect((await dev.changes()).map((c) => c.seq)).toEqual([1]);
        expect(await prod.verifyLedger()).toMatchObject({ ok: true, entries: 2 });
        expect(await dev.verifyLedger()).toMatchObject({ ok: true, entries: 1 });
        expect(await dev.getMeta('workspace')).toBeUndefined();
      } finally {
        await prod.close();
        await dev.close();
      }
    });

    it('tells a twin cache when another worker committed, and not when it wrote itself', async () => {
      const url = await freshDatabase();
      const mine = withTwinCache(await openPostgresStore(url, { workspace: 'prod' }));
      const other = await openPostgresStore(url, { workspace: 'prod' });
      try {
        const entry = (name: string) => ({
          address: `sb.volumes/${name}` as const,
          type: 'sb.volumes',
          objectId: `vol-${name}`,
          fields: {},
          stateful: false,
          dependsOn: [],
          observedAt: '2026-01-01T00:00:00.000Z',
        });
        await mine.putTwin(entry('a'));
        expect((await mine.listTwin()).map((t) => t.address)).toEqual(['sb.volumes/a']);
        await mine.putTwin(entry('b'));
        expect((await mine.listTwin()).map((t) => t.address)).toEqual([
          'sb.volumes/a',
          'sb.volumes/b',
        ]);
        await other.putTwin(entry('c'));
        await other.deleteTwin('sb.volumes/a');
        expect((await mine.listTwin()).map((t) => t.address)).toEqual([
          'sb.volumes/b',
          'sb.volumes/c',
        ]);
      } finally {
        await mine.close();
        await other.close();
      }
    });

    it('says which workspaces wrote to it: opening or reading one adds nothing', async () => {
      const url = await freshDatabase();
      const typo = await openPostgresStore(url, { workspace: 'shpo' });
      const stores = await Promise.all(
        ['shop', 'roles', 'dev'].map((workspace) => openPostgresStore(url, { workspace })),
      );
      try {
        expect(await typo.knownWorkspaces(10)).toEqual({ names: [], total: 0 });
        for (const store of stores) await store.setMeta('k', 'v');
        await typo.listTwin();
        await typo.changes();
        expect(await typo.workspaceKnown()).toBe(false);
        expect(await stores[0]!.workspaceKnown()).toBe(true);
        expect(await typo.knownWorkspaces(10)).toEqual({
          names: ['dev', 'roles', 'shop'],
          total: 3,
        });
        expect(await typo.knownWorkspaces(2)).toEqual({ names: ['dev', 'roles'], total: 3 });
        expect(await typo.knownWorkspaces(0)).toEqual({ names: [], total: 3 });
        await typo.setMeta('k', 'v');
        expect(await typo.workspaceKnown()).toBe(true);
      } finally {
        await typo.close();
        for (const store of stores) await store.close();
      }
    });

    it('lets one worker append while another holds nothing: the chain never forks', async () => {
      const url = await freshDatabase();
      const a = await openPostgresStore(url, { workspace: 'prod', ledgerKey: SUITE_LEDGER_KEY });
      const b = await openPostgresStore(url, { workspace: 'prod', ledgerKey: SUITE_LEDGER_KEY });
      try {
        await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).appendChange(change)),
        );
        expect(await a.verifyLedger()).toMatchObject({ ok: true, entries: 40 });
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('fencing against a takeover in flight', () => {
    it('lets each write commit before the takeover or refuses it, and refuses every write after', async () => {
      const url = await freshDatabase();
      let now = Date.UTC(2026, 0, 1);
      const clock = () => new Date(now);
      const a = await openPostgresStore(url, { workspace: 'prod', now: clock });
      const b = await openPostgresStore(url, { workspace: 'prod', now: clock });
      const holder = (pid: number) => ({
        command: 'tend run',
        pid,
        host: 'h',
        startedAt: change.time,
      });
      const op = (id: string) => ({
        id,
        address: 'sb.volumes/v' as const,
        type: 'sb.volumes',
        action: 'create' as const,
        desiredHash: 'h',
        marker: { workspace: 'prod', address: 'sb.volumes/v' as const },
        state: 'pending' as const,
        createdAt: change.time,
      });
      const outcome = (p: Promise<unknown>) =>
        p.then(
          () => 'committed',
          (e: unknown) => (e instanceof TendError ? e.code : String(e)),
        );
      try {
        const seen = new Set<string>();
        for (let round = 0; round < 8; round++) {
          const lease = `race-${round}`;
          await a.acquireLease({ workspace: lease, holder: holder(1), ttlMs: 1_000 });
          now += 1_001;
          // Writes issued one after another while the takeover runs: the database decides the order.
          const takeover = b.acquireLease({ workspace: lease, holder: holder(2), ttlMs: 1_000 });
          const writes: Promise<string>[] = [];
          for (let i = 0; i < 6; i++) {
            writes.push(outcome(a.journal(op(`${round}-${i}`))));
            await new Promise((resolve) => setTimeout(resolve, round % 3));
          }
          const taken = await takeover;
          expect(taken).toMatchObject({ acquired: true, lease: { epoch: 2 } });
          expect(await outcome(a.journal(op(`${round}-late`)))).toBe('store.lease-lost');
          for (const [i, result] of (await Promise.all(writes)).entries()) {
            seen.add(result);
            const stored = await b.getOperation(`${round}-${i}`);
            if (result === 'committed') expect(stored).toMatchObject({ epoch: 1 });
            else {
              expect(result).toBe('store.lease-lost');
              expect(stored).toBeUndefined();
            }
          }
          expect(await b.getOperation(`${round}-late`)).toBeUndefined();
        }
        expect([...seen].every((r) => r === 'committed' || r === 'store.lease-lost')).toBe(true);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  it('a takeover never overwrites a renewal that commits while it decides', async () => {
    // The renewal's transaction is held open while the other store takes over: the takeover must
    // wait for it and then see the lease live, not decide on the expired row it read before.
    const { a, b, client, clock, close } = await twoStoresAndAClient('prod');
    try {
      await a.acquireLease({ workspace: 'renew-race', holder: holder(1), ttlMs: 1_000 });
      clock.advance(1_001);
      await client.query('BEGIN');
      await client.query(
        `UPDATE tend.leases SET expires_at = $1::timestamptz + interval '1 second'
         WHERE workspace = 'renew-race' AND epoch = 1`,
        [clock.now().toISOString()],
      );
      let settled = false;
      const takeover = b
        .acquireLease({ workspace: 'renew-race', holder: holder(2), ttlMs: 1_000 })
        .finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await client.query('COMMIT');
      expect(await takeover).toMatchObject({ acquired: false, current: { epoch: 1 } });
      expect(await a.renewLease('renew-race', 1, 1_000)).toBe(true);
    } finally {
      await close();
    }
  });

  it('a renewal is not held up by a fenced write in flight; a takeover still waits for it', async () => {
    // A worker writing without pause must still renew its lease: its write transactions hold the
    // fence's lock on the lease row, and a renewal that waited for them could be starved past the
    // lease (the fleet benchmark's creates were refused "not sent: … last secured 11 s ago"). A
    // takeover changes the epoch and must still wait, so that the write commits under the old one.
    const { a, b, client, clock, close } = await twoStoresAndAClient('busy');
    try {
      await a.acquireLease({ workspace: 'busy', holder: holder(1), ttlMs: 1_000 });
      await a.setCursor('p', 'c0');
      // Hold the write inside its transaction, after its fence check: the workspace's row it bumps
      // is locked by another session.
      await client.query('BEGIN');
      await client.query(`SELECT 1 FROM tend.workspaces WHERE name = 'busy' FOR UPDATE`);
      let written = false;
      const write = a.setCursor('p', 'c1').then(() => (written = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(written).toBe(false);
      const renewed = await Promise.race([
        a.renewLease('busy', 1, 1_000),
        new Promise((resolve) => setTimeout(() => resolve('waited'), 3_000)),
      ]);
      expect(renewed).toBe(true);
      clock.advance(1_001);
      let settled = false;
      const takeover = b
        .acquireLease({ workspace: 'busy', holder: holder(2), ttlMs: 1_000 })
        .finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await client.query('COMMIT');
      await write;
      expect(await takeover).toMatchObject({ acquired: true, lease: { epoch: 2 } });
      expect(await b.getCursor('p')).toBe('c1');
    } finally {
      await close();
    }
  });

  describe('migrations', () => {
    // A migration after the real ones: this Tend's schema, then one more version.
    const LATEST = POSTGRES_MIGRATIONS.length;
    const NEXT: PostgresMigration = {
      version: LATEST + 1,
      name: 'test: a column added',
      sql: 'ALTER TABLE tend.twin ADD COLUMN note TEXT',
    };
    const BOTH = [...POSTGRES_MIGRATIONS, NEXT];
    const FIRST = POSTGRES_MIGRATIONS.slice(0, 1);
    const ALL_VERSIONS = POSTGRES_MIGRATIONS.map((m) => m.version);

    async function versions(url: string): Promise<number[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ version: number }>(
          'SELECT version FROM tend.schema_migrations ORDER BY version',
        );
        return rows.map((r) => r.version);
      } finally {
        await client.end();
      }
    }

    async function refusal(promise: Promise<unknown>): Promise<TendError> {
      const error = await promise.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TendError);
      return error as TendError;
    }

    it('gives an empty database the whole schema when a store is first opened', async () => {
      const url = await freshDatabase();
      const store = await openPostgresStore(url, { workspace: 'prod' });
      await store.close();
      expect(await versions(url)).toEqual(ALL_VERSIONS);
    });

    it('migrates upward from the first schema, and says from which version to which', async () => {
      const url = await freshDatabase();
      expect(await migratePostgresStore(url, { migrations: FIRST })).toEqual({ from: 0, to: 1 });
      const first = await openPostgresStore(url, {
        workspace: 'prod',
        ledgerKey: SUITE_LEDGER_KEY,
        migrations: FIRST,
      });
      await first.appendChange(change);
      await first.close();
      const last = LATEST + 1;
      expect(await migratePostgresStore(url, { migrations: BOTH })).toEqual({ from: 1, to: last });
      expect(await migratePostgresStore(url, { migrations: BOTH })).toEqual({
        from: last,
        to: last,
      });
      expect(await versions(url)).toEqual([...ALL_VERSIONS, last]);
      const second = await openPostgresStore(url, {
        workspace: 'prod',
        ledgerKey: SUITE_LEDGER_KEY,
        migrations: BOTH,
      });
      // What was written under version 1 is still there and still verifies.
      expect(await second.verifyLedger()).toMatchObject({ ok: true, entries: 1 });
      await second.close();
    });

    it('refuses a database older than this Tend expects, saying to run tend store migrate', async () => {
      const url = await freshDatabase();
      await migratePostgresStore(url, { migrations: FIRST });
      const e = await refusal(openPostgresStore(url, { workspace: 'prod' }));
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'store.schema-too-old',
        message: `the database has Tend schema version 1, but this Tend expects version ${LATEST}; run \`tend store migrate\` to bring it up to date`,
      });
      // Refused, and left as it was.
      expect(await versions(url)).toEqual([1]);
    });

    it('refuses a database newer than this Tend knows, saying to upgrade Tend', async () => {
      const url = await freshDatabase();
      await migratePostgresStore(url, { migrations: BOTH });
      const e = await refusal(openPostgresStore(url, { workspace: 'prod' }));
      expect({ code: e.code, message: e.message }).toEqual({
        code: 'store.schema-too-new',
        message: `the database has Tend schema version ${LATEST + 1}, but this Tend knows versions up to ${LATEST}; upgrade Tend to open it`,
      });
      const m = await refusal(migratePostgresStore(url));
      expect(m.code).toBe('store.schema-too-new');
    });

    it('lets two processes migrate one database at once: one applies, the other finds it done', async () => {
      const url = await freshDatabase();
      const results = await Promise.all([migratePostgresStore(url), migratePostgresStore(url)]);
      expect(results.map((r) => r.from).sort()).toEqual([0, LATEST]);
      expect(await versions(url)).toEqual(ALL_VERSIONS);
    });
  });

  describe('redaction', () => {
    it('writes no registered secret to any table, whatever the caller hands it', async () => {
      const SECRET = 'pl4tform-echoed-s3cret';
      const url = await freshDatabase();
      const redactor = new Redactor();
      redactor.add(SECRET);
      const store = await openPostgresStore(url, {
        workspace: 'prod',
        redactor,
        ledgerKey: SUITE_LEDGER_KEY,
      });
      const said = `POST /instances was rejected (400): admin_password "${SECRET}" is too long`;
      await store.acquireLease({
        workspace: 'prod',
        holder: { command: `tend ${SECRET}`, pid: 1, host: 'h', startedAt: change.time },
        ttlMs: 30_000,
      });
      await store.putTwin({
        address: 'sb.instances/web',
        type: 'sb.instances',
        objectId: 'i-1',
        fields: { name: 'web', note: SECRET, [SECRET]: 1 },
        stateful: false,
        dependsOn: [],
        observedAt: change.time,
      });
      await store.journal({
        id: 'op-1',
        address: 'sb.instances/web',
        type: 'sb.instances',
        action: 'create',
        desiredHash: 'abc',
        marker: { workspace: 'prod', address: 'sb.instances/web' },
        state: 'pending',
        createdAt: change.time,
        error: said,
      });
      await store.settle('op-1', { state: 'failed', at: change.time, error: said });
      const entry = await store.appendChange({ ...change, after: { size: `x${SECRET}x` } });
      await store.putStatus({
        address: 'sb.instances/web',
        state: 'error',
        message: said,
        checks: [{ name: 'c', kind: 'cel', ok: false, message: SECRET, at: change.time }],
        updatedAt: change.time,
      });
      await store.setCursor('sb', SECRET);
      await store.setMeta('note', SECRET);
      await store.putAnnouncement({
        id: 'a1',
        address: 'sb.instances/web',
        field: 'note',
        value: { note: SECRET },
        actor: `bot ${SECRET}`,
        createdAt: change.time,
        expiresAt: '2026-01-01T01:00:00.000Z',
        note: SECRET,
      });
      await store.putClaim({
        address: 'sb.instances/web',
        field: 'note',
        value: SECRET,
        actor: 'alice',
        decision: 'hold',
        rule: 'r',
        since: change.time,
      });
      await store.putActionRun({
        id: 'run-1',
        address: 'sb.instances/web',
        type: 'sb.instances',
        action: 'rotate',
        params: { to: SECRET },
        actor: { actor: 'tend' },
        state: 'failed',
        createdAt: change.time,
        error: said,
        steps: [
          {
            index: 0,
            name: 'set',
            state: 'failed',
            attempts: 1,
            startedAt: change.time,
            message: SECRET,
          },
        ],
      });
      expect(entry.after).toEqual({ size: `x${REDACTED}x` });
      expect(await store.verifyLedger()).toMatchObject({ ok: true, entries: 1, unchecked: 0 });
      await store.close();

      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const tables = await client.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'tend'",
        );
        expect(tables.rows.length).toBeGreaterThan(10);
        let rows = 0;
        for (const { table_name } of tables.rows) {
          const dump = await client.query<{ t: string }>(
            `SELECT x::text AS t FROM tend.${table_name} AS x`,
          );
          rows += dump.rows.length;
          for (const { t } of dump.rows) expect(t, table_name).not.toContain(SECRET);
        }
        expect(rows).toBeGreaterThan(10);
      } finally {
        await client.end();
      }
    });
  });

  describe('connections', () => {
    it('fills what the URL leaves out from the libpq variables', async () => {
      const url = await freshDatabase();
      const env = { ...server!.env(new URL(url).pathname.slice(1)) };
      const store = await openStore('postgres://', { workspace: 'prod', env });
      await store.setMeta('k', 'v');
      expect(await store.getMeta('k')).toBe('v');
      await store.close();
    });

    it('a lent connection the server ends between two statements fails the body, not the process; the pool goes on', async () => {
      // What `pg_terminate_backend`, a restart or a cut network does to a worker's connection in a
      // transaction: the server's FATAL message and the socket's end arrive while no query is
      // active. pg-pool listens for `error` only on idle connections; unheard, it ended the worker.
      const url = await freshDatabase();
      const pool = await connectPool(
        parsePostgresLocation(`${url}?application_name=tend%20lent`, {}),
        2,
      );
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const error = await withClient(pool, async (c) => {
          const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
          await new Promise((r) => setTimeout(r, 300));
          await c.query('SELECT 1');
        }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(Error);
        // The broken connection was discarded: the pool hands out a working one.
        expect(await withClient(pool, (c) => c.query('SELECT 1 AS n'))).toMatchObject({
          rows: [{ n: 1 }],
        });
        // Its connections carry the location's application_name.
        const named = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tend lent'",
        );
        expect(named.rows[0]!.n).toBeGreaterThan(0);
      } finally {
        await admin.end();
        await pool.end();
      }
    });

    it('a busy pool is waited for past the connect bound: the wait and the connect are two timeouts', async () => {
      // With one timeout for both (pg-pool's), a worker whose passes kept every pooled connection
      // busy failed with `timeout exceeded when trying to connect` while the server was fine.
      const url = await freshDatabase();
      const pool = await connectPool(parsePostgresLocation(url, {}), 1, {
        connectMs: 300,
        waitMs: 10_000,
      });
      try {
        const holding = withClient(pool, (c) => c.query('SELECT pg_sleep(1)'));
        const started = Date.now();
        const waited = await withClient(pool, (c) => c.query<{ n: number }>('SELECT 1 AS n'));
        expect(waited.rows).toEqual([{ n: 1 }]);
        expect(Date.now() - started).toBeGreaterThan(600);
        await holding;
      } finally {
        await pool.end();
      }
    });

    it('a pool that stays busy past the wait fails as store.busy, retryable, with what to do', async () => {
      const url = await freshDatabase();
      const pool = await connectPool(parsePostgresLocation(url, {}), 1, {
        connectMs: 5_000,
        waitMs: 200,
      });
      try {
        const holding = withClient(pool, (c) => c.query('SELECT pg_sleep(1)'));
        const error = await withClient(pool, (c) => c.query('SELECT 1')).then(
          () => undefined,
          (e: unknown) => storeError(e),
        );
        expect(error?.code).toBe('store.busy');
        expect(error?.retryable).toBe(true);
        expect(error?.message).toBe(
          'the PostgreSQL store is busy: no connection of this process came free in time (every one stayed in use)',
        );
        expect(error?.hint).toContain('--max-workspaces');
        await holding;
      } finally {
        await pool.end();
      }
    });

    it('a server that accepts and never answers fails the connect at its own bound, however long the wait may be', async () => {
      const sockets: Socket[] = [];
      const silent = createServer((s) => void sockets.push(s));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const { port } = silent.address() as { port: number };
      const pool = await connectPool(
        parsePostgresLocation(`postgres://nobody@127.0.0.1:${port}/db?sslmode=disable`, {}),
        1,
        { connectMs: 300, waitMs: 60_000 },
      );
      try {
        const started = Date.now();
        const error = await withClient(pool, (c) => c.query('SELECT 1')).then(
          () => undefined,
          (e: unknown) => storeError(e),
        );
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(error?.code).toBe('store.failed');
        expect(error?.retryable).toBe(true);
        expect(sockets.length).toBe(1);
      } finally {
        await pool.end();
        for (const s of sockets) s.destroy();
        await new Promise((r) => silent.close(r));
      }
    });

    it('never repeats the password of a failed connection, and names only host, port and database', async () => {
      const redactor = new Redactor();
      const location = `postgres://nobody:pw-that-must-not-show@127.0.0.1:${server!.port}/missing_db`;
      const error = await openStore(location, { workspace: 'prod', redactor }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TendError);
      const e = error as TendError;
      expect(e.code).toBe('store.open-failed');
      expect(e.message).toContain(`127.0.0.1:${server!.port}/missing_db`);
      expect(JSON.stringify(e.toJSON())).not.toContain('pw-that-must-not-show');
      expect(redactor.text('pw-that-must-not-show')).not.toContain('pw-that-must-not-show');
    });
  });
});
