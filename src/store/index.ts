// Tend's memory: one Store interface, one folder per storage dialect, one shared conformance suite
// (describe-store.ts, imported directly by tests so vitest stays out of the runtime surface).
export type {
  AnnouncementQuery,
  ChangeQuery,
  Lease,
  LeaseAttempt,
  LeaseHolder,
  LeaseRequest,
  LedgerVerification,
  Settlement,
  Store,
  TwinEntry,
} from './store.js';
export { GENESIS_HASH, changeHash, verifyChain } from './ledger-chain.js';
export type { LedgerHead } from './ledger-chain.js';
export { openStore } from './open-store.js';
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
