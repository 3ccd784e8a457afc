/** The middle and the spread of repeated measurements. */
export interface Spread {
  readonly runs: number;
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Median, min and max of `values` (at least one). */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spread of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { runs: sorted.length, median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

/** The p-th percentile (0 < p ≤ 100) by nearest rank: a value that was measured. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('percentile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}
