import type { Workspace } from '../engine/index.js';
import { reconcilePass, systemClock, tendActor } from '../engine/index.js';
import type { BenchSandbox } from './bench-sandbox.js';
import { passProbe } from './pass-probe.js';

/** One reconcile pass that found nothing to do. */
export interface NoDriftPass {
  readonly wallMs: number;
  /** CPU time (user + system) of this process during the pass: Tend's alone (the sandbox runs apart). */
  readonly cpuMs: number;
  readonly cpuUsPerResource: number;
  /** CPU time of the sandbox process during the pass (serving the list calls), for context. */
  readonly sandboxCpuMs: number;
  readonly requests: number;
}

/** Repeated no-drift passes over one converged workspace. */
export interface NoDriftRun {
  readonly count: number;
  readonly passes: readonly NoDriftPass[];
  /** The pass with the median CPU time. */
  readonly median: NoDriftPass;
}

/**
 * Runs `passes` apply passes over a workspace whose every object exists and matches (the state an
 * apply leaves), measuring each with process.cpuUsage(). Fails when a pass plans anything but noops:
 * the figure would then not be a no-drift pass.
 */
export async function runNoDriftPasses(
  sandbox: BenchSandbox,
  ws: Workspace,
  passes: number,
): Promise<NoDriftRun> {
  const count = ws.intent.resources.length;
  const runs: NoDriftPass[] = [];
  for (let i = 0; i < passes; i++) {
    const probe = passProbe();
    const before = await sandbox.stats();
    const sandboxCpu = await sandbox.cpu();
    const cpu = process.cpuUsage();
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
    const wallMs = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const sandboxAfter = await sandbox.cpu();
    const after = await sandbox.stats();
    if (result.plan.counts.noop !== count) {
      throw new Error(
        `the no-drift pass planned ${JSON.stringify(result.plan.counts)} instead of ${count} noops`,
      );
    }
    const cpuMs = (used.user + used.system) / 1000;
    runs.push({
      wallMs,
      cpuMs,
      cpuUsPerResource: (cpuMs * 1000) / count,
      sandboxCpuMs:
        (sandboxAfter.user + sandboxAfter.system - sandboxCpu.user - sandboxCpu.system) / 1000,
      requests: after.requests - before.requests,
    });
  }
  const sorted = [...runs].sort((a, b) => a.cpuMs - b.cpuMs);
  return { count, passes: runs, median: sorted[Math.floor(sorted.length / 2)]! };
}
