import type {
  ActorContext,
  Address,
  Changeset,
  Plan,
  ResourceState,
  StaleObject,
} from '../core/index.js';
import { TendError, toTendError } from '../core/index.js';
import { checkChangeset } from './changeset.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { ResourceOutcome } from './executor.js';
import { executePlan } from './executor.js';
import type { Observation } from './observe.js';
import { observe } from './observe.js';
import type { ArbitrationOutcome } from './arbitrate.js';
import { arbitrate, commitFeeds, readFeedsOrNothing } from './arbitrate.js';
import type { PlannedPass } from './planner.js';
import { planPass } from './planner.js';
import { dependencyClosure, needsFullPass, observeFocused } from './focus.js';
import { pausedReasons, readPaused } from './paused.js';
import { recoverJournal } from './recovery.js';
import type { Workspace } from './workspace.js';
import { declaredIndex } from './workspace.js';

/** Options for one pass of the loop. */
export interface PassOptions {
  /** `plan` observes and plans only (writes nothing); `apply` also executes and verifies. */
  readonly mode: 'plan' | 'apply';
  readonly approveDestroy: boolean;
  /** Delete managed objects whose resource was removed from the intent. */
  readonly prune: boolean;
  readonly actor: ActorContext;
  readonly clock: Clock;
  readonly report: Reporter;
  readonly verifyTimeoutMs: number;
  /**
   * How long a create that settled is waited for before an object a list does not show counts as
   * deleted, on providers without consistent reads (default DEFAULT_VISIBILITY_WINDOW_MS; see
   * observe's visibilityWindowOf).
   */
  readonly visibilityWindowMs?: number;
  readonly runChecks: boolean;
  /** Asked before executing a plan with destructive steps; false cancels the apply. */
  readonly confirm?: (plan: Plan) => Promise<boolean>;
  readonly signal?: AbortSignal;
  /** Pass number, for reporting. */
  readonly pass?: number;
  readonly trigger?: string;
  /** Test hook called around every store write of an operation. */
  readonly crash?: CrashHook;
  /** Limit the plan to these resources and what they depend on (see planPass). */
  readonly targets?: readonly Address[];
  /**
   * Carry out this saved plan instead of planning (mode `apply`): after observing, it runs only when
   * `checkChangeset` allows it; otherwise the pass is refused with nothing sent.
   */
  readonly changeset?: Changeset;
  /**
   * Incremental (mode `apply`): re-read only the objects the audit feed names since the stored
   * cursor, arbitrate and plan only them and what they reference. Falls back to a full pass when the
   * feed has nothing new, or names something only a full observation can sort out (see focus.ts).
   */
  readonly focused?: boolean;
}

/** Why a saved plan was not carried out (nothing was sent). */
export interface ChangesetRefusal {
  readonly error: TendError;
  /** Pinned objects that moved since the plan was made. */
  readonly stale: readonly StaleObject[];
  /** Steps that are not the ones the intent gives now. */
  readonly unexpected: readonly Address[];
}

/** What a pass did. */
export interface PassResult {
  readonly plan: Plan;
  readonly observation: Observation;
  readonly outcomes: ReadonlyMap<Address, ResourceOutcome>;
  /** False for `plan` mode, or when the user declined, or a saved plan was refused. */
  readonly applied: boolean;
  readonly recovered: number;
  /** Set when a saved plan (`changeset`) was refused. */
  readonly refused?: ChangesetRefusal;
  /** What arbitration decided this pass (absent when a saved plan was refused before it). */
  readonly arbitration?: ArbitrationOutcome;
  /** True for a focused pass (only the objects the audit feed named were read and planned). */
  readonly focused?: boolean;
}

/** The standard actor context of Tend's own writes. */
export function tendActor(motivation = 'apply'): ActorContext {
  return { actor: 'tend', actorKind: 'tend', intent: 'consistency', motivation };
}

/**
 * One turn of the loop: observe → (recover the journal) → plan → execute (journaled) → verify and
 * check → record status. Level-triggered: it re-reads the world every time and needs nothing but the
 * intent and the platform to know what to do.
 */
export async function reconcilePass(ws: Workspace, options: PassOptions): Promise<PassResult> {
  const { clock, report } = options;
  const t0 = clock.now().getTime();
  report({ kind: 'pass-start', pass: options.pass ?? 1, trigger: options.trigger ?? options.mode });
  if (options.focused && options.mode === 'apply' && !options.changeset) {
    const done = await focusedPass(ws, options, t0);
    if (done) return done;
  }
  const observeOpts = {
    ...(options.visibilityWindowMs !== undefined
      ? { visibilityWindowMs: options.visibilityWindowMs }
      : {}),
    now: clock.now(),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  let observation: Observation;
  try {
    observation = await observe(ws, observeOpts);
  } catch (e) {
    // The platform could not be read (down, circuit open, unauthorised): nothing can be known about
    // its resources, so their status says why instead of keeping a stale "converged".
    if (options.mode === 'apply') await markUnobservable(ws, toTendError(e), clock);
    throw e;
  }
  if (options.mode === 'apply') await markObservable(ws, clock);
  report({ kind: 'observed', objects: observation.objects.size, ms: clock.now().getTime() - t0 });

  if (options.changeset && options.mode === 'apply') {
    // A saved plan was made with the arbitration decisions of its time: the same are made (not
    // recorded) to check it; the next pass records them.
    const feed = await readFeedsOrNothing(
      ws,
      options.actor.actor,
      (message) => options.report({ kind: 'warning', message }),
      options.signal,
    );
    const arbitration = await arbitrate(ws, observation, { now: clock.now(), record: false, feed });
    return applyChangeset(ws, options, observation, options.changeset, t0, arbitration);
  }

  let recovered = 0;
  if (options.mode === 'apply') {
    recovered = await recoverJournal(
      ws,
      observation.objects,
      options.actor,
      clock,
      report,
      options.crash,
    );
    if (recovered > 0) observation = await observe(ws, { ...observeOpts, now: clock.now() });
  }
  const feed = await readFeedsOrNothing(
    ws,
    options.actor.actor,
    (message) => options.report({ kind: 'warning', message }),
    options.signal,
  );
  const arbitration = await arbitrate(ws, observation, {
    now: clock.now(),
    record: options.mode === 'apply',
    feed,
  });
  if (options.mode === 'apply') {
    await commitFeeds(ws, feed);
    for (const change of arbitration.recorded) report({ kind: 'change-observed', change });
  }
  // An operation recovery could not resolve (the platform did not answer the lookup) may still
  // have landed: its address is left alone this pass, never acted on twice. So is a resource whose
  // reconciling was stopped by hand (paused.ts).
  const held = pausedReasons(await readPaused(ws.store, ws.name));
  if (recovered > 0) {
    for (const op of await ws.store.unsettled()) {
      held.set(
        op.address,
        `journal operation ${op.id} (${op.action}) is still unresolved; retried next pass before anything else is done to it`,
      );
    }
  }

  const planned: PlannedPass = await planPass(ws, observation, {
    approveDestroy: options.approveDestroy,
    prune: options.prune,
    ...(held.size > 0 ? { held } : {}),
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
    ...(options.targets ? { targets: options.targets } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  report({ kind: 'plan', plan: planned.plan });
  if (options.mode === 'plan') return notApplied(planned, recovered, arbitration);
  return executePlanned(ws, options, planned, recovered, t0, arbitration);
}

/** The steps a focused pass may carry out (an adopt only re-marks an object Tend knows by its id). */
const FOCUSED_STEPS: ReadonlySet<string> = new Set(['update', 'noop', 'adopt']);

/**
 * A focused pass (see `PassOptions.focused`), or undefined when a full pass must run instead; the
 * feed is then read again by the full pass (nothing was recorded, no cursor moved).
 */
async function focusedPass(
  ws: Workspace,
  options: PassOptions,
  t0: number,
): Promise<PassResult | undefined> {
  const { clock, report } = options;
  const feed = await readFeedsOrNothing(
    ws,
    options.actor.actor,
    (message) => options.report({ kind: 'warning', message }),
    options.signal,
  );
  if (await needsFullPass(ws, feed)) return undefined;
  const focus = new Set<Address>(feed.events.map((e) => e.address));
  const observation = await observeFocused(
    ws,
    focus,
    dependencyClosure(ws.intent, focus),
    options.signal,
  );
  if (!observation) return undefined;
  const paused = pausedReasons(await readPaused(ws.store, ws.name));
  const planOptions = {
    approveDestroy: options.approveDestroy,
    prune: false,
    targets: [...focus],
    ...(paused.size > 0 ? { held: paused } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  // Only corrections of objects that exist where Tend left them are made here; a create (someone
  // deleted it: another may have made one since), a replace (its dependents must move) or anything
  // found by matching needs what only a full observation sees. Decided before anything is recorded.
  const trial = await planPass(ws, observation, planOptions);
  if (trial.plan.steps.some((s) => focus.has(s.address) && !FOCUSED_STEPS.has(s.kind))) {
    return undefined;
  }
  await markObservable(ws, clock);
  report({
    kind: 'observed',
    objects: observation.objects.size,
    ms: clock.now().getTime() - t0,
    focused: true,
  });
  const arbitration = await arbitrate(ws, observation, {
    now: clock.now(),
    record: true,
    feed,
    only: focus,
  });
  await commitFeeds(ws, feed);
  for (const change of arbitration.recorded) report({ kind: 'change-observed', change });
  let planned = await planPass(ws, observation, {
    ...planOptions,
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
  });
  // What the focus references was planned only to resolve references (from Tend's record of it):
  // it is not acted on, nor its status rewritten.
  const steps = planned.plan.steps.filter((s) => focus.has(s.address));
  planned = { ...planned, plan: { ...planned.plan, steps } };
  report({ kind: 'plan', plan: planned.plan });
  return { ...(await executePlanned(ws, options, planned, 0, t0, arbitration)), focused: true };
}

/**
 * A saved plan: refused (nothing sent) unless the journal is settled and `checkChangeset` finds
 * every pinned object as it was and the saved steps the ones the intent gives now; then carried out
 * exactly as saved.
 */
async function applyChangeset(
  ws: Workspace,
  options: PassOptions,
  observation: Observation,
  changeset: Changeset,
  t0: number,
  arbitration: ArbitrationOutcome,
): Promise<PassResult> {
  const refuse = (refused: ChangesetRefusal): PassResult => ({
    plan: changeset.plan,
    observation,
    outcomes: new Map(),
    applied: false,
    recovered: 0,
    refused,
  });
  // Recovering the journal may send requests; a saved plan must send nothing but itself.
  const pending = await ws.store.unsettled();
  if (pending.length > 0) {
    return refuse({
      error: new TendError(
        'changeset.journal_pending',
        `the journal holds ${pending.length} unfinished operation${pending.length === 1 ? '' : 's'} from an interrupted run; nothing was sent`,
        {
          phase: 'apply',
          hint: 'run tend apply <dir> (or tend run) to finish them, then tend plan --out again',
        },
      ),
      stale: [],
      unexpected: [],
    });
  }
  const verdict = await checkChangeset(ws, changeset, observation, arbitration.overrides);
  if (verdict.kind === 'refused') {
    return refuse({
      error: verdict.error,
      stale: verdict.stale,
      unexpected: verdict.unexpected,
    });
  }
  options.report({ kind: 'plan', plan: verdict.plan });
  const planned: PlannedPass = {
    plan: verdict.plan,
    observation,
    waiting: [...observation.pendingVisibility],
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
  };
  return executePlanned(ws, options, planned, 0, t0, arbitration);
}

/** Asks before destructive steps, executes the plan, records each resource's status. */
async function executePlanned(
  ws: Workspace,
  options: PassOptions,
  planned: PlannedPass,
  recovered: number,
  t0: number,
  arbitration: ArbitrationOutcome,
): Promise<PassResult> {
  const { clock, report } = options;
  const observation = planned.observation;
  const destructive = planned.plan.steps.some(
    (s) => (s.kind === 'replace' || s.kind === 'delete') && !s.gated && s.blocked === undefined,
  );
  if (destructive && options.confirm && !(await options.confirm(planned.plan))) {
    return notApplied(planned, recovered, arbitration);
  }

  const executed = await executePlan(ws, planned, {
    actor: options.actor,
    clock,
    report,
    verifyTimeoutMs: options.verifyTimeoutMs,
    runChecks: options.runChecks,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.crash ? { crash: options.crash } : {}),
  });
  const outcomes = withDecisions(executed, arbitration);
  const states: Record<ResourceState, number> = {
    converged: 0,
    drifted: 0,
    pending: 0,
    failing: 0,
    blocked: 0,
    error: 0,
  };
  const at = clock.now().toISOString();
  const inPlan = new Set<Address>(planned.plan.steps.map((s) => s.address));
  // A status is written when it changes: a pass of a converged workspace writes nothing (its
  // `updatedAt` is when the resource came to be in that state). What this process wrote last is
  // remembered, since it holds the lease: nobody else writes statuses meanwhile.
  const last = writtenStatus.get(ws.store) ?? new Map<Address, string>();
  const writes: Promise<void>[] = [];
  const written: [Address, string][] = [];
  for (const r of ws.intent.resources) {
    // A targeted or saved plan leaves the rest alone: their status stays what it was.
    if (!outcomes.has(r.address) && !inPlan.has(r.address)) continue;
    const o = outcomes.get(r.address) ?? { state: 'pending' as const, checks: [] };
    states[o.state]++;
    const same = JSON.stringify([o.state, o.objectId, o.message, o.checks]);
    if (last.get(r.address) === same) continue;
    written.push([r.address, same]);
    // Written all at once, so the store commits them together (one disk sync, not one per resource).
    writes.push(
      ws.store.putStatus({
        address: r.address,
        state: o.state,
        ...(o.objectId ? { objectId: o.objectId } : {}),
        ...(o.message ? { message: o.message } : {}),
        checks: o.checks,
        updatedAt: at,
      }),
    );
  }
  await Promise.all(writes);
  for (const [address, same] of written) last.set(address, same);
  // An address no longer declared may have its status deleted (a move, a delete) and come back
  // later: it must then be written again, whatever it was.
  const declared = declaredIndex(ws.intent);
  for (const address of last.keys()) if (!declared.has(address)) last.delete(address);
  writtenStatus.set(ws.store, last);
  report({ kind: 'pass-done', pass: options.pass ?? 1, ms: clock.now().getTime() - t0, states });
  return { plan: planned.plan, observation, outcomes, applied: true, recovered, arbitration };
}

/**
 * Per store, what the passes of this process last wrote as each resource's status (see above): by
 * store, so that a workspace opened again on a changed intent keeps it.
 */
const writtenStatus = new WeakMap<object, Map<Address, string>>();

/** The result of a pass that planned and changed nothing (a plan, or an apply the user declined). */
function notApplied(
  planned: PlannedPass,
  recovered: number,
  arbitration: ArbitrationOutcome,
): PassResult {
  const { plan, observation } = planned;
  return { plan, observation, outcomes: new Map(), applied: false, recovered, arbitration };
}

/**
 * A resource whose field an actor holds (or that was escalated for a human) is not converged, even
 * when the plan had nothing to do: its status says so, and why.
 */
function withDecisions(
  outcomes: ReadonlyMap<Address, ResourceOutcome>,
  arbitration: ArbitrationOutcome,
): Map<Address, ResourceOutcome> {
  const out = new Map(outcomes);
  for (const [address, note] of arbitration.notes) {
    const o = out.get(address);
    if (!o || (o.state !== 'converged' && !(note.state === 'blocked' && o.state === 'drifted'))) {
      continue;
    }
    out.set(address, { ...o, state: note.state, message: note.message });
  }
  return out;
}

/** The store setting holding a provider's state after the last pass: `provider-state:<name>`. */
export const PROVIDER_STATE_KEY = (provider: string) => `provider-state:${provider}`;

/** How a provider answered the last pass that tried to observe it. */
export interface ProviderState {
  readonly state: 'ok' | 'unauthorized' | 'unreachable';
  readonly message?: string;
  readonly at: string;
}

/** The provider named by an observe error's address (`provider.type`), if any. */
function providerOf(ws: Workspace, error: TendError): string | undefined {
  const name = error.address?.split('.')[0];
  return name !== undefined && ws.providers.has(name) ? name : undefined;
}

/** Every provider answered: their state is `ok` again (written only when it was not). */
async function markObservable(ws: Workspace, clock: Clock): Promise<void> {
  for (const name of ws.providers.keys()) {
    const prev = await ws.store.getMeta(PROVIDER_STATE_KEY(name));
    if (prev === undefined || (JSON.parse(prev) as ProviderState).state === 'ok') continue;
    const state: ProviderState = { state: 'ok', at: clock.now().toISOString() };
    await ws.store.setMeta(PROVIDER_STATE_KEY(name), JSON.stringify(state));
  }
}

/** Marks every declared resource `error` with the reason its platform could not be observed. */
async function markUnobservable(ws: Workspace, error: TendError, clock: Clock): Promise<void> {
  const at = clock.now().toISOString();
  const failed = providerOf(ws, error);
  if (failed !== undefined) {
    const state: ProviderState = {
      state: error.code === 'platform.unauthorized' ? 'unauthorized' : 'unreachable',
      message: error.message,
      at,
    };
    await ws.store.setMeta(PROVIDER_STATE_KEY(failed), JSON.stringify(state));
  }
  // Every status is written here: what a pass remembers having written no longer holds.
  writtenStatus.delete(ws.store);
  const previous = new Map((await ws.store.listStatus()).map((s) => [s.address, s] as const));
  for (const r of ws.intent.resources) {
    const health = ws.providers.get(r.provider)?.health?.();
    const circuit = health && health.circuit !== 'closed' ? ` (circuit ${health.circuit})` : '';
    const prev = previous.get(r.address);
    const why =
      error.code === 'platform.unauthorized' && (failed === undefined || failed === r.provider)
        ? 'unauthorized: '
        : '';
    await ws.store.putStatus({
      address: r.address,
      state: 'error',
      ...(prev?.objectId ? { objectId: prev.objectId } : {}),
      message: `${why}cannot observe ${r.provider}${circuit}: ${error.message}`,
      checks: prev?.checks ?? [],
      updatedAt: at,
    });
  }
}
