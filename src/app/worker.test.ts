import { describe, expect, it } from 'vitest';
import { TendError } from '../core/index.js';
import { steppedClock } from '../engine/index.js';
import type {
  FleetLease,
  FleetRegistry,
  RegisteredWorkspace,
  WorkerRecord,
} from '../store/index.js';
import { defaultContext } from './context.js';
import type { RunReport, RunRequest } from './run.js';
import type { WorkerEvent } from './worker.js';
import { runWorker } from './worker.js';
import { GitCheckout } from './git-source.js';

// The scheduling of `tend worker` on a fake clock (ticks every third of the lease TTL, no sleeping),
// a registry in memory and runs that only hold a lease: taking its share, giving workspaces back when
// another worker joins, letting go of a removed workspace, backing off a workspace whose run fails
// without slowing the others, releasing everything when stopped. The real thing (PostgreSQL, the
// CLI, sandboxes) is test/e2e/fleet.test.ts.

const TTL = 3_000; // a tick every second

interface Fleet {
  workspaces: string[];
  /** Other live workers. */
  others: string[];
  leases: Map<string, { worker: string; epoch: number }>;
  epochs: Map<string, number>;
  ticks: number;
  removed: string[];
  /** Called at every heartbeat (a tick), with its number. */
  onTick?: (tick: number) => void;
}

function fakeRegistry(fleet: Fleet): FleetRegistry {
  const at = '2026-01-01T00:00:00.000Z';
  const ws = (name: string): RegisteredWorkspace => ({
    name,
    source: { kind: 'dir', dir: `/srv/${name}` },
    addedAt: at,
    addedBy: 'test',
  });
  const worker = (id: string): WorkerRecord => ({
    id,
    host: 'h',
    pid: 1,
    version: 'test',
    ttlMs: TTL,
    startedAt: at,
    heartbeatAt: at,
    alive: true,
  });
  return {
    addWorkspace: () => Promise.reject(new Error('not used')),
    listWorkspaces: () => Promise.resolve(fleet.workspaces.map(ws)),
    removeWorkspace: () => Promise.reject(new Error('not used')),
    passDone: () => Promise.resolve(),
    heartbeat: () => {
      fleet.ticks++;
      fleet.onTick?.(fleet.ticks);
      return Promise.resolve();
    },
    listWorkers: () => Promise.resolve(['self', ...fleet.others].map(worker)),
    removeWorker: (id) => {
      fleet.removed.push(id);
      return Promise.resolve();
    },
    pruneWorkers: () => Promise.resolve([]),
    fleetLeases: () =>
      Promise.resolve(
        [...fleet.leases].map(([workspace, l]): FleetLease => ({
          workspace,
          epoch: l.epoch,
          holder: {
            command: 'tend worker',
            pid: 2,
            host: 'other',
            startedAt: at,
            worker: l.worker,
          },
          acquiredAt: at,
          expiresAt: at,
          expired: false,
        })),
      ),
    leaseEpochs: () => Promise.resolve(new Map(fleet.epochs)),
    stateCounts: () => Promise.resolve(new Map()),
    close: () => Promise.resolve(),
  };
}

/** A run that takes the lease (or is refused as a real one is) and holds it until aborted. */
function fakeRun(fleet: Fleet, failing: Set<string>, starts: string[]) {
  return async (_ctx: unknown, request: RunRequest): Promise<RunReport> => {
    const name = request.workspace!;
    starts.push(name);
    await Promise.resolve();
    if (failing.has(name)) {
      throw new TendError('intent.invalid', `intent of ${name} has 1 error`);
    }
    if (fleet.leases.has(name)) {
      throw new TendError('workspace.locked', `workspace \`${name}\` is held`);
    }
    const epoch = (fleet.epochs.get(name) ?? 0) + 1;
    fleet.epochs.set(name, epoch);
    fleet.leases.set(name, { worker: request.lease!.worker!, epoch });
    request.report?.({ kind: 'lease', workspace: name, epoch });
    await new Promise<void>((resolve) => {
      if (request.signal.aborted) resolve();
      request.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    fleet.leases.delete(name);
    return {
      workspace: { name, source: 'flag' },
      passes: 0,
      stoppedBy: 'signal',
      reloads: 0,
    };
  };
}

function setup(workspaces: string[], failing: string[] = []) {
  const fleet: Fleet = {
    workspaces,
    others: [],
    leases: new Map(),
    epochs: new Map(),
    ticks: 0,
    removed: [],
  };
  const events: WorkerEvent[] = [];
  const starts: string[] = [];
  const stop = new AbortController();
  const clock = steppedClock();
  const ctx = defaultContext({ clock, env: {} });
  const held = () =>
    [...fleet.leases]
      .filter(([, l]) => l.worker === 'self')
      .map(([name]) => name)
      .sort();
  // What every test's worker is asked, before its own additions.
  const request = {
    id: 'self',
    intervalMs: 10_000,
    leaseTtlMs: TTL,
    approveDestroy: false,
    prune: true,
    verifyTimeoutMs: 1_000,
    version: 'test',
    signal: stop.signal,
    report: (e: WorkerEvent) => events.push(e),
  };
  const go = () =>
    runWorker(ctx, request, {
      registry: fakeRegistry(fleet),
      runWorkspace: fakeRun(fleet, new Set(failing), starts),
    });
  return { fleet, events, starts, stop, clock, held, go, request };
}

describe('tend worker scheduling (fake clock)', () => {
  it('takes every workspace alone, gives half back one per tick when a second worker joins', async () => {
    const t = setup(['a', 'b', 'c', 'd', 'e', 'f']);
    const heldAt = new Map<number, string[]>();
    t.fleet.onTick = (tick) => {
      heldAt.set(tick, t.held());
      if (tick === 3) t.fleet.others = ['zz']; // 'self' < 'zz': self keeps ceil(6/2) = 3
      if (tick === 10) t.stop.abort();
    };
    const report = await t.go();
    expect(heldAt.get(2)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    // Ticks 3, 4, 5 each let one go (the last by name); from tick 6 it holds its share.
    expect(heldAt.get(4)).toHaveLength(5);
    expect(heldAt.get(6)).toEqual(['a', 'b', 'c']);
    expect(heldAt.get(10)).toEqual(['a', 'b', 'c']);
    const released = t.events.filter((e) => e.kind === 'released');
    expect(released.slice(0, 3)).toEqual([
      { worker: 'self', kind: 'released', workspace: 'f', reason: 'rebalance' },
      { worker: 'self', kind: 'released', workspace: 'e', reason: 'rebalance' },
      { worker: 'self', kind: 'released', workspace: 'd', reason: 'rebalance' },
    ]);
    // Stopped: everything released, the worker's row removed.
    expect(released.slice(3).map((e) => e.kind === 'released' && e.reason)).toEqual([
      'stopping',
      'stopping',
      'stopping',
    ]);
    expect(t.held()).toEqual([]);
    expect(t.fleet.removed).toEqual(['self']);
    expect(report).toEqual({ id: 'self', took: 6, passes: 0 });
    expect(t.events.at(-1)).toEqual({ worker: 'self', kind: 'worker-stopped', passes: 0 });
  });

  it('never takes a workspace another worker holds, and takes it once that lease is gone', async () => {
    const t = setup(['a', 'b']);
    t.fleet.leases.set('b', { worker: 'other', epoch: 4 });
    t.fleet.epochs.set('b', 4);
    const heldAt = new Map<number, string[]>();
    t.fleet.onTick = (tick) => {
      heldAt.set(tick, t.held());
      if (tick === 4) t.fleet.leases.delete('b'); // its holder released it (or it expired)
      if (tick === 6) t.stop.abort();
    };
    await t.go();
    expect(heldAt.get(3)).toEqual(['a']);
    expect(heldAt.get(6)).toEqual(['a', 'b']);
    expect(t.starts.filter((n) => n === 'b')).toEqual(['b']);
    expect(t.events).toContainEqual({ worker: 'self', kind: 'took', workspace: 'b', epoch: 5 });
  });

  it('lets go of a workspace removed from the registry at its next tick', async () => {
    const t = setup(['a', 'b']);
    const heldAt = new Map<number, string[]>();
    t.fleet.onTick = (tick) => {
      heldAt.set(tick, t.held());
      if (tick === 2) t.fleet.workspaces = ['a'];
      if (tick === 4) t.stop.abort();
    };
    await t.go();
    expect(heldAt.get(2)).toEqual(['a', 'b']);
    expect(heldAt.get(3)).toEqual(['a']);
    expect(t.events).toContainEqual({
      worker: 'self',
      kind: 'released',
      workspace: 'b',
      reason: 'removed',
    });
  });

  it('backs off a workspace whose run keeps failing (5 s, 10 s, 20 s…) without slowing the others', async () => {
    const t = setup(['bad', 'good'], ['bad']);
    t.fleet.onTick = (tick) => {
      if (tick === 40) t.stop.abort(); // 40 ticks of 1 s
    };
    await t.go();
    // Tried at 0 s, then after 5, 10 and 20 s more (35 s): 4 tries in 40 s, not 40.
    expect(t.starts.filter((n) => n === 'bad')).toHaveLength(4);
    expect(t.starts.filter((n) => n === 'good')).toEqual(['good']);
    const lost = t.events.filter((e) => e.kind === 'lost');
    expect(lost[0]).toEqual({
      worker: 'self',
      kind: 'lost',
      workspace: 'bad',
      reason: 'intent of bad has 1 error',
    });
    expect(t.clock.elapsed()).toBe(40_000);
  });

  it('logs a failed pass with its error code and hint, not only the message', async () => {
    const t = setup(['flooded']);
    const error = new TendError(
      'provider.response_too_large',
      'provider flood: GET /items: the answer (status 200) is larger than maxResponseBytes',
      { hint: 'raise maxResponseBytes on provider flood if this answer is legitimate' },
    );
    t.fleet.onTick = (tick) => {
      if (tick === 3) t.stop.abort();
    };
    await runWorker(
      defaultContext({ clock: t.clock, env: {} }),
      {
        ...t.request,
      },
      {
        registry: fakeRegistry(t.fleet),
        runWorkspace: async (_ctx, request) => {
          request.report?.({ kind: 'lease', workspace: 'flooded', epoch: 1 });
          request.report?.({ kind: 'error', error });
          await new Promise<void>((resolve) =>
            request.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          return {
            workspace: { name: 'flooded', source: 'flag' },
            passes: 1,
            stoppedBy: 'signal',
            reloads: 0,
          };
        },
      },
    );
    expect(t.events.filter((e) => e.kind === 'failed')).toEqual([
      {
        worker: 'self',
        kind: 'failed',
        workspace: 'flooded',
        code: 'provider.response_too_large',
        message: error.message,
        hint: error.hint,
      },
    ]);
  });

  it('logs a workspace it was stopping but had already lost (a zombie resuming) as lost, not released', async () => {
    const t = setup(['a', 'b']);
    t.fleet.onTick = (tick) => {
      if (tick === 3) t.fleet.others = ['a-first']; // 'a-first' < 'self': self's share drops to 1
      if (tick === 6) t.stop.abort();
    };
    await runWorker(
      defaultContext({ clock: t.clock, env: {} }),
      {
        ...t.request,
      },
      {
        registry: fakeRegistry(t.fleet),
        // A run whose lease was gone by the time it was stopped: `run` then says `lease-lost`.
        runWorkspace: async (_ctx, request) => {
          const name = request.workspace!;
          request.report?.({ kind: 'lease', workspace: name, epoch: 1 });
          await new Promise<void>((resolve) =>
            request.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          return {
            workspace: { name, source: 'flag' },
            passes: 1,
            stoppedBy: name === 'b' ? 'lease-lost' : 'signal',
            reloads: 0,
          };
        },
      },
    );
    const ends = t.events.filter((e) => e.kind === 'released' || e.kind === 'lost');
    expect(ends).toEqual([
      {
        worker: 'self',
        kind: 'lost',
        workspace: 'b',
        reason: 'the lease was taken over, or expired before this worker renewed it',
      },
      { worker: 'self', kind: 'released', workspace: 'a', reason: 'stopping' },
    ]);
  });

  it('tells its probe the heartbeats, the workspaces registered and the leases held', async () => {
    const t = setup(['a', 'b', 'c']);
    const seen: string[] = [];
    let failNext = false;
    const registry = fakeRegistry(t.fleet);
    t.fleet.onTick = (tick) => {
      if (tick === 2) t.fleet.workspaces = ['a', 'b'];
      if (tick === 3) failNext = true;
      if (tick === 5) t.stop.abort();
    };
    await runWorker(
      defaultContext({ clock: t.clock, env: {} }),
      {
        ...t.request,
        maxWorkspaces: 2,
        probe: {
          heartbeat: (ok, message) =>
            seen.push(ok ? 'heartbeat ok' : `heartbeat failed: ${message}`),
          counted: (c) => seen.push(`registered ${c.registered}, held ${c.held}`),
        },
      },
      {
        registry: {
          ...registry,
          heartbeat: async (w) => {
            seen.push(`cap ${w.maxWorkspaces}`);
            await registry.heartbeat(w);
            if (failNext) {
              failNext = false;
              throw new TendError('store.unavailable', 'connection refused');
            }
          },
        },
        runWorkspace: fakeRun(t.fleet, new Set(), t.starts),
      },
    );
    expect(seen.slice(0, 5)).toEqual([
      'cap 2',
      'heartbeat ok',
      'registered 3, held 0',
      'registered 3, held 1',
      'registered 3, held 2',
    ]);
    expect(seen).toContain('heartbeat failed: connection refused');
    expect(seen).toContain('registered 2, held 2');
    expect(seen.at(-1)).toBe('registered 2, held 0');
  });
});

describe('tend worker and a git workspace (fake clock)', () => {
  it('runs it from its git source in the cache, records each pass’s commit, and reports a fetch failure as the workspace’s', async () => {
    const t = setup(['shop', 'broken']);
    const registry = fakeRegistry(t.fleet);
    const at = '2026-01-01T00:00:00.000Z';
    const git = (name: string): RegisteredWorkspace => ({
      name,
      source: { kind: 'git', url: `file:///srv/${name}.git`, ref: 'main', path: 'prod' },
      addedAt: at,
      addedBy: 'test',
    });
    const done: { name: string; epoch: number; commit?: string }[] = [];
    const origin = {
      kind: 'git' as const,
      url: 'file:///srv/shop.git',
      ref: 'main',
      commit: 'c'.repeat(40),
      path: 'prod',
    };
    const requests = new Map<string, RunRequest>();
    t.fleet.onTick = (tick) => {
      if (tick === 4) t.stop.abort();
    };
    const ctx = defaultContext({ clock: t.clock, env: {} });
    await runWorker(
      ctx,
      {
        ...t.request,
        cacheDir: '/var/cache/tend-git',
      },
      {
        registry: {
          ...registry,
          listWorkspaces: () => Promise.resolve([git('broken'), git('shop')]),
          passDone: (name, epoch, o) => {
            done.push({ name, epoch, ...(o ? { commit: o.commit } : {}) });
            return Promise.resolve();
          },
        },
        runWorkspace: async (_ctx, request) => {
          const name = request.workspace!;
          requests.set(name, request);
          if (name === 'broken') {
            throw new TendError(
              'git.fetch_failed',
              'cannot fetch main from file:///srv/broken.git',
              {
                hint: 'check the repository',
              },
            );
          }
          request.report?.({ kind: 'lease', workspace: name, epoch: 3 });
          const states = { converged: 1, drifted: 0, pending: 0, failing: 0, blocked: 0, error: 0 };
          request.report?.({ kind: 'pass-done', pass: 1, ms: 5, states, origin });
          await new Promise<void>((resolve) =>
            request.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          return {
            workspace: { name, source: 'flag' },
            passes: 1,
            stoppedBy: 'signal',
            reloads: 0,
          };
        },
      },
    );
    const shop = requests.get('shop')!;
    expect(shop.source).toBeInstanceOf(GitCheckout);
    const checkout = shop.source as GitCheckout;
    expect(checkout.cacheDir).toBe('/var/cache/tend-git/shop');
    expect(checkout.source).toEqual(git('shop').source);
    expect(done).toEqual([{ name: 'shop', epoch: 3, commit: origin.commit }]);
    expect(t.events).toContainEqual(
      expect.objectContaining({ kind: 'pass', workspace: 'shop', commit: origin.commit }),
    );
    const broken = t.events.filter((e) => 'workspace' in e && e.workspace === 'broken');
    expect(broken.map((e) => e.kind)).toEqual(['failed', 'lost']);
    expect(broken[0]).toMatchObject({
      code: 'git.fetch_failed',
      message: 'cannot fetch main from file:///srv/broken.git',
      hint: 'check the repository',
    });
  });
});

describe('tend worker starting while its store cannot be reached (fake clock)', () => {
  const DOWN = 'cannot open the PostgreSQL store at 127.0.0.1:5432/tend: connect ECONNREFUSED';
  const down = () => new TendError('store.open-failed', DOWN, { retryable: true });

  /** A worker whose store fails to open `failures` times (each as `error` makes it), then opens. */
  function starting(failures: number, error: () => TendError = down) {
    const t = setup(['a', 'b']);
    const opens: number[] = [];
    const hooks: { onOpen?: (n: number) => void } = {};
    const open = () => {
      opens.push(t.clock.elapsed());
      hooks.onOpen?.(opens.length);
      return opens.length <= failures
        ? Promise.reject(error())
        : Promise.resolve({ registry: fakeRegistry(t.fleet) });
    };
    const go = () =>
      runWorker(
        defaultContext({ clock: t.clock, env: {} }),
        {
          ...t.request,
        },
        { openFleet: open, runWorkspace: fakeRun(t.fleet, new Set(), t.starts) },
      );
    return Object.assign(hooks, { ...t, opens, go });
  }

  it('tries again after 1, 2, 4 … s, at most 30 s, logging each attempt; then joins and holds its share', async () => {
    const t = starting(7);
    t.fleet.onTick = (tick) => {
      if (tick === 3) t.stop.abort();
    };
    const report = await t.go();
    expect(t.opens).toEqual([0, 1_000, 3_000, 7_000, 15_000, 31_000, 61_000, 91_000]);
    const waits = t.events.filter((e) => e.kind === 'store-unreachable');
    expect(waits).toHaveLength(7);
    expect(waits[0]).toEqual({
      worker: 'self',
      kind: 'store-unreachable',
      attempt: 1,
      retryInMs: 1_000,
      code: 'store.open-failed',
      message: DOWN,
    });
    expect(waits.map((e) => e.kind === 'store-unreachable' && e.retryInMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    // Connected: started, took both workspaces, released them when stopped.
    expect(t.events[7]).toMatchObject({ kind: 'worker-started' });
    expect(report).toEqual({ id: 'self', took: 2, passes: 0 });
    expect(t.fleet.removed).toEqual(['self']);
  });

  it('fails at once on what waiting does not heal (a wrong password, a missing database, a schema too old)', async () => {
    const refused = new TendError(
      'store.open-failed',
      'cannot open the PostgreSQL store at 127.0.0.1:5432/tend: password authentication failed for user "tend"',
    );
    const t = starting(5, () => refused);
    await expect(t.go()).rejects.toBe(refused);
    expect(t.opens).toEqual([0]);
    expect(t.events).toEqual([]);
  });

  it('stops cleanly when signalled while it waits: nothing taken, nothing registered', async () => {
    const t = starting(Infinity);
    // Signalled while its third attempt is under way (then the wait that would follow).
    t.onOpen = (n) => {
      if (n === 3) t.stop.abort();
    };
    const report = await t.go();
    expect(report).toEqual({ id: 'self', took: 0, passes: 0 });
    expect(t.opens).toHaveLength(3);
    expect(t.events.map((e) => e.kind)).toEqual([
      'store-unreachable',
      'store-unreachable',
      'worker-stopped',
    ]);
    expect(t.fleet.ticks).toBe(0);
  });
});
