import { randomBytes } from 'node:crypto';
import type { ActionActor } from '../core/index.js';
import { TendError, toTendError } from '../core/index.js';
import type { FleetJobs, FleetLease, Job, JobEnd } from '../store/index.js';
import type { ActionReport } from './action.js';
import { runAction } from './action.js';
import type { ApplyReport } from './apply.js';
import type { AppContext } from './context.js';
import type { AppEvent } from './events.js';
import { applySavedPlan } from './saved-plans.js';
import type { LeasedWorkspace } from './with-workspace.js';
import type { WorkspaceSelection } from './workspace.js';

// The fleet's jobs as use cases (docs/fleet.md "The API over the fleet", decision 0045): a write that
// needs a workspace's lease, asked of `tend serve --fleet` on any node, is queued in the store; the
// worker holding the workspace claims it between two passes and carries it out under its own lease
// and fence — once — and records how it ended.

/** What a job does: apply a saved plan, or run a Day-2 action. */
export type JobKind = 'apply' | 'action';
export const JOB_KINDS: readonly JobKind[] = ['apply', 'action'];

/** The input of an `apply` job: a saved plan's id (its approval and role were checked on asking). */
export interface ApplyJobInput {
  readonly plan: string;
}

/** The input of an `action` job. */
export interface ActionJobInput {
  readonly address: string;
  readonly action: string;
  /** `name=value` pairs. */
  readonly params: readonly string[];
  readonly actor: ActionActor;
}

/** A job as the API shows it: the stored job, and why it waits when nobody holds its workspace. */
export type JobView = Job & { readonly note?: string };

/** A new job's id: the time it was asked (sorts) and a random part. */
export function newJobId(ctx: Pick<AppContext, 'clock'>): string {
  const stamp = ctx.clock.now().toISOString().replace(/[-:.]/g, '');
  return `job-${stamp}-${randomBytes(5).toString('hex')}`;
}

/** The job as the API shows it; a queued job whose workspace nobody holds says so. */
export function jobView(job: Job, lease: FleetLease | undefined): JobView {
  if (job.state !== 'queued' || (lease && !lease.expired)) return job;
  return {
    ...job,
    note: `nobody holds workspace ${job.workspace}: the job waits until a worker takes it (tend fleet status shows the holders)`,
  };
}

/** A job of another workspace than the one asked about is not found there. */
export function jobOf(job: Job | undefined, workspace: string, id: string): Job {
  if (!job || job.workspace !== workspace) {
    throw new TendError('job.not_found', `workspace ${workspace} has no job ${id}`, {
      hint: 'the id is the one POST …/apply or …/actions answered, under the same workspace',
    });
  }
  return job;
}

/** What a worker needs to carry out jobs. */
export interface JobRunnerOptions {
  readonly jobs: FleetJobs;
  /** This worker's id (recorded on each job it claims). */
  readonly worker: string;
  readonly verifyTimeoutMs: number;
  /** The events of a job's work, and the job's state changes (`kind: 'job'`). */
  readonly report: (event: AppEvent | JobEvent) => void;
}

/** A job's state as an event. */
export interface JobEvent {
  readonly kind: 'job';
  readonly id: string;
  readonly job: string;
  readonly state: Job['state'];
  readonly epoch?: number;
  readonly error?: string;
}

function jobEvent(job: Job): JobEvent {
  return {
    kind: 'job',
    id: job.id,
    job: job.kind,
    state: job.state,
    ...(job.epoch !== undefined ? { epoch: job.epoch } : {}),
    ...(job.error ? { error: job.error.message } : {}),
  };
}

/**
 * Carries out the queued jobs of the workspace `held` (a run of `tend worker` between two passes,
 * holding the lease): first marks `interrupted` the jobs a former holder left running (never run
 * again), then claims one job at a time while any is queued and the lease lives (the claim checks it
 * in the database), runs it inside the run's lease and fence, and records how it ended.
 */
export async function runQueuedJobs(
  ctx: AppContext,
  selection: WorkspaceSelection,
  held: LeasedWorkspace,
  options: JobRunnerOptions,
): Promise<number> {
  const { jobs, report } = options;
  const workspace = held.ws.name;
  const epoch = held.lease.lease.epoch;
  for (const j of await jobs.interruptStale(workspace, epoch)) report(jobEvent(j));
  let ran = 0;
  while (!held.signal.aborted) {
    const job = await jobs.claim(workspace, epoch, options.worker);
    if (!job) break;
    report(jobEvent(job));
    const end = await carryOut(ctx, selection, held, job, options);
    const finished = await jobs.finish(job.id, epoch, end);
    report(jobEvent(finished ?? { ...job, state: end.state }));
    ran++;
  }
  return ran;
}

/** Runs one job; how it ended (an error is a failed job, never thrown). */
async function carryOut(
  ctx: AppContext,
  selection: WorkspaceSelection,
  held: LeasedWorkspace,
  job: Job,
  options: JobRunnerOptions,
): Promise<JobEnd> {
  try {
    if (job.kind === 'apply') {
      const input = job.input as ApplyJobInput;
      const result: ApplyReport = await applySavedPlan(ctx, {
        ...selection,
        id: input.plan,
        runChecks: true,
        verifyTimeoutMs: options.verifyTimeoutMs,
        lockTimeoutMs: 0,
        command: `tend worker (apply by ${job.requestedBy})`,
        report: options.report,
        signal: held.signal,
        heldByRun: held,
      });
      return { state: 'done', result };
    }
    if (job.kind === 'action') {
      const input = job.input as ActionJobInput;
      const result: ActionReport = await runAction(ctx, {
        ...selection,
        address: input.address,
        action: input.action,
        params: input.params,
        actor: input.actor,
        lockTimeoutMs: 0,
        command: `tend worker (action by ${job.requestedBy})`,
        signal: held.signal,
        heldByRun: held,
      });
      return result.state === 'done'
        ? { state: 'done', result }
        : {
            state: 'failed',
            error: {
              code: `action.${result.state}`,
              message: result.error ?? `the action ended ${result.state}`,
            },
            result,
          };
    }
    throw new TendError('job.unknown_kind', `job ${job.id} is of kind ${job.kind}, unknown here`, {
      hint: `this Tend carries out ${JOB_KINDS.join(' and ')} jobs: every worker of a fleet should run the same version`,
    });
  } catch (e) {
    const err = toTendError(e);
    return {
      state: 'failed',
      error: { code: err.code, message: err.message, ...(err.hint ? { hint: err.hint } : {}) },
    };
  }
}
