// Randomised runs: for each seed, a scenario, mixed faults (latency, 5xx, 429, timeouts after success,
// eventual consistency) seeded on the sandbox, and maybe a kill -9 at a crash point; `tend apply`
// runs until it exits 0, faults are turned off, and the result is judged like every other case.
// Reproduce one run: TEND_TORTURE_SEED=<seed> npx vitest run test/torture/random.test.ts
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { FaultKind, FaultSettings } from '../../src/sandbox/index.js';
import { mulberry32 } from '../../src/sandbox/faults.js';
import type { ScenarioName } from './scenarios.js';
import { SCENARIOS } from './scenarios.js';
import {
  CASE_TIMEOUT_MS,
  LONG,
  PARALLEL,
  SandboxPool,
  reachablePoints,
  runCase,
} from './torture-kit.js';

/** How many seeds: a fast set in `npm test`, ten times as many in `npm run torture`. */
const RUNS = LONG ? 60 : 6;

function seeds(): number[] {
  const one = process.env['TEND_TORTURE_SEED'];
  if (one !== undefined) return [Number(one)];
  // Fixed seeds in the fast set (CI is repeatable); fresh ones in the long set unless a base is given.
  const base = Number(process.env['TEND_TORTURE_BASE'] ?? (LONG ? Date.now() % 1_000_000 : 1000));
  return Array.from({ length: RUNS }, (_, i) => base + i);
}

/** One random run, drawn from its seed alone. */
interface RandomRun {
  readonly seed: number;
  readonly scenario: ScenarioName;
  readonly faults: Partial<FaultSettings>;
  readonly crashAt?: string;
}

/** Draws a run from a seed: the same seed always gives the same scenario, faults and kill. */
function drawRun(seed: number): RandomRun {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const scenario = pick<ScenarioName>(['create', 'update', 'replace', 'shrink', 'delete']);
  const faults: Partial<FaultSettings> = {
    seed,
    latencyMs: pick([0, 5, 20]),
    latencyJitterMs: pick([0, 10, 30]),
    errorRate: pick([0, 0.1, 0.25]),
    rate429: pick([0, 0.1, 0.25]),
    retryAfterSeconds: 0,
    timeoutAfterSuccessRate: pick([0.1, 0.3, 0.5]),
    eventualConsistencyMs: pick([0, 300, 1000]),
  };
  const actions = {
    create: ['create'],
    update: ['update'],
    replace: ['replace-create', 'replace-delete'],
    shrink: ['replace-create', 'replace-delete'],
    delete: ['delete'],
  } as const;
  const kill = random() < 0.6;
  const points = actions[scenario].flatMap((a) => reachablePoints(a));
  const n = scenario === 'create' ? pick([1, 2, 3]) : 1;
  const crashAt = kill ? `${pick(points)}${n > 1 ? `@${n}` : ''}` : undefined;
  return { seed, scenario, faults, ...(crashAt ? { crashAt } : {}) };
}

describe.concurrent('torture: random faults and kills', () => {
  let pool: SandboxPool;
  let runs = 0;
  let kills = 0;
  let consistencyRuns = 0;
  const failed: number[] = [];
  const faults: Record<FaultKind, number> = {
    latency: 0,
    error: 0,
    rate429: 0,
    rateLimit: 0,
    timeoutAfterSuccess: 0,
  };
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
    const total = Object.values(faults).reduce((a, b) => a + b, 0);
    const kinds = Object.entries(faults)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    const verdict =
      failed.length === 0
        ? 'all converged'
        : `${failed.length} FAILED: seeds ${failed.join(', ')} (reproduce: TEND_TORTURE_SEED=<seed> npx vitest run test/torture/random.test.ts)`;
    console.log(
      `torture: ${runs} runs, ${kills} kills, ${total} faults injected (${kinds}; eventual consistency in ${consistencyRuns} runs), ${verdict}`,
    );
  });

  it.each(seeds())(
    'seed %i',
    async (seed) => {
      const run = drawRun(seed);
      const label = `seed ${seed}: ${run.scenario}, kill ${run.crashAt ?? 'none'}, faults ${JSON.stringify(run.faults)} (reproduce: TEND_TORTURE_SEED=${seed} npx vitest run test/torture/random.test.ts)`;
      console.log(`torture ${label}`);
      const result = await pool
        .use((sandbox) =>
          runCase(sandbox, {
            scenario: SCENARIOS[run.scenario],
            faults: run.faults,
            maxRuns: 6,
            label,
            ...(run.crashAt ? { crashAt: run.crashAt } : {}),
          }),
        )
        .catch((e: unknown) => {
          runs++;
          failed.push(seed);
          throw e;
        });
      runs++;
      if (result.killed) kills++;
      if ((run.faults.eventualConsistencyMs ?? 0) > 0) consistencyRuns++;
      for (const [k, v] of Object.entries(result.faults)) faults[k as FaultKind] += v;
    },
    CASE_TIMEOUT_MS,
  );
});
