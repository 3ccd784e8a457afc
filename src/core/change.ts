import type { Address } from './address.js';
import type { RecordedDecision } from './arbitration.js';
import type { ActorKind, Motivation } from './attribution.js';
import type { ComplianceRecord } from './compliance.js';

/** Where Tend learned of a change. */
export type ChangeSource = 'tend' | 'audit' | 'announcement' | 'unknown';

/**
 * The commit an intent was read from: a git workspace's passes each plan from one commit of its
 * repository (docs/fleet.md), and every ledger entry such a pass writes names it.
 */
export interface IntentOrigin {
  readonly kind: 'git';
  /** The repository, as registered (never with credentials). */
  readonly url: string;
  /** The branch or tag followed. */
  readonly ref: string;
  /** The full SHA of the commit the pass planned from. */
  readonly commit: string;
  /** The intent's folder inside the repository, when not its root. */
  readonly path?: string;
}

/**
 * One entry of the change ledger: a mutation made by Tend or observed on the platform, with its actor,
 * intent (the goal) and motivation (why now). The ledger is append-only and hash-chained.
 */
export interface Change {
  /** Position in the ledger, from 1. Assigned by the store. */
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  readonly actorKind?: ActorKind;
  /** The goal the change serves: an INTENT_WORDS word or a custom one. */
  readonly intent?: string;
  /** Why now. */
  readonly motivation?: Motivation;
  readonly source: ChangeSource;
  /** The managed resource, when the object is one. */
  readonly address?: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly objectId: string;
  /**
   * What happened: a mutation (`create`, `update`, `move`, `delete`), or a `verdict` — a policy found
   * broken on the observed object, or no longer broken (`compliance` says which).
   */
  readonly action: 'create' | 'update' | 'move' | 'delete' | 'verdict';
  /** Names of the fields that changed. */
  readonly fields: readonly string[];
  readonly before?: Readonly<Record<string, unknown>>;
  readonly after?: Readonly<Record<string, unknown>>;
  /** What Tend decided about this change (drift only), with the rule and the reason. */
  readonly decision?: RecordedDecision;
  /** The commit the pass that wrote the entry planned from (a git workspace); absent otherwise. */
  readonly origin?: IntentOrigin;
  /** For a `verdict`: the rule, its result and the change that introduced the violation. */
  readonly compliance?: ComplianceRecord;
  /**
   * The id of the ledger key that signed the entry (HMAC); absent on entries written before the
   * ledger was keyed. Assigned by the store.
   */
  readonly keyId?: string;
  /** Hash of the previous entry and of this one (tamper evidence). */
  readonly prevHash: string;
  readonly hash: string;
}

/** A change before the store gives it a position and hashes. */
export type NewChange = Omit<Change, 'seq' | 'keyId' | 'prevHash' | 'hash'>;
