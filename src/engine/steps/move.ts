import type { MoveStep } from '../../core/index.js';
import type { StepContext, StepResult } from './step-context.js';
import { planned, resolvedDesired } from './step-context.js';
import { sendChanges } from './update.js';

/**
 * Carries out a move: re-records the object under its new address and rewrites its marker, without
 * touching it otherwise (nothing is deleted or created); then sends the planned changes, if any.
 */
export async function executeMove(step: MoveStep, ctx: StepContext): Promise<StepResult> {
  const observed = planned(ctx, step.address, step.objectId);
  const moved = await ctx.ops.takeOver(ctx.target(step), observed, 'move', step.from);
  if (step.changes.length > 0) return sendChanges(step, moved, step.changes, ctx);
  return { object: moved, desired: resolvedDesired(ctx, step.address), checkNow: true };
}
