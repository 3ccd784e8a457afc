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
  /**
   * Declared fields the platform accepts on create only and never returns: sent once, never
   * compared with the platform (a later change is compared with what was sent).
   */
  readonly writeOnly?: readonly string[];
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
  /**
   * Set when the replaced object was recorded under another address (a move whose changes cannot
   * be made in place): that record is forgotten once the replacement exists.
   */
  readonly movedFrom?: Address;
  /** Set when Tend had no record of the replaced object (see AdoptStep). */
  readonly adopted?: FoundBy;
  /** True when the step waits for --approve-destroy (see `gateOf`); `gate` says why. */
  readonly gated: boolean;
  readonly gate?: string;
  /**
   * Set when the replace cannot happen at all: the type's objects cannot be deleted, so the old one
   * would stay (`noDeleteReplaceReason`). Never carried out, whatever the flags.
   */
  readonly blocked?: string;
  /** Everything downstream of this resource (its dependents, transitively). */
  readonly blastRadius: readonly Address[];
}

/** Delete an object Tend manages that the intent no longer declares. */
export interface DeleteStep extends StepBase {
  readonly kind: 'delete';
  readonly objectId: string;
  readonly gated: boolean;
  /**
   * Why the delete waits for --approve-destroy when it is not its own resource that is stateful: it
   * lives under one being removed that is (an rrset of a stateful zone), and a subtree waits whole.
   * Absent for a stateful resource's own gate.
   */
  readonly gate?: string;
  /** The stateful removed resource whose approval this delete waits for, when `gate` is set. */
  readonly gatedBy?: Address;
  /**
   * Set when the delete cannot happen at all: the API offers no DELETE for the type
   * (`noDeleteReason`). Never carried out, whatever the flags; apply reports the resource blocked.
   */
  readonly blocked?: string;
  readonly blastRadius: readonly Address[];
  /**
   * What must be done before this delete runs, over the old graph (what Tend remembers each resource
   * referenced) joined with the new one: removed resources that referenced this one (deleted first)
   * and declared resources that referenced it (updated away from it or replaced first).
   */
  readonly waitsFor: readonly Address[];
}

/** Nothing to do. */
export interface NoopStep extends StepBase {
  readonly kind: 'noop';
  readonly objectId: string;
}

/**
 * An object that exists but is recorded (in Tend's memory, and in its marker) under another address:
 * the resource was renamed (same natural key) or the intent says `moved: { from }`. Executing it
 * re-records the object under the new address and rewrites its marker, without touching it otherwise;
 * then sends `changes` in place when declared fields changed too. A move never deletes anything.
 */
export interface MoveStep extends StepBase {
  readonly kind: 'move';
  readonly objectId: string;
  /** The address the object was recorded (or marked) under. */
  readonly from: Address;
  readonly changes: readonly FieldChange[];
}

/**
 * How an adopted object was found: by Tend's marker or its natural key (Tend had no record of it), or
 * by Tend's record when its ownership marker was removed or altered by someone (`record`: the marker
 * is put back, whatever the arbitration policy says about other fields).
 */
export type FoundBy = 'marker' | 'natural-key' | 'record';

/**
 * An object found by Tend's marker or by its natural key while Tend's memory has no record of it
 * (the store was lost, or the object was made by hand or imported). Executing it records the object
 * under its address (and puts the marker on it where the type has tags); then sends `changes` in
 * place when declared fields differ. Adoption is never silent: it is always its own step.
 */
export interface AdoptStep extends StepBase {
  readonly kind: 'adopt';
  readonly objectId: string;
  readonly foundBy: FoundBy;
  readonly changes: readonly FieldChange[];
}

/**
 * The object with this resource's natural key carries another workspace's marker: it belongs to
 * someone else and is never matched, adopted or changed. Executing it fails the resource.
 */
export interface ConflictStep extends StepBase {
  readonly kind: 'conflict';
  readonly objectId: string;
  /** The workspace named by the object's marker. */
  readonly owner: string;
}

/** One resource's step in a plan. Plans are frozen data, tagged by `kind`. */
export type PlanStep =
  | CreateStep
  | UpdateStep
  | ReplaceStep
  | DeleteStep
  | NoopStep
  | MoveStep
  | AdoptStep
  | ConflictStep;

/** Every step kind, in the order plans count them. */
export const STEP_KINDS = [
  'create',
  'update',
  'replace',
  'delete',
  'move',
  'adopt',
  'conflict',
  'noop',
] as const satisfies readonly PlanStep['kind'][];

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
  /** The object is recorded (or marked) under this other address: the resource moved. */
  readonly movedFrom?: Address;
  /** Tend has no record of the object; it was found by its marker or natural key. */
  readonly adoptedBy?: FoundBy;
  /** The object with this resource's natural key belongs to another workspace. */
  readonly conflict?: { readonly objectId: string; readonly owner: string };
  /** The type's objects cannot be deleted (`ResourceTypeInfo.noDelete`): a replace is blocked. */
  readonly noDelete?: boolean;
}

/**
 * Decides one declared resource's step. Replacement happens only when the lifecycle evaluation says
 * so: Tend never guesses a replace. An object owned by another workspace is a conflict, never taken
 * over; an object recorded under another address is moved, never deleted and created again; an
 * object Tend has no record of is adopted explicitly. Blast radius is filled in by `assemblePlan`.
 */
export function decideStep(input: StepInput): PlanStep {
  // Literals rather than spreads of a shared base: this runs for every declared resource of a pass.
  const { address, type, dependsOn, objectId } = input;
  if (input.conflict) {
    const { objectId: id, owner } = input.conflict;
    return { address, type, dependsOn, kind: 'conflict', objectId: id, owner };
  }
  if (objectId === undefined)
    return { address, type, dependsOn, kind: 'create', desired: input.desired };
  const ev = input.evaluation;
  const replacing = input.changes.length > 0 && ev?.action === 'replace' && ev.source !== 'default';
  if (!replacing && input.movedFrom !== undefined) {
    const { changes, movedFrom: from } = input;
    return { address, type, dependsOn, kind: 'move', objectId, from, changes };
  }
  if (!replacing && input.adoptedBy !== undefined) {
    const { changes, adoptedBy: foundBy } = input;
    return { address, type, dependsOn, kind: 'adopt', objectId, foundBy, changes };
  }
  if (input.changes.length === 0) return { address, type, dependsOn, kind: 'noop', objectId };
  if (ev?.action === 'replace' && ev.source !== 'default') {
    const strategy = input.canCreateBeforeDestroy
      ? 'create-before-destroy'
      : 'delete-before-create';
    // A replace that cannot happen is blocked, not gated: no approval makes it possible.
    const blocked = input.noDelete === true ? noDeleteReplaceReason(type) : undefined;
    const gate =
      blocked === undefined ? gateOf(input.stateful, strategy, input.approveDestroy) : undefined;
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
      ...(input.movedFrom !== undefined ? { movedFrom: input.movedFrom } : {}),
      ...(input.adoptedBy !== undefined ? { adopted: input.adoptedBy } : {}),
      gated: gate !== undefined,
      ...(gate ? { gate } : {}),
      ...(blocked !== undefined ? { blocked } : {}),
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
  /** The type's objects cannot be deleted (`ResourceTypeInfo.noDelete`): the delete is blocked. */
  readonly noDelete?: boolean;
}

/**
 * Why the delete of a removed resource cannot happen: its type's API offers no DELETE. `type` is
 * the resource type as addresses name it (`stripe.prices`).
 */
export function noDeleteReason(type: string): string {
  return `the API offers no DELETE for ${type}: remove it in the platform, or keep it in the intent`;
}

/** Why a replace cannot happen: it would delete the old object, which the API cannot. */
export function noDeleteReplaceReason(type: string): string {
  return `replacing it would delete the old object, but the API offers no DELETE for ${type}: declare the old value again, or remove the object in the platform first (Tend then creates it anew)`;
}

/**
 * True for a step that deletes a platform object: a replace (the old object goes) or a delete. This
 * is what "destructive" means everywhere in Tend: what the admin role and an explicit approval guard.
 */
export function isDestructive(step: PlanStep): step is ReplaceStep | DeleteStep {
  return step.kind === 'replace' || step.kind === 'delete';
}

/**
 * The addresses of a plan's destructive steps (`isDestructive`), sorted: what a saved plan, the HTTP
 * API, a proposal and `tend plan --json` call `destructive`. Gated and blocked ones included.
 */
export function destructive(plan: Plan): Address[] {
  const out: Address[] = [];
  for (const s of plan.steps) if (isDestructive(s)) out.push(s.address);
  return out.sort();
}

/** Why a delete or replace step can never be carried out, if it cannot (see `noDeleteReason`). */
export function blockedReason(step: PlanStep): string | undefined {
  return step.kind === 'delete' || step.kind === 'replace' ? step.blocked : undefined;
}

/**
 * Orders steps (dependencies first; deletes last, dependents before what they depend on), fills in
 * blast radii, gates and what each delete waits for, and counts. The graph covers declared and removed
 * resources; `previous` is the old graph (what each declared resource referenced when Tend last
 * recorded it), so that a delete also waits for the declared resources that used to reference it.
 */
export function assemblePlan(
  declared: readonly PlanStep[],
  removed: readonly RemovedInput[],
  approveDestroy: boolean,
  previous: ReadonlyMap<Address, readonly Address[]> = new Map(),
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
  if (removed.length > 0) {
    // Who referenced each removed resource, old graph and new joined: those go first.
    const users = new Map<Address, Set<Address>>();
    const use = (user: Address, deps: readonly Address[] | undefined) => {
      for (const d of deps ?? []) {
        let set = users.get(d);
        if (!set) users.set(d, (set = new Set()));
        if (d !== user) set.add(user);
      }
    };
    for (const [a, deps] of graph) use(a, deps);
    for (const s of declared) use(s.address, previous.get(s.address));
    const removedByAddress = new Map(removed.map((r) => [r.address, r] as const));
    // A removed resource under a removed stateful one (an rrset of a zone) waits for that one's
    // approval too: nothing of a stateful subtree is deleted before the whole may be. Dependencies
    // come first in `rest`, so a resource's removed dependencies are decided before it.
    const gatedBy = new Map<Address, Address>();
    if (!approveDestroy) {
      for (const a of rest) {
        const r = removedByAddress.get(a);
        if (!r) continue;
        if (r.stateful && r.noDelete !== true) {
          gatedBy.set(a, a);
          continue;
        }
        const under = r.dependsOn.find((d) => removedByAddress.has(d) && gatedBy.has(d));
        if (under !== undefined) gatedBy.set(a, gatedBy.get(under)!);
      }
    }
    for (const a of [...rest].reverse()) {
      const r = removedByAddress.get(a);
      if (!r) continue;
      // A delete that cannot happen is blocked, not gated: no approval makes it possible.
      const blocked = r.noDelete === true ? noDeleteReason(r.type) : undefined;
      const by = blocked === undefined ? gatedBy.get(a) : undefined;
      steps.push({
        ...(blocked !== undefined ? { blocked } : {}),
        kind: 'delete',
        address: r.address,
        type: r.type,
        dependsOn: r.dependsOn,
        objectId: r.objectId,
        gated: by !== undefined,
        ...(by !== undefined && by !== a
          ? {
              gate: `it lives under ${by}, a stateful resource also removed: nothing of it is deleted until that deletion is approved`,
              gatedBy: by,
            }
          : {}),
        blastRadius: dependentsOf([a]),
        waitsFor: [...(users.get(a) ?? [])].sort(),
      });
    }
  }

  const counts = Object.fromEntries(STEP_KINDS.map((k) => [k, 0])) as Record<
    PlanStep['kind'],
    number
  >;
  const gated: Address[] = [];
  const blast = new Set<Address>();
  for (const s of steps) {
    counts[s.kind]++;
    if (!isDestructive(s)) continue;
    if (s.gated) gated.push(s.address);
    s.blastRadius.forEach((b) => blast.add(b));
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
 * replacing it under the same key must delete the old object first. A key field whose new value is
 * not known before apply (`unknownFields`: a reference to a parent being replaced) may end up the
 * same as the old one — a grant on a database replaced under the same name — so it does not count
 * as a change: deleting "the old object" would then delete the new one.
 */
export function canHoldBoth(
  info: Pick<ResourceTypeInfo, 'identity' | 'naturalKey' | 'naturalKeyFields'>,
  forcedFields: readonly string[],
  unknownFields: readonly string[] = [],
): boolean {
  if (info.identity !== 'natural-key') return true;
  const keys = info.naturalKeyFields ?? (info.naturalKey ? [info.naturalKey] : []);
  return keys.some((k) => forcedFields.includes(k) && !unknownFields.includes(k));
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
