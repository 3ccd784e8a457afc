import type { DeleteStep } from '../../core/index.js';
import type { StepContext } from './step-context.js';
import { planned } from './step-context.js';

/**
 * Carries out the delete of a resource removed from the intent: deletes the object the plan named
 * and forgets it. The executor runs it only after everything in `step.waitsFor` is done, and stops
 * a gated one before it gets here.
 */
export async function executeDelete(step: DeleteStep, ctx: StepContext): Promise<void> {
  const obj = planned(ctx, step.address, step.objectId);
  await ctx.ops.delete(ctx.target(step), obj, true, 'removed-from-intent');
}
