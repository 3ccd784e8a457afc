import type { Address } from './address.js';
import type { ComplianceState } from './compliance.js';

/**
 * The state of one resource after the last pass:
 * - `converged`: observed matches declared and every check passes;
 * - `drifted`: observed differs and Tend has not corrected it yet;
 * - `pending`: a change is in flight or waiting to be verified;
 * - `failing`: observed matches but a check fails;
 * - `blocked`: a gate (a destructive step on a stateful resource) waits for approval;
 * - `error`: the last attempt failed.
 */
export type ResourceState = 'converged' | 'drifted' | 'pending' | 'failing' | 'blocked' | 'error';

/** The result of one check run. */
export interface CheckResult {
  readonly name: string;
  readonly kind: string;
  readonly ok: boolean;
  readonly message: string;
  /** What the check saw, trimmed (a `sql` check: the rows returned), when it says more than the message. */
  readonly evidence?: string;
  /**
   * How bad a check that did not pass is: `warning` when what it guards still works but will not for
   * long (a `tls` certificate valid for fewer than `minDaysLeft` days); absent means `error`. Only a
   * failed check (`ok: false`) carries it.
   */
  readonly severity?: 'warning' | 'error';
  readonly at: string;
}

/** Status of one resource, as stored and shown by `tend status`. */
export interface ResourceStatus {
  readonly address: Address;
  readonly state: ResourceState;
  readonly objectId?: string;
  readonly message?: string;
  readonly checks: readonly CheckResult[];
  /** The policies on the observed object, as the last pass that evaluated them found it. */
  readonly compliance?: ComplianceState;
  /**
   * When the pass that found the resource in this status ran: statuses are written when they change,
   * so this is since when it has held (a pass finding the same status again writes nothing).
   */
  readonly updatedAt: string;
}
