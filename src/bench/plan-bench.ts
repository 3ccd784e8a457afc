import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PlanChildResult, PlanMemory, PlanTiming } from './plan-child.js';

const CHILD = fileURLToPath(new URL('./plan-child.js', import.meta.url));

/**
 * Plans `count` synthetic resources in two fresh processes (with --expose-gc): one times planning,
 * the other samples its memory, so that neither measurement disturbs the other.
 */
export async function runPlanBench(count: number): Promise<PlanChildResult> {
  const timing = await child<PlanTiming>('time', count);
  const memory = await child<PlanMemory>('memory', count);
  return { ...timing, ...memory };
}

function child<T>(mode: string, count: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--expose-gc', CHILD, mode, String(count)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('error', reject);
    proc.once('exit', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as T);
      } catch {
        reject(
          new Error(`the plan benchmark (${mode}) exited with ${code} and said: ${out.trim()}`),
        );
      }
    });
  });
}
