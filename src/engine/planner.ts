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
 * absent, or about to be created or replaced, is Unknown. Secret references are left out.
 */
export function resolveDesired(
  decl: ResourceDecl,
  known: (address: Address) => ObservedObject | undefined,
): Record<string, unknown> {
  // Copying the spec without its secrets is needed only when it has some (most specs have none).
  const spec = Object.values(decl.spec).some(isSecretRef) ? withoutSecrets(decl.spec) : decl.spec;
  return resolveReferences(spec, (target, path) => {
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
    const observed = observation.objects.get(address);
    const desired = resolveDesired(decl, known);
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
    });
    steps.push(step);
    if (step.kind === 'create' || step.kind === 'replace') becoming.add(address);
  }
  const plan = assemblePlan(
    steps,
    options.prune ? observation.removed : [],
    options.approveDestroy,
  );
  return { plan, observation, waiting };
}
