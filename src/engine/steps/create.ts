import type { CreateStep } from '../../core/index.js';
import { hashValue } from '../../core/index.js';
import type { StepContext, StepResult } from './step-context.js';
import { assertAsPlanned, resolvedDesired } from './step-context.js';

/**
 * Carries out a create: sends the planned fields (Unknowns resolved from what was just created or
 * replaced) with the journal protocol, then verifies the new object.
 */
export async function executeCreate(step: CreateStep, ctx: StepContext): Promise<StepResult> {
  const desired = resolvedDesired(ctx, step.address);
  assertAsPlanned(
    step.address,
    Object.entries(step.desired).map(([path, after]) => ({ path, after })),
    desired,
  );
  const created = await ctx.ops.create(
    ctx.target(step),
    ctx.sendable(step.address, desired),
    hashValue(desired),
  );
  const verified = await ctx.verify(step.address, created.id, desired);
  return { object: verified, desired, checkNow: true };
}
