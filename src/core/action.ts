// Day-2 actions (DESIGN.md §2 "action"): a named procedure on a resource — rotate a password,
// snapshot, restart — run as a durable workflow of journaled steps. This file holds the pure part:
// what a provider declares, what a run records, and the state machine that says which step comes
// next after a start, a failure or a crash. The engine (src/engine/actions) carries it out.
import type { Address } from './address.js';
import type { ActorKind, Motivation } from './attribution.js';
import type { SecretRegistry } from './redact.js';
import { setKey } from './safe-keys.js';
import { nearMatches } from './similar.js';

/** One parameter an action takes (`--param name=value`). Values are text; never secrets. */
export interface ActionParamSpec {
  readonly name: string;
  readonly description: string;
  /** Required parameters have no default; a run without one is refused before anything happens. */
  readonly required?: boolean;
  readonly default?: string;
}

/** What a step's work or verification reports: one line of evidence, never a secret. */
export interface StepReport {
  readonly ok: boolean;
  readonly message: string;
}

/**
 * One named step of an action. `run` does the work and must be idempotent or verifiable: after a
 * crash while it ran (its outcome unknown) the runner calls `verify` first, and runs it again only
 * when the verification says its effect is not there. `verify` never mutates; it is also what
 * settles the step after a normal `run` (a step is settled only when its verification holds).
 */
export interface ActionStep {
  readonly name: string;
  readonly description: string;
  /** Does the step's work; throws (a TendError) when it cannot. Returns evidence for the run record. */
  run(ctx: ActionContext): Promise<string>;
  /** Whether the step's effect holds now. */
  verify(ctx: ActionContext): Promise<StepReport>;
}

/** What a resource type offers as a Day-2 action (`Provider.actions`). */
export interface ActionDefinition {
  readonly name: string;
  readonly description: string;
  readonly params: readonly ActionParamSpec[];
  /** The fields of the object the action changes (recorded in the ledger), e.g. `password`. */
  readonly changes: readonly string[];
  readonly steps: readonly ActionStep[];
}

/** What an action's steps are handed: the resource, the parameters and the outside world. */
export interface ActionContext {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  /** The type within its provider (`role`). */
  readonly resourceType: string;
  /** The declared spec as written (secret references unresolved). */
  readonly spec: Readonly<Record<string, unknown>>;
  /** The platform's id of the object, when Tend remembers one. */
  readonly objectId?: string;
  readonly params: Readonly<Record<string, string>>;
  /** The intent directory (relative paths in parameters and specs are relative to it). */
  readonly dir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Every secret a step generates or reads is registered here before anything could print it. */
  readonly secrets: SecretRegistry;
  readonly signal?: AbortSignal;
  /**
   * Called right before a step sends a change (WriteContext.fence): throws when the runner may no
   * longer hold the workspace's lease, and then nothing is sent. The runner passes it before every
   * step's work too.
   */
  readonly fence?: () => void;
  /** One line of progress for people (stderr), never a secret. */
  progress(message: string): void;
}

/** A run's state: `running` until every step settled (`done`) or one failed (`failed`). */
export type ActionRunState = 'running' | 'done' | 'failed';

/** A step's state: `started` (journaled, outcome unknown until settled), `settled`, `failed`. */
export type ActionStepState = 'started' | 'settled' | 'failed';

/** The record of one step of a run. */
export interface ActionStepRecord {
  readonly index: number;
  readonly name: string;
  readonly state: ActionStepState;
  /** How many times the step's work was started (a redo after a crash adds one). */
  readonly attempts: number;
  readonly startedAt: string;
  readonly settledAt?: string;
  /** Evidence (settled) or the reason (failed); never a secret. */
  readonly message?: string;
}

/** Who runs an action and why, as the ledger records it. */
export interface ActionActor {
  readonly actor: string;
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: Motivation;
}

/** One run of an action on a resource: recorded before its first step, each step settled after. */
export interface ActionRun {
  readonly id: string;
  readonly address: Address;
  readonly type: string;
  readonly action: string;
  readonly params: Readonly<Record<string, string>>;
  readonly actor: ActionActor;
  readonly state: ActionRunState;
  readonly createdAt: string;
  readonly finishedAt?: string;
  readonly error?: string;
  /** The step records, in step order (a step not started yet has none). */
  readonly steps: readonly ActionStepRecord[];
}

/**
 * What to do next with a run:
 * - `start`: step `index` was never started; journal it and run it;
 * - `verify-first`: step `index` was started and its outcome is unknown (a crash): verify it, then
 *   settle it or redo it;
 * - `complete`: every step is settled; mark the run done;
 * - `finished`: the run is over (done or failed); nothing to do.
 */
export type ActionMove =
  | { readonly kind: 'start'; readonly index: number }
  | { readonly kind: 'verify-first'; readonly index: number }
  | { readonly kind: 'complete' }
  | { readonly kind: 'finished' };

/**
 * The state machine of a run: the next move given what was recorded. Throws when the records do not
 * fit the definition's steps (Tend was upgraded and the action's steps changed under an unfinished
 * run): resuming then could skip or repeat work.
 */
export function nextMove(run: ActionRun, stepNames: readonly string[]): ActionMove {
  if (run.state !== 'running') return { kind: 'finished' };
  run.steps.forEach((s, i) => {
    if (s.index !== i || stepNames[i] !== s.name) {
      throw new Error(
        `run ${run.id} recorded step ${i + 1} as "${s.name}", but ${run.action} now has ${stepNames[i] === undefined ? 'no such step' : `"${stepNames[i]}" there`}`,
      );
    }
  });
  for (let i = 0; i < stepNames.length; i++) {
    const s = run.steps[i];
    if (s === undefined) return { kind: 'start', index: i };
    if (s.state === 'started') return { kind: 'verify-first', index: i };
    if (s.state === 'failed') return { kind: 'finished' };
  }
  return { kind: 'complete' };
}

/** The run with step `index` journaled as started (a new record, or one more attempt). */
export function stepStarted(run: ActionRun, index: number, name: string, at: string): ActionRun {
  const previous = run.steps[index];
  const record: ActionStepRecord = {
    index,
    name,
    state: 'started',
    attempts: (previous?.attempts ?? 0) + 1,
    startedAt: previous?.startedAt ?? at,
  };
  return { ...run, steps: [...run.steps.slice(0, index), record] };
}

/** The run with step `index` settled (or failed) with its evidence. */
export function stepEnded(
  run: ActionRun,
  index: number,
  state: 'settled' | 'failed',
  message: string,
  at: string,
): ActionRun {
  const s = run.steps[index];
  if (s === undefined) throw new Error(`step ${index + 1} of run ${run.id} was never started`);
  const ended: ActionStepRecord = { ...s, state, settledAt: at, message };
  const steps = run.steps.map((x, i) => (i === index ? ended : x));
  return state === 'failed'
    ? { ...run, steps, state: 'failed', finishedAt: at, error: `${s.name}: ${message}` }
    : { ...run, steps };
}

/** The run marked done. */
export function runDone(run: ActionRun, at: string): ActionRun {
  return { ...run, state: 'done', finishedAt: at };
}

/** A parameter problem: which parameter, and what to write instead. */
export interface ParamProblem {
  readonly param: string;
  readonly message: string;
}

/**
 * Reads `--param name=value` pairs against an action's parameters: every problem at once (an
 * unknown name with near matches, a missing required one, a name given twice); defaults filled in.
 */
export function readActionParams(
  specs: readonly ActionParamSpec[],
  given: readonly string[],
):
  | { readonly ok: true; readonly params: Record<string, string> }
  | { readonly ok: false; readonly problems: readonly ParamProblem[] } {
  const problems: ParamProblem[] = [];
  const values = new Map<string, string>();
  const names = specs.map((s) => s.name);
  for (const pair of given) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      problems.push({
        param: pair,
        message: `\`${pair}\` is not name=value; write --param ${names[0] ?? 'name'}=…`,
      });
      continue;
    }
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!names.includes(name)) {
      const near = nearMatches(name, names);
      problems.push({
        param: name,
        message: `unknown parameter \`${name}\`; ${near.length > 0 ? `did you mean ${near.join(' or ')}?` : names.length > 0 ? `this action takes ${names.join(', ')}` : 'this action takes no parameters'}`,
      });
      continue;
    }
    if (values.has(name)) {
      problems.push({ param: name, message: `parameter \`${name}\` is given twice; give it once` });
      continue;
    }
    values.set(name, value);
  }
  const params: Record<string, string> = {};
  for (const spec of specs) {
    const v = values.get(spec.name) ?? spec.default;
    if (v === undefined) {
      if (spec.required) {
        problems.push({
          param: spec.name,
          message: `parameter \`${spec.name}\` is required: ${spec.description}; write --param ${spec.name}=…`,
        });
      }
      continue;
    }
    setKey(params, spec.name, v);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, params };
}
