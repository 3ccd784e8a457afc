// Kills while the intent changes: per seed, a random walk over the intent (resources added, removed,
// renamed, replaced, updated and re-pointed to others) with a `tend apply` after every change, most of
// them killed with SIGKILL at a random crash point of what the change does, under mixed faults (5xx,
// 429, timeouts after success, eventual consistency) until the end; then faults off and a bounded
// number of plain runs must converge. The sandbox's oracle then finds no ghost, no duplicate, no
// orphan, and a fresh plan has nothing to do.
// Reproduce one trial: TEND_TORTURE_SEED=<seed> npx vitest run test/torture/intent-changes.test.ts
// TEND_TORTURE_REPORT=<file> appends one JSON line per finished trial.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind, FaultSettings } from '../../src/sandbox/index.js';
import { mulberry32 } from '../../src/sandbox/faults.js';
import { LONG, PARALLEL, SandboxPool, runEvolution } from './torture-kit.js';
import type { ChangeKind } from './world.js';

/**
 * Trials and changes per trial: a short set in `npm test`, ≥ 500 kills in `npm run torture` (about
 * 0.8 kills per change: a few crash points are not reached when a fault stops the run earlier).
 */
const TRIALS = Number(process.env['TEND_TORTURE_TRIALS'] ?? (LONG ? 40 : 2));
const STEPS = Number(process.env['TEND_TORTURE_STEPS'] ?? (LONG ? 18 : 4));

/**
 * A trial is up to ~3 CLI runs per change, slower on a busy machine. Vitest runs five trials of a
 * batch at once and counts each one's time from its start, so on two loaded cores a long trial can
 * take half an hour (run 3 in docs/durability.md: 23 of 52 trials passed 15 minutes, all judged).
 */
const TRIAL_TIMEOUT_MS = LONG ? 2_700_000 : 240_000;

function seeds(): number[] {
  const one = process.env['TEND_TORTURE_SEED'];
  if (one !== undefined) return [Number(one)];
  const base = Number(process.env['TEND_TORTURE_BASE'] ?? (LONG ? Date.now() % 1_000_000 : 7000));
  return Array.from({ length: TRIALS }, (_, i) => base + i);
}

/** The faults of a trial, drawn from its seed. */
function faultsOf(seed: number): Partial<FaultSettings> {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  return {
    seed,
    latencyMs: pick([0, 5, 20]),
    latencyJitterMs: pick([0, 10, 30]),
    errorRate: pick([0.05, 0.1, 0.2]),
    rate429: pick([0.05, 0.1, 0.2]),
    retryAfterSeconds: 0,
    timeoutAfterSuccessRate: pick([0.05, 0.1, 0.2]),
    eventualConsistencyMs: pick([0, 300, 1000]),
  };
}

describe.concurrent('torture: kills while the intent changes', () => {
  let pool: SandboxPool;
  const totals = {
    trials: 0,
    kills: 0,
    missed: 0,
    runs: 0,
    renames: 0,
    renamesAsDeleteCreate: 0,
    renameEffects: 0,
    maxConvergenceRuns: 0,
  };
  const changes: Record<ChangeKind, number> = {
    add: 0,
    remove: 0,
    rename: 0,
    replace: 0,
    update: 0,
    move: 0,
    none: 0,
  };
  const faults: Record<FaultKind, number> = {
    latency: 0,
    error: 0,
    rate429: 0,
    rateLimit: 0,
    timeoutAfterSuccess: 0,
  };
  const violations = new Map<string, number>();
  const failed: number[] = [];
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
    const count = (r: Record<string, number>) =>
      Object.entries(r)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    const verdict =
      failed.length === 0
        ? '0 violations (0 ghosts, 0 duplicates, 0 orphans), all converged'
        : `${failed.length} trials FAILED (${count(Object.fromEntries(violations))}): seeds ${failed.join(', ')} (reproduce: TEND_TORTURE_SEED=<seed> npx vitest run test/torture/intent-changes.test.ts)`;
    console.log(
      `torture (intent changes): ${totals.trials} trials, ${totals.kills} kills (${totals.missed} crash points not reached), ${totals.runs} tend apply runs; changes: ${count(changes)}; renames ${totals.renames} (${totals.renamesAsDeleteCreate} ran as delete+create, not a move, leaving ${totals.renameEffects} stale twin entries of old addresses: counted, not failed); faults injected: ${count(faults)}; at most ${totals.maxConvergenceRuns} plain runs to converge; ${verdict}`,
    );
  });

  it.each(seeds())(
    'seed %i',
    async (seed) => {
      const f = faultsOf(seed);
      const label = `seed ${seed}: ${STEPS} intent changes, faults ${JSON.stringify(f)} (reproduce: TEND_TORTURE_SEED=${seed} npx vitest run test/torture/intent-changes.test.ts)`;
      console.log(`torture ${label}`);
      const r = await pool
        .use((sandbox) => runEvolution(sandbox, { seed, steps: STEPS, faults: f, label }))
        .catch((e: unknown) => {
          failed.push(seed);
          violations.set('error', (violations.get('error') ?? 0) + 1);
          throw e;
        });
      totals.trials++;
      totals.kills += r.kills;
      totals.missed += r.missed;
      totals.runs += r.runs;
      totals.renames += r.renames;
      totals.renamesAsDeleteCreate += r.renamesAsDeleteCreate;
      totals.renameEffects += r.renameEffects.length;
      totals.maxConvergenceRuns = Math.max(totals.maxConvergenceRuns, r.convergenceRuns);
      for (const [k, v] of Object.entries(r.changes)) changes[k as ChangeKind] += v;
      for (const [k, v] of Object.entries(r.faults)) faults[k as FaultKind] += v;
      // One line per trial, so a long run stopped early still has its figures.
      const report = process.env['TEND_TORTURE_REPORT'];
      if (report) {
        appendFileSync(
          report,
          `${JSON.stringify({ seed, kills: r.kills, missed: r.missed, runs: r.runs, renames: r.renames, renamesAsDeleteCreate: r.renamesAsDeleteCreate, renameEffects: r.renameEffects, convergenceRuns: r.convergenceRuns, changes: r.changes, faults: r.faults, violations: r.violations })}\n`,
        );
      }
      if (r.violations.length > 0) {
        failed.push(seed);
        for (const v of r.violations) violations.set(v.kind, (violations.get(v.kind) ?? 0) + 1);
      }
      expect(
        r.violations,
        `${label}\n${r.violations.map((v) => `${v.kind}: ${v.detail}`).join('\n')}\n${r.log}`,
      ).toEqual([]);
    },
    TRIAL_TIMEOUT_MS,
  );
});
