import type { IntentOrigin } from '../core/index.js';
import type { LeaseHolder } from './store.js';

// The fleet's registry (docs/fleet.md): which workspaces a fleet runs, which workers are alive, who
// holds what. Store-wide, where a `Store` is one workspace's: only a database shared by a fleet
// (PostgreSQL) has one. Every time in it is the database's, never a worker's.

/** Where a registered workspace's intent comes from: a directory every worker can read. */
export interface DirSource {
  readonly kind: 'dir';
  /** An absolute path. */
  readonly dir: string;
}

/**
 * Where a registered workspace's intent comes from: a branch or tag of a git repository, fetched by
 * the worker that holds the workspace (docs/fleet.md, decision 0044).
 */
export interface GitSource {
  readonly kind: 'git';
  /** `https://`, `ssh://`, `git@host:path`, `file://` or an absolute path; never with credentials. */
  readonly url: string;
  /** The branch or tag followed. */
  readonly ref: string;
  /** The intent's folder inside the repository (relative, confined); absent: its root. */
  readonly path?: string;
}

/** The source of a registered workspace. */
export type WorkspaceSource = DirSource | GitSource;

/** Whether two sources name the same place. */
export function sameSource(a: WorkspaceSource, b: WorkspaceSource): boolean {
  if (a.kind === 'dir' || b.kind === 'dir') {
    return a.kind === b.kind && a.kind === 'dir' && b.kind === 'dir' && a.dir === b.dir;
  }
  return a.url === b.url && a.ref === b.ref && (a.path ?? '') === (b.path ?? '');
}

/** A source as one line: `dir /srv/x`, `git <url> <ref>[ path <path>]`. */
export function describeSource(s: WorkspaceSource): string {
  if (s.kind === 'dir') return `dir ${s.dir}`;
  return `git ${s.url} ${s.ref}${s.path ? ` path ${s.path}` : ''}`;
}

/** A workspace the fleet runs. */
export interface RegisteredWorkspace {
  readonly name: string;
  readonly source: WorkspaceSource;
  /** When it was registered (ISO, database time). */
  readonly addedAt: string;
  /** Who registered it (`user@host`). */
  readonly addedBy: string;
  /** When its holder last finished a pass (ISO, database time); absent before the first. */
  readonly lastPassAt?: string;
  /** The commit that pass planned from (a git workspace). */
  readonly lastOrigin?: IntentOrigin;
}

/** A worker as it registers itself. */
export interface WorkerRegistration {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  /** Tend's version. */
  readonly version: string;
  /** Its lease TTL: it counts as alive while its last heartbeat is younger than this. */
  readonly ttlMs: number;
  /** Its `--max-workspaces`, so that the others take what it leaves (absent: no cap). */
  readonly maxWorkspaces?: number;
}

/** A registered worker. */
export interface WorkerRecord extends WorkerRegistration {
  /** When it registered and last heartbeated (ISO, database time). */
  readonly startedAt: string;
  readonly heartbeatAt: string;
  /** Its last heartbeat is younger than its TTL by the database's clock. */
  readonly alive: boolean;
}

/** A workspace lease as the fleet sees it. */
export interface FleetLease {
  readonly workspace: string;
  readonly epoch: number;
  readonly holder: LeaseHolder;
  readonly acquiredAt: string;
  readonly expiresAt: string;
  /** Expired by the database's clock: free to take. */
  readonly expired: boolean;
}

/** How many resources of a workspace are in each state (from its statuses). */
export type StateCounts = Readonly<Record<string, number>>;

/** What adding a workspace did. */
export interface AddedWorkspace {
  /** False: it was already registered with this very source (nothing changed). */
  readonly added: boolean;
  readonly workspace: RegisteredWorkspace;
}

/**
 * The fleet's registry: the registered workspaces, the workers, the leases of every workspace. One
 * implementation, on PostgreSQL (`postgres-registry.ts`); `openRegistry` refuses any other store.
 */
export interface FleetRegistry {
  /**
   * Registers a workspace; one already registered with the same source is left as it is
   * (`added: false`), one with another source is refused (`workspace.exists`).
   */
  addWorkspace(entry: {
    readonly name: string;
    readonly source: WorkspaceSource;
    readonly addedBy: string;
  }): Promise<AddedWorkspace>;
  /** Every registered workspace, by name. */
  listWorkspaces(): Promise<RegisteredWorkspace[]>;
  /** Forgets a registration (not the workspace's memory); false when it was not registered. */
  removeWorkspace(name: string): Promise<boolean>;
  /**
   * Records that the holder of `name`'s lease at `epoch` finished a pass now (database time), and the
   * commit it planned from (a git workspace): written
   * only while that lease is still held with that epoch, in the same statement.
   */
  passDone(name: string, epoch: number, origin?: IntentOrigin): Promise<void>;

  /** Registers a worker, or records its heartbeat (database time). */
  heartbeat(worker: WorkerRegistration): Promise<void>;
  /** Every registered worker by id, alive or not (judged by the database's clock). */
  listWorkers(): Promise<WorkerRecord[]>;
  removeWorker(id: string): Promise<void>;
  /**
   * Deletes the rows of workers whose last heartbeat is older than `ttlFactor` times their own TTL
   * (database time); returns their ids.
   */
  pruneWorkers(ttlFactor: number): Promise<string[]>;

  /** The lease of every workspace that has one, by workspace, expired or not. */
  fleetLeases(): Promise<FleetLease[]>;
  /** The last epoch given for each workspace's lease (held now or not), by workspace name. */
  leaseEpochs(): Promise<Map<string, number>>;
  /** The state counts of every workspace with statuses, by workspace name. */
  stateCounts(): Promise<Map<string, StateCounts>>;

  close(): Promise<void>;
}
