import type {
  ActorContext,
  Address,
  CheckResult,
  ObservedObject,
  PlanStep,
  ResourceDecl,
  ResourceState,
} from '../core/index.js';
import {
  canHoldBoth,
  gateOf,
  containsUnknown,
  getPath,
  hashValue,
  TendError,
  toTendError,
  updateBody,
} from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { OperationTarget } from './operator.js';
import { Operator } from './operator.js';
import type { Leftover } from './observe.js';
import type { PlannedPass } from './planner.js';
import { diffResource, evaluateChanges, resolveDesired } from './planner.js';
import { sendableSpec } from './secrets.js';
import { runChecks, waitConverged } from './verify.js';
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
  /** Destructive steps that became necessary only during execution may proceed (see `gateOf`). */
  readonly approveDestroy?: boolean;
  /** Test hook called around every store write (the torture suite kills the process there). */
  readonly crash?: CrashHook;
  /** See OperatorOptions.consistencyWindowMs. */
  readonly consistencyWindowMs?: number;
}

class Skip extends Error {}
/** Thrown by a step stopped at a gate: its dependents wait too (they are blocked, not failed). */
class Blocked extends Error {}

/**
 * Executes a plan as a graph: each resource starts when what it references is done, independent
 * branches run in parallel (the provider bounds concurrency and rate), and a failure skips only
 * what depends on it. The old object of a replace is deleted only after its replacement is verified
 * and every dependent has been repointed.
 */
export async function executePlan(
  ws: Workspace,
  pass: PlannedPass,
  options: ExecuteOptions,
): Promise<Map<Address, ResourceOutcome>> {
  const { clock, report } = options;
  const operator = new Operator(
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
  const dependents = new Map<Address, Address[]>();
  for (const r of ws.intent.resources) {
    for (const d of r.dependsOn) dependents.set(d, [...(dependents.get(d) ?? []), r.address]);
  }
  const removedDependents = new Map<Address, Address[]>();
  for (const s of pass.plan.steps) {
    if (s.kind !== 'delete') continue;
    for (const d of s.dependsOn)
      removedDependents.set(d, [...(removedDependents.get(d) ?? []), s.address]);
  }

  for (const a of pass.waiting) {
    outcomes.set(a, {
      state: 'pending',
      message: 'created moments ago; waiting for it to become visible',
      checks: [],
    });
  }

  const node = (key: string, deps: () => string[], run: () => Promise<void>): Promise<void> => {
    const existing = nodes.get(key);
    if (existing) return existing;
    const p = (async () => {
      // Every node of the plan is registered before any looks its dependencies up.
      await Promise.resolve();
      const results = await Promise.allSettled(
        deps().map((d) => nodes.get(d) ?? Promise.resolve()),
      );
      const blocked = results.find(
        (r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason instanceof Blocked,
      );
      if (blocked) throw new Blocked((blocked.reason as Blocked).message);
      if (results.some((r) => r.status === 'rejected')) throw new Skip(key);
      if (options.signal?.aborted) throw new Skip('stopping');
      await run();
    })();
    nodes.set(key, p);
    return p;
  };

  const target = (step: PlanStep, extra: Partial<OperationTarget> = {}): OperationTarget => {
    const decl = decls.get(step.address);
    return {
      address: step.address,
      type: step.type,
      stateful: decl?.lifecycle.stateful ?? (step.kind === 'delete' ? step.gated : false),
      dependsOn: step.dependsOn,
      ...extra,
    };
  };

  const sendable = (decl: ResourceDecl, desired: Record<string, unknown>) =>
    sendableSpec(decl.spec, desired, ws.env, ws.intent.dir);

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

  /**
   * Verifies a changed object (re-read until observed matches declared), remembers it, and — unless
   * told to wait (a replace whose old object still exists) — runs its checks.
   */
  const finish = async (
    decl: ResourceDecl,
    obj: ObservedObject,
    desired: Record<string, unknown>,
    mutated: boolean,
    checkNow = true,
  ) => {
    let verified = obj;
    if (mutated) {
      const t0 = clock.now().getTime();
      verified = await waitConverged(ws, decl, obj.id, desired, clock, options.verifyTimeoutMs);
      report({ kind: 'verified', address: decl.address, ms: clock.now().getTime() - t0 });
      await operator.remember(target(steps.get(decl.address)!), verified);
    } else if (pass.observation.twin.get(decl.address)?.objectId !== obj.id) {
      // Tend's memory lost track of the object (a lost store, or found by marker): remember it, so
      // that removing the resource from the intent later deletes it rather than orphaning it.
      await operator.remember(target(steps.get(decl.address)!), obj);
    }
    current.set(decl.address, verified);
    checked.set(decl.address, desired);
    if (checkNow) await check(decl, verified, desired);
    else outcomes.set(decl.address, { state: 'converged', objectId: verified.id, checks: [] });
  };
  const checked = new Map<Address, Record<string, unknown>>();

  /** Checks a replaced resource again once its old object is gone (both would answer until then). */
  const recheck = async (address: Address) => {
    const decl = decls.get(address);
    const obj = current.get(address);
    const desired = checked.get(address);
    if (decl && obj && desired) await check(decl, obj, desired);
  };

  /** Records a step stopped at a gate; the returned error blocks what waits on it. */
  const block = (address: Address, objectId: string, reason: string): Blocked => {
    report({ kind: 'blocked', address, reason });
    outcomes.set(address, { state: 'blocked', objectId, message: reason, checks: [] });
    return new Blocked(address);
  };

  const replace = async (
    decl: ResourceDecl,
    step: PlanStep,
    old: ObservedObject,
    desired: Record<string, unknown>,
    strategy: string,
  ) => {
    const group = `rep-${hashValue({ address: decl.address, old: old.id, desired })}`;
    if (strategy === 'delete-before-create') {
      await operator.delete(target(step, { group, step: 1 }), old, false);
      const created = await operator.create(
        target(step, { group, step: 2 }),
        sendable(decl, desired),
        hashValue(desired),
      );
      current.set(decl.address, created);
      await finish(decl, created, desired, true);
      return;
    }
    const stepOne = target(step, { group, step: 1, replaces: old.id });
    const created =
      (await resumeStepOne(decl, stepOne, hashValue(desired))) ??
      (await operator.create(stepOne, sendable(decl, desired), hashValue(desired)));
    current.set(decl.address, created);
    // Checks wait for step 2: until the old object is deleted, both may answer (two DNSKEYs).
    await finish(decl, created, desired, true, false);
    // Step 2 (delete the old object) runs as its own node, after every dependent is repointed.
    replacedOld.set(decl.address, { old, group });
  };
  const replacedOld = new Map<Address, { old: ObservedObject; group: string }>();

  /**
   * A replace's step 1 that already settled (the pass that created the replacement died before it
   * could delete the old object, and observe still took the old one for the address, e.g. because
   * the replacement is not visible yet): resume with the replacement instead of creating another.
   */
  const resumeStepOne = async (
    decl: ResourceDecl,
    stepOne: OperationTarget,
    desiredHash: string,
  ): Promise<ObservedObject | undefined> => {
    const prior = await operator.latest(stepOne, 'create', desiredHash);
    if (prior?.state !== 'settled' || !prior.objectId) return undefined;
    const { provider, info } = ws.typeOf(decl.type);
    const existing = await provider.read(info.name, prior.objectId);
    if (existing) return existing;
    // Not visible: eventual consistency (wait for it) or gone (create a new replacement).
    const settledAt = Date.parse(prior.settledAt ?? prior.createdAt);
    if (clock.now().getTime() - settledAt > options.verifyTimeoutMs) return undefined;
    return waitConverged(ws, decl, prior.objectId, {}, clock, options.verifyTimeoutMs);
  };

  /** Why an old object must not be deleted yet: something declared still references it. */
  const referencedBy = (oldId: string): Address | undefined => {
    for (const r of ws.intent.resources) {
      const o = current.get(r.address);
      if (o && o.id !== oldId && mentions(o.fields, oldId)) return r.address;
    }
    return undefined;
  };

  const mainKey = (a: Address) => `main:${a}`;
  const runMain = (step: PlanStep) =>
    node(
      mainKey(step.address),
      () => step.dependsOn.filter((d) => steps.has(d)).map(mainKey),
      async () => {
        const decl = decls.get(step.address)!;
        const { info } = ws.typeOf(decl.type);
        const desired = resolveDesired(decl, (a) => current.get(a));
        if (containsUnknown(desired)) {
          throw new TendError(
            'ref.unresolved',
            `${decl.address}: a referenced resource does not exist`,
            {
              address: decl.address,
              phase: 'apply',
            },
          );
        }
        const observed = current.get(decl.address);
        if (step.kind === 'create' || !observed) {
          const created = await operator.create(
            target(step),
            sendable(decl, desired),
            hashValue(desired),
          );
          current.set(decl.address, created);
          await finish(decl, created, desired, true);
          return;
        }
        if (step.kind === 'replace' && step.gated) {
          throw block(
            decl.address,
            observed.id,
            `replacing ${decl.address} (${step.forcedBy.join(', ')}) is gated (${step.gate ?? 'stateful resource'}): approve with --approve-destroy`,
          );
        }
        const changes = diffResource(ws, decl, desired, observed);
        if (changes.length === 0) {
          await finish(decl, observed, desired, false);
          return;
        }
        const ev =
          step.kind === 'replace'
            ? undefined
            : await evaluateChanges(ws, decl, observed, desired, changes);
        if (step.kind === 'replace' || (ev?.action === 'replace' && ev.source !== 'default')) {
          const strategy =
            step.kind === 'replace'
              ? step.strategy
              : canHoldBoth(info, ev?.fields ?? [])
                ? 'create-before-destroy'
                : 'delete-before-create';
          // A replace the plan did not show (it became known only now) passes the same gate.
          const gate =
            step.kind === 'replace'
              ? undefined
              : gateOf(decl.lifecycle.stateful, strategy, options.approveDestroy ?? false);
          if (gate) {
            throw block(
              decl.address,
              observed.id,
              `${decl.address} now needs replacement (${ev?.fields.join(', ')}; ${gate}): approve with --approve-destroy`,
            );
          }
          await replace(decl, step, observed, desired, strategy);
          return;
        }
        report({ kind: 'drift', address: decl.address, fields: changes.map((c) => c.path) });
        const body = updateBody(desired, observed.fields, changes);
        // Drift: the platform no longer holds what Tend last saw; otherwise the intent changed.
        const seen = pass.observation.twin.get(decl.address)?.fields;
        const drifted =
          seen !== undefined &&
          changes.some(
            (c) => hashValue(getPath(seen, c.path) ?? null) !== hashValue(c.before ?? null),
          );
        const updated = await operator.update(
          target(step),
          observed,
          body,
          hashValue(desired),
          drifted ? 'drift' : 'intent-change',
        );
        current.set(decl.address, updated);
        await finish(decl, updated, desired, true);
      },
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
          ? (removedDependents.get(step.address) ?? []).map(delKey)
          : [
              mainKey(step.address),
              ...(dependents.get(step.address) ?? []).filter((d) => steps.has(d)).map(mainKey),
            ],
      async () => {
        if (step.kind === 'delete') {
          if (step.gated) {
            // What this resource depends on is not deleted either (it would still be in use).
            throw block(
              step.address,
              step.objectId,
              `deleting ${step.address} destroys a stateful resource: approve with --approve-destroy`,
            );
          }
          // Tend's other objects of the removed address (an interrupted replace, an abandoned
          // create; see `observe` leftovers) go first, so its twin entry outlives them.
          for (const l of leftoversOf.get(step.address) ?? []) {
            await operator.delete(
              target(step, { group: l.group, step: 2 }),
              l.old,
              false,
              'removed-from-intent',
            );
          }
          const obj = current.get(step.address) ?? pass.observation.objects.get(step.address);
          if (!obj) return;
          await operator.delete(target(step), obj, true, 'removed-from-intent');
          return;
        }
        const replaced = replacedOld.get(step.address);
        if (!replaced) return;
        const user = referencedBy(replaced.old.id);
        if (user) {
          report({
            kind: 'warning',
            message: `${step.address}: the old object ${replaced.old.id} is still referenced by ${user}; it is deleted once nothing references it`,
          });
        } else {
          await operator.delete(
            target(step, { group: replaced.group, step: 2 }),
            replaced.old,
            false,
          );
        }
        await recheck(step.address);
      },
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
        const user = referencedBy(leftover.old.id);
        if (user) {
          report({
            kind: 'warning',
            message: `${step.address}: the old object ${leftover.old.id} of an interrupted replace is still referenced by ${user}; it is deleted once nothing references it`,
          });
          return;
        }
        await operator.delete(
          target(step, { group: leftover.group, step: 2 }),
          leftover.old,
          false,
          'replace',
        );
        await recheck(step.address);
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
      if (step.kind === 'replace' && step.strategy === 'create-before-destroy' && !step.gated)
        all.push(runDelete(step));
    }
  }
  await Promise.allSettled(all);
  // Record failures and skips per resource (first reason wins).
  const keys = [...nodes.keys()];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const address = key.slice(key.indexOf(':') + 1) as Address;
    const p = nodes.get(key)!;
    const r = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (r === undefined || outcomes.has(address)) continue;
    if (r instanceof Blocked) {
      const reason = `waits for ${r.message}, which needs --approve-destroy`;
      report({ kind: 'blocked', address, reason });
      outcomes.set(address, { state: 'blocked', message: reason, checks: [] });
      continue;
    }
    if (r instanceof Skip) {
      const msg =
        r.message === 'stopping'
          ? 'not started: tend is stopping'
          : 'not attempted: a resource it depends on failed';
      report({ kind: 'skipped', address, reason: msg });
      outcomes.set(address, { state: 'pending', message: msg, checks: [] });
    } else {
      const err = toTendError(r);
      if (!operator.reported.has(r as object)) {
        report({ kind: 'error', error: err.address ? err : err.at(address, 'apply') });
      }
      outcomes.set(address, { state: 'error', message: `${err.code}: ${err.message}`, checks: [] });
    }
  }
  return outcomes;
}

/** True when a value (deeply) contains the string `id`. */
function mentions(value: unknown, id: string): boolean {
  if (value === id) return true;
  if (Array.isArray(value)) return value.some((v) => mentions(v, id));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).some((v) => mentions(v, id));
  }
  return false;
}
