import type {
  ActorContext,
  Address,
  DeleteStep,
  ObservedObject,
  PlanStep,
  ReplaceStep,
  ResourceDecl,
} from '../core/index.js';
import { TendError, mentionsId } from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { OperationTarget } from './operator.js';
import { Recorder } from './recorder.js';
import type { Leftover } from './observe.js';
import { OutcomeBook } from './outcome-book.js';
import type { ResourceOutcome } from './outcome-book.js';
import type { PlannedPass } from './planner.js';
import { resolveDesired, withOverrides } from './planner.js';
import type { NodeId, Scheduler } from './scheduler.js';
import { createScheduler, nodeId } from './scheduler.js';
import { sendableSpec } from './secrets.js';
import { executeAdopt } from './steps/adopt.js';
import { executeCreate } from './steps/create.js';
import { deleteGate, executeDelete } from './steps/delete.js';
import { executeMove } from './steps/move.js';
import { deleteReplaced, executeReplace, replaceGate } from './steps/replace.js';
import type { StepContext, StepResult } from './steps/step-context.js';
import { resolvedDesired } from './steps/step-context.js';
import { executeUpdate } from './steps/update.js';
import { runChecks, waitConverged } from './verify.js';
import { sentHashes } from './write-only.js';
import type { Workspace } from './workspace.js';

export type { ResourceOutcome } from './outcome-book.js';

/** Options for executing a plan. */
export interface ExecuteOptions {
  readonly actor: ActorContext;
  readonly clock: Clock;
  readonly report: Reporter;
  /** Bound on re-reading after a change until observed matches declared. */
  readonly verifyTimeoutMs: number;
  readonly runChecks: boolean;
  /** When aborted, no new operation starts; in-flight ones finish and settle. */
  readonly signal?: AbortSignal;
  /** Test hook called around every store write (the torture suite kills the process there). */
  readonly crash?: CrashHook;
  /** See OperatorOptions.consistencyWindowMs. */
  readonly consistencyWindowMs?: number;
  /** The pass's recorder, which makes every store write (else one is made from these options). */
  readonly recorder?: Recorder;
  /**
   * How many resources' steps are carried out at once (default MAX_IN_FLIGHT). The providers bound
   * their own concurrency and rate; this bounds the work started ahead of them, so that a plan of
   * 10,000 creates does not journal, resolve and build the requests of all 10,000 while the first 64
   * are sent (every one of them held in memory until its turn).
   */
  readonly maxInFlight?: number;
}

/**
 * Resources carried out at once by default: well above what a provider sends at once (its
 * `concurrency`, 64 by default), so that the providers stay busy while verifications wait.
 */
export const MAX_IN_FLIGHT = 512;

/**
 * Executes a plan as a graph, carrying out exactly its steps: nothing is diffed or evaluated again,
 * and no step changes kind (the units in `steps/` do one kind each, and decide their own gates). Each
 * resource starts when what it references is done, independent branches run in parallel (the
 * provider bounds concurrency and rate), and a failure skips only what depends on it. A delete of a
 * removed resource waits for everything that referenced it, old graph and new
 * (`DeleteStep.waitsFor`); the old object of a replace is deleted only after its replacement is
 * verified and every dependent has been repointed. Every step that fails, is blocked, not verified or
 * fails a check has an outcome in the result.
 */
export async function executePlan(
  ws: Workspace,
  pass: PlannedPass,
  options: ExecuteOptions,
): Promise<Map<Address, ResourceOutcome>> {
  const { clock, report } = options;
  const operator =
    options.recorder ??
    new Recorder(
      ws,
      options.actor,
      clock,
      report,
      options.crash,
      options.consistencyWindowMs !== undefined
        ? { consistencyWindowMs: options.consistencyWindowMs }
        : {},
    );
  const steps = new Map(pass.plan.steps.map((s) => [s.address, s] as const));
  const current = new Map<Address, ObservedObject>(pass.observation.objects);
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const x: Execution = {
    ws,
    pass,
    options,
    operator,
    ctx: stepContext(ws, pass, options, operator, { decls, steps, current }),
    book: new OutcomeBook(report),
    decls,
    steps,
    current,
    dependents: dependentsOf(ws.intent.resources),
    leftoversOf: leftoversByAddress(pass.observation.leftovers),
    checkedAgainst: new Map(),
    replacedOld: new Map(),
  };
  for (const a of pass.waiting) {
    x.book.pending(a, pass.held?.get(a) ?? 'created moments ago; waiting for it to become visible');
  }
  const scheduler = createScheduler({
    maxInFlight: options.maxInFlight ?? MAX_IN_FLIGHT,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  schedule(x, scheduler);
  for (const failure of await scheduler.settle()) {
    x.book.failed(failure, (e) => operator.reported.has(e));
  }
  return x.book.outcomes;
}

/** What the nodes of one execution share. */
interface Execution {
  readonly ws: Workspace;
  readonly pass: PlannedPass;
  readonly options: ExecuteOptions;
  readonly operator: Recorder;
  readonly ctx: StepContext;
  readonly book: OutcomeBook;
  readonly decls: ReadonlyMap<Address, ResourceDecl>;
  readonly steps: ReadonlyMap<Address, PlanStep>;
  /** Each address's object as known now: observed, or as left by a step of this execution. */
  readonly current: Map<Address, ObservedObject>;
  /** The declared resources that reference each address. */
  readonly dependents: ReadonlyMap<Address, Address[]>;
  /** Observe's leftovers (old objects of unfinished replaces) by address. */
  readonly leftoversOf: ReadonlyMap<Address, Leftover[]>;
  /** What each address's checks run against (again after step 2 of a replace). */
  readonly checkedAgainst: Map<Address, Record<string, unknown>>;
  /** The old object of each create-before-destroy replace whose step 1 is done. */
  readonly replacedOld: Map<Address, { old: ObservedObject; group: string }>;
}

/**
 * Adds every node of the plan: the step of each declared resource, the delete of each removed one,
 * step 2 of each create-before-destroy replace that may run, and the finishing of each replace an
 * earlier pass left unfinished. Replaces interrupted between their steps (see `observe`): the
 * replacement exists and is the address's object; its old object is deleted as the group's step 2
 * once the replacement is verified and every dependent is repointed. The replace was approved (and
 * confirmed) when it started, so this needs no --approve-destroy or --yes again.
 */
function schedule(x: Execution, scheduler: Scheduler): void {
  for (const leftover of x.pass.observation.leftovers) {
    const step = x.steps.get(leftover.address);
    if (step && step.kind !== 'delete') {
      scheduler.add(
        nodeId('finish-replace', step.address),
        () => afterDependents(x, step.address),
        () => finishReplace(x, step, leftover),
        true,
      );
    }
  }
  for (const step of x.pass.plan.steps) {
    // A batched type's changes go out together per parent (ResourceTypeInfo.batched): its steps take
    // no slot, so that every one ready at the same moment joins the same batch (1,000 rrsets: one PATCH).
    const bounded = !batched(x.ws, step.type);
    if (step.kind === 'delete') {
      // Removed resources that referenced it are deleted first; declared ones that did are updated
      // away from it (or replaced) first.
      scheduler.add(
        nodeId('delete', step.address),
        () =>
          step.waitsFor.map((a) =>
            nodeId(x.steps.get(a)?.kind === 'delete' ? 'delete' : 'step', a),
          ),
        () => runDelete(x, step),
        bounded,
      );
      continue;
    }
    scheduler.add(
      nodeId('step', step.address),
      () => stepNodes(x, step.dependsOn),
      () => runStep(x, step),
      bounded,
    );
    if (
      step.kind === 'replace' &&
      step.strategy === 'create-before-destroy' &&
      replaceGate(step).kind === 'open'
    ) {
      scheduler.add(
        nodeId('delete-replaced', step.address),
        () => afterDependents(x, step.address),
        () => deleteReplacedOld(x, step),
        bounded,
      );
    }
  }
}

/** The step nodes of those addresses that have a step in the plan. */
function stepNodes(x: Execution, addresses: readonly Address[]): NodeId[] {
  return addresses.filter((d) => x.steps.has(d)).map((d) => nodeId('step', d));
}

/** An address's own step, and the steps of the declared resources that reference it. */
function afterDependents(x: Execution, address: Address): NodeId[] {
  return [nodeId('step', address), ...stepNodes(x, x.dependents.get(address) ?? [])];
}

/** True when the type's changes go out together per parent; unknown types are not. */
function batched(ws: Workspace, type: string): boolean {
  try {
    return ws.typeOf(type).info.batched === true;
  } catch {
    return false;
  }
}

/** For each address, the declared resources that reference it. */
function dependentsOf(resources: readonly ResourceDecl[]): Map<Address, Address[]> {
  const dependents = new Map<Address, Address[]>();
  for (const r of resources) {
    for (const d of r.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), r.address]);
  }
  return dependents;
}

/** Observe's leftovers grouped by address. */
function leftoversByAddress(leftovers: readonly Leftover[]): Map<Address, Leftover[]> {
  const byAddress = new Map<Address, Leftover[]>();
  for (const l of leftovers) byAddress.set(l.address, [...(byAddress.get(l.address) ?? []), l]);
  return byAddress;
}

function declOf(decls: ReadonlyMap<Address, ResourceDecl>, address: Address): ResourceDecl {
  const decl = decls.get(address);
  if (!decl) throw new TendError('plan.undeclared', `${address} is not declared`, { address });
  return decl;
}

/** The StepContext of one execution: the operator, and lookups over the objects known now. */
function stepContext(
  ws: Workspace,
  pass: PlannedPass,
  options: ExecuteOptions,
  operator: Recorder,
  known: {
    readonly decls: ReadonlyMap<Address, ResourceDecl>;
    readonly steps: ReadonlyMap<Address, PlanStep>;
    readonly current: Map<Address, ObservedObject>;
  },
): StepContext {
  const { clock, report } = options;
  const { decls, steps, current } = known;
  const twin = pass.observation.twin;
  const target = (step: PlanStep, extra: Partial<OperationTarget> = {}): OperationTarget => {
    const decl = decls.get(step.address);
    // A create (or a replace's new object) sends the declared write-only values; anything else keeps
    // the record of what was sent before.
    const writeOnly = decl ? (ws.typeOf(step.type).info.writeOnly ?? []) : [];
    const sent =
      writeOnly.length > 0 && (step.kind === 'create' || step.kind === 'replace')
        ? sentHashes({ writeOnly }, ctx.desired(step.address))
        : twin.get(step.address)?.sent;
    return {
      ...(sent ? { sent } : {}),
      address: step.address,
      type: step.type,
      stateful: decl?.lifecycle.stateful ?? twin.get(step.address)?.stateful ?? false,
      dependsOn: step.dependsOn,
      ...extra,
    };
  };
  const ctx: StepContext = {
    ops: operator,
    target,
    object: (a) => current.get(a),
    desired: (a) => {
      const resolved = resolveDesired(declOf(decls, a), (t) => current.get(t));
      const overrides = pass.overrides?.get(a);
      return overrides ? withOverrides(resolved, overrides) : resolved;
    },
    sendable: (a, desired) =>
      sendableSpec(declOf(decls, a).spec, desired, ws.env, ws.intent.dir, ws.secrets),
    verify: async (a, objectId, desired) => {
      const t0 = clock.now().getTime();
      const decl = declOf(decls, a);
      const verified = await waitConverged(
        ws,
        decl,
        objectId,
        desired,
        clock,
        options.verifyTimeoutMs,
      );
      report({ kind: 'verified', address: a, ms: clock.now().getTime() - t0 });
      await operator.remember(target(steps.get(a)!), verified);
      current.set(a, verified);
      return verified;
    },
    read: (type, objectId) => {
      const { provider, info } = ws.typeOf(type);
      return provider.read(info.name, objectId);
    },
    remembered: (a) => twin.get(a)?.fields,
    // Why an old object must not be deleted yet: something declared still references it.
    referencedBy: (oldId) => {
      for (const r of ws.intent.resources) {
        const o = current.get(r.address);
        if (o && o.id !== oldId && mentionsId(o.fields, oldId)) return r.address;
      }
      return undefined;
    },
    now: () => clock.now().getTime(),
    verifyTimeoutMs: options.verifyTimeoutMs,
    report,
  };
  return ctx;
}

/** Carries out one declared resource's step, exactly as planned, and records what it left. */
async function runStep(x: Execution, step: PlanStep): Promise<void> {
  const result = await carryOut(x, step);
  if (result) await finish(x, step.address, result);
}

/** Carries out one declared resource's step, exactly as planned. */
async function carryOut(x: Execution, step: PlanStep): Promise<StepResult | undefined> {
  switch (step.kind) {
    case 'create':
      return executeCreate(step, x.ctx);
    case 'update':
      return executeUpdate(step, x.ctx);
    case 'move':
      return executeMove(step, x.ctx);
    case 'adopt':
      return executeAdopt(step, x.ctx);
    case 'replace': {
      const gate = replaceGate(step);
      if (gate.kind === 'blocked') {
        throw x.book.blocked(step.address, step.objectId, gate.reason, gate.why);
      }
      const result = await executeReplace(step, x.ctx);
      if (result.replaced) x.replacedOld.set(step.address, result.replaced);
      else if (step.movedFrom) await x.operator.forget(step.movedFrom);
      return result;
    }
    case 'conflict':
      throw new TendError(
        'ownership.conflict',
        `${step.address}: the object ${step.objectId} with this resource's natural key belongs to workspace \`${step.owner}\`; Tend never takes over another workspace's object`,
        {
          address: step.address,
          phase: 'apply',
          hint: "change the resource's natural key, or remove the object from the other workspace first",
        },
      );
    case 'noop': {
      const obj = x.current.get(step.address);
      if (!obj) return undefined;
      if (x.pass.observation.twin.get(step.address)?.objectId !== obj.id) {
        // Tend's record names another id (an object found by its marker after a replace Tend did
        // not see finish): remember the one found, so a later removal deletes it, not orphans it.
        await x.operator.remember(x.ctx.target(step), obj);
      }
      return { object: obj, desired: resolvedDesired(x.ctx, step.address), checkNow: true };
    }
    case 'delete':
      return undefined; // deletes run as their own nodes (runDelete)
  }
}

/** Records what a step left: the address's object, and its checks (now, or after step 2). */
async function finish(x: Execution, address: Address, result: StepResult): Promise<void> {
  x.current.set(address, result.object);
  x.checkedAgainst.set(address, result.desired);
  if (result.checkNow) await check(x, declOf(x.decls, address), result.object, result.desired);
  else x.book.converged(address, result.object.id);
}

/** Runs a resource's checks against its current object and records its outcome. */
async function check(
  x: Execution,
  decl: ResourceDecl,
  obj: ObservedObject,
  desired: Record<string, unknown>,
): Promise<void> {
  const checks = x.options.runChecks
    ? await runChecks(x.ws, decl, obj, desired, (a) => x.current.get(a), x.options.clock)
    : [];
  for (const result of checks) x.options.report({ kind: 'check', address: decl.address, result });
  x.book.checked(decl.address, obj.id, checks);
}

/** Checks a replaced resource again once its old object is gone (both would answer until then). */
async function recheck(x: Execution, address: Address): Promise<void> {
  const decl = x.decls.get(address);
  const obj = x.current.get(address);
  const desired = x.checkedAgainst.get(address);
  if (decl && obj && desired) await check(x, decl, obj, desired);
}

/** The delete of a removed resource, with the leftovers of its unfinished replaces, unless gated. */
async function runDelete(x: Execution, step: DeleteStep): Promise<void> {
  const gate = deleteGate(step);
  if (gate.kind === 'blocked') {
    throw x.book.blocked(step.address, step.objectId, gate.reason, gate.why);
  }
  await executeDelete(step, x.ctx, x.leftoversOf.get(step.address) ?? []);
}

/** Step 2 of a create-before-destroy replace: deletes the old object its step 1 left. */
async function deleteReplacedOld(x: Execution, step: ReplaceStep): Promise<void> {
  const replaced = x.replacedOld.get(step.address);
  if (!replaced) return;
  const done = await deleteReplaced(step, replaced.old, replaced.group, x.ctx);
  // A moved resource's old record goes once its old object is gone; until then it is what finds that
  // object again (a removed address, deleted by the next plan) after a crash.
  if (done.kind === 'deleted' && step.movedFrom) await x.operator.forget(step.movedFrom);
  await recheck(x, step.address);
}

/**
 * Deletes the old object of a replace an earlier pass left unfinished, once the address's step left
 * it converged (or failing its checks) on another object.
 */
async function finishReplace(x: Execution, step: PlanStep, leftover: Leftover): Promise<void> {
  const now = x.current.get(step.address);
  const state = x.book.stateOf(step.address);
  if (!now || now.id === leftover.old.id || (state !== 'converged' && state !== 'failing')) {
    return;
  }
  const done = await deleteReplaced(step, leftover.old, leftover.group, x.ctx, 'replace');
  if (done.kind === 'deleted') await recheck(x, step.address);
}
