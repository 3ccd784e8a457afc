import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { toTendError } from '../core/index.js';
import type {
  FleetJobs,
  FleetLease,
  FleetListener,
  FleetRegistry,
  RegisteredWorkspace,
} from '../store/index.js';
import { openFleetJobs, openRegistry, withApplicationName } from '../store/index.js';
import type { AppContext } from './context.js';
import type { AppEvent } from './events.js';
import { defaultGitCacheDir, GitCheckout } from './git-source.js';
import type { JobEvent } from './fleet-jobs.js';
import { runQueuedJobs } from './fleet-jobs.js';
import { LEASE_TTL_MS } from './lease.js';
import type { RunReport, RunRequest } from './run.js';
import { run } from './run.js';
import { storeLocation } from './workspace.js';
import type { WorkerProbe } from './worker-probe.js';
import { targetShare } from './worker-target.js';

// `tend worker` (docs/fleet.md, decision 0042): runs the continuous loop of `tend run` for its share
// of the workspaces registered in the fleet's store. Each held workspace is one `run()` with its own
// AbortController; the store's lease (with the database's clock) is the mutual exclusion.

/** What `tend worker` is asked. */
export interface WorkerRequest {
  /** The fleet's store (`--store`, else TEND_STORE_URL): a shared database. */
  readonly store?: string;
  /** This worker's id (default `<host>-<pid>-<random>`). */
  readonly id?: string;
  /** Never hold more than this many workspaces. */
  readonly maxWorkspaces?: number;
  /** A full pass of each workspace at least this often. */
  readonly intervalMs: number;
  /** How long a lease lasts without renewal; heartbeats and scheduling ticks every third of it. */
  readonly leaseTtlMs?: number;
  readonly approveDestroy: boolean;
  readonly prune: boolean;
  readonly verifyTimeoutMs: number;
  /**
   * Where git workspaces are fetched: `<cacheDir>/<workspace>/` (default `defaultGitCacheDir`:
   * `$XDG_CACHE_HOME/tend/git`, else `~/.cache/tend/git`).
   */
  readonly cacheDir?: string;
  /** Tend's version, as the registry shows it. */
  readonly version: string;
  /** Aborting it stops the worker: no new workspace, every run settles, leases released. */
  readonly signal: AbortSignal;
  readonly report?: (event: WorkerEvent) => void;
  /** Told of heartbeats, counts and lease renewals (readiness, metrics: `worker-probe.ts`). */
  readonly probe?: WorkerProbe;
}

/** Why a worker let a workspace go. */
export type ReleaseReason = 'rebalance' | 'removed' | 'stopping';

/** One line of a worker's log; every event names the worker. */
export type WorkerEvent = { readonly worker: string } & (
  | { readonly kind: 'worker-started'; readonly host: string; readonly pid: number }
  | {
      readonly kind: 'took';
      readonly workspace: string;
      readonly epoch: number;
      readonly tookOver?: { readonly command: string; readonly pid: number; readonly host: string };
    }
  | { readonly kind: 'released'; readonly workspace: string; readonly reason: ReleaseReason }
  | { readonly kind: 'lost'; readonly workspace: string; readonly reason: string }
  | {
      readonly kind: 'pass';
      readonly workspace: string;
      readonly pass: number;
      readonly ms: number;
      readonly states: Readonly<Record<string, number>>;
      /** The commit the pass planned from (a git workspace). */
      readonly commit?: string;
    }
  | {
      readonly kind: 'failed';
      readonly workspace: string;
      /** The error's code (`provider.response_too_large`…): what a log filter or an alert keys on. */
      readonly code: string;
      readonly message: string;
      readonly hint?: string;
    }
  | { readonly kind: 'warning'; readonly workspace?: string; readonly message: string }
  | {
      /** The store could not be reached at start (down, restarting): tried again after `retryInMs`. */
      readonly kind: 'store-unreachable';
      readonly attempt: number;
      readonly retryInMs: number;
      readonly code: string;
      /** Names the store by host, port and database only (never its password). */
      readonly message: string;
    }
  | { readonly kind: 'worker-stopped'; readonly passes: number }
);

/** What a worker did when it stopped. */
export interface WorkerReport {
  readonly id: string;
  /** Workspaces it took (a workspace taken twice counts twice). */
  readonly took: number;
  readonly passes: number;
}

/** Seams for tests: the registry, how a workspace is run, how the id is made. */
export interface WorkerDeps {
  readonly registry?: FleetRegistry;
  /** The job table and event channel (default: opened on the store, unless `registry` is given). */
  readonly jobs?: FleetJobs;
  readonly runWorkspace?: (ctx: AppContext, request: RunRequest) => Promise<RunReport>;
  /** Opens the registry and the job table (default: on the store; the `registry` and `jobs` given). */
  readonly openFleet?: (location: string) => Promise<OpenedFleet>;
}

/** What a worker opens on the fleet's store before it starts. */
export interface OpenedFleet {
  readonly registry: FleetRegistry;
  readonly jobs?: FleetJobs;
}

/** The first wait after the store could not be reached at start; doubled at each attempt, capped. */
export const CONNECT_BACKOFF_MS = 1_000;
export const MAX_CONNECT_BACKOFF_MS = 30_000;

/** The first wait after a workspace's run failed to start or failed; doubled each time, capped. */
export const START_BACKOFF_MS = 5_000;
export const MAX_START_BACKOFF_MS = 300_000;

/** The longest wait between the passes of a workspace that keep failing (its platform down). */
export const MAX_PASS_BACKOFF_MS = 300_000;

/** A worker's row is deleted once its last heartbeat is this many of its TTLs old (database time). */
export const DEAD_WORKER_TTLS = 10;

/** Why a run that ended without being asked to (or while being asked to) gave its workspace up. */
const LEASE_LOST = 'the lease was taken over, or expired before this worker renewed it';

/** A workspace this worker runs. */
interface Held {
  readonly name: string;
  readonly controller: AbortController;
  /** Why it is being stopped, once asked to. */
  stopping?: ReleaseReason;
  epoch?: number;
  done?: Promise<void>;
  /** Wakes its run to carry out queued jobs now (set while the run waits between passes). */
  wake?: () => void;
}

/** The default id of a worker: host, pid and a short random part. */
export function defaultWorkerId(ctx: AppContext): string {
  return `${ctx.process.host}-${ctx.process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * `tend worker`: registers itself, heartbeats, and at every tick (a third of the lease TTL, on
 * `ctx.clock`) holds its share of the registered workspaces (`targetShare`): fewer → takes the leases
 * of workspaces nobody holds (free or expired; never a live one); more → stops one run, which settles
 * its in-flight operations and releases its lease. A run that ends by lease loss or an error is
 * dropped, and the workspace waits a back-off before this worker tries it again. Aborting `signal`
 * stops every run, releases the leases and removes the worker's row.
 */
export async function runWorker(
  ctx: AppContext,
  request: WorkerRequest,
  deps: WorkerDeps = {},
): Promise<WorkerReport> {
  const id = request.id ?? defaultWorkerId(ctx);
  const given = storeLocation(ctx, {
    dir: '.',
    ...(request.store ? { store: request.store } : {}),
  });
  ctx.redactor.addUrlCredentials(given);
  // Its connections are named `tend worker <id>` in pg_stat_activity (PostgreSQL keeps 63 bytes).
  const location = withApplicationName(given, `tend worker ${id}`);
  const opened = await connectFleet(
    ctx,
    request,
    id,
    deps.openFleet ?? openFleetOf(ctx, deps),
    location,
  );
  // The platforms see which worker sent each request: its id is in every User-Agent it sends
  // (`tend/<version> (worker <id>; pid <pid>)`, app/user-agent.ts).
  const named: AppContext = { ...ctx, env: { ...ctx.env, TEND_WORKER_ID: id } };
  try {
    if (opened === undefined || request.signal.aborted) {
      // Stopped (SIGTERM, SIGINT) before the store could be reached: nothing held, nothing to release.
      request.report?.({ worker: id, kind: 'worker-stopped', passes: 0 });
      return { id, took: 0, passes: 0 };
    }
    const { registry, jobs } = opened;
    const fleet = new WorkerLoop(named, request, deps, { id, location, registry, jobs });
    return await fleet.run();
  } finally {
    if (!deps.jobs) await opened?.jobs?.close();
    if (!deps.registry) await opened?.registry.close();
  }
}

/** The registry and the job table of the store (those of `deps` when given: tests). */
function openFleetOf(
  ctx: AppContext,
  deps: WorkerDeps,
): (location: string) => Promise<OpenedFleet> {
  return async (location) => {
    const options = { env: ctx.env, redactor: ctx.redactor };
    const registry = deps.registry ?? (await openRegistry(location, options));
    try {
      const jobs =
        deps.jobs ?? (deps.registry ? undefined : await openFleetJobs(location, options));
      return { registry, ...(jobs ? { jobs } : {}) };
    } catch (e) {
      if (!deps.registry) await registry.close().catch(() => undefined);
      throw e;
    }
  };
}

/**
 * Opens the fleet's store, trying again while it cannot be reached (PostgreSQL down or restarting: a
 * retryable error) after a back-off doubling from `CONNECT_BACKOFF_MS` to `MAX_CONNECT_BACKOFF_MS`,
 * each attempt reported. What waiting does not heal (a wrong password, a missing database, a schema
 * too old or too new) is thrown at once. Undefined when `signal` aborts before it could open them.
 */
async function connectFleet(
  ctx: AppContext,
  request: WorkerRequest,
  id: string,
  open: (location: string) => Promise<OpenedFleet>,
  location: string,
): Promise<OpenedFleet | undefined> {
  let wait = CONNECT_BACKOFF_MS;
  for (let attempt = 1; !request.signal.aborted; attempt++) {
    try {
      return await open(location);
    } catch (e) {
      const error = toTendError(e);
      if (!error.retryable) throw error;
      if (request.signal.aborted) return undefined;
      request.report?.({
        worker: id,
        kind: 'store-unreachable',
        attempt,
        retryInMs: wait,
        code: error.code,
        message: ctx.redactor.text(error.message),
      });
      await ctx.clock.sleep(wait, request.signal);
      wait = Math.min(MAX_CONNECT_BACKOFF_MS, wait * 2);
    }
  }
  return undefined;
}

class WorkerLoop {
  readonly #held = new Map<string, Held>();
  readonly #retryAt = new Map<string, { at: number; backoff: number }>();
  readonly #ttlMs: number;
  #registered = 0;
  #took = 0;
  #passes = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly request: WorkerRequest,
    private readonly deps: WorkerDeps,
    private readonly fleet: {
      id: string;
      location: string;
      registry: FleetRegistry;
      jobs: FleetJobs | undefined;
    },
  ) {
    this.#ttlMs = request.leaseTtlMs ?? LEASE_TTL_MS;
    request.probe?.attached?.(async () => {
      await fleet.registry.listWorkers();
    }, this.#ttlMs);
    const jobs = fleet.jobs;
    if (jobs) {
      request.probe?.jobsAttached?.(async () =>
        [...(await jobs.queued()).values()].reduce((a, b) => a + b, 0),
      );
    }
  }

  /** Tells the probe how many workspaces are registered and how many leases this worker holds. */
  #counted(): void {
    const held = [...this.#held.values()].filter((h) => h.epoch !== undefined).length;
    this.request.probe?.counted?.({ registered: this.#registered, held });
  }

  #report(event: DistributiveOmit<WorkerEvent, 'worker'>): void {
    this.request.report?.({ worker: this.fleet.id, ...event });
  }

  async run(): Promise<WorkerReport> {
    const { ctx, request } = this;
    this.#report({ kind: 'worker-started', host: ctx.process.host, pid: ctx.process.pid });
    const tickMs = Math.max(100, Math.floor(this.#ttlMs / 3));
    const listener = await this.#listen();
    while (!request.signal.aborted) {
      try {
        await this.#tick();
      } catch (e) {
        this.#report({ kind: 'warning', message: `scheduling: ${toTendError(e).message}` });
      }
      // The poll behind NOTIFY: each held workspace looks for queued jobs at every tick.
      for (const h of this.#held.values()) h.wake?.();
      await ctx.clock.sleep(tickMs, request.signal);
    }
    await this.#stopAll();
    await listener?.close();
    this.#report({ kind: 'worker-stopped', passes: this.#passes });
    return { id: this.fleet.id, took: this.#took, passes: this.#passes };
  }

  /** One scheduling tick: heartbeat, the share, then stop or take (see `runWorker`). */
  async #tick(): Promise<void> {
    const { registry, id } = this.fleet;
    const { request } = this;
    await this.#heartbeat();
    const [workspaces, workers] = await Promise.all([
      registry.listWorkspaces(),
      registry.listWorkers(),
      // Rows of workers long dead (their workspaces long taken over) go; recently dead ones stay,
      // listed as dead by `tend fleet status`.
      registry.pruneWorkers(DEAD_WORKER_TTLS),
    ]);
    this.#registered = workspaces.length;
    this.#counted();
    if (request.signal.aborted) return;
    const registered = new Set(workspaces.map((w) => w.name));
    for (const h of this.#held.values()) {
      if (!registered.has(h.name)) this.#stop(h, 'removed');
    }
    const alive = workers.filter((w) => w.alive);
    const target = targetShare({
      workers: alive.map((w) => w.id),
      self: id,
      workspaces: workspaces.length,
      ...(request.maxWorkspaces !== undefined ? { max: request.maxWorkspaces } : {}),
      caps: new Map(
        alive.flatMap((w) => (w.maxWorkspaces !== undefined ? [[w.id, w.maxWorkspaces]] : [])),
      ),
    });
    const active = [...this.#held.values()].filter((h) => h.stopping === undefined);
    if (active.length > target) {
      // One at a time: the others' next ticks see it free and take it.
      const last = active.sort((a, b) => (a.name < b.name ? 1 : -1))[0]!;
      this.#stop(last, 'rebalance');
      return;
    }
    if (active.length < target) {
      const free = this.#free(workspaces, await registry.fleetLeases());
      for (const w of free.slice(0, target - active.length)) this.#start(w);
    }
  }

  /** Records this worker's heartbeat (with its cap), telling the probe how it went. */
  async #heartbeat(): Promise<void> {
    const { ctx, request } = this;
    try {
      await this.fleet.registry.heartbeat({
        id: this.fleet.id,
        host: ctx.process.host,
        pid: ctx.process.pid,
        version: request.version,
        ttlMs: this.#ttlMs,
        ...(request.maxWorkspaces !== undefined ? { maxWorkspaces: request.maxWorkspaces } : {}),
      });
      request.probe?.heartbeat?.(true);
    } catch (e) {
      request.probe?.heartbeat?.(false, toTendError(e).message);
      throw e;
    }
  }

  /** Registered workspaces nobody holds (no lease, an expired one, or a dead holder on this host). */
  #free(
    workspaces: readonly RegisteredWorkspace[],
    leases: readonly FleetLease[],
  ): RegisteredWorkspace[] {
    const now = this.ctx.clock.now().getTime();
    const leaseOf = new Map(leases.map((l) => [l.workspace, l]));
    return workspaces.filter((w) => {
      if (this.#held.has(w.name)) return false;
      if ((this.#retryAt.get(w.name)?.at ?? 0) > now) return false;
      const lease = leaseOf.get(w.name);
      if (!lease || lease.expired) return true;
      const h = lease.holder;
      return h.host === this.ctx.process.host && !this.ctx.process.isAlive(h.pid);
    });
  }

  /** Listens for new jobs (NOTIFY) to wake the workspace's run; without it, ticks poll. */
  async #listen(): Promise<FleetListener | undefined> {
    const jobs = this.fleet.jobs;
    if (!jobs) return undefined;
    try {
      return await jobs.listen({ onJob: (workspace) => this.#held.get(workspace)?.wake?.() });
    } catch (e) {
      this.#report({
        kind: 'warning',
        message: `cannot listen for jobs (polling at every tick instead): ${toTendError(e).message}`,
      });
      return undefined;
    }
  }

  /** Publishes a workspace's event on the fleet's channel, for `tend serve --fleet` (best effort). */
  #publish(workspace: string, event: AppEvent | JobEvent): void {
    const jobs = this.fleet.jobs;
    const shown = jobs ? fleetEvent(event) : undefined;
    if (!jobs || !shown) return;
    jobs.publish({ workspace, worker: this.fleet.id, event: shown }).catch(() => undefined);
  }

  #stop(held: Held, reason: ReleaseReason): void {
    if (held.stopping !== undefined) return;
    held.stopping = reason;
    held.controller.abort();
  }

  /** Starts the continuous loop of one workspace; the lease decides whether it really runs. */
  #start(workspace: RegisteredWorkspace): void {
    const held: Held = { name: workspace.name, controller: new AbortController() };
    this.#held.set(workspace.name, held);
    const runWorkspace = this.deps.runWorkspace ?? run;
    held.done = runWorkspace(this.ctx, this.#runRequest(workspace, held)).then(
      (r) => this.#ended(held, r.stoppedBy === 'lease-lost' ? LEASE_LOST : undefined),
      (e: unknown) => {
        const error = toTendError(e);
        // A git workspace that cannot be fetched (or whose first commit does not load) is its failure.
        if (error.code.startsWith('git.')) this.#onRunEvent(held, { kind: 'error', error });
        this.#ended(held, error);
      },
    );
  }

  #runRequest(workspace: RegisteredWorkspace, held: Held): RunRequest {
    const { request } = this;
    const { source } = workspace;
    const cacheRoot = request.cacheDir ?? defaultGitCacheDir(this.ctx.env);
    return {
      // A git workspace: each pass plans from one commit the checkout lays out (run's `source`).
      ...(source.kind === 'dir'
        ? { dir: source.dir }
        : {
            dir: join(cacheRoot, workspace.name),
            source: new GitCheckout(source, join(cacheRoot, workspace.name), this.ctx.env),
          }),
      store: this.fleet.location,
      workspace: workspace.name,
      intervalMs: request.intervalMs,
      approveDestroy: request.approveDestroy,
      prune: request.prune,
      verifyTimeoutMs: request.verifyTimeoutMs,
      lockTimeoutMs: 0,
      failureBackoffMaxMs: Math.max(request.intervalMs, MAX_PASS_BACKOFF_MS),
      signal: held.controller.signal,
      lease: {
        command: 'tend worker',
        worker: this.fleet.id,
        ttlMs: this.#ttlMs,
        onRenew: (ms, kept) => request.probe?.leaseRenewed?.(ms / 1000, kept),
      },
      report: (e) => this.#onRunEvent(held, e),
      // Jobs come from `tend serve --fleet`, which serves directory workspaces only (fleet-serve.ts).
      ...(this.fleet.jobs && source.kind === 'dir'
        ? { between: this.#between(source.dir, workspace.name, held, this.fleet.jobs) }
        : {}),
    };
  }

  /** The jobs of a held workspace, carried out by its run between passes (app/fleet-jobs.ts). */
  #between(dir: string, name: string, held: Held, jobs: FleetJobs): RunRequest['between'] {
    const selection = { dir, store: this.fleet.location, workspace: name };
    return {
      run: async (leased) => {
        try {
          await runQueuedJobs(this.ctx, selection, leased, {
            jobs,
            worker: this.fleet.id,
            verifyTimeoutMs: this.request.verifyTimeoutMs,
            report: (e) => {
              if (e.kind !== 'job') this.#onRunEvent(held, e);
              else this.#publish(held.name, e);
            },
          });
        } catch (e) {
          this.#report({
            kind: 'warning',
            workspace: held.name,
            message: `jobs: ${toTendError(e).message}`,
          });
        }
      },
      subscribe: (wake) => {
        held.wake = wake;
        return () => {
          held.wake = undefined;
        };
      },
    };
  }

  #onRunEvent(held: Held, e: AppEvent): void {
    const workspace = held.name;
    this.#publish(workspace, e);
    if (e.kind === 'lease') {
      held.epoch = e.epoch;
      this.#took++;
      this.#counted();
      this.#report({
        kind: 'took',
        workspace,
        epoch: e.epoch,
        ...(e.tookOver ? { tookOver: e.tookOver } : {}),
      });
    } else if (e.kind === 'pass-done') {
      this.#passes++;
      this.#retryAt.delete(workspace);
      this.#report({
        kind: 'pass',
        workspace,
        pass: e.pass,
        ms: e.ms,
        states: e.states,
        ...(e.origin ? { commit: e.origin.commit } : {}),
      });
      if (held.epoch !== undefined) {
        this.fleet.registry.passDone(workspace, held.epoch, e.origin).catch(() => undefined);
      }
    } else if (e.kind === 'error') {
      this.#report({
        kind: 'failed',
        workspace,
        code: e.error.code,
        message: e.error.message,
        ...(e.error.hint !== undefined ? { hint: e.error.hint } : {}),
      });
    } else if (e.kind === 'warning' || e.kind === 'intent-invalid') {
      const message =
        e.kind === 'warning'
          ? e.message
          : `the intent on disk does not load (${e.diagnostics.length} problems); the last valid intent stays in force`;
      this.#report({ kind: 'warning', workspace, message });
    }
  }

  /** A run ended: asked to (released), by losing its lease, or by an error (then a back-off). */
  #ended(held: Held, why: string | ReturnType<typeof toTendError> | undefined): void {
    this.#held.delete(held.name);
    this.#counted();
    if (held.stopping !== undefined) {
      if (held.epoch === undefined) return;
      // Asked to stop, but the lease was already gone (a zombie resuming): lost, not released.
      if (why === LEASE_LOST) this.#report({ kind: 'lost', workspace: held.name, reason: why });
      else this.#report({ kind: 'released', workspace: held.name, reason: held.stopping });
      return;
    }
    // Another worker took it first (the lease is the mutual exclusion): nothing to say.
    if (typeof why === 'object' && why.code === 'workspace.locked') return;
    if (why === undefined) return;
    const now = this.ctx.clock.now().getTime();
    const last = this.#retryAt.get(held.name)?.backoff;
    const backoff =
      last === undefined ? START_BACKOFF_MS : Math.min(MAX_START_BACKOFF_MS, last * 2);
    this.#retryAt.set(held.name, { at: now + backoff, backoff });
    this.#report({
      kind: 'lost',
      workspace: held.name,
      reason: typeof why === 'string' ? why : why.message,
    });
  }

  /** Stops every run (each settles its in-flight operations and releases), then unregisters. */
  async #stopAll(): Promise<void> {
    for (const h of this.#held.values()) this.#stop(h, 'stopping');
    await Promise.all([...this.#held.values()].map((h) => h.done ?? Promise.resolve()));
    await this.fleet.registry.removeWorker(this.fleet.id).catch(() => undefined);
  }
}

/** The kinds of a run's events a worker publishes for `tend serve --fleet` (not a whole plan). */
const PUBLISHED = new Set([
  'lease',
  'pass-start',
  'pass-done',
  'recovered',
  'op-start',
  'op-done',
  'op-failed',
  'blocked',
  'skipped',
  'verified',
  'drift',
  'warning',
  'error',
  'intent-reloaded',
  'intent-invalid',
  'job',
]);

/** An event as the fleet's channel carries it (an error as its code, message and hint). */
function fleetEvent(
  event: AppEvent | JobEvent,
): ({ kind: string } & Record<string, unknown>) | undefined {
  if (!PUBLISHED.has(event.kind)) return undefined;
  if (event.kind !== 'error' && event.kind !== 'op-failed') return { ...event };
  const { code, message, hint } = event.error;
  return { ...event, error: { code, message, ...(hint !== undefined ? { hint } : {}) } };
}

/** Omit over each member of a union. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
