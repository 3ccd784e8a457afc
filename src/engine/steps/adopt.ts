import type { AdoptStep } from '../../core/index.js';
import type { StepContext, StepResult } from './step-context.js';
import { planned, resolvedDesired } from './step-context.js';
import { sendChanges } from './update.js';

/**
 * Carries out an adoption: records the object Tend had no record of under its address (and puts the
 * marker on it where the type has tags); then sends the planned changes, if any.
 */
export async function executeAdopt(step: AdoptStep, ctx: StepContext): Promise<StepResult> {
  const observed = planned(ctx, step.address, step.objectId);
  const why = step.foundBy === 'record' ? 'restore-marker' : 'adopt';
  const adopted = await ctx.ops.takeOver(ctx.target(step), observed, why);
  if (step.changes.length > 0) return sendChanges(step, adopted, step.changes, ctx);
  return { object: adopted, desired: resolvedDesired(ctx, step.address), checkNow: true };
}
