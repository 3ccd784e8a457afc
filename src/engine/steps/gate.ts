// Whether a step may run: decided by the unit of its kind (replaceGate, deleteGate) from the plan
// alone, before anything is sent. A step stopped at its gate changes nothing; what depends on it is
// held back too.

/** A gate that lets its step run. */
export interface OpenGate {
  readonly kind: 'open';
}

/**
 * A gate that stops its step: `reason` says what stopped it and how to go on (reported for the
 * step's address), `why` what it needs, told to every step that waits for it ("waits for <address>,
 * <why>").
 */
export interface BlockedGate {
  readonly kind: 'blocked';
  readonly reason: string;
  readonly why: string;
}

/** What a step's gate says (frozen). */
export type Gate = OpenGate | BlockedGate;

/** The open gate. */
export const OPEN: OpenGate = Object.freeze({ kind: 'open' });

/** What a step stopped at a gate needs when it waits for --approve-destroy. */
export const NEEDS_APPROVAL = 'which needs --approve-destroy';

/** A gate that stops its step. */
export function blocked(reason: string, why: string): BlockedGate {
  return Object.freeze({ kind: 'blocked', reason, why });
}
