import type { Address, Change, NewChange, Operation, ResourceStatus } from '../core/index.js';

/**
 * The twin cache entry of one managed resource: the object Tend last observed for an address. It is
 * memory, not authority: the platform is re-read on every pass, and losing this loses only history.
 */
export interface TwinEntry {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly objectId: string;
  readonly fields: Readonly<Record<string, unknown>>;
  /** Remembered from the intent so that deleting a removed stateful resource is still gated. */
  readonly stateful: boolean;
  /** Addresses this resource referenced when last declared (for the blast radius of its delete). */
  readonly dependsOn: readonly Address[];
  readonly observedAt: string;
}

/** The result written when an operation settles. */
export interface Settlement {
  readonly state: 'settled' | 'failed';
  readonly objectId?: string;
  readonly error?: string;
  readonly at: string;
}

/** Filters for reading the ledger. */
export interface ChangeQuery {
  readonly address?: Address;
  /** Only entries with seq greater than this. */
  readonly afterSeq?: number;
  /** Most recent N entries (still returned oldest first). */
  readonly limit?: number;
}

/** The result of checking the ledger's hash chain. */
export type LedgerVerification =
  | { readonly ok: true; readonly entries: number }
  | { readonly ok: false; readonly brokenAt: number; readonly reason: string };

/**
 * Tend's memory: the twin cache, the operation journal, the change ledger, feed cursors and resource
 * status. Every implementation runs the shared suite in `describe-store.ts`. Nothing stored may hold
 * a secret: callers pass hashes of desired state, never the resolved values of secret references.
 */
export interface Store {
  /** Twin cache. */
  getTwin(address: Address): Promise<TwinEntry | undefined>;
  listTwin(): Promise<TwinEntry[]>;
  putTwin(entry: TwinEntry): Promise<void>;
  deleteTwin(address: Address): Promise<void>;

  /** Journal: writes a pending operation; must be durable when the promise resolves. */
  journal(op: Operation): Promise<void>;
  /** Settles a pending operation; settling an already settled one is a no-op. */
  settle(opId: string, settlement: Settlement): Promise<void>;
  getOperation(opId: string): Promise<Operation | undefined>;
  /** Every pending operation, oldest first. */
  unsettled(): Promise<Operation[]>;
  /** Recent operations, newest last, optionally for one address. */
  operations(query?: { address?: Address; limit?: number }): Promise<Operation[]>;

  /** Ledger: appends a change, giving it the next seq and chaining its hash; returns the stored entry. */
  appendChange(change: NewChange): Promise<Change>;
  changes(query?: ChangeQuery): Promise<Change[]>;
  verifyLedger(): Promise<LedgerVerification>;

  /** Audit feed cursors, per provider name. */
  getCursor(provider: string): Promise<string | undefined>;
  setCursor(provider: string, cursor: string): Promise<void>;

  /** Resource status. */
  putStatus(status: ResourceStatus): Promise<void>;
  listStatus(): Promise<ResourceStatus[]>;
  deleteStatus(address: Address): Promise<void>;

  close(): Promise<void>;
}
