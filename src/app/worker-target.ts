// How many workspaces one worker of a fleet should hold (docs/fleet.md, decision 0042). Pure: every
// worker computes it from what it read of the registry, and all of them agree when they read the same.

/** What the share is computed from. */
export interface TargetInput {
  /** The ids of the live workers (heartbeat within their TTL by the database's clock). */
  readonly workers: readonly string[];
  /** This worker's id (counted even when its own heartbeat is not seen yet). */
  readonly self: string;
  /** How many workspaces are registered. */
  readonly workspaces: number;
  /** `--max-workspaces`: this worker never holds more. */
  readonly max?: number;
}

/**
 * This worker's share: the live workers sorted by id, the first (N mod W) get ceil(N/W) workspaces,
 * the others floor(N/W); capped by `max`. The shares of all workers add up to N (before the caps).
 */
export function targetShare(input: TargetInput): number {
  const workers = [...new Set([...input.workers, input.self])].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const n = Math.max(0, input.workspaces);
  const w = workers.length;
  const index = workers.indexOf(input.self);
  const share = Math.floor(n / w) + (index < n % w ? 1 : 0);
  return input.max === undefined ? share : Math.min(share, Math.max(0, input.max));
}
