import type { EngineEvent, Reporter } from '../engine/index.js';

/** What a probe saw of one pass: when its phases ended, and what failed. */
export interface PassTimeline {
  /** performance.now() when the plan was ready (execution starts). */
  readonly planAt: number | undefined;
  /** performance.now() of the last `verified` or `op-done` event. */
  readonly lastOpAt: number | undefined;
  readonly opsDone: number;
  readonly failures: number;
  /** The first few failure messages, for the report. */
  readonly firstFailures: readonly string[];
  readonly recovered: number;
}

/** A reporter that records the timeline of a pass instead of printing it. */
export interface PassProbe {
  readonly report: Reporter;
  timeline(): PassTimeline;
}

/** Creates a probe; `onEvent` sees every event too (progress, budgets). */
export function passProbe(onEvent?: (e: EngineEvent) => void): PassProbe {
  let planAt: number | undefined;
  let lastOpAt: number | undefined;
  let opsDone = 0;
  let failures = 0;
  let recovered = 0;
  const firstFailures: string[] = [];
  const fail = (message: string) => {
    failures++;
    if (firstFailures.length < 3) firstFailures.push(message);
  };
  return {
    report: (e) => {
      onEvent?.(e);
      switch (e.kind) {
        case 'plan':
          planAt = performance.now();
          break;
        case 'op-done':
          opsDone++;
          lastOpAt = performance.now();
          break;
        case 'verified':
          lastOpAt = performance.now();
          break;
        case 'op-failed':
          fail(`${e.address}: ${e.error.message}`);
          break;
        case 'error':
          fail(e.error.message);
          break;
        case 'recovered':
          recovered++;
          break;
        default:
          break;
      }
    },
    timeline: () => ({ planAt, lastOpAt, opsDone, failures, firstFailures, recovered }),
  };
}
