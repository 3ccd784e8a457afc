import type { ActorContext, Address, Changeset, Plan, StaleObject } from '../core/index.js';
import { toTendError } from '../core/index.js';
import type { CrashHook, Reporter, ResourceOutcome } from '../engine/index.js';
import { readChangeset, reconcilePass, tendActor } from '../engine/index.js';
import type { AcceptReport } from './accept.js';
import { acceptIn } from './accept.js';
import type { AppContext } from './context.js';
import type { UnderLease } from './with-workspace.js';
import { withWorkspace } from './with-workspace.js';
import type { ApplyVerdict, OutcomeSummary } from './outcomes.js';
import { summarizeOutcomes, verdictOf } from './outcomes.js';
import type { LiveFindings } from './plan.js';
import { liveFindings } from './plan.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';

/** What `apply` is asked. */
export interface ApplyRequest extends WorkspaceSelection, UnderLease {
  readonly approveDestroy: boolean;
  /** Delete managed objects removed from the intent. */
  readonly prune: boolean;
  readonly runChecks: boolean;
  readonly verifyTimeoutMs: number;
  /** How long to wait for another writer's lease on the workspace (0: fail at once). */
  readonly lockTimeoutMs: number;
  /** Asked before destructive steps run; false cancels the apply (nothing is changed). */
  readonly confirm?: (plan: Plan) => Promise<boolean>;
  readonly report?: Reporter;
  /** Aborting it lets the operations in flight settle and starts no new one. */
  readonly signal?: AbortSignal;
  readonly actor?: ActorContext;
  /** Test hook around every store write (the torture suite kills the process there). */
  readonly crash?: CrashHook;
  /** The command named in the lease (default `tend apply`). */
  readonly command?: string;
  /** Limit the plan to these resources and what they depend on. */
  readonly targets?: readonly Address[];
}

/** What `apply` of a saved plan is asked: the changeset file instead of an intent directory. */
export interface ApplyChangesetRequest extends Omit<
  ApplyRequest,
  'dir' | 'approveDestroy' | 'prune' | 'targets'
> {
  /** The changeset file written by `plan --out`. */
  readonly changeset: string;
}

/** What `apply` did. */
export interface ApplyReport extends LiveFindings, OutcomeSummary {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly verdict: ApplyVerdict;
  /** False when the user declined, or nothing ran. */
  readonly applied: boolean;
  readonly plan: Plan;
  readonly outcomes: Readonly<Record<Address, ResourceOutcome>>;
  /** Journal operations resolved before planning (left by an earlier crash). */
  readonly recovered: number;
  /** The lease epoch this apply held. */
  readonly epoch: number;
  /**
   * Fields the arbitration policy decided to `accept` this pass: the patch that takes each observed
   * value into the intent (`tend accept <address> <field> --write` writes it; nothing is written
   * here), or where the change belongs when the value is not the field's own.
   */
  readonly accepted: readonly AcceptReport[];
  /** A saved plan that was not carried out, and why (verdict `refused`; nothing was sent). */
  readonly refused?: {
    readonly code: string;
    readonly message: string;
    readonly hint?: string;
    readonly stale: readonly StaleObject[];
    readonly unexpected: readonly Address[];
  };
}

/**
 * One pass of the loop as a command: holds the workspace lease, observes, resolves the journal,
 * plans, asks `confirm` before destructive steps, executes with the journal protocol, verifies and
 * checks, and records each resource's status. The verdict says whether anything failed.
 */
export async function apply(ctx: AppContext, request: ApplyRequest): Promise<ApplyReport> {
  return applyPass(ctx, request);
}

/**
 * Carries out a saved plan exactly (`tend apply p.json`): holds the lease, observes, and refuses —
 * verdict `refused`, nothing sent — when the changeset is another workspace's, the intent changed,
 * any pinned object moved, the journal has unfinished work, or the steps are not the ones the intent
 * gives now. Otherwise the same execution as `apply`.
 */
export async function applyChangeset(
  ctx: AppContext,
  request: ApplyChangesetRequest,
): Promise<ApplyReport> {
  const changeset = await readChangeset(request.changeset);
  return applyPass(
    ctx,
    {
      ...request,
      dir: changeset.intent.dir,
      approveDestroy: changeset.options.approveDestroy,
      prune: changeset.options.prune,
    },
    changeset,
  );
}

async function applyPass(
  ctx: AppContext,
  request: ApplyRequest,
  changeset?: Changeset,
): Promise<ApplyReport> {
  const leaseOptions = {
    command: request.command ?? 'tend apply',
    waitMs: request.lockTimeoutMs,
    ...(request.signal ? { signal: request.signal } : {}),
  };
  return withWorkspace(
    ctx,
    request,
    { lease: leaseOptions },
    async ({ ws, nameSource, lease, signal }) => {
      const result = await reconcilePass(ws, {
        mode: 'apply',
        approveDestroy: request.approveDestroy,
        prune: request.prune,
        actor: request.actor ?? tendActor('apply'),
        clock: ctx.clock,
        report: request.report ?? (() => {}),
        verifyTimeoutMs: request.verifyTimeoutMs,
        runChecks: request.runChecks,
        signal,
        ...(request.confirm ? { confirm: request.confirm } : {}),
        ...(request.crash ? { crash: request.crash } : {}),
        ...(request.targets && request.targets.length > 0 ? { targets: request.targets } : {}),
        ...(changeset ? { changeset } : {}),
      });
      const accepted: AcceptReport[] = [];
      for (const d of result.arbitration?.decisions ?? []) {
        if (!d.fresh || d.decision.decision !== 'accept') continue;
        try {
          accepted.push(
            await acceptIn(ctx, ws, { address: d.address, field: d.field, value: d.observed }),
          );
        } catch (e) {
          request.report?.({
            kind: 'warning',
            message: `${d.address}.${d.field}: accepted, but no patch could be made: ${toTendError(e).message}`,
          });
        }
      }
      const summary = summarizeOutcomes(result.outcomes);
      const verdict: ApplyVerdict = result.refused
        ? 'refused'
        : request.signal?.aborted
          ? 'interrupted'
          : !result.applied
            ? 'cancelled'
            : verdictOf(summary);
      return {
        workspace: { name: ws.name, source: nameSource },
        verdict,
        applied: result.applied,
        plan: result.plan,
        outcomes: Object.fromEntries(result.outcomes),
        recovered: result.recovered,
        epoch: lease.lease.epoch,
        accepted,
        ...(result.refused
          ? {
              refused: {
                code: result.refused.error.code,
                message: result.refused.error.message,
                ...(result.refused.error.hint ? { hint: result.refused.error.hint } : {}),
                stale: result.refused.stale,
                unexpected: result.refused.unexpected,
              },
            }
          : {}),
        ...summary,
        ...liveFindings(result.observation),
      };
    },
  );
}
