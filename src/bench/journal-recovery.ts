import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FaultSettings } from '../sandbox/index.js';
import { openWorkspaceAt } from '../app/index.js';
import { reconcilePass, systemClock, tendActor } from '../engine/index.js';
import type { BenchSandbox } from './bench-sandbox.js';
import { writeIntentFixture } from './intent-fixture.js';
import type { RecoveryChildResult } from './recovery-child.js';

/** Options of the recovery benchmark. */
export interface RecoveryOptions {
  readonly count: number;
  readonly workDir: string;
  /** Faults while the restarted Tend recovers (the fill runs without any, to be quick). */
  readonly faults: Partial<FaultSettings>;
  /** The Provider document's settings for the restarted Tend. */
  readonly concurrency: number;
  readonly rateLimit: number;
  /** The restarted process is stopped after this long; the rest is projected. */
  readonly budgetMs: number;
}

/** What recovering a journal of `count` unsettled creates took. */
export interface RecoveryRun extends RecoveryChildResult {
  readonly count: number;
  readonly budgetMs: number;
  /** Objects on the sandbox before the restart (each carrying the marker of its operation). */
  readonly objectsBefore: number;
  /**
   * Restart until the journal is empty (the last operation resolved): measured when every operation
   * was resolved within the budget, otherwise projected linearly from the rate so far.
   */
  readonly journalEmptyMs: number;
  readonly projected: boolean;
}

const CHILD = fileURLToPath(new URL('./recovery-child.js', import.meta.url));

/** Throwing at this point leaves the state of a kill -9 right after the platform answered a create. */
class Interrupted extends Error {}

/**
 * Leaves `count` unsettled creates in a fresh store whose objects all exist on the sandbox with the
 * operation's marker: the state a kill -9 leaves right after the platform answered each create and
 * before Tend wrote anything about it. (A pass runs with a crash hook that throws before the first
 * write after the create is sent.) Then restarts Tend in a new process and times recovery.
 */
export async function runRecovery(
  sandbox: BenchSandbox,
  options: RecoveryOptions,
): Promise<RecoveryRun> {
  const dir = join(options.workDir, `recovery-${options.count}`);
  const objectsBefore = await fillUnsettled(sandbox, dir, options.count);
  await sandbox.setFaults(options.faults);
  writeIntentFixture(dir, options.count, {
    endpoint: sandbox.url,
    concurrency: options.concurrency,
    rateLimit: options.rateLimit,
  });
  const child = await runChild(dir, options.budgetMs);
  const complete = !child.budgetHit && child.leftPending === 0;
  let journalEmptyMs: number;
  if (complete) journalEmptyMs = child.lastResolvedMs ?? child.observedMs;
  else {
    // Each resolution costs about the same (a lookup and three writes), so extrapolate linearly from
    // the rate since recovery began.
    const start = child.observedMs || child.openMs;
    const elapsed = (child.lastResolvedMs ?? options.budgetMs) - start;
    journalEmptyMs = start + (elapsed / Math.max(1, child.resolved)) * options.count;
  }
  return {
    ...child,
    count: options.count,
    budgetMs: options.budgetMs,
    objectsBefore,
    journalEmptyMs,
    projected: !complete,
  };
}

/**
 * Leaves `count` unsettled creates in a fresh store of workspace `bench` at `<dir>/.tend/tend.db`,
 * whose objects all exist on the (emptied) sandbox with the operation's marker: the state a kill -9
 * leaves right after the platform answered each create and before Tend wrote anything about it. Runs
 * without faults, to be quick, and leaves them off. Returns the objects on the sandbox.
 */
export async function fillUnsettled(
  sandbox: BenchSandbox,
  dir: string,
  count: number,
): Promise<number> {
  await sandbox.reset();
  await sandbox.setFaults({ latencyMs: 0, rateLimit: 0 });
  rmSync(dir, { recursive: true, force: true });
  writeIntentFixture(dir, count, { endpoint: sandbox.url, concurrency: 64, rateLimit: 0 });
  const ws = await openWorkspaceAt({ dir, name: 'bench', env: {} });
  await reconcilePass(ws, {
    mode: 'apply',
    approveDestroy: false,
    prune: false,
    actor: tendActor('bench'),
    clock: systemClock,
    report: () => {},
    verifyTimeoutMs: 60_000,
    runChecks: false,
    crash: (when, point, action) => {
      if (when === 'before' && point === 'twin' && action === 'create') throw new Interrupted();
    },
  });
  const pending = (await ws.store.unsettled()).length;
  await ws.close();
  const objectsBefore = (await sandbox.objects()).length;
  if (pending !== count || objectsBefore !== count) {
    throw new Error(
      `recovery fixture: expected ${count} pending operations and objects, got ${pending} and ${objectsBefore}`,
    );
  }

  return objectsBefore;
}

function runChild(dir: string, budgetMs: number): Promise<RecoveryChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, String(budgetMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as RecoveryChildResult);
      } catch {
        reject(new Error(`the recovery process exited with ${code} and said: ${out.trim()}`));
      }
    });
  });
}
