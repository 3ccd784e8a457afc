import type { Address } from './address.js';
import type { FieldChange } from './diff.js';
import type { DependencyGraph } from './graph.js';
import { dependentsIndex, topoOrder } from './graph.js';
import type { LifecycleEvaluation, ResourceTypeInfo } from './provider.js';

interface StepBase {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly dependsOn: readonly Address[];
}

/** Create an object that does not exist. */
export interface CreateStep extends StepBase {
  readonly kind: 'create';
  /** The desired fields as they will be sent (Unknowns where a reference is not known yet). */
  readonly desired: Readonly<Record<string, unknown>>;
}

/** Change an object in place. */
export interface UpdateStep extends StepBase {
  readonly kind: 'update';
  readonly objectId: string;
  readonly changes: readonly FieldChange[];
}

/**
 * Replace an object: the platform (lifecycle endpoint) or an annotation says the change cannot be
 * made in place. Create-before-destroy unless the type cannot hold both at once.
 */
export interface ReplaceStep extends StepBase {
  readonly kind: 'replace';
  readonly objectId: string;
  readonly changes: readonly FieldChange[];
  /** The fields that force the replacement. */
  readonly forcedBy: readonly string[];
  readonly decidedBy: 'platform' | 'annotation';
  readonly reason?: string;
  readonly strategy: 'create-before-destroy' | 'delete-before-create';
  /** True when the step waits for --approve-destroy (see `gateOf`); `gate` says why. */
  readonly gated: boolean;
  readonly gate?: string;
  /** Everything downstream of this resource (its dependents, transitively). */
  readonly blastRadius: readonly Address[];
}

/** Delete an object Tend manages that the intent no longer declares. */
export interface DeleteStep extends StepBase {
  readonly kind: 'delete';
  readonly objectId: string;
  readonly gated: boolean;
  readonly blastRadius: readonly Address[];
}

/** Nothing to do. */
export interface NoopStep extends StepBase {
  readonly kind: 'noop';
  readonly objectId: string;
}

/** One resource's step in a plan. Plans are frozen data, tagged by `kind`. */
export type PlanStep = CreateStep | UpdateStep | ReplaceStep | DeleteStep | NoopStep;

/** A plan: steps in execution order, with counts and the union of blast radii. */
export interface Plan {
  readonly steps: readonly PlanStep[];
  readonly counts: Readonly<Record<PlanStep['kind'], number>>;
  /** Resources whose destructive step waits for approval. */
  readonly gated: readonly Address[];
  /** Everything downstream of any replace or delete. */
  readonly blastRadius: readonly Address[];
}

/** What is known about one declared resource when deciding its step. */
export interface StepInput {
  readonly address: Address;
  readonly type: string;
  readonly dependsOn: readonly Address[];
  readonly stateful: boolean;
  /** The id of the observed object, or undefined when none exists. */
  readonly objectId: string | undefined;
  /** Desired fields, references resolved (Unknowns where not known yet). */
  readonly desired: Readonly<Record<string, unknown>>;
  readonly changes: readonly FieldChange[];
  /** The lifecycle evaluation of the changes; required when there are changes to an existing object. */
  readonly evaluation?: LifecycleEvaluation;
  /** False when the platform cannot hold old and new objects at once (the identity is the name). */
  readonly canCreateBeforeDestroy: boolean;
  readonly approveDestroy: boolean;
}

/**
 * Decides one declared resource's step. Replacement happens only when the lifecycle evaluation says
 * so: Tend never guesses a replace. Blast radius is filled in by `assemblePlan`.
 */
export function decideStep(input: StepInput): PlanStep {
  // Literals rather than spreads of a shared base: this runs for every declared resource of a pass.
  const { address, type, dependsOn, objectId } = input;
  if (objectId === undefined)
    return { address, type, dependsOn, kind: 'create', desired: input.desired };
  if (input.changes.length === 0) return { address, type, dependsOn, kind: 'noop', objectId };
  const ev = input.evaluation;
  if (ev?.action === 'replace' && ev.source !== 'default') {
    const strategy = input.canCreateBeforeDestroy
      ? 'create-before-destroy'
      : 'delete-before-create';
    const gate = gateOf(input.stateful, strategy, input.approveDestroy);
    return {
      address,
      type,
      dependsOn,
      kind: 'replace',
      objectId,
      changes: input.changes,
      forcedBy: ev.fields,
      decidedBy: ev.source,
      ...(ev.reason ? { reason: ev.reason } : {}),
      strategy,
      gated: gate !== undefined,
      ...(gate ? { gate } : {}),
      blastRadius: [],
    };
  }
  return { address, type, dependsOn, kind: 'update', objectId, changes: input.changes };
}

/** A managed object whose resource was removed from the intent. */
export interface RemovedInput {
  readonly address: Address;
  readonly type: string;
  readonly objectId: string;
  readonly stateful: boolean;
  readonly dependsOn: readonly Address[];
}

/**
 * Orders steps (dependencies first; deletes last, dependents before what they depend on), fills in
 * blast radii and gates, and counts. The graph covers declared and removed resources.
 */
export function assemblePlan(
  declared: readonly PlanStep[],
  removed: readonly RemovedInput[],
  approveDestroy: boolean,
): Plan {
  const graph = new Map<Address, readonly Address[]>();
  for (const s of declared) graph.set(s.address, s.dependsOn);
  for (const r of removed) graph.set(r.address, r.dependsOn);

  const order = orderOf(graph);
  const dependentsOf = dependentsIndex(graph);
  // The planner hands its steps over in dependency order already; then the order begins with them,
  // as given, and only removed resources follow, so no lookup by address is needed for either.
  const asGiven =
    declared.length <= order.length && declared.every((s, i) => order[i] === s.address);
  let inOrder: readonly PlanStep[] = declared;
  let rest: readonly Address[] = order.slice(declared.length);
  if (!asGiven) {
    const byAddress = new Map(declared.map((s) => [s.address, s] as const));
    inOrder = order.flatMap((a) => byAddress.get(a) ?? []);
    rest = order;
  }
  const steps: PlanStep[] = [];
  for (const s of inOrder) {
    steps.push(s.kind === 'replace' ? { ...s, blastRadius: dependentsOf([s.address]) } : s);
  }
  const removedByAddress = new Map(removed.map((r) => [r.address, r] as const));
  for (const a of [...rest].reverse()) {
    const r = removedByAddress.get(a);
    if (!r) continue;
    steps.push({
      kind: 'delete',
      address: r.address,
      type: r.type,
      dependsOn: r.dependsOn,
      objectId: r.objectId,
      gated: r.stateful && !approveDestroy,
      blastRadius: dependentsOf([a]),
    });
  }

  const counts = { create: 0, update: 0, replace: 0, delete: 0, noop: 0 };
  const gated: Address[] = [];
  const blast = new Set<Address>();
  for (const s of steps) {
    counts[s.kind]++;
    if ((s.kind === 'replace' || s.kind === 'delete') && s.gated) gated.push(s.address);
    if (s.kind === 'replace' || s.kind === 'delete') s.blastRadius.forEach((b) => blast.add(b));
  }
  return { steps, counts, gated, blastRadius: [...blast].sort() };
}

function orderOf(graph: DependencyGraph): Address[] {
  const r = topoOrder(graph);
  // Cycles are rejected when intent is loaded; fall back to map order rather than fail here.
  return r.kind === 'ordered' ? [...r.order] : [...graph.keys()];
}

/** True when a plan has anything to do. */
export function hasChanges(plan: Plan): boolean {
  return plan.steps.some((s) => s.kind !== 'noop');
}

/**
 * Whether the platform can hold the old and the new object at once (create-before-destroy). A type
 * whose identity is its natural key can only when the replacement changes that key (a zone rename);
 * replacing it under the same key must delete the old object first.
 */
export function canHoldBoth(
  info: Pick<ResourceTypeInfo, 'identity' | 'naturalKey' | 'naturalKeyFields'>,
  forcedFields: readonly string[],
): boolean {
  if (info.identity !== 'natural-key') return true;
  const keys = info.naturalKeyFields ?? (info.naturalKey ? [info.naturalKey] : []);
  return keys.some((k) => forcedFields.includes(k));
}

/**
 * Why a replace must wait for --approve-destroy, or undefined when it need not: a stateful resource
 * loses its data, and a delete-before-create leaves nothing in its place for a while (an outage).
 */
export function gateOf(
  stateful: boolean,
  strategy: 'create-before-destroy' | 'delete-before-create',
  approveDestroy: boolean,
): string | undefined {
  if (approveDestroy) return undefined;
  if (stateful) return 'stateful resource';
  if (strategy === 'delete-before-create') {
    return 'the platform cannot hold old and new at once: the old object is deleted first';
  }
  return undefined;
}
