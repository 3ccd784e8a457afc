import { join } from 'node:path';
import type { Workspace } from '../engine/index.js';
import { openWorkspaceAt } from '../app/index.js';
import { setKey } from '../core/index.js';
import { reconcilePass, systemClock, tendActor } from '../engine/index.js';
import type { BenchSandbox } from './bench-sandbox.js';
import { writeIntentFixture } from './intent-fixture.js';
import { passProbe } from './pass-probe.js';

/** One apply of a fresh intent against an empty sandbox. */
export interface ApplyRun {
  readonly label: string;
  readonly count: number;
  /** The Provider document's `concurrency` and `rateLimit`. */
  readonly concurrency: number;
  readonly rateLimit: number;
  /** Loading the intent, connecting the provider and opening the store (not part of the rate). */
  readonly openMs: number;
  /** The whole pass: observe, plan, execute (journal, send, settle, verify), record status. */
  readonly wallMs: number;
  /** API requests the sandbox counted during the pass (answered or not). */
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** From the plan to the last verified object: the execution phase alone. */
  readonly executeMs: number;
  readonly executeRequestsPerSecond: number;
  /** 429 answers (the sandbox's rate limit, or injected). */
  readonly throttled: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly created: number;
  readonly failures: number;
  readonly firstFailures: readonly string[];
}

/** Options of one apply run. */
export interface ApplyOptions {
  readonly label: string;
  readonly count: number;
  readonly concurrency: number;
  readonly rateLimit: number;
  /** Working directory (the intent and its store are written below it). */
  readonly workDir: string;
  /** Requests the pass makes before executing (one list per resource type). */
  readonly listRequests: number;
}

/**
 * Resets the sandbox, writes an intent of `count` independent resources, and applies it in-process
 * (openWorkspace + reconcilePass). Returns the figures and the still-open workspace, whose objects
 * all exist afterwards (the no-drift benchmark reuses it).
 */
export async function runApply(
  sandbox: BenchSandbox,
  options: ApplyOptions,
): Promise<{ run: ApplyRun; ws: Workspace }> {
  await sandbox.reset();
  const dir = join(options.workDir, `${options.label}-${options.count}`);
  writeIntentFixture(dir, options.count, {
    endpoint: sandbox.url,
    concurrency: options.concurrency,
    rateLimit: options.rateLimit,
  });
  const t0 = performance.now();
  const ws = await openWorkspaceAt({ dir, name: 'bench', env: {} });
  const openMs = performance.now() - t0;

  const probe = passProbe();
  const before = await sandbox.stats();
  const start = performance.now();
  const result = await reconcilePass(ws, {
    mode: 'apply',
    approveDestroy: false,
    prune: false,
    actor: tendActor('bench'),
    clock: systemClock,
    report: probe.report,
    verifyTimeoutMs: 60_000,
    runChecks: false,
  });
  const end = performance.now();
  const after = await sandbox.stats();
  const t = probe.timeline();

  const requests = after.requests - before.requests;
  const wallMs = end - start;
  const executeMs = (t.lastOpAt ?? end) - (t.planAt ?? start);
  const byStatus: Record<string, number> = {};
  for (const [status, n] of Object.entries(after.byStatus)) {
    const d = n - (before.byStatus[status] ?? 0);
    if (d > 0) setKey(byStatus, status, d);
  }
  return {
    ws,
    run: {
      label: options.label,
      count: options.count,
      concurrency: options.concurrency,
      rateLimit: options.rateLimit,
      openMs,
      wallMs,
      requests,
      requestsPerSecond: requests / (wallMs / 1000),
      executeMs,
      executeRequestsPerSecond: (requests - options.listRequests) / (executeMs / 1000),
      throttled: byStatus['429'] ?? 0,
      byStatus,
      created: result.plan.counts.create,
      failures: t.failures,
      firstFailures: t.firstFailures,
    },
  };
}
