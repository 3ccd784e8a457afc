// Day-2 actions as durable workflows: the runner that journals, verifies, settles and resumes steps.
export type { ActionCrashHook, ActionCrashPoint } from './crash.js';
export { ACTION_CRASH_POINTS, actionCrashHookFrom, noActionCrash } from './crash.js';
export type { ActionEvent, CarryOutOptions, CarryOutResult } from './run-action.js';
export { carryOutRun } from './run-action.js';
