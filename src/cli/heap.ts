// How `tend run`, `apply` and `serve` size V8's heap for themselves
// (docs/decisions/0027-heap-growing.md).
import { setFlagsFromString } from 'node:v8';

/**
 * How much V8's old generation may grow after a full collection before the next one, in percent of
 * what survived it. V8's own choice goes up to 300% on a machine with a lot of memory: a `tend run`
 * or `apply` that holds 10,000 resources then carries several times its live data in garbage.
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * The V8 flag `tend` sets for itself, or undefined when whoever started node chose the growth
 * already (`node --heap-growing-percent=N …/tend …`; 0 leaves it to V8): theirs is kept.
 */
export function heapFlag(execArgv: readonly string[]): string | undefined {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent(=|$)/.test(a))) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets the heap growth of this process (V8 reads it at every full collection): for the commands
 * that hold many resources for long.
 */
export function tuneHeap(): void {
  const flag = heapFlag(process.execArgv);
  if (flag !== undefined) setFlagsFromString(flag);
}
