import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { POSTGRES } from '../support/postgres.js';
import { sleep } from '../support/fleet.js';

// The fleet benchmark killed (`node dist/bench/main.js --only fleet`, src/bench/teardown.ts): at its
// smallest sizes, SIGTERM or SIGINT once its cluster is up and its three workers are running; it
// exits 143 or 130 and leaves none of its processes behind — no PostgreSQL server of its cluster
// (pg_ctl detaches it), no `tend worker`, no sandbox — and removes the cluster's directory. Needs
// the built benchmark (npm run build). With CI=true a missing PostgreSQL fails the suite.

const MAIN = join(ROOT, 'dist', 'bench', 'main.js');

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly cmdline: string;
}

/** Every process of this machine (Linux /proc). */
function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue; // a zombie has ended
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      out.push({ pid: Number(name), ppid: Number(fields[1]), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The processes descending from `roots` (the roots included). */
function descendants(all: readonly Proc[], roots: readonly number[]): Proc[] {
  const found = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => found.has(p.pid));
}

/** Whether a process still runs with the same command line. */
const stillRuns = (p: Proc) => processes().some((q) => q.pid === p.pid && q.cmdline === p.cmdline);

describe.skipIf(POSTGRES.skip || process.platform !== 'linux')(
  `the fleet benchmark killed stops what it started${POSTGRES.note}`,
  () => {
    const started: ReturnType<typeof spawn>[] = [];
    afterAll(() => {
      for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
    });

    it.each([
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const)(
      'on %s: exits %i, no server of its cluster, worker or sandbox left, the cluster removed',
      async (signal, code) => {
        expect(existsSync(MAIN), `${MAIN}: run npm run build first`).toBe(true);
        const bench = spawn(
          process.execPath,
          [MAIN, '--only', 'fleet', '--fleet-workspaces', '1', '--fleet-resources', '1'].concat([
            '--fleet-kills',
            '1',
            '--fleet-rounds',
            '1',
            '--fleet-ttl',
            '3',
          ]),
          { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
        );
        started.push(bench);
        let err = '';
        bench.stderr.on('data', (d: Buffer) => (err += d.toString()));
        bench.stdout.on('data', () => undefined);
        const exited = new Promise<number | null>((r) => bench.once('exit', (c) => r(c)));
        // Up to the three workers started (after the cluster, the sandboxes, the migration).
        const deadline = Date.now() + 120_000;
        let mine: Proc[] = [];
        let dir = '';
        for (;;) {
          dir = /PostgreSQL in (\S+) on port/.exec(err)?.[1] ?? '';
          const all = processes();
          const server = all.filter((p) => dir !== '' && p.cmdline.includes(join(dir, 'data')));
          mine = descendants(all, [bench.pid!, ...server.map((p) => p.pid)]);
          const workers = mine.filter((p) => / worker --id bench-w\d/.test(p.cmdline));
          if (server.length > 0 && workers.length === 3) break;
          if (bench.exitCode !== null || Date.now() > deadline) {
            throw new Error(`the benchmark did not get its workers running:\n${err}`);
          }
          await sleep(200);
        }
        const others = mine.filter((p) => p.pid !== bench.pid);
        expect(others.some((p) => p.cmdline.includes('sandbox-child.js'))).toBe(true);
        expect(existsSync(dir)).toBe(true);
        const t0 = Date.now();
        bench.kill(signal);
        expect(await exited).toBe(code);
        const stopMs = Date.now() - t0;
        expect(err).toContain(`${signal}: stopping what the benchmark started`);
        expect(others.filter(stillRuns).map((p) => `${p.pid} ${p.cmdline}`)).toEqual([]);
        expect(existsSync(dir)).toBe(false);
        console.log(`${signal}: ${others.length} processes stopped in ${stopMs} ms`);
      },
      180_000,
    );
  },
);
