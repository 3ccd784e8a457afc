import type {
  Address,
  DiffOptions,
  FieldChange,
  LifecycleEvaluation,
  ObservedObject,
  Plan,
  PlanStep,
  Provider,
  RemovedInput,
  ResourceDecl,
  ResourceTypeInfo,
} from '../core/index.js';
import {
  assemblePlan,
  canHoldBoth,
  containsUnknown,
  decideStep,
  dependentsIndex,
  diffDeclared,
  getPath,
  resolveReferences,
  nearMatches,
  parseAddress,
  TendError,
  toTendError,
  setKey,
} from '../core/index.js';
import type { FieldOverride } from './arbitrate.js';
import type { Observation } from './observe.js';
import { isSecretRef, withoutSecrets } from './secrets.js';
import type { Workspace } from './workspace.js';
import { declaredIndex, intentGraph } from './workspace.js';
import { writeOnlyChanged, writeOnlyRefusal, writeOnlyReplacements } from './write-only.js';

/** A plan plus what it was computed from, so execution can act on exactly what was shown. */
export interface PlannedPass {
  readonly plan: Plan;
  readonly observation: Observation;
  /**
   * Declared resources left out of the plan this pass: a just-created object not visible yet, or an
   * operation the journal could not resolve (see `held`).
   */
  readonly waiting: readonly Address[];
  /** Why each held address waits (an unresolved journal operation), by address. */
  readonly held?: ReadonlyMap<Address, string>;
  /** The field values arbitration wants instead of the declared ones (see PlanOptions.overrides). */
  readonly overrides?: ReadonlyMap<Address, readonly FieldOverride[]>;
}

/** Options for planning. */
export interface PlanOptions {
  readonly approveDestroy: boolean;
  /** Plan deletes of removed resources (true) or leave them (false). */
  readonly prune: boolean;
  /**
   * `--target`: when not empty, plan only these resources and what they reference, transitively;
   * a removed resource is deleted only when it is itself a target. Unknown addresses are an error.
   */
  readonly targets?: readonly Address[];
  /**
   * Addresses with an operation still pending in the journal after recovery (its outcome unknown):
   * nothing is planned for them this pass — acting now could make a second object when the first
   * one's create did land — and the reason is kept for their outcome.
   */
  readonly held?: ReadonlyMap<Address, string>;
  /**
   * Field values the arbitration policy wants instead of the declared ones (a field yielded to or
   * held for another actor keeps its observed value; an outranking claim's value is put back).
   */
  readonly overrides?: ReadonlyMap<Address, readonly FieldOverride[]>;
  readonly signal?: AbortSignal;
}

/**
 * The addresses a plan limited to `targets` covers: each target and everything it references,
 * transitively, over the declared graph (a removed resource stands for itself only). Undefined when
 * there are no targets (the whole intent). Throws `plan.unknown_target`, naming near matches, for a
 * target that is neither declared nor remembered.
 */
export function targetClosure(
  declared: ReadonlyMap<Address, readonly Address[]>,
  remembered: readonly Address[],
  targets: readonly Address[] | undefined,
): Set<Address> | undefined {
  if (!targets || targets.length === 0) return undefined;
  const unknown = targets.filter((t) => !declared.has(t) && !remembered.includes(t));
  if (unknown.length > 0) {
    // Only for the error: every address, sorted, to suggest near matches from.
    const known = [...new Set<Address>([...declared.keys(), ...remembered])].sort();
    const lines = unknown.map((t) => {
      if (!parseAddress(t)) {
        // A bare name (`main`) is the usual slip: suggest the addresses with that name.
        const named = known.filter((a) => a.slice(a.indexOf('/') + 1) === t);
        const also = named.length > 0 ? `; did you mean ${named.join(' or ')}?` : '';
        return `--target ${t}: not an address (provider.type/name)${also}`;
      }
      const near = nearMatches(t, known);
      return near.length > 0
        ? `--target ${t}: no such resource; did you mean ${near.join(' or ')}?`
        : `--target ${t}: no such resource in the intent or among the objects Tend manages`;
    });
    throw new TendError('plan.unknown_target', lines.join('\n'), {
      phase: 'plan',
      hint: 'a target is an address `provider.type/name` as `tend plan` lists it',
    });
  }
  const keep = new Set<Address>();
  const visit = (a: Address): void => {
    if (keep.has(a)) return;
    keep.add(a);
    for (const d of declared.get(a) ?? []) visit(d);
  };
  targets.forEach(visit);
  return keep;
}

/** Diffs a declared resource against an observed object: declared fields only, secrets excluded. */
export function diffResource(
  ws: Workspace,
  decl: ResourceDecl,
  desired: Readonly<Record<string, unknown>>,
  observed: ObservedObject,
): FieldChange[] {
  const { provider, info } = ws.typeOf(decl.type);
  return diffDeclared(desired, observed.fields, diffOptionsFor(provider, info));
}

/** How to compare a type's fields: secrets ignored, values normalised as the provider says. */
export function diffOptionsFor(provider: Provider, info: ResourceTypeInfo): DiffOptions {
  const normalize = provider.normalize?.bind(provider);
  return {
    ignore: new Set(info.sensitive),
    ...(normalize
      ? {
          normalize: (path: string, v: unknown, object?: Readonly<Record<string, unknown>>) =>
            normalize(info.name, path, v, object),
        }
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
    if (!containsUnknown(v) && !info.sensitive.includes(k)) setKey(known, k, v);
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
  const { graph, order } = intentGraph(ws.intent);
  const keep = targetClosure(graph, [...observation.twin.keys()], options.targets);
  const diffOptions = new Map<string, DiffOptions>();
  const pass = (keep: Set<Address> | undefined) =>
    planDeclared(ws, observation, options, order, keep, diffOptions);
  let declared = await pass(keep);
  if (keep) {
    // A replaced target takes its dependents with it (they must move to the new object): they join
    // the plan, with what they reference, until nothing more joins.
    const dependentsOf = dependentsIndex(graph);
    for (;;) {
      const replaced = declared.steps.filter((s) => s.kind === 'replace').map((s) => s.address);
      const more = dependentsOf(replaced).filter((a) => !keep.has(a));
      if (more.length === 0) break;
      for (const a of targetClosure(graph, [], more)!) keep.add(a);
      declared = await pass(keep);
    }
  }
  const removed = (options.prune ? observation.removed : []).filter(
    (r) => !options.held?.has(r.address),
  );
  const deleting = withNoDelete(ws, keep ? removed.filter((r) => keep.has(r.address)) : removed);
  let plan = assemblePlan(
    declared.steps,
    deleting,
    options.approveDestroy,
    deleting.length > 0 ? previousGraph(ws, observation) : undefined,
  );
  if (keep) plan = withFullBlastRadius(plan, graph, observation.removed);
  return {
    plan,
    observation,
    waiting: declared.waiting,
    ...(options.held && options.held.size > 0 ? { held: options.held } : {}),
    ...(options.overrides && options.overrides.size > 0 ? { overrides: options.overrides } : {}),
  };
}

/** Removed resources, those whose type's objects cannot be deleted marked so (their delete is blocked). */
function withNoDelete(ws: Workspace, removed: readonly RemovedInput[]): RemovedInput[] {
  return removed.map((r) =>
    ws.typeOf(r.type).info.noDelete !== undefined ? { ...r, noDelete: true } : r,
  );
}

/**
 * A plan limited by targets shows the blast radius over the whole intent and every removed resource,
 * not only over the targeted part: what lies outside the targets is still hit.
 */
function withFullBlastRadius(
  plan: Plan,
  graph: ReadonlyMap<Address, readonly Address[]>,
  removed: readonly RemovedInput[],
): Plan {
  const full = new Map(graph);
  for (const r of removed) full.set(r.address, r.dependsOn);
  const dependentsOf = dependentsIndex(full);
  const blast = new Set<Address>();
  const steps = plan.steps.map((s) => {
    if (s.kind !== 'replace' && s.kind !== 'delete') return s;
    const blastRadius = dependentsOf([s.address]);
    blastRadius.forEach((b) => blast.add(b));
    return { ...s, blastRadius };
  });
  return { ...plan, steps, blastRadius: [...blast].sort() };
}

/** The steps of the declared resources in `order` (those in `keep`, when given). */
async function planDeclared(
  ws: Workspace,
  observation: Observation,
  options: PlanOptions,
  order: readonly Address[],
  keep: ReadonlySet<Address> | undefined,
  diffOptions: Map<string, DiffOptions>,
): Promise<{ steps: PlanStep[]; waiting: Address[] }> {
  const decls = declaredIndex(ws.intent);
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

  for (const address of order) {
    if (keep && !keep.has(address)) continue;
    const decl = decls.get(address)!;
    const { provider, info } = ws.typeOf(decl.type);
    if (observation.pendingVisibility.has(address) || options.held?.has(address)) {
      waiting.push(address);
      continue;
    }
    const conflict = observation.conflicts.get(address);
    const observed = conflict ? undefined : observation.objects.get(address);
    const resolved = resolveDesired(decl, known, changingFields.size > 0 ? changing : undefined);
    const overrides = observed ? options.overrides?.get(address) : undefined;
    const desired = overrides ? withOverrides(resolved, overrides) : resolved;
    let changes: FieldChange[] = [];
    let evaluation: LifecycleEvaluation | undefined;
    if (observed) {
      let diff = diffOptions.get(decl.type);
      if (!diff) diffOptions.set(decl.type, (diff = diffOptionsFor(provider, info)));
      changes = diffDeclared(desired, observed.fields, diff);
      // Write-only fields cannot be compared with the platform: compared with what Tend sent. A
      // change rides along with a replace; a create-only one forces one; any other is refused.
      const writeOnly = writeOnlyChanged(info, desired, observation.twin.get(address)?.sent);
      const forcing = writeOnly.filter((f) => info.createOnly.includes(f));
      if (writeOnly.length > 0)
        changes = [...changes, ...writeOnlyReplacements(writeOnly, desired)];
      if (changes.length > 0) {
        try {
          evaluation = await evaluateChanges(ws, decl, observed, desired, changes);
        } catch (e) {
          throw toTendError(e).at(address, 'plan');
        }
        if (forcing.length > 0 && evaluation.action !== 'replace') {
          evaluation = {
            action: 'replace',
            fields: forcing,
            source: 'annotation',
            reason: `${forcing.join(', ')} cannot change in place: write-only and create-only`,
          };
        }
        const refused = writeOnly.filter((f) => !forcing.includes(f));
        if (refused.length > 0 && evaluation.action !== 'replace') {
          throw writeOnlyRefusal(address, decl.type, refused);
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
      canCreateBeforeDestroy: canHoldBoth(
        info,
        evaluation?.fields ?? [],
        changes.filter((c) => containsUnknown(c.after)).map((c) => c.path.split('.')[0]!),
      ),
      approveDestroy: options.approveDestroy,
      ...(observed && observation.moves.has(address)
        ? { movedFrom: observation.moves.get(address)! }
        : {}),
      ...(observed && observation.adoptions.has(address)
        ? { adoptedBy: observation.adoptions.get(address)! }
        : {}),
      ...(conflict ? { conflict } : {}),
      ...(info.noDelete !== undefined ? { noDelete: true } : {}),
    });
    const writeOnly =
      step.kind === 'create' ? (info.writeOnly ?? []).filter((f) => desired[f] !== undefined) : [];
    steps.push(step.kind === 'create' && writeOnly.length > 0 ? { ...step, writeOnly } : step);
    if (step.kind === 'create' || step.kind === 'replace') becoming.add(address);
    else if (
      (step.kind === 'update' || step.kind === 'move' || step.kind === 'adopt') &&
      changes.length > 0
    ) {
      changingFields.set(address, new Set(changes.map((c) => c.path.split('.')[0]!)));
    }
  }
  return { steps, waiting };
}

/** A desired spec with some field paths set to other values (a copy; the spec is not changed). */
export function withOverrides(
  desired: Readonly<Record<string, unknown>>,
  overrides: readonly FieldOverride[],
): Record<string, unknown> {
  const out = structuredClone(desired) as Record<string, unknown>;
  for (const { path, value } of overrides) {
    const parts = path.split('.');
    let at: Record<string, unknown> = out;
    for (const part of parts.slice(0, -1)) {
      const next = at[part];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) {
        const fresh: Record<string, unknown> = {};
        setKey(at, part, fresh);
        at = fresh;
      } else {
        at = next as Record<string, unknown>;
      }
    }
    setKey(at, parts[parts.length - 1]!, value);
  }
  return out;
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
