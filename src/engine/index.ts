// The engine: the loop that observes, plans, executes with the journal, verifies and keeps going.
export type { Clock } from './clock.js';
export { systemClock } from './clock.js';
export type { CrashHook, CrashWhen, WritePoint } from './crash-points.js';
export { CRASH_ACTIONS, crashHookFrom, noCrash, WRITE_POINTS } from './crash-points.js';
export type { EngineEvent, Reporter } from './events.js';
export type { ResourceOutcome } from './executor.js';
export { ingestFeed } from './feed.js';
export type { Observation } from './observe.js';
export { observe } from './observe.js';
export type { PassOptions, PassResult } from './reconciler.js';
export { reconcilePass, tendActor } from './reconciler.js';
export type { RunOptions } from './runner.js';
export { runContinuously } from './runner.js';
export type { Workspace, WorkspaceOptions } from './workspace.js';
export { defaultStorePath, IntentError, loadWorkspaceIntent, openWorkspace } from './workspace.js';
export type {
  HeldTarget,
  PrunePlan,
  PrunePlanOptions,
  PruneOptions,
  PruneResult,
  PruneTarget,
} from './prune.js';
export { executePrune, planPrune } from './prune.js';
