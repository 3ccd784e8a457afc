import type { Address } from './address.js';

/** Where Tend learned of a change. */
export type ChangeSource = 'tend' | 'audit' | 'announcement' | 'unknown';

/**
 * One entry of the change ledger: a mutation made by Tend or observed on the platform, with its actor,
 * intent (the goal) and motivation (why now). The ledger is append-only and hash-chained.
 */
export interface Change {
  /** Position in the ledger, from 1. Assigned by the store. */
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  readonly intent?: string;
  readonly motivation?: string;
  readonly source: ChangeSource;
  /** The managed resource, when the object is one. */
  readonly address?: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly objectId: string;
  readonly action: 'create' | 'update' | 'delete';
  /** Names of the fields that changed. */
  readonly fields: readonly string[];
  readonly before?: Readonly<Record<string, unknown>>;
  readonly after?: Readonly<Record<string, unknown>>;
  /** Hash of the previous entry and of this one (tamper evidence). */
  readonly prevHash: string;
  readonly hash: string;
}

/** A change before the store gives it a position and hashes. */
export type NewChange = Omit<Change, 'seq' | 'prevHash' | 'hash'>;
