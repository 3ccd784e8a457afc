import type {
  ActorContext,
  Address,
  CheckResult,
  ObservedObject,
  PlanStep,
  ResourceDecl,
  ResourceState,
} from '../core/index.js';
import { TendError, mentionsId, toTendError } from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { OperationTarget } from './operator.js';
import { Recorder } from './recorder.js';
import type { Leftover } from './observe.js';
import type { PlannedPass } from './planner.js';
import { resolveDesired, withOverrides } from './planner.js';
import { sendableSpec } from './secrets.js';
import { executeAdopt } from './steps/adopt.js';
import { executeCreate } from './steps/create.js';
import { executeDelete } from './steps/delete.js';
import { executeMove } from './steps/move.js';
import { deleteReplaced, executeReplace } from './steps/replace.js';
import type { StepContext, StepResult } from './steps/step-context.js';
import { resolvedDesired } from './steps/step-context.js';
import { executeUpdate } from './steps/update.js';
import { runChecks, waitConverged } from './verify.js';
import { sentHashes } from './write-only.js';
import type { Workspace } from './workspace.js';

/** The outcome of one resource in a pass. */
export interface ResourceOutcome {
  readonly state: ResourceState;
  readonly objectId?: string;
  readonly message?: string;
  readonly checks: readonly CheckResult[];
}

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
 * At most `size` holders at once; the others wait in arrival order. `acquire` answers undefined
 * when a slot is free now (no promise made), else a promise of the slot.
 */
function slots(size: number): { acquire(): Promise<void> | undefined; release(): void } {
  let free = Math.max(1, size);
  // Read from `head` by index: `shift()` of a long array moves every element, and a pass of 100,000
  // resources queues nearly all of them here (quadratic: 31% of a 100,000 no-drift pass's CPU).
  const waiting: ((() => void) | undefined)[] = [];
  let head = 0;
  return {
    acquire() {
      if (free > 0) {
        free--;
        return undefined;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      if (head === waiting.length) {
        free++;
        return;
      }
      const next = waiting[head]!;
      waiting[head++] = undefined;
      if (head === waiting.length) {
        waiting.length = 0;
        head = 0;
      }
      next();
    },
  };
}

class Skip extends Error {}
/** Thrown by a step stopped at a gate: its dependents wait too (they are blocked, not failed). */
/** A step stopped before it ran; `why` is what it needs (for what waits on it). */
class Blocked extends Error {
  constructor(
    address: Address,
    readonly why: string,
  ) {
    super(address);
  }
}

/**
 * Executes a plan as a graph, carrying out exactly its steps: nothing is diffed or evaluated again,
 * and no step changes kind (the units in `steps/` do one kind each). Each resource starts when what
 * it references is done, independent branches run in parallel (the provider bounds concurrency and
 * rate), and a failure skips only what depends on it. A delete of a removed resource waits for
 * everything that referenced it, old graph and new (`DeleteStep.waitsFor`); the old object of a
 * replace is deleted only after its replacement is verified and every dependent has been repointed.
 * Every step that fails, is blocked, not verified or fails a check has an outcome in the result.
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
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const steps = new Map(pass.plan.steps.map((s) => [s.address, s] as const));
  const current = new Map<Address, ObservedObject>(pass.observation.objects);
  const outcomes = new Map<Address, ResourceOutcome>();
  const nodes = new Map<string, Promise<void>>();
  const inFlight = slots(options.maxInFlight ?? MAX_IN_FLIGHT);
  const dependents = new Map<Address, Address[]>();
  for (const r of ws.intent.resources) {
    for (const d of r.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), r.address]);
  }

  for (const a of pass.waiting) {
    outcomes.set(a, {
      state: 'pending',
      message: pass.held?.get(a) ?? 'created moments ago; waiting for it to become visible',
      checks: [],
    });
  }

  // A batched type's changes go out together per parent (ResourceTypeInfo.batched): its steps take no
  // slot, so that every one ready at the same moment joins the same batch (1,000 rrsets: one PATCH).
  const batched = (type: string): boolean => {
    try {
      return ws.typeOf(type).info.batched === true;
    } catch {
      return false;
    }
  };
  const node = (
    key: string,
    deps: () => string[],
    run: () => Promise<void>,
    bounded = true,
  ): Promise<void> => {
    const existing = nodes.get(key);
    if (existing) return existing;
    // Taken when a slot is free (or at once, unbounded): the signal is read as the work starts.
    const go = (): Promise<void> =>
      options.signal?.aborted ? Promise.reject(new Skip('stopping')) : run();
    const start = (): Promise<void> => {
      if (!bounded) return go();
      const slot = inFlight.acquire();
      const body = () => go().finally(() => inFlight.release());
      return slot ? slot.then(body) : body();
    };
    // Every node of the plan is registered before any looks its dependencies up (one microtask).
    const p = Promise.resolve().then((): Promise<void> => {
      const waitsFor = deps();
      // Most resources reference nothing: they wait for no settled-all. A waiting node holds no slot.
      if (waitsFor.length === 0) return start();
      return Promise.allSettled(waitsFor.map((d) => nodes.get(d) ?? Promise.resolve())).then(
        (results) => {
          const blocked = results.find(
            (r): r is PromiseRejectedResult =>
              r.status === 'rejected' && r.reason instanceof Blocked,
          );
          if (blocked) {
            const root = blocked.reason as Blocked;
            throw new Blocked(root.message as Address, root.why);
          }
          if (results.some((r) => r.status === 'rejected')) throw new Skip(key);
          return start();
        },
      );
    });
    nodes.set(key, p);
    return p;
  };

  const target = (step: PlanStep, extra: Partial<OperationTarget> = {}): OperationTarget => {
    const decl = decls.get(step.address);
    // A create (or a replace's new object) sends the declared write-only values; anything else keeps
    // the record of what was sent before.
    const writeOnly = decl ? (ws.typeOf(step.type).info.writeOnly ?? []) : [];
    const sent =
      writeOnly.length > 0 && (step.kind === 'create' || step.kind === 'replace')
        ? sentHashes({ writeOnly }, ctx.desired(step.address))
        : pass.observation.twin.get(step.address)?.sent;
    return {
      ...(sent ? { sent } : {}),
      address: step.address,
      type: step.type,
      stateful:
        decl?.lifecycle.stateful ?? pass.observation.twin.get(step.address)?.stateful ?? false,
      dependsOn: step.dependsOn,
      ...extra,
    };
  };

  const declOf = (address: Address): ResourceDecl => {
    const decl = decls.get(address);
    if (!decl) throw new TendError('plan.undeclared', `${address} is not declared`, { address });
    return decl;
  };

  /** Why an old object must not be deleted yet: something declared still references it. */
  const referencedBy = (oldId: string): Address | undefined => {
    for (const r of ws.intent.resources) {
      const o = current.get(r.address);
      if (o && o.id !== oldId && mentionsId(o.fields, oldId)) return r.address;
    }
    return undefined;
  };

  const ctx: StepContext = {
    ops: operator,
    target,
    object: (a) => current.get(a),
    desired: (a) => {
      const resolved = resolveDesired(declOf(a), (t) => current.get(t));
      const overrides = pass.overrides?.get(a);
      return overrides ? withOverrides(resolved, overrides) : resolved;
    },
    sendable: (a, desired) =>
      sendableSpec(declOf(a).spec, desired, ws.env, ws.intent.dir, ws.secrets),
    verify: async (a, objectId, desired) => {
      const t0 = clock.now().getTime();
      const decl = declOf(a);
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
    remembered: (a) => pass.observation.twin.get(a)?.fields,
    referencedBy,
    now: () => clock.now().getTime(),
    verifyTimeoutMs: options.verifyTimeoutMs,
    report,
  };

  /** Runs a resource's checks against its current object and records its outcome. */
  const check = async (
    decl: ResourceDecl,
    obj: ObservedObject,
    desired: Record<string, unknown>,
  ) => {
    const checks = options.runChecks
      ? await runChecks(ws, decl, obj, desired, (a) => current.get(a), clock)
      : [];
    for (const result of checks) report({ kind: 'check', address: decl.address, result });
    const failing = checks.filter((c) => !c.ok);
    outcomes.set(decl.address, {
      state: failing.length > 0 ? 'failing' : 'converged',
      objectId: obj.id,
      ...(failing.length > 0
        ? { message: failing.map((c) => `${c.name}: ${c.message}`).join('; ') }
        : {}),
      checks,
    });
  };

  /** Records what a step left: the address's object, and its checks (now, or after step 2). */
  const finish = async (address: Address, result: StepResult) => {
    current.set(address, result.object);
    checked.set(address, result.desired);
    if (result.checkNow) await check(declOf(address), result.object, result.desired);
    else {
      outcomes.set(address, { state: 'converged', objectId: result.object.id, checks: [] });
    }
  };
  const checked = new Map<Address, Record<string, unknown>>();

  /** Checks a replaced resource again once its old object is gone (both would answer until then). */
  const recheck = async (address: Address) => {
    const decl = decls.get(address);
    const obj = current.get(address);
    const desired = checked.get(address);
    if (decl && obj && desired) await check(decl, obj, desired);
  };

  /**
   * Records a step stopped at a gate (or one that cannot happen: `why` says what it needs); the
   * returned error blocks what waits on it.
   */
  const block = (
    address: Address,
    objectId: string,
    reason: string,
    why = 'which needs --approve-destroy',
  ): Blocked => {
    report({ kind: 'blocked', address, reason });
    outcomes.set(address, { state: 'blocked', objectId, message: reason, checks: [] });
    return new Blocked(address, why);
  };

  const replacedOld = new Map<Address, { old: ObservedObject; group: string }>();

  /** Forgets the record of an address a resource moved from, once nothing of it is left. */
  const forget = (from: Address) => operator.forget(from);

  /** Carries out one declared resource's step, exactly as planned. */
  const carryOut = async (step: PlanStep): Promise<StepResult | undefined> => {
    switch (step.kind) {
      case 'create':
        return executeCreate(step, ctx);
      case 'update':
        return executeUpdate(step, ctx);
      case 'move':
        return executeMove(step, ctx);
      case 'adopt':
        return executeAdopt(step, ctx);
      case 'replace': {
        if (step.blocked !== undefined) {
          throw block(
            step.address,
            step.objectId,
            `replacing ${step.address} (${step.forcedBy.join(', ')}) cannot happen: ${step.blocked}`,
            'whose replacement cannot happen',
          );
        }
        if (step.gated) {
          throw block(
            step.address,
            step.objectId,
            `replacing ${step.address} (${step.forcedBy.join(', ')}) is gated (${step.gate ?? 'stateful resource'}): approve with --approve-destroy`,
          );
        }
        const result = await executeReplace(step, ctx);
        if (result.replaced) replacedOld.set(step.address, result.replaced);
        else if (step.movedFrom) await forget(step.movedFrom);
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
        const obj = current.get(step.address);
        if (!obj) return undefined;
        if (pass.observation.twin.get(step.address)?.objectId !== obj.id) {
          // Tend's record names another id (an object found by its marker after a replace Tend did
          // not see finish): remember the one found, so a later removal deletes it, not orphans it.
          await operator.remember(target(step), obj);
        }
        return { object: obj, desired: resolvedDesired(ctx, step.address), checkNow: true };
      }
      case 'delete':
        return undefined; // deletes run as their own nodes (runDelete)
    }
  };

  const mainKey = (a: Address) => `main:${a}`;
  const runMain = (step: PlanStep) =>
    node(
      mainKey(step.address),
      () => step.dependsOn.filter((d) => steps.has(d)).map(mainKey),
      async () => {
        const result = await carryOut(step);
        if (result) await finish(step.address, result);
      },
      !batched(step.type),
    );

  const leftoversOf = new Map<Address, Leftover[]>();
  for (const l of pass.observation.leftovers) {
    leftoversOf.set(l.address, [...(leftoversOf.get(l.address) ?? []), l]);
  }
  const delKey = (a: Address) => `del:${a}`;
  const runDelete = (step: PlanStep) =>
    node(
      delKey(step.address),
      () =>
        step.kind === 'delete'
          ? // Removed resources that referenced it are deleted first; declared ones that did are
            // updated away from it (or replaced) first.
            step.waitsFor.map((a) => {
              const s = steps.get(a);
              return s?.kind === 'delete' ? delKey(a) : mainKey(a);
            })
          : [
              mainKey(step.address),
              ...(dependents.get(step.address) ?? []).filter((d) => steps.has(d)).map(mainKey),
            ],
      async () => {
        if (step.kind === 'delete') {
          if (step.blocked !== undefined) {
            // Never sent: the API has no DELETE. What it depends on stays too (still in use).
            throw block(
              step.address,
              step.objectId,
              `deleting ${step.address} cannot happen: ${step.blocked}`,
              'whose deletion cannot happen',
            );
          }
          if (step.gated) {
            // What this resource depends on is not deleted either (it would still be in use).
            throw block(
              step.address,
              step.objectId,
              step.gatedBy !== undefined
                ? `deleting ${step.address} waits for the deletion of ${step.gatedBy}, a stateful resource it lives under: approve with --approve-destroy`
                : `deleting ${step.address} destroys a stateful resource: approve with --approve-destroy`,
            );
          }
          await executeDelete(step, ctx, leftoversOf.get(step.address) ?? []);
          return;
        }
        const replaced = replacedOld.get(step.address);
        if (!replaced) return;
        const done = await deleteReplaced(step, replaced.old, replaced.group, ctx);
        // A moved resource's old record goes once its old object is gone; until then it is what
        // finds that object again (a removed address, deleted by the next plan) after a crash.
        if (done.kind === 'deleted' && step.kind === 'replace' && step.movedFrom) {
          await forget(step.movedFrom);
        }
        await recheck(step.address);
      },
      !batched(step.type),
    );

  // Replaces interrupted between their steps (see `observe`): the replacement exists and is the
  // address's object; its old object is deleted as the group's step 2 once the replacement is verified
  // and every dependent is repointed. The replace was approved (and confirmed) when it started, so
  // this needs no --approve-destroy or --yes again.
  const leftKey = (a: Address) => `left:${a}`;
  const finishReplace = (step: PlanStep, leftover: Leftover) =>
    node(
      leftKey(step.address),
      () => [
        mainKey(step.address),
        ...(dependents.get(step.address) ?? []).filter((d) => steps.has(d)).map(mainKey),
      ],
      async () => {
        const now = current.get(step.address);
        const state = outcomes.get(step.address)?.state;
        if (!now || now.id === leftover.old.id || (state !== 'converged' && state !== 'failing')) {
          return;
        }
        const done = await deleteReplaced(step, leftover.old, leftover.group, ctx, 'replace');
        if (done.kind === 'deleted') await recheck(step.address);
      },
    );

  const all: Promise<void>[] = [];
  for (const leftover of pass.observation.leftovers) {
    const step = steps.get(leftover.address);
    if (step && step.kind !== 'delete') all.push(finishReplace(step, leftover));
  }
  for (const step of pass.plan.steps) {
    if (step.kind === 'delete') all.push(runDelete(step));
    else {
      all.push(runMain(step));
      if (
        step.kind === 'replace' &&
        step.strategy === 'create-before-destroy' &&
        !step.gated &&
        step.blocked === undefined
      )
        all.push(runDelete(step));
    }
  }
  await Promise.allSettled(all);
  // Record failures and skips per resource. A failure overrides what an earlier node of the same
  // resource recorded (step 2 of a replace fails after step 1 recorded the address converged);
  // otherwise the first reason wins.
  const failed = new Set<Address>();
  for (const [key, p] of nodes) {
    const address = key.slice(key.indexOf(':') + 1) as Address;
    const r = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (r === undefined) continue;
    if (r instanceof Blocked) {
      if (outcomes.has(address)) continue;
      const reason = `waits for ${r.message}, ${r.why}`;
      report({ kind: 'blocked', address, reason });
      outcomes.set(address, { state: 'blocked', message: reason, checks: [] });
      continue;
    }
    if (r instanceof Skip) {
      if (outcomes.has(address)) continue;
      const msg =
        r.message === 'stopping'
          ? 'not started: tend is stopping'
          : 'not attempted: a resource it depends on failed';
      report({ kind: 'skipped', address, reason: msg });
      outcomes.set(address, { state: 'pending', message: msg, checks: [] });
      continue;
    }
    if (failed.has(address)) continue;
    failed.add(address);
    const err = toTendError(r);
    if (!operator.reported.has(r as object)) {
      report({ kind: 'error', error: err.address ? err : err.at(address, 'apply') });
    }
    const prior = outcomes.get(address);
    const what =
      key.startsWith('del:') && steps.get(address)?.kind === 'replace'
        ? 'step 2 of the replace (delete the old object): '
        : key.startsWith('left:')
          ? 'finishing an interrupted replace: '
          : '';
    outcomes.set(address, {
      state: 'error',
      ...(prior?.objectId ? { objectId: prior.objectId } : {}),
      message: `${what}${err.code}: ${err.message}`,
      checks: prior?.checks ?? [],
    });
  }
  return outcomes;
}
