/**
 * The store writes an operation makes, in order: the pending operation, the twin (what Tend remembers
 * of the object), the settlement (the commit point) and the ledger entry. Each is a point where a
 * crash must be survivable; the torture suite kills Tend just before and just after each of them,
 * for each action.
 */
export const WRITE_POINTS = ['journal', 'twin', 'settle', 'ledger'] as const;

/** One of the write points. */
export type WritePoint = (typeof WRITE_POINTS)[number];

/** Both sides of a write. */
export const CRASH_WHEN = ['before', 'after'] as const;

/** Before or after a write. */
export type CrashWhen = (typeof CRASH_WHEN)[number];

/** The actions a crash point can be scoped to (a replace's steps are creates and deletes with a group). */
export const CRASH_ACTIONS = [
  'create',
  'update',
  'delete',
  'replace-create',
  'replace-delete',
] as const;

/** One of the crash actions. */
export type CrashAction = (typeof CRASH_ACTIONS)[number];

/** Called around every store write of an operation; a test hook may end the process there. */
export type CrashHook = (when: CrashWhen, point: WritePoint, action: string) => void;

/** A hook that does nothing (production). */
export const noCrash: CrashHook = () => {};

/**
 * Builds a hook from a spec `<before|after>:<point>:<action>[@n]` (the n-th matching write, default 1)
 * that calls `crash` when reached. For tests only: the CLI reads the spec from TEND_CRASH_AT.
 */
export function crashHookFrom(spec: string | undefined, crash: () => never): CrashHook {
  if (!spec) return noCrash;
  const m = /^(before|after):([a-z]+):([a-z-]+)(?:@(\d+))?$/.exec(spec);
  if (!m || !(WRITE_POINTS as readonly string[]).includes(m[2]!)) {
    throw new Error(`TEND_CRASH_AT must look like before:journal:create@1, got "${spec}"`);
  }
  const [, when, point, action] = m;
  let remaining = Number(m[4] ?? 1);
  return (w, p, a) => {
    if (w === when && p === point && a === action && --remaining === 0) crash();
  };
}
