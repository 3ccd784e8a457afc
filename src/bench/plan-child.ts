// Plans a synthetic intent in a fresh process (run with --expose-gc), so that heap figures are the
// plan's alone: `plan-child.js time N` prints a PlanTiming, `plan-child.js memory N` a PlanMemory,
// as one JSON line on stdout.
import { getHeapStatistics } from 'node:v8';
import type { Plan, Provider } from '../core/index.js';
import { planPass } from '../engine/planner.js';
import { corePlan } from './core-plan.js';
import { buildPlanFixture } from './plan-fixture.js';

/** What a timing run measured. */
export interface PlanTiming {
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
}

/** What a memory run measured, in bytes per resource. */
export interface PlanMemory {
  /** Heap after GC: intent + observation + plan, all retained. */
  readonly retainedBytesPerResource: number;
  /** Heap held by the inputs alone (intent + observation). */
  readonly inputBytesPerResource: number;
  /**
   * Highest live heap while planning (collected, then sampled at points through the pass), above the
   * heap before the inputs existed: the memory planning needs, inputs included.
   */
  readonly peakLiveHeapBytesPerResource: number;
  /** Highest heap seen while planning, garbage the collector had not reclaimed yet included. */
  readonly peakHeapBytesPerResource: number;
  /** Peak RSS of the process above its RSS before the inputs existed. */
  readonly peakRssBytesPerResource: number;
}

/** Both. */
export type PlanChildResult = PlanTiming & PlanMemory;

const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  gc?.();
  return getHeapStatistics().used_heap_size;
}

/** Timing: a cold pass (what one pass of a fresh process pays), then warm passes and the core alone. */
async function timing(count: number): Promise<PlanTiming> {
  const fixture = await buildPlanFixture(count);
  const options = { approveDestroy: false, prune: true };
  let t = performance.now();
  const cpu = process.cpuUsage();
  const first = await planPass(fixture.ws, fixture.observation, options);
  const planPassColdMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
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
  return {
    count,
    counts: first.plan.counts,
    planPassColdMs,
    planPassColdCpuMs: (used.user + used.system) / 1000,
    planPassWarmMs,
    coreWarmMs,
  };
}

/**
 * Memory: one pass in a fresh process. The in-memory provider's evaluate runs throughout the pass
 * (for every changed resource): every call samples the heap as it is, garbage included; every 64th
 * also collects first, so that what it samples is what planning needs.
 */
async function memory(count: number): Promise<PlanMemory> {
  if (!gc) throw new Error('run with node --expose-gc');
  const rss0 = process.memoryUsage().rss;
  const heap0 = heap();
  const fixture = await buildPlanFixture(count);
  const heapInputs = heap();
  const provider = fixture.ws.typeOf('sb.services').provider as {
    evaluate: Provider['evaluate'];
  };
  const evaluate = provider.evaluate.bind(provider);
  let peakWithGarbage = 0;
  let peakLive = 0;
  let calls = 0;
  provider.evaluate = (type, current, desired) => {
    peakWithGarbage = Math.max(peakWithGarbage, getHeapStatistics().used_heap_size);
    if (++calls % 64 === 0) peakLive = Math.max(peakLive, heap());
    return evaluate(type, current, desired);
  };
  const planned = await planPass(fixture.ws, fixture.observation, {
    approveDestroy: false,
    prune: true,
  });
  peakWithGarbage = Math.max(peakWithGarbage, getHeapStatistics().used_heap_size);
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const retained = heap();
  peakLive = Math.max(peakLive, retained);
  if (planned.plan.steps.length === 0) throw new Error('empty plan');
  return {
    retainedBytesPerResource: (retained - heap0) / count,
    inputBytesPerResource: (heapInputs - heap0) / count,
    peakLiveHeapBytesPerResource: (peakLive - heap0) / count,
    peakHeapBytesPerResource: (peakWithGarbage - heap0) / count,
    peakRssBytesPerResource: (peakRss - rss0) / count,
  };
}

async function main(): Promise<void> {
  const mode = process.argv[2];
  const count = Number(process.argv[3] ?? 100_000);
  const result = mode === 'memory' ? await memory(count) : await timing(count);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
