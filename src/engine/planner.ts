import type {
  Address,
  DiffOptions,
  FieldChange,
  LifecycleEvaluation,
  ObservedObject,
  Plan,
  PlanStep,
  Provider,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import {
  assemblePlan,
  canHoldBoth,
  containsUnknown,
  decideStep,
  diffDeclared,
  getPath,
  resolveReferences,
  topoOrder,
  toTendError,
} from '../core/index.js';
import type { Observation } from './observe.js';
import { isSecretRef, withoutSecrets } from './secrets.js';
import type { Workspace } from './workspace.js';

/** A plan plus what it was computed from, so execution can act on exactly what was shown. */
export interface PlannedPass {
  readonly plan: Plan;
  readonly observation: Observation;
  /** Declared resources waiting for a just-created object to become visible. */
  readonly waiting: readonly Address[];
}

/** Options for planning. */
export interface PlanOptions {
  readonly approveDestroy: boolean;
  /** Plan deletes of removed resources (true) or leave them (false). */
  readonly prune: boolean;
  readonly signal?: AbortSignal;
}

/** Diffs a declared resource against an observed object: declared fields only, secrets excluded. */
export function diffResource(
  ws: Workspace,
  decl: ResourceDecl,
  desired: Readonly<Record<string, unknown>>,
  observed: ObservedObject,
): FieldChange[] {
  const { provider, info } = ws.typeOf(decl.type);
  return diffDeclared(desired, observed.fields, diffOptionsOf(provider, info));
}

/** How to compare a type's fields: secrets ignored, values normalised as the provider says. */
function diffOptionsOf(provider: Provider, info: ResourceTypeInfo): DiffOptions {
  const normalize = provider.normalize?.bind(provider);
  return {
    ignore: new Set(info.sensitive),
    ...(normalize
      ? { normalize: (path: string, v: unknown) => normalize(info.name, path, v) }
      : {}),
  };
}

/**
 * Resolves references of a declared spec against what exists: a reference to a resource that is
 * absent, or about to be created or replaced, or to a field `changing` says the plan changes, is
 * Unknown. Secret references are left out.
 */
export function resolveDesired(
  decl: ResourceDecl,
  known: (address: Address) => ObservedObject | undefined,
  changing?: (address: Address, path: string) => boolean,
): Record<string, unknown> {
  // Copying the spec without its secrets is needed only when it has some (most specs have none).
  const spec = Object.values(decl.spec).some(isSecretRef) ? withoutSecrets(decl.spec) : decl.spec;
  return resolveReferences(spec, (target, path) => {
    // A field the plan is about to change is not known until it has changed.
    if (changing?.(target, path)) return undefined;
    const o = known(target);
    if (!o) return undefined;
    const v = getPath(o.fields, path);
    return v === undefined ? undefined : { value: v };
  }) as Record<string, unknown>;
}

/**
 * Asks the provider whether the changes fit in place. Unknown values cannot be evaluated by the
 * platform: they count as a replace only when the field is create-only by annotation.
 */
export async function evaluateChanges(
  ws: Workspace,
  decl: ResourceDecl,
  observed: ObservedObject,
  desired: Readonly<Record<string, unknown>>,
  changes: readonly FieldChange[],
): Promise<LifecycleEvaluation> {
  const { provider, info } = ws.typeOf(decl.type);
  const unknownFields = changes
    .filter((c) => containsUnknown(c.after))
    .map((c) => c.path.split('.')[0]!);
  const forcedUnknown = unknownFields.filter((f) => info.createOnly.includes(f));
  const known: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(desired)) {
    if (!containsUnknown(v) && !info.sensitive.includes(k)) known[k] = v;
  }
  const knownChanges = changes.filter((c) => !containsUnknown(c.after));
  const ev: LifecycleEvaluation =
    knownChanges.length > 0
      ? await provider.evaluate(info.name, observed, known)
      : { action: 'update', fields: [], source: 'default' };
  if (forcedUnknown.length > 0 && ev.action !== 'replace') {
    return {
      action: 'replace',
      fields: forcedUnknown,
      source: 'annotation',
      reason: `${forcedUnknown.join(', ')} cannot change in place`,
    };
  }
  if (ev.action === 'none' && changes.length > 0) {
    return { action: 'update', fields: changes.map((c) => c.path), source: ev.source };
  }
  return ev;
}

/**
 * Computes the plan of a pass: per declared resource in dependency order, resolve references, diff,
 * evaluate lifecycle where something changed, decide the step; then deletes of removed resources.
 */
export async function planPass(
  ws: Workspace,
  observation: Observation,
  options: PlanOptions,
): Promise<PlannedPass> {
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const graph = new Map(ws.intent.resources.map((r) => [r.address, r.dependsOn] as const));
  const ordered = topoOrder(graph);
  const order = ordered.kind === 'ordered' ? ordered.order : [...graph.keys()];

  // Per-resource work is mostly map lookups by address, so each lookup saved counts: steps are kept
  // in order in an array, and the few resources about to be created or replaced in a small set.
  const steps: PlanStep[] = [];
  const becoming = new Set<Address>();
  // Top-level fields an update (or a move or adoption with changes) of the plan changes, per address.
  const changingFields = new Map<Address, Set<string>>();
  const changing = (a: Address, path: string) =>
    changingFields.get(a)?.has(path.split('.')[0]!) ?? false;
  const waiting: Address[] = [];
  const known = (a: Address) => (becoming.has(a) ? undefined : observation.objects.get(a));
  const diffOptions = new Map<string, DiffOptions>();

  for (const address of order) {
    const decl = decls.get(address)!;
    const { provider, info } = ws.typeOf(decl.type);
    if (observation.pendingVisibility.has(address)) {
      waiting.push(address);
      continue;
    }
    const conflict = observation.conflicts.get(address);
    const observed = conflict ? undefined : observation.objects.get(address);
    const desired = resolveDesired(decl, known, changingFields.size > 0 ? changing : undefined);
    let changes: FieldChange[] = [];
    let evaluation: LifecycleEvaluation | undefined;
    if (observed) {
      let diff = diffOptions.get(decl.type);
      if (!diff) diffOptions.set(decl.type, (diff = diffOptionsOf(provider, info)));
      changes = diffDeclared(desired, observed.fields, diff);
      if (changes.length > 0) {
        try {
          evaluation = await evaluateChanges(ws, decl, observed, desired, changes);
        } catch (e) {
          throw toTendError(e).at(address, 'plan');
        }
      }
    }
    const step = decideStep({
      address,
      type: decl.type,
      dependsOn: decl.dependsOn,
      stateful: decl.lifecycle.stateful,
      objectId: observed?.id,
      desired,
      changes,
      ...(evaluation ? { evaluation } : {}),
      canCreateBeforeDestroy: canHoldBoth(info, evaluation?.fields ?? []),
      approveDestroy: options.approveDestroy,
      ...(observed && observation.moves.has(address)
        ? { movedFrom: observation.moves.get(address)! }
        : {}),
      ...(observed && observation.adoptions.has(address)
        ? { adoptedBy: observation.adoptions.get(address)! }
        : {}),
      ...(conflict ? { conflict } : {}),
    });
    steps.push(step);
    if (step.kind === 'create' || step.kind === 'replace') becoming.add(address);
    else if (
      (step.kind === 'update' || step.kind === 'move' || step.kind === 'adopt') &&
      changes.length > 0
    ) {
      changingFields.set(address, new Set(changes.map((c) => c.path.split('.')[0]!)));
    }
  }
  const removed = options.prune ? observation.removed : [];
  const plan = assemblePlan(
    steps,
    removed,
    options.approveDestroy,
    removed.length > 0 ? previousGraph(ws, observation) : undefined,
  );
  return { plan, observation, waiting };
}

/**
 * The old graph of the declared resources: what each referenced when Tend last recorded it, plus the
 * removed resources whose object id its observed object still holds (a reference Tend's memory may
 * not know, e.g. after the store was lost). A delete waits for all of them.
 */
function previousGraph(ws: Workspace, observation: Observation): Map<Address, Address[]> {
  const removedById = new Map(observation.removed.map((r) => [r.objectId, r.address] as const));
  const graph = new Map<Address, Address[]>();
  for (const r of ws.intent.resources) {
    const deps = new Set<Address>(observation.twin.get(r.address)?.dependsOn ?? []);
    const from = observation.moves.get(r.address);
    for (const d of (from && observation.twin.get(from)?.dependsOn) || []) deps.add(d);
    const o = observation.objects.get(r.address);
    if (o) {
      for (const id of stringsIn(o.fields)) {
        const a = removedById.get(id);
        if (a) deps.add(a);
      }
    }
    if (deps.size > 0) graph.set(r.address, [...deps]);
  }
  return graph;
}

/** Every string inside a value (deeply). */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) stringsIn(v, out);
  }
  return out;
}
