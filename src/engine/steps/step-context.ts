// What one step of a plan needs from the executor, as a small interface of functions: the units in
// this folder carry out one step kind each and are tested with hand-written fakes of it.
import type {
  Address,
  ObservedObject,
  Operation,
  OperationAction,
  PlanStep,
} from '../../core/index.js';
import { containsUnknown, getPath, hashValue, TendError } from '../../core/index.js';
import type { Reporter } from '../events.js';
import type { OperationTarget } from '../operator.js';

/** The journaled mutations a step may make (the executor passes its `Operator`). */
export interface StepOps {
  create(
    target: OperationTarget,
    desired: Record<string, unknown>,
    desiredHash: string,
  ): Promise<ObservedObject>;
  update(
    target: OperationTarget,
    current: ObservedObject,
    body: Record<string, unknown>,
    desiredHash: string,
    motivation: string,
  ): Promise<ObservedObject>;
  delete(
    target: OperationTarget,
    current: ObservedObject,
    forget: boolean,
    motivation?: string,
  ): Promise<void>;
  /** Records an object under the target's address (see `Operator.takeOver`). */
  takeOver(
    target: OperationTarget,
    current: ObservedObject,
    motivation: string,
    from?: Address,
  ): Promise<ObservedObject>;
  latest(
    target: OperationTarget,
    action: OperationAction,
    desiredHash: string,
  ): Promise<Operation | undefined>;
}

/** Everything a step unit uses: the journaled operations and a few lookups, all replaceable in tests. */
export interface StepContext {
  readonly ops: StepOps;
  /** The journal target of a step (`extra` for the steps of a replace). */
  target(step: PlanStep, extra?: Partial<OperationTarget>): OperationTarget;
  /** The address's object as known now (observed, or as changed earlier in this execution). */
  object(address: Address): ObservedObject | undefined;
  /** The declared fields, references resolved against the objects known now (Unknowns remain). */
  desired(address: Address): Record<string, unknown>;
  /** `desired` with secrets resolved, ready to send (never stored). */
  sendable(address: Address, desired: Record<string, unknown>): Record<string, unknown>;
  /** Re-reads until observed matches declared (bounded) and remembers the verified object. */
  verify(
    address: Address,
    objectId: string,
    desired: Record<string, unknown>,
  ): Promise<ObservedObject>;
  /** Reads an object; undefined when it does not exist (or is not visible yet). */
  read(type: string, objectId: string): Promise<ObservedObject | undefined>;
  /** The fields Tend last recorded for an address, to tell drift from an intent change. */
  remembered(address: Address): Readonly<Record<string, unknown>> | undefined;
  /** A declared resource whose object still holds the id (deeply), other than the object itself. */
  referencedBy(objectId: string): Address | undefined;
  /** The current time, epoch ms. */
  now(): number;
  readonly verifyTimeoutMs: number;
  readonly report: Reporter;
}

/** What a step left behind: the address's object now, and what it was checked against. */
export interface StepResult {
  readonly object: ObservedObject;
  readonly desired: Record<string, unknown>;
  /** False when checks must wait (a replace whose old object still exists: both may answer). */
  readonly checkNow: boolean;
  /** The old object of a create-before-destroy replace, deleted as the group's step 2 later. */
  readonly replaced?: { readonly old: ObservedObject; readonly group: string };
}

/**
 * The desired fields of a step, every Unknown of the plan resolved from what was just created or
 * changed: a step whose references still cannot be resolved fails rather than send a placeholder.
 */
export function resolvedDesired(ctx: StepContext, address: Address): Record<string, unknown> {
  const desired = ctx.desired(address);
  if (containsUnknown(desired)) {
    throw new TendError('ref.unresolved', `${address}: a referenced resource does not exist`, {
      address,
      phase: 'apply',
    });
  }
  return desired;
}

/**
 * The existing object a step acts on. The plan was computed from it; if it is gone now, the step fails
 * (the next plan decides again) instead of doing something the plan did not show, such as a create.
 */
export function planned(ctx: StepContext, address: Address, objectId: string): ObservedObject {
  const o = ctx.object(address);
  if (!o || o.id !== objectId) {
    throw new TendError(
      'plan.object_gone',
      `${address}: the object ${objectId} the plan was computed from is no longer known; nothing was changed`,
      { address, phase: 'apply', hint: 'run tend plan again' },
    );
  }
  return o;
}

/**
 * Checks that what an in-place change will send is what the plan showed: every change the plan knew
 * must still have the value shown (Unknowns excepted, they are resolved now). Throws otherwise.
 */
export function assertAsPlanned(
  address: Address,
  changes: readonly { readonly path: string; readonly after?: unknown }[],
  desired: Readonly<Record<string, unknown>>,
): void {
  for (const c of changes) {
    if (containsUnknown(c.after)) continue;
    if (hashValue(getPath(desired, c.path) ?? null) !== hashValue(c.after ?? null)) {
      throw new TendError(
        'plan.changed',
        `${address}: ${c.path} would be sent as ${JSON.stringify(getPath(desired, c.path))}, but the plan showed ${JSON.stringify(c.after)}; nothing was changed`,
        { address, phase: 'apply', hint: 'run tend plan again' },
      );
    }
  }
}
