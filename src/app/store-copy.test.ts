import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionRun } from '../core/index.js';
import { TendError } from '../core/index.js';
import type { PostgresHandle } from '../../test/support/postgres.js';
import { POSTGRES, startPostgres } from '../../test/support/postgres.js';
import { change } from '../../test/support/store-contract.js';
import type { Store } from '../store/index.js';
import { ledgerKey, openStore } from '../store/index.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { copyStore } from './store-copy.js';
import type { StoreCopyRequest } from './store-copy.js';

// `tend store copy` on real stores: SQLite files in a temporary directory and a PostgreSQL cluster
// the test starts. A store is filled through the public Store API with every kind of record, copied
// SQLite → PostgreSQL → SQLite, and everything read back through that API is equal on each copy, whose
// ledger verifies with the key that wrote it. With CI=true a missing PostgreSQL fails the suite.

const KEY_MATERIAL = 'store-copy-test-ledger-key-0123456789abcdef';
const KEY = ledgerKey(KEY_MATERIAL);
const HOST = 'copy-host';
const T = (s: number) => new Date(Date.UTC(2026, 10, 28, 9, 0, s)).toISOString();

const dir = mkdtempSync(join(tmpdir(), 'tend-store-copy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `store-${++files}.db`);

/** A context whose ledger key is the test's, on host `copy-host`, where only `alive` pids run. */
function context(alive: (pid: number) => boolean = () => false): AppContext {
  return defaultContext({
    env: { TEND_LEDGER_KEY: KEY_MATERIAL },
    notice: () => undefined,
    process: { pid: 1, host: HOST, startedAt: T(0), isAlive: alive },
  });
}

async function withStore<T>(
  location: string,
  workspace: string | undefined,
  body: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openStore(location, {
    ledgerKey: KEY,
    ...(workspace !== undefined ? { workspace } : {}),
  });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

const run: ActionRun = {
  id: 'run-1',
  address: 'sb.volumes/v1',
  type: 'sb.volumes',
  action: 'snapshot',
  params: { label: 'nightly' },
  actor: { actor: 'alice', actorKind: 'human', intent: 'backup' },
  state: 'failed',
  createdAt: T(20),
  finishedAt: T(22),
  error: 'quota exceeded',
  steps: [
    { index: 0, name: 'freeze', state: 'settled', attempts: 1, startedAt: T(20), settledAt: T(21) },
    { index: 1, name: 'copy', state: 'failed', attempts: 2, startedAt: T(21), message: 'quota' },
  ],
};

/** Every kind of record, through the public Store API, written under a lease that is released. */
async function fillFull(store: Store, workspace: string): Promise<void> {
  const { lease } = (await store.acquireLease({
    workspace,
    holder: { command: 'tend apply', pid: 77, host: HOST, startedAt: T(0) },
    ttlMs: 60_000,
  })) as { lease: { epoch: number } };
  await store.setMeta('workspace', workspace);
  await store.putTwin({
    address: 'sb.volumes/v1',
    type: 'sb.volumes',
    objectId: 'vol-1',
    fields: { name: 'v1', size: 10, tags: { team: 'core' } },
    stateful: true,
    dependsOn: ['sb.networks/main'],
    observedAt: T(1),
    sent: { password: 'sha256:abc' },
  });
  await store.putTwin({
    address: 'sb.networks/main',
    type: 'sb.networks',
    objectId: 'net-1',
    fields: { cidr: '10.0.0.0/16' },
    stateful: false,
    dependsOn: [],
    observedAt: T(1),
  });
  const op = (n: number, extra: object = {}) => ({
    id: `op-${n}`,
    address: `sb.volumes/v${n}` as const,
    type: 'sb.volumes',
    action: 'create' as const,
    desiredHash: `hash-${n}`,
    marker: { workspace, address: `sb.volumes/v${n}` as const },
    state: 'pending' as const,
    createdAt: T(n),
    ...extra,
  });
  await store.journal(op(3));
  await store.journal(op(1, { group: 'replace-1', step: 1, replaces: 'vol-old' }));
  await store.journal(op(2, { action: 'delete', objectId: 'vol-2' }));
  await store.settle('op-1', { state: 'settled', objectId: 'vol-1', at: T(5) });
  await store.settle('op-2', { state: 'failed', error: 'gone\u0000away', at: T(6) });
  await store.appendChange(change(1));
  await store.appendChange(
    change(2, {
      actor: 'bob',
      actorKind: 'human',
      decision: {
        decision: 'hold',
        rule: 'default#2',
        reason: 'paged',
        until: T(900),
        then: 'enforce',
        fields: ['size'],
      },
    }),
  );
  await store.appendChange(change(3, { before: undefined, intent: undefined }));
  await store.setCursor('sb', 'cursor-42');
  await store.putStatus({
    address: 'sb.volumes/v1',
    state: 'converged',
    objectId: 'vol-1',
    checks: [{ name: 'size', kind: 'cel', ok: true, message: 'ok', at: T(7) }],
    updatedAt: T(7),
  });
  await store.putStatus({
    address: 'sb.volumes/v2',
    state: 'failing',
    message: 'a NUL \u0000 in a message',
    checks: [],
    updatedAt: T(8),
  });
  for (const n of [2, 1]) {
    await store.putAnnouncement({
      id: `a${n}`,
      address: 'sb.services/api',
      field: 'replicas',
      value: n,
      actor: 'hpa',
      actorKind: 'controller',
      note: `scale ${n}`,
      createdAt: T(10 + n),
      expiresAt: T(4000),
    });
  }
  await store.putClaim({
    address: 'sb.services/api',
    field: 'replicas',
    value: 5,
    actor: 'hpa',
    decision: 'hold',
    rule: 'default#1',
    since: T(12),
    until: T(3600),
    then: 'enforce',
    seq: 2,
    declaredHash: 'dh',
  });
  await store.putClaim({
    address: 'sb.volumes/v1',
    field: 'size',
    value: 12,
    actor: 'alice',
    decision: 'accept',
    rule: 'default#3',
    since: T(13),
  });
  await store.putActionRun(run);
  await store.releaseLease(workspace, lease.epoch);
}

/** A small memory: one twin entry, one ledger entry, the name. */
async function fillSmall(store: Store, workspace: string): Promise<void> {
  await store.setMeta('workspace', workspace);
  await store.putTwin({
    address: 'sb.networks/edge',
    type: 'sb.networks',
    objectId: 'net-9',
    fields: { cidr: '10.9.0.0/16' },
    stateful: false,
    dependsOn: [],
    observedAt: T(30),
  });
  await store.appendChange(change(30));
}

/** Everything a store gives back through its public API. */
async function readAll(store: Store) {
  return {
    twin: await store.listTwin(),
    operations: await store.operations(),
    unsettled: await store.unsettled(),
    changes: await store.changes(),
    cursor: await store.getCursor('sb'),
    statuses: await store.listStatus(),
    announcements: await store.announcements(),
    claims: await store.claims(),
    workspace: await store.getMeta('workspace'),
    runs: await store.actionRuns(),
    run: await store.getActionRun('run-1'),
  };
}

const read = (location: string, workspace?: string) =>
  withStore(location, workspace, async (s) => ({
    all: await readAll(s),
    ledger: await s.verifyLedger(),
  }));

async function rejection(p: Promise<unknown>): Promise<TendError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TendError);
  return e as TendError;
}

const copy = (request: StoreCopyRequest, ctx = context()) => copyStore(ctx, request);

describe('tend store copy between SQLite files', () => {
  it('copies every record, the ledger verifying on the copy', async () => {
    const from = file();
    const to = file();
    await withStore(from, undefined, (s) => fillFull(s, 'ops'));
    const report = await copy({ from, to });
    expect(report).toMatchObject({
      workspace: 'ops',
      from: { kind: 'sqlite', store: from },
      to: { kind: 'sqlite', store: to },
      copied: {
        twin: 2,
        operations: 3,
        ledger: 3,
        cursors: 1,
        statuses: 2,
        announcements: 2,
        claims: 2,
        meta: 1,
        actionRuns: 1,
      },
      ledger: { ok: true, entries: 3, keyId: KEY.id },
    });
    expect(report.replaced).toBeUndefined();
    const source = await read(from);
    const target = await read(to);
    expect(target.all).toStrictEqual(source.all);
    expect(target.ledger).toStrictEqual(source.ledger);
    expect(target.ledger).toMatchObject({ ok: true, entries: 3, unchecked: 0 });
    // The lease is not copied: the target has none, and its first taker starts a new one.
    await withStore(to, undefined, async (s) => {
      expect(await s.getLease('ops')).toBeUndefined();
    });
  });

  it('refuses a target that holds memory, saying what is there', async () => {
    const from = file();
    const to = file();
    await withStore(from, undefined, (s) => fillSmall(s, 'ops'));
    await withStore(to, undefined, (s) => fillFull(s, 'ops'));
    const e = await rejection(copy({ from, to }));
    expect(e.code).toBe('store.copy-target-not-empty');
    expect(e.message).toBe(
      'the target already holds workspace ops: 3 ledger entries, 2 twin entries, 3 operations, 2 statuses, 1 feed cursor, 2 announcements, 2 field claims, 1 action run, 1 setting; pass --force to replace it',
    );
    // Nothing was written.
    expect((await read(to)).all.changes).toHaveLength(3);
  });

  it('replaces the target with --force, and its ledger stays append-only', async () => {
    const from = file();
    const to = file();
    await withStore(from, undefined, (s) => fillSmall(s, 'ops'));
    await withStore(to, undefined, (s) => fillFull(s, 'ops'));
    const report = await copy({ from, to, force: true });
    expect(report.replaced).toMatchObject({ ledger: 3, twin: 2, operations: 3 });
    expect(report.copied).toMatchObject({ ledger: 1, twin: 1, operations: 0, actionRuns: 0 });
    const target = await read(to);
    expect(target.all).toStrictEqual((await read(from)).all);
    expect(target.ledger).toMatchObject({ ok: true, entries: 1 });
    const db = new Database(to);
    try {
      expect(() => db.prepare('DELETE FROM changes').run()).toThrow(
        'the change ledger is append-only',
      );
    } finally {
      db.close();
    }
  });

  it('refuses a source whose lease a live writer holds, naming it; takes a dead one’s as free', async () => {
    const from = file();
    await withStore(from, undefined, async (s) => {
      await fillSmall(s, 'ops');
      await s.acquireLease({
        workspace: 'ops',
        holder: { command: 'tend run', pid: 4242, host: HOST, startedAt: T(0) },
        ttlMs: 600_000,
      });
    });
    const to = file();
    const e = await rejection(
      copy(
        { from, to },
        context((pid) => pid === 4242),
      ),
    );
    expect(e.code).toBe('store.copy-workspace-held');
    expect(e.message).toMatch(
      /^the source's workspace ops is held by `tend run` \(pid 4242 on copy-host, lease until .+\): a copy of a memory being written would be torn$/,
    );
    expect(e.hint).toBe(
      'stop tend run (pid 4242 on copy-host) or wait until it is done, then copy again',
    );
    // The holder is gone (its pid no longer runs on this host): the copy goes ahead.
    const report = await copy(
      { from, to },
      context(() => false),
    );
    expect(report.copied.ledger).toBe(1);
  });

  it('refuses a target whose workspace a live writer holds, even with --force', async () => {
    const from = file();
    const to = file();
    await withStore(from, undefined, (s) => fillSmall(s, 'ops'));
    await withStore(to, undefined, (s) =>
      s
        .acquireLease({
          workspace: 'ops',
          holder: { command: 'tend worker', pid: 99, host: 'elsewhere', startedAt: T(0) },
          ttlMs: 600_000,
        })
        .then(() => undefined),
    );
    const e = await rejection(copy({ from, to, force: true }));
    expect(e.code).toBe('store.copy-workspace-held');
    expect(e.message).toContain(
      "the target's workspace ops is held by `tend worker` (pid 99 on elsewhere",
    );
  });

  it('refuses a source that does not exist, and the same store on both sides', async () => {
    const missing = join(dir, 'missing.db');
    const e = await rejection(copy({ from: missing, to: file() }));
    expect(e.code).toBe('store.copy-source-missing');
    expect(e.message).toBe(`the source store ${missing} does not exist`);
    const one = file();
    await withStore(one, undefined, (s) => fillSmall(s, 'ops'));
    const same = await rejection(copy({ from: one, to: `sqlite:${one}` }));
    expect(same.message).toBe('the source and the target are the same store');
  });
});

describe('tend store copy refuses what it is given wrong', () => {
  it('says which side is not a store location, and which workspace name is not valid', async () => {
    const e = await rejection(copy({ from: 'mysql://db/tend', to: file() }));
    expect(e.code).toBe('store.invalid-location');
    expect(e.message).toBe('the source is not a store location');
    expect(e.hint).toBe(
      'give a SQLite file path (e.g. .tend/tend.db or sqlite:.tend/tend.db) or a postgres:// URL',
    );
    const to = await rejection(copy({ from: file(), to: 'redis://cache' }));
    expect(to.message).toBe('the target is not a store location');
    const name = await rejection(copy({ from: file(), to: file(), workspace: 'Prod Stuff' }));
    expect(name.code).toBe('workspace.invalid_name');
    expect(name.message).toBe('workspace name "Prod Stuff" (from --workspace) is not valid');
  });
});

describe.skipIf(POSTGRES.skip)(`tend store copy with PostgreSQL${POSTGRES.note}`, () => {
  let server: PostgresHandle;
  let url: string;
  beforeAll(async () => {
    server = await startPostgres();
    await server.createDatabase('fleet');
    url = server.url('fleet');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('copies SQLite → PostgreSQL → SQLite with everything equal and the ledger verifying', async () => {
    const first = file();
    await withStore(first, undefined, (s) => fillFull(s, 'round-trip'));
    const source = await read(first);
    expect(source.ledger).toMatchObject({ ok: true, entries: 3 });

    // The name comes from the SQLite store, which remembers it.
    const there = await copy({ from: first, to: url });
    expect(there).toMatchObject({
      workspace: 'round-trip',
      to: { kind: 'postgres', store: url.replace('postgres@', '') },
      ledger: { ok: true, entries: 3, keyId: KEY.id },
    });
    const onPostgres = await read(url, 'round-trip');
    expect(onPostgres.all).toStrictEqual(source.all);
    expect(onPostgres.ledger).toStrictEqual(source.ledger);

    const back = file();
    const again = await copy({ from: url, to: back, workspace: 'round-trip' });
    expect(again.copied).toStrictEqual(there.copied);
    const onSqlite = await read(back);
    expect(onSqlite.all).toStrictEqual(source.all);
    expect(onSqlite.ledger).toStrictEqual(source.ledger);
  }, 60_000);

  it('refuses, then with --force replaces, one workspace and leaves the others of the database alone', async () => {
    const full = file();
    await withStore(full, undefined, (s) => fillFull(s, 'shared'));
    const small = file();
    await withStore(small, undefined, (s) => fillSmall(s, 'shared'));
    const other = file();
    await withStore(other, undefined, (s) => fillFull(s, 'neighbour'));
    await copy({ from: full, to: url });
    await copy({ from: other, to: url, workspace: 'neighbour' });

    const e = await rejection(copy({ from: small, to: url }));
    expect(e.code).toBe('store.copy-target-not-empty');
    expect(e.message).toBe(
      'the target already holds workspace shared: 3 ledger entries, 2 twin entries, 3 operations, 2 statuses, 1 feed cursor, 2 announcements, 2 field claims, 1 action run, 1 setting; pass --force to replace it',
    );

    const report = await copy({ from: small, to: url, force: true });
    expect(report.replaced).toMatchObject({ ledger: 3, twin: 2, actionRuns: 1 });
    const replaced = await read(url, 'shared');
    expect(replaced.all).toStrictEqual((await read(small)).all);
    expect(replaced.ledger).toMatchObject({ ok: true, entries: 1 });
    // The neighbour, in the same tables, is untouched and still verifies.
    const neighbour = await read(url, 'neighbour');
    const original = await read(other);
    expect(neighbour.all).toStrictEqual(original.all);
    expect(neighbour.ledger).toStrictEqual(original.ledger);
    // The ledger is append-only again once the copy committed.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await expect(client.query('DELETE FROM tend.changes')).rejects.toThrow(
        'the change ledger is append-only',
      );
    } finally {
      await client.end();
    }
  }, 60_000);

  it('copies a tampered ledger as it is: the copy is reported tampered at the same entry', async () => {
    const from = file();
    await withStore(from, undefined, (s) => fillFull(s, 'tampered'));
    // Someone edits entry 2 by hand, around the store (the append-only trigger dropped).
    const db = new Database(from);
    try {
      db.exec('DROP TRIGGER changes_append_only_update');
      db.prepare('UPDATE changes SET actor = ? WHERE seq = 2').run('mallory');
    } finally {
      db.close();
    }
    const source = await read(from);
    expect(source.ledger).toMatchObject({ ok: false, brokenAt: 2, problem: 'edited' });
    const report = await copy({ from, to: url });
    expect(report.ledger).toStrictEqual({
      ok: false,
      entries: 3,
      reason: `entry 2: ${(source.ledger as { reason: string }).reason}`,
    });
    const copied = await read(url, 'tampered');
    expect(copied.ledger).toStrictEqual(source.ledger);
    expect(copied.all.changes[1]!.actor).toBe('mallory');
  });

  it('needs the workspace named for a PostgreSQL side that SQLite does not name', async () => {
    const unnamed = file();
    await withStore(unnamed, undefined, async (s) => {
      await s.putTwin({
        address: 'sb.networks/x',
        type: 'sb.networks',
        objectId: 'n',
        fields: {},
        stateful: false,
        dependsOn: [],
        observedAt: T(1),
      });
    });
    const e = await rejection(copy({ from: unnamed, to: url }));
    expect(e.code).toBe('store.copy-workspace-required');
    expect(e.message).toBe(
      'a PostgreSQL store holds many workspaces, and no workspace was named: pass --workspace <name>',
    );
    const back = await rejection(copy({ from: url, to: file() }));
    expect(back.code).toBe('store.copy-workspace-required');
  });

  it('refuses to rename a workspace on the way', async () => {
    const named = file();
    await withStore(named, undefined, (s) => fillSmall(s, 'blue'));
    const e = await rejection(copy({ from: named, to: url, workspace: 'green' }));
    expect(e.code).toBe('store.copy-workspace-mismatch');
    expect(e.message).toBe(
      'the source store remembers workspace blue, but --workspace names green',
    );
  });

  it('refuses a PostgreSQL source whose lease a live worker holds', async () => {
    const small = file();
    await withStore(small, undefined, (s) => fillSmall(s, 'busy'));
    await copy({ from: small, to: url });
    await withStore(url, 'busy', (s) =>
      s
        .acquireLease({
          workspace: 'busy',
          holder: { command: 'tend worker', pid: 5, host: 'node-2', startedAt: T(0) },
          ttlMs: 600_000,
        })
        .then(() => undefined),
    );
    const e = await rejection(copy({ from: url, to: file(), workspace: 'busy' }));
    expect(e.code).toBe('store.copy-workspace-held');
    expect(e.message).toContain(
      "the source's workspace busy is held by `tend worker` (pid 5 on node-2",
    );
  });
});
