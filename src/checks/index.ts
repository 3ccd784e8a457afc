// Checks: postconditions declared next to resources (DESIGN.md §1.4), run after changes and continuously.
export type { CheckContext } from './check-context.js';
export { parseCel, runCelCheck } from './cel-check.js';
export { runHttpCheck } from './http-check.js';
export { CHECK_KINDS, runCheck } from './run-check.js';
