import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapFlag } from './heap.js';

describe('heapFlag', () => {
  const ours = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  it.each([
    { reason: 'plain node: tend sets its own growth', execArgv: [], want: ours },
    {
      reason: 'other node flags leave it to tend',
      execArgv: ['--enable-source-maps', '--max-old-space-size=4096'],
      want: ours,
    },
    {
      reason: 'a growth given to node is kept',
      execArgv: ['--heap-growing-percent=300'],
      want: undefined,
    },
    {
      reason: "0, V8's own choice, is a choice too",
      execArgv: ['--heap-growing-percent=0'],
      want: undefined,
    },
    {
      reason: 'also in its underscore spelling',
      execArgv: ['--heap_growing_percent=20'],
      want: undefined,
    },
    {
      reason: 'a flag that only starts the same is not it',
      execArgv: ['--heap-growing-percentage=20'],
      want: ours,
    },
  ])('$reason', ({ execArgv, want }) => {
    expect(heapFlag(execArgv)).toBe(want);
  });
});

describe('the flag takes effect in a running process', () => {
  // V8 reads the growth at every full collection: set after start-up, it bounds how far the heap
  // grows past what survived. Measured on garbage-heavy work over a small live set.
  const probe = (tune: boolean) => {
    const script = `
      ${tune ? `require('node:v8').setFlagsFromString('--heap-growing-percent=${HEAP_GROWING_PERCENT}');` : ''}
      const live = [];
      for (let i = 0; i < 200000; i++) live.push({ i, s: 'x' + i });
      let peak = 0;
      for (let round = 0; round < 40; round++) {
        let keep = [];
        for (let i = 0; i < 100000; i++) keep.push({ round, i, s: 'y' + i });
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        keep = null;
      }
      process.stdout.write(String(peak));
    `;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    return Number(r.stdout);
  };
  it('the peak heap of the same work is lower with it', () => {
    const tuned = probe(true);
    const untuned = probe(false);
    expect(tuned).toBeLessThan(untuned);
  });
});
