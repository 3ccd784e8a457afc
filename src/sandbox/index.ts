// The sandbox platform: a local HTTP stand-in for a cloud, for demos and tests. It is a separate
// platform, not part of the engine: it imports nothing of Tend's, and Tend manages it only through
// the OpenAPI document it serves at /openapi.json (a copy is committed as openapi.json: the document
// of a sandbox that may switch eventual consistency on, which promises nothing about its reads).
export { createSandbox } from './app.js';
export type { Sandbox, SandboxOptions, SandboxStats } from './app.js';
export { startSandbox } from './server.js';
export type { ListenOptions, RunningSandbox } from './server.js';
export { mergeFaults, NO_FAULTS } from './faults.js';
export type { FaultKind, FaultSettings } from './faults.js';
export { requestLogEntry, requestLogLine, RequestLogFile, MAX_USER_AGENT } from './request-log.js';
export type { ArrivedRequest, RequestLogEntry } from './request-log.js';
export { SandboxError } from './errors.js';
export type { ErrorBody } from './errors.js';
export { buildOpenApiDocument } from './openapi.js';
export { TYPES } from './spec.js';
export type { FieldSpec, TypeName, TypeSpec } from './spec.js';
export type { AuditEntry, SandboxState, StateSnapshot, StoredObject } from './store.js';
export type { OracleObject } from './resources.js';
export type { LifecycleEvaluation } from './lifecycle.js';
export { sandboxClient } from './client.js';
export type { CallOptions, SandboxClient, SandboxReply, SandboxTarget } from './client.js';
export {
  ActorError,
  autoscaler,
  consoleEdit,
  costOptimiser,
  findService,
  planAutoscaler,
  planConsole,
  planCostOptimiser,
  planScanner,
  scanner,
  SCRIPTED_ACTORS,
} from './actors.js';
export type {
  ActorOptions,
  ActorPlan,
  ActorResult,
  AutoscalerOptions,
  ConsoleOptions,
  CostOptimiserOptions,
  ScannerOptions,
  ScriptedActor,
  ServiceObject,
} from './actors.js';
