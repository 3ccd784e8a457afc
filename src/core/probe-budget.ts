/**
 * The request budget of `tend providers probe`: at most `limit` requests in all, of which the probing
 * itself may use only what leaves enough for removing every object it made. Each object the probe
 * holds reserves `perObject` requests (its delete and the read that confirms it), and `sweep` more
 * are kept for the last look at the platform; cleanup may use the whole budget. A request the budget
 * would not allow is never sent: `take` says no and the probe stops cleanly.
 */
export interface ProbeBudget {
  readonly limit: number;
  /** Requests sent so far (probing and cleanup). */
  readonly used: number;
  /** True once a probing request was refused: the probe stops and cleans up. */
  readonly exhausted: boolean;
  /** Asks for one request of the given phase; false (and `exhausted` for probing) when refused. */
  take(phase: 'probe' | 'cleanup'): boolean;
  /** The number of objects the probe holds now, each reserving requests for its removal. */
  hold(objects: number): void;
}

/** Requests kept per object the probe holds: its delete and the read that confirms it is gone. */
export const PROBE_RESERVE_PER_OBJECT = 2;

/** The fewest requests a probe of `types` types can do anything useful with (see `minimumBudget`). */
export const PROBE_MIN_PER_TYPE = 8;

/** The budget used when none is given: enough for a few types with a handful of fields each. */
export const PROBE_DEFAULT_BUDGET = 200;

/**
 * The smallest budget worth starting with for `types` types: per type a list for leftovers, the
 * create, its read-back, a list, the duplicate create, one field change and its read, and the delete.
 */
export function minimumBudget(types: number): number {
  return Math.max(1, types) * PROBE_MIN_PER_TYPE;
}

/** A budget of `limit` requests keeping `sweep` for the final look at the platform. */
export function createProbeBudget(limit: number, sweep = 2): ProbeBudget {
  let used = 0;
  let held = 0;
  let exhausted = false;
  return {
    limit,
    get used() {
      return used;
    },
    get exhausted() {
      return exhausted;
    },
    take(phase) {
      const reserve = phase === 'cleanup' ? 0 : held * PROBE_RESERVE_PER_OBJECT + sweep;
      if (used + 1 > limit - reserve) {
        if (phase === 'probe') exhausted = true;
        return false;
      }
      used += 1;
      return true;
    },
    hold(objects) {
      held = Math.max(0, objects);
    },
  };
}
