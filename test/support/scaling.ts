import { expect } from 'vitest';

/**
 * Asserts that `run(n)` costs about linear time: the best of `tries` runs at 4n takes less than
 * `maxRatio` times the best at n. A quadratic cost gives ~16×; linear gives ~4×, and the margin is
 * for the noise of a shared machine. `run` may return a promise. Returns the two best times (ms).
 */
export async function expectLinear(
  run: (n: number) => unknown,
  n: number,
  { maxRatio = 8, tries = 5 }: { maxRatio?: number; tries?: number } = {},
): Promise<{ small: number; large: number }> {
  const best = async (size: number): Promise<number> => {
    let min = Infinity;
    for (let i = 0; i < tries; i++) {
      const started = performance.now();
      await run(size);
      min = Math.min(min, performance.now() - started);
    }
    return min;
  };
  await run(n); // warm up: compile the code paths before timing them
  const small = await best(n);
  const large = await best(4 * n);
  expect(
    large / Math.max(small, 1),
    `time at ${4 * n} (${large.toFixed(0)} ms) over time at ${n} (${small.toFixed(0)} ms)`,
  ).toBeLessThan(maxRatio);
  return { small, large };
}
