import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PlanChildResult } from './plan-child.js';

const CHILD = fileURLToPath(new URL('./plan-child.js', import.meta.url));

/** Plans `count` synthetic resources in a fresh process (with --expose-gc) and returns its figures. */
export function runPlanBench(count: number): Promise<PlanChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', CHILD, String(count)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as PlanChildResult);
      } catch {
        reject(new Error(`the plan benchmark exited with ${code} and said: ${out.trim()}`));
      }
    });
  });
}
