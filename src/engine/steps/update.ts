import type { FieldChange, ObservedObject, PlanStep, UpdateStep } from '../../core/index.js';
import { getPath, hashValue, updateBody } from '../../core/index.js';
import type { StepContext, StepResult } from './step-context.js';
import { assertAsPlanned, planned, resolvedDesired } from './step-context.js';

/**
 * Carries out an update: sends exactly the planned changes to the object the plan was computed
 * from. A gone object, or a known value that differs from the plan, fails the step unsent.
 */
export async function executeUpdate(step: UpdateStep, ctx: StepContext): Promise<StepResult> {
  return sendChanges(step, planned(ctx, step.address, step.objectId), step.changes, ctx);
}

/**
 * Sends planned changes in place (the second half of a move or an adoption too) and verifies the
 * result. The motivation says whether the platform drifted from what Tend last recorded or the
 * intent changed.
 */
export async function sendChanges(
  step: PlanStep,
  observed: ObservedObject,
  changes: readonly FieldChange[],
  ctx: StepContext,
): Promise<StepResult> {
  const desired = resolvedDesired(ctx, step.address);
  assertAsPlanned(step.address, changes, desired);
  ctx.report({ kind: 'drift', address: step.address, fields: changes.map((c) => c.path) });
  const body = updateBody(desired, observed.fields, changes);
  const seen = ctx.remembered(step.address);
  const drifted =
    seen !== undefined &&
    changes.some((c) => hashValue(getPath(seen, c.path) ?? null) !== hashValue(c.before ?? null));
  const updated = await ctx.ops.update(
    ctx.target(step),
    observed,
    body,
    hashValue(desired),
    drifted ? 'drift' : 'intent-change',
  );
  const verified = await ctx.verify(step.address, updated.id, desired);
  return { object: verified, desired, checkNow: true };
}
