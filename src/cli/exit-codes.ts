/** Exit codes scripts can rely on (docs/cli.md). */
export const EXIT = {
  /** Success; for `plan`: nothing to change. */
  ok: 0,
  /** An error: bad intent, unreachable platform, a failed operation. */
  error: 1,
  /** `plan`: there are changes. */
  changes: 2,
  /** `announce`: the announcement is invalid (every problem is listed; nothing was stored). */
  invalidInput: 2,
  /**
   * `ledger verify`, `ledger checkpoint`: the check could not be made — no ledger key, a key other
   * than the one that wrote the ledger, an unreadable checkpoint, no store.
   */
  usage: 2,
  /** `explain`: the address or field names nothing in the intent (the error gives near matches). */
  unknownTarget: 2,
  /** `apply`: some steps were not applied because a gate (stateful destroy) needs approval. */
  blocked: 3,
  /** Interrupted by a signal. */
  interrupted: 130,
} as const;

/**
 * The exit codes of `tend drift`, like `git diff --exit-code` and `diff`: 0 nothing drifted, 1
 * something did (a declared field not yielded to an actor, or a declared resource without an
 * object), 2 an error (the intent, the store or the platform).
 */
export const DRIFT_EXIT = {
  none: 0,
  drifted: 1,
  error: 2,
} as const;

/**
 * The exit codes of `tend compliance`: 0 no deny or warn result open (audit-only and errors do not
 * fail), 1 one is open (a broken deny or warn rule, a failing check), 2 an error (a flag, the intent,
 * the store).
 */
export const COMPLIANCE_EXIT = {
  clean: 0,
  open: 1,
  error: 2,
} as const;
