// Kill -9 `tend apply` just before and just after every store write of every kind of operation
// (enumerated from the engine's own lists of write points and actions), then run it again: it must
// converge with no ghost, no duplicate and no half-done replace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRASH_ACTIONS, CRASH_WHEN, WRITE_POINTS } from '../../src/engine/crash-points.js';
import { SCENARIOS, SCENARIO_OF_ACTION } from './scenarios.js';
import { CASE_TIMEOUT_MS, LONG, PARALLEL, SandboxPool, UNREACHED, runCase } from './torture-kit.js';

interface Point {
  readonly spec: string;
  readonly action: (typeof CRASH_ACTIONS)[number];
}

function points(): Point[] {
  const out: Point[] = [];
  for (const action of CRASH_ACTIONS) {
    for (const point of WRITE_POINTS) {
      for (const when of CRASH_WHEN) {
        out.push({ spec: `${when}:${point}:${action}`, action });
        // The long set also kills at the second and third create of a fresh apply.
        if (LONG && action === 'create') {
          out.push({ spec: `${when}:${point}:${action}@2`, action });
          out.push({ spec: `${when}:${point}:${action}@3`, action });
        }
      }
    }
  }
  return out;
}

describe.concurrent('torture: kill -9 at every crash point, then converge', () => {
  let pool: SandboxPool;
  const killed: string[] = [];
  const unreached: string[] = [];
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
    const why = unreached.map((s) => `${s} (${UNREACHED[s.replace(/@\d+$/, '')]})`).join('; ');
    console.log(
      `torture crash points: ${killed.length} killed and recovered, ${unreached.length} not reached${why ? `: ${why}` : ''}`,
    );
  });

  it.each(points())(
    '$spec',
    async ({ spec, action }) => {
      const scenario = SCENARIOS[SCENARIO_OF_ACTION[action]];
      const result = await pool.use((sandbox) =>
        runCase(sandbox, {
          scenario,
          crashAt: spec,
          label: `crash point ${spec} (scenario ${scenario.name}; reproduce: npx vitest run test/torture/crash-points.test.ts -t '${spec}')`,
        }),
      );
      const reason = UNREACHED[spec.replace(/@\d+$/, '')];
      if (reason === undefined) {
        expect(
          result.killed,
          `${spec} was never reached: tend apply exited ${result.firstExit} instead of dying there\n${result.log}`,
        ).toBe(true);
        killed.push(spec);
      } else {
        expect(result.killed, `${spec} is listed as unreached (${reason}) but was reached`).toBe(
          false,
        );
        unreached.push(spec);
      }
    },
    CASE_TIMEOUT_MS,
  );
});
