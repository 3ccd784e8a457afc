import type { DeleteStep } from '../../core/index.js';
import type { Leftover } from '../observe.js';
import type { Gate } from './gate.js';
import { blocked, NEEDS_APPROVAL, OPEN } from './gate.js';
import type { StepContext } from './step-context.js';
import { planned } from './step-context.js';

/**
 * Whether the delete of a removed resource may run: never when the type's API offers no DELETE
 * (`step.blocked`), not without --approve-destroy when the plan gated it (a stateful resource, or one
 * living under a stateful resource being removed: `gatedBy`). Otherwise open. What the resource
 * depends on waits with it: it would still be in use.
 */
export function deleteGate(step: DeleteStep): Gate {
  if (step.blocked !== undefined) {
    return blocked(
      `deleting ${step.address} cannot happen: ${step.blocked}`,
      'whose deletion cannot happen',
    );
  }
  if (step.gated) {
    return blocked(
      step.gatedBy !== undefined
        ? `deleting ${step.address} waits for the deletion of ${step.gatedBy}, a stateful resource it lives under: approve with --approve-destroy`
        : `deleting ${step.address} destroys a stateful resource: approve with --approve-destroy`,
      NEEDS_APPROVAL,
    );
  }
  return OPEN;
}

/**
 * Carries out the delete of a resource removed from the intent: deletes the object the plan named
 * and forgets it. Tend's other objects of the removed address that the journal explains (the old
 * object of an interrupted replace, a create given up as superseded that showed up late: observe's
 * leftovers) go first, as the group's step 2, so the address's record outlives them. The executor
 * runs it only after everything in `step.waitsFor` is done, and stops one whose `deleteGate` is not
 * open before it gets here.
 */
export async function executeDelete(
  step: DeleteStep,
  ctx: StepContext,
  leftovers: readonly Leftover[] = [],
): Promise<void> {
  for (const l of leftovers) {
    await ctx.ops.delete(
      ctx.target(step, { group: l.group, step: 2 }),
      l.old,
      false,
      'removed-from-intent',
    );
  }
  const obj = planned(ctx, step.address, step.objectId);
  await ctx.ops.delete(ctx.target(step), obj, true, 'removed-from-intent');
}
