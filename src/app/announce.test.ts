import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { copyExample } from '../../test/support/cli.js';
import type { SandboxHandle } from '../../test/support/sandbox-process.js';
import { startSandboxInProcess } from '../../test/support/sandbox-process.js';
import type { Clock } from '../engine/index.js';
import { systemClock } from '../engine/index.js';
import { openSqliteStore } from '../store/index.js';
import type { AnnounceReport } from './announce.js';
import { announce, AnnouncementError, listAnnouncements } from './announce.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { defaultStorePath } from './workspace.js';

// The announce use case against the quickstart intent and an in-process sandbox: what is checked
// against the workspace (addresses, fields, secrets, what Tend remembers), the lease, and listing by
// a fake clock.

/**
 * A clock whose time moves only when a test moves it (`t`); sleeping waits for real (the lease's
 * renewal loop sleeps until it is stopped, and must not move time while it does).
 */
function fixedClock(start = Date.UTC(2026, 10, 24, 12, 0, 0)): Clock & { t: number } {
  const clock = {
    t: start,
    now: () => new Date(clock.t),
    sleep: (ms: number, signal?: AbortSignal) => systemClock.sleep(ms, signal),
  };
  return clock;
}

const processInfo = (c: Clock) => ({
  pid: 4121,
  host: 'build-7',
  startedAt: c.now().toISOString(),
  isAlive: () => true,
});

let sandbox: SandboxHandle;
let ex: ReturnType<typeof copyExample>;
let clock: ReturnType<typeof fixedClock>;
let ctx: AppContext;

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
});
afterAll(async () => {
  await sandbox?.stop();
});
beforeEach(() => {
  ex?.cleanup();
  ex = copyExample('quickstart', sandbox.url);
  clock = fixedClock();
  ctx = defaultContext({ clock, process: processInfo(clock) });
});
afterAll(() => ex?.cleanup());

const hpa = { address: 'sb.services/api', field: 'replicas', value: 5, actor: 'hpa' };

async function problems(p: Promise<AnnounceReport>): Promise<readonly string[]> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AnnouncementError);
  return (e as AnnouncementError).errors;
}

describe('announce', () => {
  it('stores a valid announcement and returns it', async () => {
    const r = await announce(ctx, { dir: ex.dir, input: { ...hpa, ttl: '2h' } });
    expect(r.warnings).toEqual([]);
    expect(r.announcements).toHaveLength(1);
    expect(r.announcements[0]).toMatchObject({
      ...hpa,
      createdAt: '2026-11-24T12:00:00.000Z',
      expiresAt: '2026-11-24T14:00:00.000Z',
    });
    const listed = await listAnnouncements(ctx, { dir: ex.dir });
    expect(listed.announcements).toStrictEqual(r.announcements);
  });

  it('stores nothing when one announcement of a list is invalid, and says which one', async () => {
    const errors = await problems(
      announce(ctx, { dir: ex.dir, input: [hpa, { ...hpa, actor: '' }, { ...hpa, ttl: '40d' }] }),
    );
    expect(errors).toEqual([
      'announcement 2: actor: is empty; write who makes the change, e.g. hpa, alice or deploy-bot',
      'announcement 3: ttl: "40d" is longer than 30d; announce for at most 30d (announce again if it still holds, or write an Arbitration rule for a standing arrangement)',
    ]);
    expect((await listAnnouncements(ctx, { dir: ex.dir, all: true })).announcements).toEqual([]);
  });

  it('refuses a secret field: its value would have to be stored', async () => {
    const errors = await problems(
      announce(ctx, {
        dir: ex.dir,
        input: {
          address: 'sb.instances/web',
          field: 'spec.admin_password',
          value: 'x',
          actor: 'a',
        },
      }),
    );
    expect(errors).toEqual([
      'field: admin_password of sb.instances/web is a secret: Tend never stores secret values and never compares them, so there is nothing to announce',
    ]);
  });

  it('names near fields of the type and of what is declared', async () => {
    const errors = await problems(announce(ctx, { dir: ex.dir, input: { ...hpa, field: 'imag' } }));
    expect(errors).toEqual([
      'field: sb.services/api has no field imag: it is not declared in the intent and not in its type; did you mean image?',
    ]);
  });

  it('accepts a resource Tend only remembers, with a warning: nothing to arbitrate', async () => {
    const store = await openSqliteStore(defaultStorePath(ex.dir));
    await store.putTwin({
      address: 'sb.volumes/old',
      type: 'sb.volumes',
      objectId: 'vol-1',
      fields: { name: 'old', size: 20, mystery: { deep: 1 } },
      stateful: true,
      dependsOn: [],
      observedAt: '2026-11-24T11:00:00.000Z',
    });
    await store.close();
    const r = await announce(ctx, {
      dir: ex.dir,
      input: { address: 'sb.volumes/old', field: 'mystery.deep', value: 2, actor: 'alice' },
    });
    expect(r.announcements).toHaveLength(1);
    expect(r.warnings).toEqual([
      'sb.volumes/old is not declared in the intent (Tend only remembers it): there is nothing to arbitrate for it; the announcement is stored, and explains a change once the intent declares the field',
    ]);
    const errors = await problems(
      announce(ctx, {
        dir: ex.dir,
        input: { address: 'sb.volumes/old', field: 'mystery.deeep', value: 2, actor: 'alice' },
      }),
    );
    expect(errors).toEqual([
      'field: sb.volumes/old has no field mystery.deeep: it is not declared in the intent, not on the object Tend last observed and not in its type; did you mean mystery.deep?',
    ]);
  });

  it('is stored while another process (a running tend run) holds the workspace: announcements do not take the lease', async () => {
    const first = await announce(ctx, { dir: ex.dir, input: hpa });
    const other = await openSqliteStore(defaultStorePath(ex.dir));
    const held = await other.acquireLease({
      workspace: first.workspace.name,
      holder: {
        command: 'tend run',
        pid: 777,
        host: 'build-7',
        startedAt: clock.now().toISOString(),
      },
      ttlMs: 30_000,
    });
    expect(held.acquired).toBe(true);
    await announce(ctx, { dir: ex.dir, input: { ...hpa, value: 6 } });
    expect((await other.announcements()).map((a) => a.value)).toEqual([5, 6]);
    // The holder's lease is untouched.
    expect((await other.getLease(first.workspace.name))?.holder.pid).toBe(777);
    await other.close();
  });

  it('lists what is active at the clock’s time, and everything with all', async () => {
    await announce(ctx, { dir: ex.dir, input: { ...hpa, ttl: '1m' } });
    await announce(ctx, { dir: ex.dir, input: { ...hpa, value: 7, ttl: '1h' } });
    clock.t += 2 * 60_000;
    const active = await listAnnouncements(ctx, { dir: ex.dir });
    expect(active.at).toBe('2026-11-24T12:02:00.000Z');
    expect(active.announcements.map((a) => a.value)).toEqual([7]);
    const all = await listAnnouncements(ctx, { dir: ex.dir, all: true });
    expect(all.announcements.map((a) => a.value)).toEqual([5, 7]);
    const other = await listAnnouncements(ctx, {
      dir: ex.dir,
      all: true,
      address: 'sb.services/web',
    });
    expect(other.announcements).toEqual([]);
  });
});
