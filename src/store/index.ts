// Tend's memory: one Store interface, one folder per storage dialect, one shared conformance suite
// (test/support/store-contract.ts, beside the provider contract; tests only, not exported here).
export type {
  ActionRunQuery,
  AnnouncementQuery,
  ChangeQuery,
  Lease,
  LeaseAttempt,
  LeaseHolder,
  LeaseRequest,
  LedgerCheck,
  LedgerProblem,
  LedgerVerification,
  Settlement,
  Store,
  TwinEntry,
} from './store.js';
export {
  GENESIS_HASH,
  LEDGER_FORMAT,
  keyedHash,
  unkeyedHash,
  verifyChain,
} from './ledger-chain.js';
export type {
  ForeignRecord,
  KeyedRecord,
  LedgerHead,
  LedgerRecord,
  UnkeyedRecord,
  VerifyChainOptions,
} from './ledger-chain.js';
export { MIN_LEDGER_KEY_LENGTH, ledgerKey } from './ledger-key.js';
export type { LedgerKey } from './ledger-key.js';
export { migrateStore, openFleetJobs, openRegistry, openStore, storeKind } from './open-store.js';
export type {
  FleetJobs,
  FleetListener,
  FleetListenerHandlers,
  FleetNotice,
  Job,
  JobEnd,
  JobError,
  JobState,
  NewJob,
} from './jobs.js';
export type {
  AddedWorkspace,
  DirSource,
  FleetLease,
  GitSource,
  FleetRegistry,
  RegisteredWorkspace,
  StateCounts,
  WorkerRecord,
  WorkerRegistration,
  WorkspaceSource,
} from './registry.js';
export { describeSource, sameSource } from './registry.js';
export type { StoreKind, StoreMigration } from './open-store.js';
export { withTwinCache } from './twin-cache.js';
export { isWorkspaceDirectory } from './workspace-directory.js';
export type { KnownWorkspaces, WorkspaceDirectory } from './workspace-directory.js';
export type { VersionedStore } from './twin-cache.js';
export type { StoreOptions } from './open-store.js';
export { SqliteStore, openSqliteStore } from './sqlite/sqlite-store.js';
export {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  ensurePrivateDir,
  ensurePrivateFile,
  tightenTree,
} from './private-files.js';
export type { SqliteStoreOptions } from './sqlite/sqlite-store.js';
// PostgreSQL: types only here; open-store.ts loads the implementation (and `pg`) with import().
export type { PostgresStoreOptions } from './postgres/postgres-store.js';
// The location's parser loads no driver.
export { withApplicationName } from './postgres/postgres-location.js';
// Moving one workspace's whole memory between stores (`tend store copy`).
export {
  MEMORY_KINDS,
  countMemory,
  describeCounts,
  isEmptyMemory,
  isMemoryTransfer,
  targetNotEmptyError,
} from './memory.js';
export type {
  ExportOptions,
  ImportOptions,
  ImportTarget,
  LedgerRow,
  MemoryCounts,
  MemoryTransfer,
  StoredActionRun,
  WorkspaceMemory,
} from './memory.js';
