// How many workspaces one worker of a fleet should hold (docs/fleet.md, decisions 0042 and 0046).
// Pure: every worker computes it from what it read of the registry, and all of them agree when they
// read the same.

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
  /** The other live workers' `--max-workspaces`, by id (as they heartbeat it); absent: no cap. */
  readonly caps?: ReadonlyMap<string, number>;
}

/** N split over `count` workers in order: the first (N mod count) get one more. */
function split(n: number, count: number, index: number): number {
  return Math.floor(n / count) + (index < n % count ? 1 : 0);
}

/**
 * This worker's share: the live workers sorted by id, the first (N mod W) get ceil(N/W) workspaces,
 * the others floor(N/W). A worker whose cap (`--max-workspaces`) is below its share gets its cap,
 * and what it leaves is split again, the same way, over the workers still uncapped — so the shares
 * add up to N unless every worker is capped (then to the sum of the caps).
 */
export function targetShare(input: TargetInput): number {
  let open = [...new Set([...input.workers, input.self])].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const capOf = (id: string): number | undefined => {
    const cap = id === input.self ? input.max : input.caps?.get(id);
    return cap === undefined ? undefined : Math.max(0, cap);
  };
  let n = Math.max(0, input.workspaces);
  for (;;) {
    const count = open.length;
    const capped = open.filter((id, i) => {
      const cap = capOf(id);
      return cap !== undefined && cap < split(n, count, i);
    });
    if (capped.length === 0) return split(n, count, open.indexOf(input.self));
    if (capped.includes(input.self)) return capOf(input.self)!;
    for (const id of capped) n -= capOf(id)!;
    open = open.filter((id) => !capped.includes(id));
  }
}
