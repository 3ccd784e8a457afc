// The sandbox as a separate process for benchmarks, so that the CPU time of the benchmarked Tend
// process is Tend's alone. Started by `startBenchSandbox` with `fork`; it talks over the IPC channel.
import { startSandbox } from '../sandbox/index.js';
import type { FaultSettings } from '../sandbox/index.js';

/** A request from the parent. */
export type SandboxChildRequest = { readonly kind: 'cpu' } | { readonly kind: 'stop' };

/** A message to the parent. */
export type SandboxChildMessage =
  | { readonly kind: 'ready'; readonly url: string }
  | { readonly kind: 'cpu'; readonly usage: NodeJS.CpuUsage };

async function main(): Promise<void> {
  const faults = JSON.parse(process.argv[2] ?? '{}') as Partial<FaultSettings>;
  const running = await startSandbox({ port: 0, faults });
  const send = (m: SandboxChildMessage) => process.send?.(m);
  process.on('message', (m: SandboxChildRequest) => {
    if (m.kind === 'cpu') send({ kind: 'cpu', usage: process.cpuUsage() });
    else if (m.kind === 'stop') void running.close().finally(() => process.exit(0));
  });
  // The parent going away (a crash, Ctrl-C) ends this process too.
  process.on('disconnect', () => void running.close().finally(() => process.exit(0)));
  send({ kind: 'ready', url: running.url });
}

void main();
