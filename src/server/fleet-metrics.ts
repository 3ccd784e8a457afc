import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkerEvent, WorkerProbe } from '../app/index.js';

// The Prometheus series of one `tend worker` (docs/fleet.md "Metrics", decision 0046): a registry of
// its own, fed by the worker's events (took, released, lost, pass, failed) and its probe (heartbeats,
// counts, lease renewals). Served by `tend worker --listen` at GET /metrics.

/** Where the depth of the fleet's job queue comes from, once there is one. */
export interface FleetMetricsOptions {
  /**
   * The number of jobs waiting in the fleet's job table (`tend serve --fleet`, issue 26 item 5).
   * TODO(fleet jobs): hand in the job table's count here once that table exists; until then the
   * series `tend_fleet_job_queue_depth` is not exported at all (a 0 would be a lie).
   */
  readonly jobQueueDepth?: () => Promise<number>;
}

/** The reasons a worker releases a workspace (`ReleaseReason`), each series present from the start. */
const RELEASE_REASONS = ['rebalance', 'removed', 'stopping'] as const;

export class FleetMetrics implements WorkerProbe {
  #depth: (() => Promise<number>) | undefined;
  readonly registry = new Registry();
  readonly #held = new Gauge({
    name: 'tend_fleet_leases_held',
    help: 'Workspace leases this worker holds now.',
    registers: [this.registry],
  });
  readonly #registered = new Gauge({
    name: 'tend_fleet_workspaces_registered',
    help: 'Workspaces registered in the fleet, as this worker last read the registry.',
    registers: [this.registry],
  });
  readonly #takeovers = new Counter({
    name: 'tend_fleet_takeovers_total',
    help: 'Workspaces this worker took over from a holder whose lease had expired or whose process was dead.',
    registers: [this.registry],
  });
  readonly #releases = new Counter({
    name: 'tend_fleet_releases_total',
    help: 'Workspace leases this worker gave up after its run settled, by reason (rebalance, removed, stopping).',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly #lost = new Counter({
    name: 'tend_fleet_leases_lost_total',
    help: 'Workspace runs that ended without being asked to: the lease taken over or expired, or an error.',
    registers: [this.registry],
  });
  readonly #renew = new Histogram({
    name: 'tend_fleet_lease_renew_duration_seconds',
    help: 'How long a renewal of a workspace lease took to be answered by the store.',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly #heartbeatFailures = new Counter({
    name: 'tend_fleet_heartbeat_failures_total',
    help: "Heartbeats of this worker that the fleet's store did not record.",
    registers: [this.registry],
  });
  readonly #passes = new Counter({
    name: 'tend_fleet_passes_total',
    help: 'Passes of the loop this worker completed, by workspace.',
    labelNames: ['workspace'],
    registers: [this.registry],
  });
  readonly #failures = new Counter({
    name: 'tend_fleet_pass_failures_total',
    help: 'Passes of the loop that failed on this worker, by workspace.',
    labelNames: ['workspace'],
    registers: [this.registry],
  });

  constructor(options: FleetMetricsOptions = {}) {
    for (const reason of RELEASE_REASONS) this.#releases.inc({ reason }, 0);
    if (options.jobQueueDepth) this.jobsAttached(options.jobQueueDepth);
  }

  /**
   * The worker opened the job table: the queue's depth is read from it at each scrape. Before that
   * there is no series (rather than a made-up 0).
   */
  jobsAttached(queued: () => Promise<number>): void {
    const first = this.#depth === undefined;
    this.#depth = queued;
    if (!first) return;
    const depth = (): (() => Promise<number>) | undefined => this.#depth;
    new Gauge({
      name: 'tend_fleet_job_queue_depth',
      help: "Jobs waiting in the fleet's job table (every workspace's).",
      registers: [this.registry],
      async collect() {
        const count = depth();
        if (count) this.set(await count());
      },
    });
  }

  /** Counts what a worker event says. */
  readonly event = (e: WorkerEvent): void => {
    if (e.kind === 'took' && e.tookOver) this.#takeovers.inc();
    else if (e.kind === 'released') this.#releases.inc({ reason: e.reason });
    else if (e.kind === 'lost') this.#lost.inc();
    else if (e.kind === 'pass') this.#passes.inc({ workspace: e.workspace });
    else if (e.kind === 'failed') this.#failures.inc({ workspace: e.workspace });
  };

  heartbeat(ok: boolean): void {
    if (!ok) this.#heartbeatFailures.inc();
  }

  counted(counts: { readonly registered: number; readonly held: number }): void {
    this.#registered.set(counts.registered);
    this.#held.set(counts.held);
  }

  leaseRenewed(seconds: number): void {
    this.#renew.observe(seconds);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
