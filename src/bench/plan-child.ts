// Plans a synthetic intent in a fresh process (run with --expose-gc), so that heap figures are the
// plan's alone. Prints one JSON line (a PlanChildResult) on stdout.
import { getHeapStatistics } from 'node:v8';
import type { Plan } from '../core/index.js';
import { planPass } from '../engine/planner.js';
import { corePlan } from './core-plan.js';
import { buildPlanFixture } from './plan-fixture.js';

/** What the child measured. */
export interface PlanChildResult {
  readonly count: number;
  readonly counts: Plan['counts'];
  /** planPass, first (cold) run: what one pass of a fresh process pays. */
  readonly planPassColdMs: number;
  /** CPU time (user + system) of that first run: what it costs when the machine is shared. */
  readonly planPassColdCpuMs: number;
  /** planPass, fastest of the warm runs. */
  readonly planPassWarmMs: number;
  /** The pure core alone (references, diff, decide, assemble), fastest warm run. */
  readonly coreWarmMs: number;
  /** Heap after GC, per resource: intent + observation + plan, all retained. */
  readonly retainedBytesPerResource: number;
  /** Heap held by the inputs alone (intent + observation), per resource. */
  readonly inputBytesPerResource: number;
  /** Highest heap seen while planning (sampled), above the heap before the inputs existed. */
  readonly peakHeapBytesPerResource: number;
  /** Peak RSS of the process above its RSS before the inputs existed. */
  readonly peakRssBytesPerResource: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  gc?.();
  return getHeapStatistics().used_heap_size;
}

async function main(): Promise<void> {
  if (!gc) throw new Error('run with node --expose-gc');
  const count = Number(process.argv[2] ?? 100_000);
  const rss0 = process.memoryUsage().rss;
  const heap0 = heap();
  const fixture = await buildPlanFixture(count);
  const heapInputs = heap();

  // Sample the heap while planning: the in-memory provider's evaluate runs throughout the pass.
  let peak = getHeapStatistics().used_heap_size;
  const evaluate = fixture.ws
    .typeOf('sb.services')
    .provider.evaluate.bind(fixture.ws.typeOf('sb.services').provider);
  const provider = fixture.ws.typeOf('sb.services').provider as { evaluate: typeof evaluate };
  provider.evaluate = (type, current, desired) => {
    peak = Math.max(peak, getHeapStatistics().used_heap_size);
    return evaluate(type, current, desired);
  };
  const options = { approveDestroy: false, prune: true };
  let t = performance.now();
  const cpu = process.cpuUsage();
  const first = await planPass(fixture.ws, fixture.observation, options);
  const planPassColdMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  peak = Math.max(peak, getHeapStatistics().used_heap_size);
  const heapRetained = heap();
  const peakRss = process.resourceUsage().maxRSS * 1024;

  let planPassWarmMs = Infinity;
  for (let i = 0; i < 3; i++) {
    t = performance.now();
    await planPass(fixture.ws, fixture.observation, options);
    planPassWarmMs = Math.min(planPassWarmMs, performance.now() - t);
  }
  let coreWarmMs = Infinity;
  for (let i = 0; i < 4; i++) {
    t = performance.now();
    const plan = corePlan(fixture);
    coreWarmMs = Math.min(coreWarmMs, performance.now() - t);
    if (plan.steps.length !== first.plan.steps.length) throw new Error('core plan differs');
  }
  const result: PlanChildResult = {
    count,
    counts: first.plan.counts,
    planPassColdMs,
    planPassColdCpuMs: (used.user + used.system) / 1000,
    planPassWarmMs,
    coreWarmMs,
    retainedBytesPerResource: (heapRetained - heap0) / count,
    inputBytesPerResource: (heapInputs - heap0) / count,
    peakHeapBytesPerResource: (peak - heap0) / count,
    peakRssBytesPerResource: (peakRss - rss0) / count,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
