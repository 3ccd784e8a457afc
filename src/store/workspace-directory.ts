import type { Store } from './store.js';

/** Some of the workspaces a shared store holds, and how many it holds in all. */
export interface KnownWorkspaces {
  /** Names, sorted as bytes; at most the number asked for. */
  readonly names: readonly string[];
  readonly total: number;
}

/**
 * What a store shared by many workspaces (PostgreSQL) says about the workspaces in it. A SQLite file
 * is one workspace's and has no such thing. A workspace is in the store once it wrote anything to it
 * (its first apply, run, import, announcement or pause); opening a store for a name writes nothing,
 * so a mistyped name is not added by reading.
 */
export interface WorkspaceDirectory {
  /** Whether the workspace this store was opened for ever wrote to it. */
  workspaceKnown(): Promise<boolean>;
  /** Up to `limit` of the workspaces that wrote to the store, by name, and how many there are. */
  knownWorkspaces(limit: number): Promise<KnownWorkspaces>;
}

/** Whether a store can tell which workspaces it holds (a shared database). */
export function isWorkspaceDirectory(store: Store): store is Store & WorkspaceDirectory {
  const s = store as Partial<WorkspaceDirectory>;
  return typeof s.workspaceKnown === 'function' && typeof s.knownWorkspaces === 'function';
}
