import type {
  ActionRun,
  Address,
  Announcement,
  Change,
  FieldClaim,
  NewChange,
  Operation,
  ResourceStatus,
} from '../core/index.js';
import type { LedgerHead } from './ledger-chain.js';

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
  /**
   * Write-only fields (accepted on create, never returned): a hash of each value Tend last sent, so
   * a later change in the intent is seen (it cannot be compared with the platform). Absent for an
   * object Tend did not create (adopted): what it was created with is not known.
   */
  readonly sent?: Readonly<Record<string, string>>;
}

/** The result written when an operation settles. */
export interface Settlement {
  readonly state: 'settled' | 'failed';
  readonly objectId?: string;
  readonly error?: string;
  readonly at: string;
}

/** Who holds a workspace lease: enough for a person to find the process. */
export interface LeaseHolder {
  /** The command, e.g. `tend run`. */
  readonly command: string;
  readonly pid: number;
  readonly host: string;
  /** When the holder process started (ISO time). */
  readonly startedAt: string;
  /**
   * The id of the `tend worker` holding it, when a worker does (a fleet: docs/fleet.md). Stored by
   * PostgreSQL; a SQLite store (one process per file, no fleet) does not keep it.
   */
  readonly worker?: string;
}

/**
 * The exclusive right to mutate one workspace. `epoch` grows by one at every acquisition (a fencing
 * token): a writer whose lease was taken over holds a smaller epoch, and the store refuses its writes.
 */
export interface Lease {
  readonly workspace: string;
  readonly holder: LeaseHolder;
  readonly epoch: number;
  readonly acquiredAt: string;
  /** The lease is free to take after this time unless renewed (ISO time). */
  readonly expiresAt: string;
}

/** A request to take a workspace's lease. */
export interface LeaseRequest {
  readonly workspace: string;
  readonly holder: LeaseHolder;
  /** How long the lease lasts without a renewal. */
  readonly ttlMs: number;
  /**
   * Asked about a current, unexpired lease held by someone else: true takes it over (its holder is
   * known to be dead, e.g. a pid that no longer runs on this host).
   */
  readonly takeOver?: (current: Lease) => boolean;
}

/** The outcome of one attempt to take a lease. */
export type LeaseAttempt =
  | { readonly acquired: true; readonly lease: Lease; readonly tookOver?: Lease }
  | { readonly acquired: false; readonly current: Lease };

/** Filters for reading the ledger. */
export interface ChangeQuery {
  readonly address?: Address;
  /** Only entries with seq greater than this. */
  readonly afterSeq?: number;
  /** Most recent N entries (still returned oldest first). */
  readonly limit?: number;
}

/** Filters for reading announcements. */
export interface AnnouncementQuery {
  readonly address?: Address;
  /** Only announcements not expired at this time (ISO): their expiry is after it. */
  readonly activeAt?: string;
}

/**
 * Why a ledger failed its check: an entry `edited` (its hash does not match), entries `missing`
 * (a gap, or a tail shorter than the head or a checkpoint), entries `inserted` around the store, an
 * entry `reordered`, a `broken-link` (an entry does not follow the one before it), the last entry
 * `replaced` (not the recorded head), a `downgrade` (an unkeyed entry after keyed ones), an
 * `unknown-format`, keyed entries written with another key than the one given (`wrong-key`: every
 * keyed entry; `key-changed`: from some entry on), or an entry that no longer matches a checkpoint.
 */
export type LedgerProblem =
  | 'edited'
  | 'missing'
  | 'inserted'
  | 'reordered'
  | 'broken-link'
  | 'replaced'
  | 'downgrade'
  | 'unknown-format'
  | 'wrong-key'
  | 'key-changed'
  | 'checkpoint';

/** The result of checking the ledger's hash chain. */
export type LedgerVerification =
  | {
      readonly ok: true;
      readonly entries: number;
      /** The last entry's hash (64 zeros when empty): what a checkpoint records. */
      readonly head: string;
      /** Entries 1 to `unkeyed` predate the keyed ledger (plain SHA-256): 0 when none do. */
      readonly unkeyed: number;
      /** Keyed entries whose hash was not checked because no key was given: 0 with a key. */
      readonly unchecked: number;
      /** The id of the key the keyed entries were checked with, when one was given. */
      readonly keyId?: string;
      /** What the check could not cover, one sentence each. */
      readonly warnings: readonly string[];
    }
  | {
      readonly ok: false;
      /** The first entry found bad. */
      readonly brokenAt: number;
      readonly problem: LedgerProblem;
      /** What is wrong with it, in plain words. */
      readonly reason: string;
    };

/** What the ledger is verified against besides itself. */
export interface LedgerCheck {
  /**
   * A checkpoint kept outside the store (`tend ledger checkpoint`): the entry at its seq must still
   * have its hash, and the ledger must not have shrunk below it.
   */
  readonly checkpoint?: LedgerHead;
}

/**
 * Tend's memory: the twin cache, the operation journal, the change ledger, feed cursors, resource
 * status, announcements and field claims. Every implementation runs the shared suite in `test/support/store-contract.ts`. Nothing stored may hold
 * a secret: callers pass hashes of desired state, never the resolved values of secret references.
 *
 * Every write is committed, in call order, when its promise resolves. The twin, settle, ledger and
 * status writes may reach the disk only with the next other write (a power cut can lose the last of
 * them, and recovery then resolves their operations again: docs/decisions/0028-relaxed-settles.md);
 * every other write is on disk when it resolves.
 */
export interface Store {
  /** Twin cache. */
  getTwin(address: Address): Promise<TwinEntry | undefined>;
  /** The entries of these addresses that exist, in address order, in one read (duplicates once). */
  getTwins(addresses: readonly Address[]): Promise<TwinEntry[]>;
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

  /**
   * Ledger: appends a change, giving it the next seq, chaining it to the previous entry and signing
   * it with the ledger key the store was opened with (`store.ledger-read-only` without one); returns
   * the stored entry.
   */
  appendChange(change: NewChange): Promise<Change>;
  /** Ledger entries oldest first; needs no key. Entries from before the keyed ledger read as written. */
  changes(query?: ChangeQuery): Promise<Change[]>;
  /**
   * Checks the whole ledger (see `verifyChain`): with the store's key every keyed entry's hash is
   * checked; without one only the links, the head and the unkeyed entries are, and the result says so.
   */
  verifyLedger(check?: LedgerCheck): Promise<LedgerVerification>;

  /** Audit feed cursors, per provider name. */
  getCursor(provider: string): Promise<string | undefined>;
  setCursor(provider: string, cursor: string): Promise<void>;

  /** Resource status. */
  putStatus(status: ResourceStatus): Promise<void>;
  listStatus(): Promise<ResourceStatus[]>;
  deleteStatus(address: Address): Promise<void>;

  /**
   * Announcements: what actors declared they set, with why and until when (core/announcement.ts).
   * Memory like the twin, not the ledger: they explain drift when it is observed. Storing the same id
   * again is a no-op (the id is a hash of the content and the time it was made). The caller passes
   * values already redacted: an announcement never holds a secret.
   */
  putAnnouncement(announcement: Announcement): Promise<void>;
  /** Announcements oldest first (by createdAt, then in storing order), filtered by the query. */
  announcements(query?: AnnouncementQuery): Promise<Announcement[]>;

  /**
   * Field ownership: the claim an actor holds on a field after a decision in its favour
   * (core/arbitration.ts). One claim per address and field; putting one replaces the one there. The
   * intent owns every declared field no claim covers. Values are stored as JSON, as the caller passes
   * them: already redacted, never a secret.
   */
  putClaim(claim: FieldClaim): Promise<void>;
  /** Removes the claim on a field; removing one that is not there is a no-op. */
  deleteClaim(address: Address, field: string): Promise<void>;
  /** Every claim (of one address, when given), ordered by address, then field. */
  claims(address?: Address): Promise<FieldClaim[]>;

  /**
   * Leases (one writer per workspace). `acquireLease` tries once: it takes a free or expired lease (or
   * one `takeOver` approves) with the next epoch, and from then on every write through this store is
   * fenced — committed only while the stored lease still has that epoch, else refused with
   * `store.lease-lost` (so a writer that was taken over stops before its next mutation).
   */
  acquireLease(request: LeaseRequest): Promise<LeaseAttempt>;
  /** Extends a held lease by `ttlMs`; false (and fenced from now on) when it was taken over. */
  renewLease(workspace: string, epoch: number, ttlMs: number): Promise<boolean>;
  /** Gives a held lease up (a no-op when it was taken over); writes are no longer fenced. */
  releaseLease(workspace: string, epoch: number): Promise<void>;
  /** The current lease of a workspace, expired or not; undefined when never taken or released. */
  getLease(workspace: string): Promise<Lease | undefined>;

  /**
   * Small settings the store keeps for its workspace (e.g. `workspace` — the name first used with
   * this store). Never a secret.
   */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  // ---- Day-2 action runs (core/action.ts, docs/actions.md); kept apart from the journal and ledger.

  /**
   * Writes a run as it is now — its state and every step record — replacing what was stored for its
   * id, in one transaction; durable when the promise resolves (a run is recorded before its first
   * step, a step after it is journaled and again when it settles). Fenced by the lease like every
   * write. Never a secret: parameters and messages are plain, and redacted as a last resort.
   */
  putActionRun(run: ActionRun): Promise<void>;
  getActionRun(id: string): Promise<ActionRun | undefined>;
  /**
   * Runs, oldest first: those still `running` (`unfinished: true`), of one address and action when
   * given, at most `limit` of the most recent.
   */
  actionRuns(query?: ActionRunQuery): Promise<ActionRun[]>;

  close(): Promise<void>;
}

/** Filters for reading action runs. */
export interface ActionRunQuery {
  readonly address?: Address;
  readonly action?: string;
  /** Only runs still `running` (interrupted, or running now). */
  readonly unfinished?: boolean;
  /** Most recent N runs (still returned oldest first). */
  readonly limit?: number;
}
