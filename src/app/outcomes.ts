import type { Address, ResourceState } from '../core/index.js';
import type { ResourceOutcome } from '../engine/index.js';

/** How a writing command ended, which is what its exit code says. */
export type ApplyVerdict =
  /** Everything planned was done, verified and checked. */
  | 'ok'
  /** An operation failed, an object was not verified, or a check failed. */
  | 'failed'
  /** A destructive step waits for approval (and nothing failed). */
  | 'blocked'
  /** The user declined the destructive steps: nothing was changed. */
  | 'cancelled'
  /** Stopped by a signal. */
  | 'interrupted'
  /** A saved plan was refused (another workspace, a changed intent, moved objects): nothing sent. */
  | 'refused';

/** Counts of resource outcomes, and the resources that did not converge with the reason each. */
export interface OutcomeSummary {
  readonly counts: Readonly<Record<ResourceState, number>>;
  readonly problems: readonly { address: Address; state: ResourceState; message?: string }[];
}

/** Summarises the outcomes of a pass. */
export function summarizeOutcomes(outcomes: ReadonlyMap<Address, ResourceOutcome>): OutcomeSummary {
  const counts: Record<ResourceState, number> = {
    converged: 0,
    drifted: 0,
    pending: 0,
    failing: 0,
    blocked: 0,
    error: 0,
  };
  const problems: { address: Address; state: ResourceState; message?: string }[] = [];
  for (const [address, o] of outcomes) {
    counts[o.state]++;
    if (o.state !== 'converged') {
      problems.push({ address, state: o.state, ...(o.message ? { message: o.message } : {}) });
    }
  }
  return { counts, problems };
}

/**
 * The verdict of an applied pass: failed when any resource ended in error (an operation failed or was
 * not verified; what depended on it is then left pending) or failing a check; blocked when only gates
 * held steps back.
 */
export function verdictOf(summary: OutcomeSummary): ApplyVerdict {
  const { counts } = summary;
  if (counts.error > 0 || counts.failing > 0) return 'failed';
  if (counts.blocked > 0) return 'blocked';
  return 'ok';
}
