import { TendError } from '../core/index.js';
import type { FleetJobs, FleetListener, FleetNotice, FleetRegistry } from '../store/index.js';
import { openFleetJobs, openRegistry } from '../store/index.js';
import type { AppContext } from './context.js';
import type { FleetStatus } from './fleet.js';
import { readFleetStatus } from './fleet.js';
import type { JobKind, JobView } from './fleet-jobs.js';
import { jobOf, jobView, newJobId } from './fleet-jobs.js';
import type { WorkspaceSelection } from './workspace.js';
import { storeLocation } from './workspace.js';

// `tend serve --fleet` (docs/fleet.md "The API over the fleet", decision 0045): the API of every
// workspace registered in the fleet's store, from any node. Reads come from the shared store; the
// writes that need a workspace's lease become jobs the holder carries out; the workers' events come
// over the fleet's channel. This node runs no loop.

/** What `tend serve --fleet` is given. */
export interface FleetServeRequest {
  /** The fleet's store (`--store`, else TEND_STORE_URL): a shared database. */
  readonly store?: string;
  /** Each event a worker published, by workspace. */
  readonly onEvent?: (notice: FleetNotice) => void;
  /** The event channel's connection dropped (it listens again by itself) or listens again. */
  readonly onConnection?: (state: 'lost' | 'listening', message?: string) => void;
}

/** How often a caller waiting for a job reads it again. */
const JOB_POLL_MS = 200;
/** The longest `?wait=` a caller may ask. */
export const MAX_JOB_WAIT_S = 300;

/** The fleet as `tend serve --fleet` serves it. */
export interface FleetServe {
  /** The store's location (its password known to the redactor). */
  readonly location: string;
  /** `tend fleet status --json`'s workers and workspaces. */
  status(): Promise<FleetStatus>;
  /** The selection of a registered workspace; `workspace.not_found` for any other name. */
  selection(name: string): Promise<WorkspaceSelection>;
  /** Queues a job for the holder of `workspace` (a registered one). */
  submit(workspace: string, kind: JobKind, input: unknown, requestedBy: string): Promise<JobView>;
  /** A job of `workspace`; `job.not_found` for an unknown id or another workspace's job. */
  job(workspace: string, id: string): Promise<JobView>;
  /** Reads the job again until it has ended or `waitMs` passed (or `signal` aborts). */
  wait(workspace: string, id: string, waitMs: number, signal?: AbortSignal): Promise<JobView>;
  close(): Promise<void>;
}

/**
 * Opens the fleet of a shared store for `tend serve --fleet`: its registry, its job table and a
 * listener on its event channel. Any other store is refused (`fleet.shared-store-required`, what to
 * give instead), as `tend workspace add` refuses it.
 */
export async function openFleetServe(
  ctx: AppContext,
  request: FleetServeRequest,
): Promise<FleetServe> {
  const location = storeLocation(ctx, {
    dir: '.',
    ...(request.store ? { store: request.store } : {}),
  });
  ctx.redactor.addUrlCredentials(location);
  const options = { env: ctx.env, redactor: ctx.redactor };
  const registry = await openRegistry(location, options);
  let jobs: FleetJobs | undefined;
  let listener: FleetListener | undefined;
  try {
    jobs = await openFleetJobs(location, options);
    listener = await jobs.listen({
      ...(request.onEvent ? { onEvent: request.onEvent } : {}),
      ...(request.onConnection ? { onConnection: request.onConnection } : {}),
    });
  } catch (e) {
    await jobs?.close();
    await registry.close();
    throw e;
  }
  return new ServedFleet(ctx, location, registry, jobs, listener);
}

class ServedFleet implements FleetServe {
  constructor(
    private readonly ctx: AppContext,
    readonly location: string,
    private readonly registry: FleetRegistry,
    private readonly jobs: FleetJobs,
    private readonly listener: FleetListener,
  ) {}

  status(): Promise<FleetStatus> {
    return readFleetStatus(this.registry);
  }

  async selection(name: string): Promise<WorkspaceSelection> {
    const registered = (await this.registry.listWorkspaces()).find((w) => w.name === name);
    if (!registered) {
      throw new TendError(
        'workspace.not_found',
        `no workspace ${name} is registered in this fleet`,
        {
          hint: 'GET /workspaces lists them; tend workspace add registers one',
        },
      );
    }
    if (registered.source.kind !== 'dir') {
      // Its intent is a commit the holder fetched into its own cache: nothing a node can read here.
      throw new TendError(
        'workspace.git_not_served',
        `workspace ${name} follows a git repository (${registered.source.url}); tend serve --fleet serves directory workspaces only`,
        {
          hint: 'read it with tend status/history --workspace on a checkout of the repository; the API over git workspaces is not built yet (docs/fleet.md)',
        },
      );
    }
    return { dir: registered.source.dir, store: this.location, workspace: name };
  }

  async submit(
    workspace: string,
    kind: JobKind,
    input: unknown,
    requestedBy: string,
  ): Promise<JobView> {
    await this.selection(workspace);
    const job = await this.jobs.submit({
      id: newJobId(this.ctx),
      workspace,
      kind,
      input,
      requestedBy,
    });
    return this.#view(job);
  }

  async job(workspace: string, id: string): Promise<JobView> {
    await this.selection(workspace);
    return this.#view(jobOf(await this.jobs.job(id), workspace, id));
  }

  async wait(
    workspace: string,
    id: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<JobView> {
    const until = this.ctx.clock.now().getTime() + waitMs;
    let job = await this.job(workspace, id);
    while (job.state === 'queued' || job.state === 'running') {
      const left = until - this.ctx.clock.now().getTime();
      if (left <= 0 || signal?.aborted) break;
      await this.ctx.clock.sleep(Math.min(JOB_POLL_MS, left), signal);
      job = await this.job(workspace, id);
    }
    return job;
  }

  async #view(job: Parameters<typeof jobView>[0]): Promise<JobView> {
    if (job.state !== 'queued') return job;
    const lease = (await this.registry.fleetLeases()).find((l) => l.workspace === job.workspace);
    return jobView(job, lease);
  }

  async close(): Promise<void> {
    await this.listener.close();
    await this.jobs.close();
    await this.registry.close();
  }
}
