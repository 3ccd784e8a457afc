/**
 * Where a test may end a process while an action runs, around the store writes of each step:
 * `started` (the step is journaled, its work not begun), `ran` (its work is done, not yet verified
 * nor settled: the outcome is unknown to the store), `settled` (the step is settled). A crash at each
 * of them, for each step, must leave a run that resumes to the right end state.
 */
export const ACTION_CRASH_POINTS = ['started', 'ran', 'settled'] as const;

/** One of the crash points of a step. */
export type ActionCrashPoint = (typeof ACTION_CRASH_POINTS)[number];

/** Called at every crash point with the step's name; a test hook may end the process there. */
export type ActionCrashHook = (point: ActionCrashPoint, step: string) => void;

/** A hook that does nothing (production). */
export const noActionCrash: ActionCrashHook = () => {};

/**
 * Builds a hook from a spec `<point>:<step>[@n]` (the n-th time reached, default 1), e.g.
 * `ran:alter-role`, that calls `crash` there. For tests only: the CLI reads it from
 * TEND_ACTION_CRASH_AT.
 */
export function actionCrashHookFrom(spec: string | undefined, crash: () => never): ActionCrashHook {
  if (!spec) return noActionCrash;
  const m = /^([a-z]+):([a-z0-9-]+)(?:@(\d+))?$/.exec(spec);
  if (!m || !(ACTION_CRASH_POINTS as readonly string[]).includes(m[1]!)) {
    throw new Error(
      `TEND_ACTION_CRASH_AT must look like ran:alter-role (points: ${ACTION_CRASH_POINTS.join(', ')}), got "${spec}"`,
    );
  }
  const [, point, step] = m;
  let remaining = Number(m[3] ?? 1);
  return (p, s) => {
    if (p === point && s === step && --remaining === 0) crash();
  };
}
