import { TendError } from '../core/index.js';

// What every store refuses, said the same way by each (SQLite and PostgreSQL).

/** A count parameter of a query: undefined, or a non-negative integer (`store.invalid-query`). */
export function checkCount(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TendError(
      'store.invalid-query',
      `${name} must be a non-negative integer, got ${String(value)}`,
      { phase: 'store' },
    );
  }
  return value;
}

/** Who holds a lease now, as far as the message of a lost lease names them. */
export interface LeaseHolder {
  readonly command: string;
  readonly pid: number;
  readonly host: string;
  readonly epoch: number;
}

/**
 * The write of a process whose lease on `workspace` was taken over (`holder`) or released: refused,
 * and nothing more from it commits (`store.lease-lost`).
 */
export function leaseLostError(workspace: string, holder: LeaseHolder | undefined): TendError {
  return new TendError(
    'store.lease-lost',
    holder
      ? `the lease on workspace ${workspace} was taken over by ${holder.command} (pid ${holder.pid} on ${holder.host}, epoch ${holder.epoch}); this process stops writing`
      : `the lease on workspace ${workspace} was released or lost; this process stops writing`,
    {
      phase: 'store',
      hint: 'another tend process took the workspace over; run again once it is done',
    },
  );
}

/** A store used after it was closed (`store.closed`). */
export function storeClosedError(): TendError {
  return new TendError('store.closed', 'the store is closed; open it again to use it', {
    phase: 'store',
  });
}
