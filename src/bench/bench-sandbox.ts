import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FaultSettings, OracleObject, SandboxStats } from '../sandbox/index.js';
import type { SandboxChildMessage, SandboxChildRequest } from './sandbox-child.js';
import { onTeardown } from './teardown.js';

/** A sandbox platform running in its own process, with what the benchmarks need from it. */
export interface BenchSandbox {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The sandbox's counters (requests, responses by status, faults injected). */
  stats(): Promise<SandboxStats>;
  /** Merges fault settings. */
  setFaults(partial: Partial<FaultSettings>): Promise<void>;
  /** Forgets every object and counter; faults go back to those the process started with. */
  reset(): Promise<void>;
  /** Every object, visible yet or not. */
  objects(): Promise<OracleObject[]>;
  /** CPU time the sandbox process has used so far. */
  cpu(): Promise<NodeJS.CpuUsage>;
  stop(): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./sandbox-child.js', import.meta.url));

/** Forks `sandbox-child.js` with the given faults and resolves once it listens. */
export async function startBenchSandbox(faults: Partial<FaultSettings>): Promise<BenchSandbox> {
  const child: ChildProcess = fork(CHILD, [JSON.stringify(faults)], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Killed with the benchmark (it also exits when its parent's IPC channel closes).
  const untear = onTeardown(() => stop());
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: SandboxChildMessage) => {
      if (m.kind === 'ready') resolve(m.url);
      else reject(new Error(`the bench sandbox said ${m.kind} before it was ready`));
    });
    child.once('exit', (code) => reject(new Error(`the bench sandbox exited with ${code}`)));
  });
  const request = (m: SandboxChildRequest) => child.send(m);
  const json = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };
  return {
    url,
    stats: () => json<SandboxStats>('/_sandbox/stats'),
    setFaults: async (partial) => {
      await json('/_sandbox/faults', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(partial),
      });
    },
    reset: async () => {
      await json('/_sandbox/reset', { method: 'POST' });
    },
    objects: async () => (await json<{ objects: OracleObject[] }>('/_sandbox/objects')).objects,
    cpu: () =>
      new Promise((resolve) => {
        const on = (m: SandboxChildMessage) => {
          if (m.kind !== 'cpu') return;
          child.off('message', on);
          resolve(m.usage);
        };
        child.on('message', on);
        request({ kind: 'cpu' });
      }),
    stop,
  };
  async function stop(): Promise<void> {
    untear();
    if (child.exitCode === null && child.signalCode === null && child.connected) {
      request({ kind: 'stop' });
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
