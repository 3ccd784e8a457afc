// A timeout after success: the platform commits the mutation and never answers. Tend must find out
// what happened (look the object up, re-read it) within the same apply: no duplicate, nothing left
// pending, converged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScenarioName } from './scenarios.js';
import { SCENARIOS } from './scenarios.js';
import { CASE_TIMEOUT_MS, PARALLEL, SandboxPool, runCase } from './torture-kit.js';

const CASES: { scenario: ScenarioName; methods: string[]; hangs: number; reason: string }[] = [
  {
    scenario: 'create',
    methods: ['POST'],
    hangs: 3,
    reason: 'every create is looked up by marker',
  },
  { scenario: 'update', methods: ['PATCH'], hangs: 1, reason: 'the update is re-read' },
  { scenario: 'delete', methods: ['DELETE'], hangs: 1, reason: 'the object is gone on re-read' },
  {
    scenario: 'replace',
    methods: ['POST', 'PATCH', 'DELETE'],
    hangs: 3,
    reason: 'create new, repoint the volume, delete old: each unanswered',
  },
];

describe.concurrent('torture: timeouts after success', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.start(PARALLEL);
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it.each(CASES)(
    '$scenario with $methods unanswered: $reason',
    async ({ scenario, methods, hangs }) => {
      const result = await pool.use((sandbox) =>
        runCase(sandbox, {
          scenario: SCENARIOS[scenario],
          faults: { timeoutAfterSuccessRate: 1, methods },
          label: `timeout after success: ${scenario} (${methods.join(', ')})`,
        }),
      );
      expect(result.faults.timeoutAfterSuccess, result.log).toBe(hangs);
      expect(result.firstExit, `resolved within the first apply\n${result.log}`).toBe(0);
    },
    CASE_TIMEOUT_MS,
  );
});
