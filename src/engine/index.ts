// The engine: the loop that observes, plans, executes with the journal, verifies and keeps going.
export type { Clock } from './clock.js';
export { monotonicNow, steppedClock, systemClock } from './clock.js';
export type { ChangesetPlanOptions, ChangesetVerdict } from './changeset.js';
export {
  changesetRefusal,
  checkChangeset,
  makeChangeset,
  pinsOf,
  staleChangesetError,
  staleSteps,
  unexpectedSteps,
} from './changeset.js';
export {
  isChangesetPath,
  MAX_CHANGESET_BYTES,
  readChangeset,
  writeChangeset,
} from './changeset-file.js';
export type {
  CrashHook,
  CrashPoint,
  CrashWhen,
  PassWritePoint,
  WritePoint,
} from './crash-points.js';
export {
  CRASH_ACTIONS,
  crashHookFrom,
  noCrash,
  PASS_WRITE_POINTS,
  WRITE_POINTS,
} from './crash-points.js';
export type { EngineEvent, Reporter } from './events.js';
export type { ResourceOutcome } from './executor.js';
export type {
  ArbitrationOutcome,
  ArbitrationWrite,
  FieldDecision,
  FieldOverride,
} from './arbitrate.js';
export {
  arbitrate,
  attributionOf,
  declaredDrift,
  observationAfter,
  policyOfWorkspace,
} from './arbitrate.js';
export type { ArbitrationMemory, FeedBatch, FeedEvent } from './arbitration-inputs.js';
export { readArbitrationMemory, readFeeds, readFeedsOrNothing } from './arbitration-inputs.js';
export type { Observation } from './observe.js';
export {
  awaitsVisibility,
  DEFAULT_VISIBILITY_WINDOW_MS,
  observe,
  visibilityWindowOf,
} from './observe.js';
export type { PassOptions, PassResult } from './reconciler.js';
export { reconcilePass, tendActor } from './reconciler.js';
export type { ProviderState } from './recorder.js';
export { PROVIDER_STATE_KEY, Recorder } from './recorder.js';
export { onlyTheRecorderWrites } from './store-writer.js';
export type { BetweenPasses, PassReport, RunOptions, RunOutcome } from './runner.js';
export { runContinuously } from './runner.js';
export type { Workspace, WorkspaceParts } from './workspace.js';
export { closeProviders, createWorkspace, declaredByAddress, secretFields } from './workspace.js';
export type { SendFence } from './send-fence.js';
export { createSendFence, fencedProvider } from './send-fence.js';
export { readSecret } from './secrets.js';
export type { PausedResource } from './paused.js';
export { PAUSED_KEY, pausedReasons, readPaused } from './paused.js';
export type {
  HeldTarget,
  PrunePlan,
  PrunePlanOptions,
  PruneOptions,
  PruneResult,
  PruneTarget,
} from './prune.js';
export { executePrune, planPrune } from './prune.js';
export type {
  ActionCrashHook,
  ActionCrashPoint,
  ActionEvent,
  CarryOutOptions,
  CarryOutResult,
} from './actions/index.js';
export {
  ACTION_CRASH_POINTS,
  actionCrashHookFrom,
  carryOutRun,
  noActionCrash,
} from './actions/index.js';
