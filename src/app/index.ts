// The application layer (DESIGN.md §7): every use case as a function returning plain data and
// reporting events. The CLI (and later the HTTP API and the MCP server) only parse and render.
export type { AppContext, ProcessInfo, StoreOpenOptions } from './context.js';
export { defaultContext } from './context.js';
export type { AppEvent, AppReporter } from './events.js';
export type {
  ApiCall,
  ApiCallObserver,
  ProviderFactory,
  ProviderRegistry,
  ProviderRequest,
} from './providers.js';
export { connectOpenApiProvider, connectProvider, defaultProviders } from './providers.js';
export { processUserAgent } from './user-agent.js';
export type {
  LoadedIntent,
  OpenedWorkspace,
  OpenWorkspaceAtOptions,
  WorkspaceAccess,
  WorkspaceNameSource,
  WorkspaceSelection,
} from './workspace.js';
export {
  chooseWorkspaceName,
  defaultStorePath,
  derivedWorkspaceName,
  IntentError,
  loadIntentWithProviders,
  openWorkspace,
  openWorkspaceAt,
  storeFlag,
  storeLocation,
} from './workspace.js';
export type { HeldLease, LeaseOptions } from './lease.js';
export { acquireWorkspaceLease, LEASE_TTL_MS, workspaceLockedError } from './lease.js';
export type { LeasedWorkspace, WithWorkspaceOptions } from './with-workspace.js';
export { withWorkspace } from './with-workspace.js';
export type { ApplyVerdict, OutcomeSummary } from './outcomes.js';
export { summarizeOutcomes, verdictOf } from './outcomes.js';
export type { SqlRunnerOptions } from './sql-runner.js';
export { sqlRunner } from './sql-runner.js';
export type { ValidateReport, ValidateRequest } from './validate.js';
export { validate } from './validate.js';
export type { LiveFindings, Orphan, PlanReport, PlanRequest } from './plan.js';
export { liveFindings, plan } from './plan.js';
export type { PlanStepsView, PlanView } from './plan-view.js';
export { planStepsView, planView } from './plan-view.js';
export type { ApplyChangesetRequest, ApplyReport, ApplyRequest } from './apply.js';
export { apply, applyChangeset } from './apply.js';
export { isChangesetPath } from '../engine/index.js';
export type { LastPass, RunReport, RunRequest } from './run.js';
export { run } from './run.js';
export type { PruneReport, PruneRequest, PruneVerdict } from './prune.js';
export { prune } from './prune.js';
export type { PrunePlan, PruneResult, PruneTarget } from '../engine/index.js';
export type { StatusReport, StatusRequest } from './status.js';
export { readStatus, SERVED_STATUS_OFFLINE, status } from './status.js';
export type { HeldWorkspace, HoldOptions } from './held-workspace.js';
export { holdWorkspace } from './held-workspace.js';
export type { HistoryReport, HistoryRequest, LedgerReader } from './history.js';
export { history, readChanges } from './history.js';
export type { ComplianceAnswer, ComplianceRequest } from './compliance.js';
export {
  compliance,
  COMPLIANCE_DEFAULT_LIMIT,
  COMPLIANCE_DEFAULT_SINCE,
  complianceSarif,
  complianceView,
  readCompliance,
} from './compliance.js';
export type { ChangeFilter, ChangeFilterInput } from './change-filter.js';
export {
  addressMatches,
  CHANGE_SOURCES,
  matchesChange,
  readChangeFilter,
  timeBound,
  touchesField,
} from './change-filter.js';
export type {
  ChangedBy,
  DriftedField,
  DriftReport,
  DriftRequest,
  MissingResource,
} from './drift.js';
export { drift } from './drift.js';
export type { ExplainReport, ExplainRequest } from './explain.js';
export { EXPLAIN_ENTRIES, explain, parseTarget, UNKNOWN_TARGET_CODES } from './explain.js';
export type { DecisionNow, FieldOwner, FieldReport, FieldState } from './explain-fields.js';
export { explainFields, SECRET_TEXT } from './explain-fields.js';
export type {
  LedgerCheckpoint,
  LedgerCheckpointRequest,
  LedgerReport,
  LedgerVerdict,
  LedgerVerifyRequest,
} from './ledger.js';
export { checkpointLedger, readCheckpoint, verifyLedger, writeCheckpoint } from './ledger.js';
export type { LedgerKeySource, LedgerKeyUse, ResolvedLedgerKey } from './ledger-key.js';
export {
  LEDGER_KEY_FILE_VARIABLE,
  LEDGER_KEY_VARIABLE,
  resolveLedgerKey,
  userLedgerKeyPath,
} from './ledger-key.js';
export type { ExcludedObject, ImportReport, ImportRequest } from './import.js';
export { importObjects } from './import.js';
export type {
  AnnounceReport,
  AnnounceRequest,
  AnnouncementItem,
  AnnouncementList,
  ListAnnouncementsRequest,
} from './announce.js';
export {
  announce,
  AnnouncementError,
  listAnnouncements,
  readAnnouncementFile,
} from './announce.js';
export type { AcceptReport, AcceptRequest, AcceptValueSource } from './accept.js';
export { accept, acceptIn, ACCEPT_USAGE_ERRORS } from './accept.js';
export type { InspectRequest } from './inspect.js';
export type { InspectReport, InspectedOperation, InspectedType } from '../providers/index.js';
export { inspectProvider, inspectSkeleton, writeOverlaySkeleton } from './inspect.js';
// What adapters need from below to render and test the layer's results.
export type { CrashHook, EngineEvent, FieldDecision, ResourceOutcome } from '../engine/index.js';
export { crashHookFrom } from '../engine/index.js';
export type {
  ActionInfo,
  ActionList,
  ActionReport,
  ActionRequest,
  ActionStepReport,
  ListActionsRequest,
} from './action.js';
export { ACTION_USAGE_CODES, ActionUsageError, listActions, runAction } from './action.js';
export type { ActionCrashHook, ActionEvent } from '../engine/index.js';
export { actionCrashHookFrom } from '../engine/index.js';
export type { ProposedField, ProposeReport, ProposeRequest } from './propose.js';
export { propose, PROPOSE_USAGE_ERRORS } from './propose.js';
export type { PauseRequest, PausedReport } from './pause.js';
export { pauseResource, resumeResource } from './pause.js';
export type { PausedResource } from '../engine/index.js';
export type { TwinEdge, TwinGraph, TwinNode } from './graph.js';
export { readTwinGraph, twinGraph } from './graph.js';
export type { SavedPlan, SavedPlanReport } from './saved-plans.js';
export { applySavedPlan, lastSavedPlan, plansDir, readSavedPlan, savePlan } from './saved-plans.js';
export type { ServeLoop } from './serve-loop.js';
export { startServeLoop } from './serve-loop.js';
export type { StoreMigrateReport, StoreMigrateRequest } from './store-migrate.js';
export { migrateStoreSchema } from './store-migrate.js';
export type { CopiedLedger, StoreCopyReport, StoreCopyRequest, StoreSide } from './store-copy.js';
export { copyStore } from './store-copy.js';
export type { MemoryCounts } from '../store/index.js';
export { describeCounts } from '../store/index.js';
export type {
  AddWorkspaceReport,
  AddWorkspaceRequest,
  FleetSelection,
  FleetStatus,
  FleetWorkerView,
  FleetWorkspaceView,
} from './fleet.js';
export { describeSource } from '../store/index.js';
export {
  checkGitPath,
  checkGitRef,
  checkGitUrl,
  defaultGitCacheDir,
  GitCheckout,
  gitSource,
} from './git-source.js';
export type { GitSnapshot } from './git-source.js';
export {
  addWorkspace,
  checkWorkspaceName,
  fleetStatus,
  listWorkspaces,
  removeWorkspace,
} from './fleet.js';
export type {
  ReleaseReason,
  WorkerDeps,
  WorkerEvent,
  WorkerReport,
  WorkerRequest,
} from './worker.js';
export { defaultWorkerId, runWorker } from './worker.js';
export { targetShare } from './worker-target.js';
export type { TargetInput } from './worker-target.js';
export type { WorkerProbe } from './worker-probe.js';
export { probes, WorkerHealth } from './worker-probe.js';
export type { Readiness } from './readiness.js';
export { fleetReadiness, READINESS_TIMEOUT_MS, storeReadiness } from './readiness.js';
export type {
  ActionJobInput,
  ApplyJobInput,
  JobEvent,
  JobKind,
  JobRunnerOptions,
  JobView,
} from './fleet-jobs.js';
export { JOB_KINDS, jobOf, jobView, newJobId, runQueuedJobs } from './fleet-jobs.js';
export type { FleetServe, FleetServeRequest } from './fleet-serve.js';
export { MAX_JOB_WAIT_S, openFleetServe } from './fleet-serve.js';
export type { FleetWorkspaces, FleetWorkspacesOptions } from './fleet-workspaces.js';
export { fleetWorkspacesOf, openFleetWorkspaces, selectRegistered } from './fleet-workspaces.js';
export type { ProbeObjectRef, ProbeReport, ProbeRequest, ProbedType } from './probe.js';
export { PROBE_USAGE_ERRORS, probeProvider } from './probe.js';
