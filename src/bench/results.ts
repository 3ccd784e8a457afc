import type { ApplyRun } from './apply-throughput.js';
import type { CliSizeResults, StartFigures } from './cli-bench.js';
import type { HotFunction } from './cpuprofile-top.js';
import type { InputResults } from './input-bench.js';
import type { Machine } from './machine.js';
import type { NoDriftRun } from './no-drift-pass.js';
import type { PolicyPassRun } from './policy-pass.js';
import type { PlanChildResult } from './plan-child.js';
import type { RecoveryRun } from './journal-recovery.js';
import type { PdnsScaleRun } from './pdns-scale.js';

/** A figure with the 1-minute load average of the machine when it was measured. */
export type Loaded<T> = T & { readonly load: number };

/** Apply throughput at one size: Tend's own settings against a fixed parallelism of 10, same run. */
export interface ApplyPair {
  readonly count: number;
  readonly fixed10: Loaded<ApplyRun>;
  readonly tend: Loaded<ApplyRun>;
  /** Tend with no rate limit declared: its limiter finds the platform's limit from 429s alone. */
  readonly adaptive?: Loaded<ApplyRun>;
}

/** Everything one `npm run bench` measured. */
export interface BenchResults {
  readonly machine: Machine;
  readonly quick: boolean;
  /** The sandbox's rate limit (requests/s) the throughput figures are a ratio to. */
  readonly rateLimit: number;
  readonly latencyMs: number;
  readonly apply: ApplyPair[];
  noDrift?: Loaded<NoDriftRun>;
  /** No-drift passes without policies, with 20, without again (issue 28). */
  policyPass?: Loaded<PolicyPassRun>;
  plan?: Loaded<PlanChildResult>;
  recovery?: Loaded<RecoveryRun>;
  input?: Loaded<InputResults>;
  pdns?: Loaded<PdnsScaleRun>;
  /** The figures measured through the tend command (issue 13, item 5). */
  cli?: {
    start?: StartFigures;
    sizes: CliSizeResults[];
    profiles: Record<string, HotFunction[]>;
  };
  readonly totalMs: number;
}

/** The targets of issue 3, item 7. */
export const TARGETS = {
  /** Apply reaches at least this share of the API's rate limit. */
  applyRatio: 0.9,
  /** Tend CPU per resource in a no-drift pass, microseconds. */
  noDriftUs: 50,
  /** 20 policies on a no-drift pass: at most this much more CPU than none (issue 28). */
  policyOverhead: 0.15,
  /** Plan of 100,000 resources, milliseconds. */
  planMs: 2000,
  /** Memory per resource, bytes. */
  memoryBytes: 2048,
  /** Restart to an empty journal with 10,000 unsettled operations, milliseconds. */
  recoveryMs: 2000,
  /** Large input (issue 10, item 7): time at N over time at N/4 (linear is 4, quadratic 16). */
  inputRatio: 6,
  /** PowerDNS (issue 12, item 5): the apply pass of 1,000 rrsets of one zone, milliseconds. */
  pdnsPassMs: 10_000,
} as const;
