import type {
  PolicyVerdict,
  ActorContext,
  ComplianceState,
  Address,
  Changeset,
  Plan,
  ResourceState,
  ResourceStatus,
  StaleObject,
} from '../core/index.js';
import { denies, isDestructive, TendError, toTendError, verdictText } from '../core/index.js';
import type { ArbitrationOutcome } from './arbitrate.js';
import { arbitrate, observationAfter } from './arbitrate.js';
import type { FeedBatch } from './arbitration-inputs.js';
import { readArbitrationMemory, readFeedsOrNothing } from './arbitration-inputs.js';
import { checkChangeset } from './changeset.js';
import { evaluateChecks, evaluateCompliance } from './compliance.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { ResourceOutcome } from './executor.js';
import { executePlan } from './executor.js';
import { dependencyClosure, needsFullPass, observeFocused } from './focus.js';
import type { Observation } from './observe.js';
import { observe } from './observe.js';
import { pausedReasons, readPaused } from './paused.js';
import type { PlannedPass } from './planner.js';
import { planPass } from './planner.js';
import { admitPlan } from './policy-gate.js';
import { Recorder } from './recorder.js';
import { recoverJournal } from './recovery.js';
import type { Workspace } from './workspace.js';

export type { ProviderState } from './recorder.js';
export { PROVIDER_STATE_KEY } from './recorder.js';

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
  /** The policies' verdicts on the plan's predicted result (docs/policies.md). */
  readonly policies?: readonly PolicyVerdict[];
}

/** The standard actor context of Tend's own writes. */
export function tendActor(motivation = 'apply'): ActorContext {
  return { actor: 'tend', actorKind: 'tend', intent: 'consistency', motivation };
}

/**
 * One turn of the loop, as named phases in order:
 *
 *   observe → recover → arbitrate → hold → plan → (record the decisions) → execute → record
 *
 * - observe: read the platform (a provider that cannot be read marks its resources `error`);
 * - recover: resolve what the journal left pending (apply only), and observe again if it did;
 * - arbitrate: read the audit feeds from their cursors and decide every drifted field (pure);
 * - hold: the addresses left alone this pass (paused, or with an operation still unresolved);
 * - plan: the steps that bring the platform to the intent, decisions and holds applied;
 * - the decisions are recorded (ledger, claims, cursors) before anything is sent, so the ledger
 *   shows a drift before Tend's correction of it;
 * - execute: carry out the plan, each step verified (re-read until it matches) and checked;
 * - record: every resource's status.
 *
 * Three front halves lead to the same back half (execute → record): the full pass above, a saved
 * plan (`changeset`: its recover refuses a journal with unfinished operations, its decisions are made
 * again to check the plan but not recorded, its plan is the saved one once checked), and a focused
 * pass (`focused`: observe reads only what the feed names; a sign that only a full pass can sort
 * out sends it back to one before anything is recorded). Every write goes through the pass's
 * Recorder; a plan has none, and records nothing. Level-triggered: it re-reads the world every time
 * and needs nothing but the intent and the platform to know what to do.
 */
export async function reconcilePass(ws: Workspace, options: PassOptions): Promise<PassResult> {
  const { clock, report } = options;
  const t0 = clock.now().getTime();
  report({ kind: 'pass-start', pass: options.pass ?? 1, trigger: options.trigger ?? options.mode });
  const recorder =
    options.mode === 'apply'
      ? new Recorder(ws, options.actor, clock, report, options.crash)
      : undefined;
  const front =
    recorder && options.changeset
      ? await savedPlanFront(ws, options, recorder, options.changeset, t0)
      : ((recorder && options.focused
          ? await focusedFront(ws, options, recorder, t0)
          : undefined) ?? (await fullFront(ws, options, recorder, t0)));
  if ('result' in front) return front.result;
  let arbitration = front.arbitration;
  if (recorder && front.recordDecisions) {
    const recorded = await recorder.recordDecisions(arbitration, front.feed);
    arbitration = { ...arbitration, recorded };
    for (const change of recorded) report({ kind: 'change-observed', change });
  }
  report({
    kind: 'plan',
    plan: front.planned.plan,
    ...(ws.origin ? { origin: ws.origin } : {}),
  });
  const decided = { ...front, arbitration };
  // admit: the policies on the plan's predicted result; a violated deny rule refuses the plan
  const policies = admitPlan(ws, front.planned);
  const denied = policies.filter(denies);
  if (!recorder) return { ...notApplied(decided), policies };
  if (denied.length > 0) {
    for (const v of denied) report({ kind: 'blocked', address: v.address, reason: verdictText(v) });
    const n = denied.length;
    return {
      ...notApplied(decided),
      policies,
      refused: {
        error: new TendError(
          'policy.denied',
          `${n} policy rule${n === 1 ? '' : 's'} with action deny ${n === 1 ? 'is' : 'are'} violated by the plan's result: nothing was sent`,
          {
            phase: 'plan',
            hint: 'tend plan shows each violation with its rule; change the intent, or the policy if the rule is wrong',
          },
        ),
        stale: [],
        unexpected: [],
      },
    };
  }
  return { ...(await backHalf(ws, options, recorder, decided, t0)), policies };
}

/** What a front half hands the back half: the plan to carry out and what led to it. */
interface Front {
  readonly planned: PlannedPass;
  readonly recovered: number;
  readonly arbitration: ArbitrationOutcome;
  /** What the feeds brought (their cursors are stored with the decisions). */
  readonly feed: FeedBatch;
  /** False for a saved plan: its decisions are made to check it, and recorded by the next pass. */
  readonly recordDecisions: boolean;
  readonly focused?: true;
}

/** A pass that ended in its front half (a refused saved plan). */
interface Ended {
  readonly result: PassResult;
}

/** The full pass's front half: observe → recover → arbitrate → hold → plan. */
async function fullFront(
  ws: Workspace,
  options: PassOptions,
  recorder: Recorder | undefined,
  t0: number,
): Promise<Front> {
  // observe
  let observation = await observeAll(ws, options, recorder, t0);
  // recover: what the journal left pending is resolved before anything new is planned
  let recovered = 0;
  if (recorder) {
    const { actor, clock, report, crash } = options;
    recovered = await recoverJournal(ws, observation.objects, actor, clock, report, crash, {
      recorder,
    });
    if (recovered > 0) {
      observation = await observe(ws, { ...observeOptions(options), now: options.clock.now() });
    }
  }
  // arbitrate
  const feed = await readFeeds(ws, options);
  const arbitration = await decide(ws, observation, feed, options.clock.now());
  // hold
  const held = await holds(ws, recovered);
  // plan
  const planned = await planPass(ws, observationAfter(observation, arbitration), {
    approveDestroy: options.approveDestroy,
    prune: options.prune,
    ...(held.size > 0 ? { held } : {}),
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
    ...(options.targets ? { targets: options.targets } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { planned, recovered, arbitration, feed, recordDecisions: true };
}

/** The steps a focused pass may carry out (an adopt only re-marks an object Tend knows by its id). */
const FOCUSED_STEPS: ReadonlySet<string> = new Set(['update', 'noop', 'adopt']);

/**
 * A focused pass's front half (see `PassOptions.focused`), or undefined when a full pass must run
 * instead — decided before anything is recorded (the full pass reads the feed again: no cursor
 * moved). observe: what the feed names since the stored cursors, one GET each (what they reference
 * from Tend's record); recover: none — an unsettled journal needs the full pass; arbitrate, hold and
 * plan only the focus.
 */
async function focusedFront(
  ws: Workspace,
  options: PassOptions,
  recorder: Recorder,
  t0: number,
): Promise<Front | undefined> {
  const { clock, report } = options;
  // observe
  const feed = await readFeeds(ws, options);
  if (await needsFullPass(ws, feed)) return undefined;
  const focus = new Set<Address>(feed.events.map((e) => e.address));
  const closure = dependencyClosure(ws.intent, focus);
  const observation = await observeFocused(ws, focus, closure, options.signal);
  if (!observation) return undefined;
  // arbitrate
  const now = clock.now();
  const memory = await readArbitrationMemory(ws, now, focus);
  const arbitration = arbitrate(ws, observation, { now, feed, memory, only: focus });
  // hold
  const paused = pausedReasons(await readPaused(ws.store, ws.name));
  // plan
  const planned = await planPass(ws, observationAfter(observation, arbitration), {
    approveDestroy: options.approveDestroy,
    prune: false,
    targets: [...focus],
    ...(paused.size > 0 ? { held: paused } : {}),
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  // Only corrections of objects that exist where Tend left them are made here; a create (someone
  // deleted it: another may have made one since), a replace (its dependents must move) or anything
  // found by matching needs what only a full observation sees.
  if (planned.plan.steps.some((s) => focus.has(s.address) && !FOCUSED_STEPS.has(s.kind))) {
    return undefined;
  }
  await recorder.markObservable();
  report({
    kind: 'observed',
    objects: observation.objects.size,
    ms: clock.now().getTime() - t0,
    focused: true,
  });
  // What the focus references was planned only to resolve references (from Tend's record of it):
  // it is not acted on, nor its status rewritten.
  const steps = planned.plan.steps.filter((s) => focus.has(s.address));
  return {
    planned: { ...planned, plan: { ...planned.plan, steps } },
    recovered: 0,
    arbitration,
    feed,
    recordDecisions: true,
    focused: true,
  };
}

/**
 * A saved plan's front half: observe → recover → arbitrate → plan. Refused (nothing sent) unless the
 * journal is settled and `checkChangeset` finds every pinned object as it was and the saved steps
 * the ones the intent gives now; then carried out exactly as saved.
 */
async function savedPlanFront(
  ws: Workspace,
  options: PassOptions,
  recorder: Recorder,
  changeset: Changeset,
  t0: number,
): Promise<Front | Ended> {
  // observe
  const observation = await observeAll(ws, options, recorder, t0);
  const refuse = (seen: Observation, refused: ChangesetRefusal): Ended => ({
    result: {
      plan: changeset.plan,
      observation: seen,
      outcomes: new Map(),
      applied: false,
      recovered: 0,
      refused,
    },
  });
  // recover: recovering the journal may send requests, and a saved plan sends nothing but itself
  const pending = await ws.store.unsettled();
  if (pending.length > 0) {
    return refuse(observation, {
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
  // arbitrate: the plan was made with the decisions of its time; the same are made (not recorded)
  // to check it, and the next pass records them
  const feed = await readFeeds(ws, options);
  const arbitration = await decide(ws, observation, feed, options.clock.now());
  // plan: the saved one, checked
  const seen = observationAfter(observation, arbitration);
  const verdict = await checkChangeset(ws, changeset, seen, arbitration.overrides);
  if (verdict.kind === 'refused') {
    return refuse(seen, {
      error: verdict.error,
      stale: verdict.stale,
      unexpected: verdict.unexpected,
    });
  }
  const planned: PlannedPass = {
    plan: verdict.plan,
    observation: seen,
    waiting: [...seen.pendingVisibility],
    ...(arbitration.overrides.size > 0 ? { overrides: arbitration.overrides } : {}),
  };
  return { planned, recovered: 0, arbitration, feed, recordDecisions: false };
}

/** The back half every pass shares: asks before destructive steps, executes, records statuses. */
async function backHalf(
  ws: Workspace,
  options: PassOptions,
  recorder: Recorder,
  front: Front,
  t0: number,
): Promise<PassResult> {
  const { clock, report } = options;
  const { planned, recovered, arbitration } = front;
  const destructive = planned.plan.steps.some(
    (s) => isDestructive(s) && !s.gated && s.blocked === undefined,
  );
  if (destructive && options.confirm && !(await options.confirm(planned.plan))) {
    return notApplied(front);
  }
  // comply: the policies on what the platform holds, before this pass changes anything (a
  // violation someone made is found, with their change, even when the pass puts it right)
  const compliance = await recorder.recordCompliance(
    await evaluateCompliance(ws, planned.observation.objects, clock.now().toISOString()),
  );
  // execute: every step verified (re-read until observed matches declared) and checked
  const executed = await executePlan(ws, planned, {
    actor: options.actor,
    clock,
    report,
    verifyTimeoutMs: options.verifyTimeoutMs,
    runChecks: options.runChecks,
    recorder,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.crash ? { crash: options.crash } : {}),
  });
  const outcomes = withDecisions(executed, arbitration);
  // comply again on what this pass changed, as it was verified (the twin)
  const changed = planned.plan.steps
    .filter((s) => s.kind !== 'noop' && outcomes.get(s.address)?.state === 'converged')
    .map((s) => s.address);
  if (changed.length > 0 && (ws.intent.policies ?? []).length > 0) {
    const twins = await ws.store.getTwins(changed);
    const after = await recorder.recordCompliance(
      await evaluateCompliance(
        ws,
        new Map(twins.map((t) => [t.address, { id: t.objectId, fields: t.fields }])),
        clock.now().toISOString(),
      ),
    );
    for (const [address, state] of after) compliance.set(address, state);
  }
  // checks join the record: one that started or stopped failing is a verdict in the ledger
  if (options.runChecks) {
    const checked = await recorder.recordCompliance(
      await evaluateChecks(ws, outcomes, compliance, clock.now().toISOString()),
    );
    for (const [address, state] of checked) compliance.set(address, state);
  }
  // record
  const { statuses, states } = statusesOf(
    ws,
    planned,
    outcomes,
    compliance,
    clock.now().toISOString(),
  );
  await recorder.recordStatuses(statuses);
  report({
    kind: 'pass-done',
    pass: options.pass ?? 1,
    ms: clock.now().getTime() - t0,
    states,
    ...(ws.origin ? { origin: ws.origin } : {}),
  });
  return {
    plan: planned.plan,
    observation: planned.observation,
    outcomes,
    applied: true,
    recovered,
    arbitration,
    ...(front.focused ? { focused: true } : {}),
  };
}

/** What observe is asked for in a pass. */
function observeOptions(options: PassOptions) {
  return {
    ...(options.visibilityWindowMs !== undefined
      ? { visibilityWindowMs: options.visibilityWindowMs }
      : {}),
    now: options.clock.now(),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/**
 * The observe phase of a full pass and of a saved plan: every provider listed. A platform that could
 * not be read (down, circuit open, unauthorised) leaves nothing known about its resources, so (apply)
 * their status says why instead of keeping a stale "converged"; one that answered is `ok` again.
 */
async function observeAll(
  ws: Workspace,
  options: PassOptions,
  recorder: Recorder | undefined,
  t0: number,
): Promise<Observation> {
  let observation: Observation;
  try {
    observation = await observe(ws, observeOptions(options));
  } catch (e) {
    const error = toTendError(e);
    await recorder?.markUnobservable(error, providerOf(ws, error));
    throw e;
  }
  await recorder?.markObservable();
  options.report({
    kind: 'observed',
    objects: observation.objects.size,
    ms: options.clock.now().getTime() - t0,
  });
  return observation;
}

/** The feeds' news since the stored cursors (a feed that cannot be read is a warning). */
function readFeeds(ws: Workspace, options: PassOptions): Promise<FeedBatch> {
  return readFeedsOrNothing(
    ws,
    options.actor.actor,
    (message) => options.report({ kind: 'warning', message }),
    options.signal,
  );
}

/** The arbitrate phase's decisions, made with what Tend remembers now (nothing is written). */
async function decide(
  ws: Workspace,
  observation: Observation,
  feed: FeedBatch,
  now: Date,
): Promise<ArbitrationOutcome> {
  const memory = await readArbitrationMemory(ws, now);
  return arbitrate(ws, observation, { now, feed, memory });
}

/**
 * The hold phase: the addresses left alone this pass, with why. A resource whose reconciling was
 * stopped by hand (paused.ts); after a recovery, one with an operation it could not resolve (the
 * platform did not answer the lookup): it may still have landed, and is never acted on twice.
 */
async function holds(ws: Workspace, recovered: number): Promise<Map<Address, string>> {
  const held = pausedReasons(await readPaused(ws.store, ws.name));
  if (recovered > 0) {
    for (const op of await ws.store.unsettled()) {
      held.set(
        op.address,
        `journal operation ${op.id} (${op.action}) is still unresolved; retried next pass before anything else is done to it`,
      );
    }
  }
  return held;
}

/**
 * The statuses a pass records (every declared resource it planned or has an outcome for: a targeted
 * or saved plan leaves the rest alone), and how many resources are in each state.
 */
function statusesOf(
  ws: Workspace,
  planned: PlannedPass,
  outcomes: ReadonlyMap<Address, ResourceOutcome>,
  compliance: ReadonlyMap<Address, ComplianceState>,
  at: string,
): { statuses: ResourceStatus[]; states: Record<ResourceState, number> } {
  const states: Record<ResourceState, number> = {
    converged: 0,
    drifted: 0,
    pending: 0,
    failing: 0,
    blocked: 0,
    error: 0,
  };
  const inPlan = new Set<Address>(planned.plan.steps.map((s) => s.address));
  const statuses: ResourceStatus[] = [];
  for (const r of ws.intent.resources) {
    if (!outcomes.has(r.address) && !inPlan.has(r.address)) continue;
    const o = outcomes.get(r.address) ?? { state: 'pending' as const, checks: [] };
    states[o.state]++;
    statuses.push({
      address: r.address,
      state: o.state,
      ...(o.objectId ? { objectId: o.objectId } : {}),
      ...(o.message ? { message: o.message } : {}),
      checks: o.checks,
      ...(compliance.has(r.address) ? { compliance: compliance.get(r.address)! } : {}),
      updatedAt: at,
    });
  }
  return { statuses, states };
}

/** The result of a pass that planned and changed nothing (a plan, or an apply the user declined). */
function notApplied(front: Front): PassResult {
  const { planned, recovered, arbitration } = front;
  const { plan, observation } = planned;
  return {
    plan,
    observation,
    outcomes: new Map(),
    applied: false,
    recovered,
    arbitration,
    ...(front.focused ? { focused: true } : {}),
  };
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

/** The provider named by an observe error's address (`provider.type`), if any. */
function providerOf(ws: Workspace, error: TendError): string | undefined {
  const name = error.address?.split('.')[0];
  return name !== undefined && ws.providers.has(name) ? name : undefined;
}
