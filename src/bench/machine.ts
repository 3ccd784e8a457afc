import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

/** Where and when the benchmarks ran. */
export interface Machine {
  readonly date: string;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly commit: string;
}

/** Describes this machine and the commit being measured. */
export function describeMachine(): Machine {
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    encoding: 'utf8',
  });
  const commit = git.status === 0 ? git.stdout.trim() : 'unknown';
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    commit: dirty.status === 0 && dirty.stdout.trim() !== '' ? `${commit}+changes` : commit,
  };
}

/** The 1-minute load average now: other work on the machine competes for its cores. */
export function load(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}
