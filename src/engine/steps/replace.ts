import type { Address, ObservedObject, PlanStep, ReplaceStep } from '../../core/index.js';
import { hashValue } from '../../core/index.js';
import type { OperationTarget } from '../operator.js';
import type { Gate } from './gate.js';
import { blocked, NEEDS_APPROVAL, OPEN } from './gate.js';
import type { StepContext, StepResult } from './step-context.js';
import { assertAsPlanned, planned, resolvedDesired } from './step-context.js';

/**
 * Whether a replace may run: never when it cannot happen at all (`step.blocked`: the type's objects
 * cannot be deleted, so the old one would stay), not without --approve-destroy when the plan gated it
 * (a stateful resource, or one that must delete before it creates). Otherwise open.
 */
export function replaceGate(step: ReplaceStep): Gate {
  const what = `replacing ${step.address} (${step.forcedBy.join(', ')})`;
  if (step.blocked !== undefined) {
    return blocked(`${what} cannot happen: ${step.blocked}`, 'whose replacement cannot happen');
  }
  if (step.gated) {
    return blocked(
      `${what} is gated (${step.gate ?? 'stateful resource'}): approve with --approve-destroy`,
      NEEDS_APPROVAL,
    );
  }
  return OPEN;
}

/**
 * Carries out a replace with the planned strategy (the executor stops one whose `replaceGate` is
 * not open first).
 * Create-before-destroy: step 1 creates the replacement (or resumes one a crashed pass already
 * created) and verifies it; the old object is returned in `replaced`, and deleted as step 2 by
 * `deleteReplaced` once every dependent has been repointed. Delete-before-create: step 1 deletes the
 * old object, step 2 creates the new one.
 */
export async function executeReplace(step: ReplaceStep, ctx: StepContext): Promise<StepResult> {
  const old = planned(ctx, step.address, step.objectId);
  const desired = resolvedDesired(ctx, step.address);
  assertAsPlanned(step.address, step.changes, desired);
  const desiredHash = hashValue(desired);
  const group = `rep-${hashValue({ address: step.address, old: old.id, desired })}`;
  if (step.strategy === 'delete-before-create') {
    await ctx.ops.delete(ctx.target(step, { group, step: 1 }), old, false);
    const created = await ctx.ops.create(
      ctx.target(step, { group, step: 2 }),
      ctx.sendable(step.address, desired),
      desiredHash,
    );
    const verified = await ctx.verify(step.address, created.id, desired);
    return { object: verified, desired, checkNow: true };
  }
  const stepOne = ctx.target(step, { group, step: 1, replaces: old.id });
  const created =
    (await resumeStepOne(ctx, step.address, stepOne, desiredHash)) ??
    (await ctx.ops.create(stepOne, ctx.sendable(step.address, desired), desiredHash));
  const verified = await ctx.verify(step.address, created.id, desired);
  // Checks wait for step 2: until the old object is deleted, both may answer (two DNSKEYs).
  return { object: verified, desired, checkNow: false, replaced: { old, group } };
}

/**
 * A replace's step 1 that already settled (the pass that created the replacement died before it
 * could delete the old object, and observe still took the old one for the address, e.g. because the
 * replacement is not visible yet): resume with the replacement instead of creating another.
 */
async function resumeStepOne(
  ctx: StepContext,
  address: Address,
  stepOne: OperationTarget,
  desiredHash: string,
): Promise<ObservedObject | undefined> {
  const prior = await ctx.ops.latest(stepOne, 'create', desiredHash);
  if (prior?.state !== 'settled' || !prior.objectId) return undefined;
  const existing = await ctx.read(stepOne.type, prior.objectId);
  if (existing) return existing;
  // Not visible: eventual consistency (wait for it) or gone (create a new replacement).
  const settledAt = Date.parse(prior.settledAt ?? prior.createdAt);
  if (ctx.now() - settledAt > ctx.verifyTimeoutMs) return undefined;
  return ctx.verify(address, prior.objectId, {});
}

/** What step 2 of a create-before-destroy replace did. */
export type ReplacedOutcome =
  { readonly kind: 'deleted' } | { readonly kind: 'kept'; readonly referencedBy: Address };

/**
 * Step 2 of a create-before-destroy replace (also of one interrupted in an earlier pass): deletes the
 * old object, unless something declared still references it; then it is kept (reported), and a later
 * pass deletes it as a leftover of the group once nothing does. A refused delete throws.
 */
export async function deleteReplaced(
  step: PlanStep,
  old: ObservedObject,
  group: string,
  ctx: StepContext,
  motivation?: string,
): Promise<ReplacedOutcome> {
  const user = ctx.referencedBy(old.id);
  if (user) {
    ctx.report({
      kind: 'warning',
      message: `${step.address}: the old object ${old.id} is still referenced by ${user}; it is deleted once nothing references it`,
    });
    return { kind: 'kept', referencedBy: user };
  }
  await ctx.ops.delete(ctx.target(step, { group, step: 2 }), old, false, motivation);
  return { kind: 'deleted' };
}
