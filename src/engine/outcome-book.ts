// What a pass did to each resource, written as the executor goes: a step's result and checks, a step
// stopped at its gate, and at the end every node of the graph that failed, was held back or skipped.
import type { Address, CheckResult, ResourceState } from '../core/index.js';
import { toTendError } from '../core/index.js';
import type { Reporter } from './events.js';
import type { NodeFailure } from './scheduler.js';
import { Blocked, Skipped } from './scheduler.js';

/** The outcome of one resource in a pass. */
export interface ResourceOutcome {
  readonly state: ResourceState;
  readonly objectId?: string;
  readonly message?: string;
  readonly checks: readonly CheckResult[];
}

/**
 * The outcomes of one pass by address. A failure overrides what an earlier node of the same address
 * recorded (step 2 of a replace fails after step 1 recorded the address converged); a held back or
 * skipped node never overrides anything; otherwise the last record wins.
 */
export class OutcomeBook {
  readonly #outcomes = new Map<Address, ResourceOutcome>();
  /** Addresses already recorded as failed: their first error is the one kept. */
  readonly #failed = new Set<Address>();

  constructor(private readonly report: Reporter) {}

  /** Every outcome recorded, by address. */
  get outcomes(): Map<Address, ResourceOutcome> {
    return this.#outcomes;
  }

  /** The state recorded for an address so far. */
  stateOf(address: Address): ResourceState | undefined {
    return this.#outcomes.get(address)?.state;
  }

  /** An address left alone this pass, waiting (for its object to become visible, say): `message`. */
  pending(address: Address, message: string): void {
    this.#outcomes.set(address, { state: 'pending', message, checks: [] });
  }

  /** An address whose step is done and whose checks wait (a replace until its old object is gone). */
  converged(address: Address, objectId: string): void {
    this.#outcomes.set(address, { state: 'converged', objectId, checks: [] });
  }

  /**
   * An address whose step is done, with its checks: converged, or failing those that did not pass. A
   * check that only warns (a certificate valid for fewer days than asked) does not make it failing:
   * it is in the message, and the compliance report lists it as a warning.
   */
  checked(address: Address, objectId: string, checks: readonly CheckResult[]): void {
    const failing = checks.filter((c) => !c.ok && c.severity !== 'warning');
    const warning = checks.filter((c) => !c.ok && c.severity === 'warning');
    const said = [
      ...failing.map((c) => `${c.name}: ${c.message}`),
      ...warning.map((c) => `${c.name} (warning): ${c.message}`),
    ];
    this.#outcomes.set(address, {
      state: failing.length > 0 ? 'failing' : 'converged',
      objectId,
      ...(said.length > 0 ? { message: said.join('; ') } : {}),
      checks,
    });
  }

  /**
   * An address whose step stopped at its gate (reported, with the reason); the Blocked returned ends
   * its node, so that what waits on it is held back with `why`.
   */
  blocked(address: Address, objectId: string, reason: string, why: string): Blocked {
    this.report({ kind: 'blocked', address, reason });
    this.#outcomes.set(address, { state: 'blocked', objectId, message: reason, checks: [] });
    return new Blocked(address, why);
  }

  /**
   * Records a node of the graph that did not end well: held back by a gated node it waits for,
   * skipped, or failed with an error (reported unless `reported` says it was already).
   */
  failed(failure: NodeFailure, reported: (error: object) => boolean): void {
    const { node, error } = failure;
    const address = node.address;
    if (error instanceof Blocked) {
      if (this.#outcomes.has(address)) return;
      const reason = `waits for ${error.root}, ${error.why}`;
      this.report({ kind: 'blocked', address, reason });
      this.#outcomes.set(address, { state: 'blocked', message: reason, checks: [] });
      return;
    }
    if (error instanceof Skipped) {
      if (this.#outcomes.has(address)) return;
      const msg =
        error.reason === 'stopping'
          ? 'not started: tend is stopping'
          : 'not attempted: a resource it depends on failed';
      this.report({ kind: 'skipped', address, reason: msg });
      this.pending(address, msg);
      return;
    }
    if (this.#failed.has(address)) return;
    this.#failed.add(address);
    const err = toTendError(error);
    if (!reported(error as object)) {
      this.report({ kind: 'error', error: err.address ? err : err.at(address, 'apply') });
    }
    const prior = this.#outcomes.get(address);
    const what =
      node.phase === 'delete-replaced'
        ? 'step 2 of the replace (delete the old object): '
        : node.phase === 'finish-replace'
          ? 'finishing an interrupted replace: '
          : '';
    this.#outcomes.set(address, {
      state: 'error',
      ...(prior?.objectId ? { objectId: prior.objectId } : {}),
      message: `${what}${err.code}: ${err.message}`,
      checks: prior?.checks ?? [],
    });
  }
}
