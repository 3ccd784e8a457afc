/**
 * The store writes an operation makes, in order: the pending operation, the twin (what Tend remembers
 * of the object), the settlement (the commit point) and the ledger entry. Each is a point where a
 * crash must be survivable; the torture suite kills Tend just before and just after each of them,
 * for each action.
 */
export const WRITE_POINTS = ['journal', 'twin', 'settle', 'ledger'] as const;

/** One of the write points. */
export type WritePoint = (typeof WRITE_POINTS)[number];

/**
 * The other store writes of a pass, each made by the recorder (recorder.ts) between two crash points:
 * a field claim or its release, an announcement marked used, a feed cursor, the `error` status of a
 * resource whose platform could not be observed, a provider's state. The action is the phase that
 * writes (`observe`, `arbitrate`), so `after:claim:arbitrate` kills Tend just after the first claim
 * it stores; the arbitrate phase's ledger entries and twin refreshes use the `ledger` and `twin`
 * points, and so do forgetting an address outside an operation (`twin`, action `forget`) and an
 * import (`twin`, action `import`). The statuses a pass records last have none (see
 * `Recorder.recordStatuses`).
 */
export const PASS_WRITE_POINTS = ['claim', 'announcement', 'cursor', 'status', 'provider'] as const;

/** One of the pass write points. */
export type PassWritePoint = (typeof PASS_WRITE_POINTS)[number];

/** Any point a crash hook is called at. */
export type CrashPoint = WritePoint | PassWritePoint;

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

/** Called around every store write of a pass; a test hook may end the process there. */
export type CrashHook = (when: CrashWhen, point: CrashPoint, action: string) => void;

/** A hook that does nothing (production). */
export const noCrash: CrashHook = () => {};

/**
 * Builds a hook from a spec `<before|after>:<point>:<action>[@n]` (the n-th matching write, default 1)
 * that calls `crash` when reached. For tests only: the CLI reads the spec from TEND_CRASH_AT.
 */
export function crashHookFrom(spec: string | undefined, crash: () => never): CrashHook {
  if (!spec) return noCrash;
  const m = /^(before|after):([a-z]+):([a-z-]+)(?:@(\d+))?$/.exec(spec);
  const points: readonly string[] = [...WRITE_POINTS, ...PASS_WRITE_POINTS];
  if (!m || !points.includes(m[2]!)) {
    throw new Error(`TEND_CRASH_AT must look like before:journal:create@1, got "${spec}"`);
  }
  const [, when, point, action] = m;
  let remaining = Number(m[4] ?? 1);
  return (w, p, a) => {
    if (w === when && p === point && a === action && --remaining === 0) crash();
  };
}
