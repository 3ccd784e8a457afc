import type { Address } from './address.js';
import { hashValue } from './hash.js';
import type { Marker } from './marker.js';

/** The mutation one operation sends. */
export type OperationAction = 'create' | 'update' | 'delete';

/**
 * One journaled mutation (DESIGN.md §4). It is written before the request is sent (`pending`) and
 * settled after (`settled` or `failed`). A pending operation found at start-up is resolved by looking
 * the object up: it never causes a second create.
 */
export interface Operation {
  /** Unique id; also the idempotency key sent to the platform. */
  readonly id: string;
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly action: OperationAction;
  /** The object acted on (update, delete), or created (create, once settled). */
  readonly objectId?: string;
  /** Hash of the desired spec this operation sends (secrets excluded). */
  readonly desiredHash: string;
  readonly marker: Marker;
  /** Multi-step operations (a replace) share a group id; `step` orders them from 1. */
  readonly group?: string;
  readonly step?: number;
  /**
   * On the create of a create-before-destroy replace (step 1): the id of the object it replaces. A
   * pass that finds both objects uses it to finish the replace (delete the old one as step 2) after a
   * crash, instead of reporting the old object as a duplicate.
   */
  readonly replaces?: string;
  readonly state: 'pending' | 'settled' | 'failed';
  /** The workspace lease epoch of the writer that journaled it (absent when written without one). */
  readonly epoch?: number;
  readonly createdAt: string;
  readonly settledAt?: string;
  readonly error?: string;
}

/** Parameters from which an operation id is derived. */
export interface OperationKey {
  readonly workspace: string;
  readonly address: Address;
  readonly action: OperationAction;
  readonly desiredHash: string;
  /** Distinguishes repeated operations with the same desired state (e.g. a counter of past attempts). */
  readonly generation: number;
  readonly group?: string;
  readonly step?: number;
}

/**
 * Derives an operation id deterministically from what the operation does, so that a resend after a
 * crash carries the same idempotency key as the first attempt.
 */
export function operationId(key: OperationKey): string {
  return `op-${hashValue(key)}`;
}
