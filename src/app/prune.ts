import type { ActorContext } from '../core/index.js';
import type { CrashHook, PrunePlan, PruneResult, Reporter } from '../engine/index.js';
import { executePrune, observe, planPrune, tendActor } from '../engine/index.js';
import type { AppContext } from './context.js';
import { withWorkspace } from './with-workspace.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';

/** What `prune` is asked. */
export interface PruneRequest extends WorkspaceSelection {
  /** Also delete candidates known to be stateful. */
  readonly approveDestroy: boolean;
  readonly lockTimeoutMs: number;
  /**
   * Asked with the plan before anything is deleted; false cancels (nothing is deleted). Without it
   * nothing is deleted either: prune only lists.
   */
  readonly confirm?: (plan: PrunePlan) => Promise<boolean>;
  readonly report?: Reporter;
  readonly signal?: AbortSignal;
  readonly actor?: ActorContext;
  readonly crash?: CrashHook;
}

/** How a prune ended. */
export type PruneVerdict =
  /** Every candidate was deleted, or there was none. */
  | 'ok'
  /** A delete failed (the platform refused, or its outcome stayed unknown). */
  | 'failed'
  /** Candidates were held back (stateful without --approve-destroy, or still used). */
  | 'blocked'
  /** Not confirmed: nothing was deleted. */
  | 'cancelled';

/** What `prune` found and did. */
export interface PruneReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly plan: PrunePlan;
  /** Present when deletes were carried out. */
  readonly result?: PruneResult;
  readonly verdict: PruneVerdict;
}

/**
 * Deletes what carries this workspace's marker and the intent does not declare: orphans (also after
 * the store was lost) and removed resources an apply left in place. Holds the workspace lease; asks
 * `confirm` with the list first; stateful ones only with `approveDestroy`; each delete journaled.
 */
export async function prune(ctx: AppContext, request: PruneRequest): Promise<PruneReport> {
  const leaseOptions = {
    command: 'tend prune',
    waitMs: request.lockTimeoutMs,
    ...(request.signal ? { signal: request.signal } : {}),
  };
  return withWorkspace(
    ctx,
    request,
    { lease: leaseOptions },
    async ({ ws, nameSource, signal }) => {
      const observation = await observe(ws, { now: ctx.clock.now() });
      const plan = planPrune(ws, observation, {
        approveDestroy: request.approveDestroy,
        noDelete: (type) => ws.typeOf(type).info.noDelete !== undefined,
      });
      const workspace = { name: ws.name, source: nameSource };
      const held: PruneVerdict = plan.gated.length > 0 ? 'blocked' : 'ok';
      if (plan.toDelete.length === 0) return { workspace, plan, verdict: held };
      if (!request.confirm || !(await request.confirm(plan))) {
        return { workspace, plan, verdict: 'cancelled' };
      }
      const result = await executePrune(ws, plan, {
        actor: request.actor ?? tendActor('prune'),
        clock: ctx.clock,
        report: request.report ?? (() => {}),
        signal,
        ...(request.crash ? { crash: request.crash } : {}),
      });
      const verdict: PruneVerdict =
        result.failed.length > 0 ? 'failed' : result.gated.length > 0 ? 'blocked' : 'ok';
      return { workspace, plan, result, verdict };
    },
  );
}
