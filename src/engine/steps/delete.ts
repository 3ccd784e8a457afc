import type { DeleteStep } from '../../core/index.js';
import type { Leftover } from '../observe.js';
import type { StepContext } from './step-context.js';
import { planned } from './step-context.js';

/**
 * Carries out the delete of a resource removed from the intent: deletes the object the plan named
 * and forgets it. Tend's other objects of the removed address that the journal explains (the old
 * object of an interrupted replace, a create given up as superseded that showed up late: observe's
 * leftovers) go first, as the group's step 2, so the address's record outlives them. The executor
 * runs it only after everything in `step.waitsFor` is done, and stops a gated one before it gets here.
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
