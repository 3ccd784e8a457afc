import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TendError } from '../../core/index.js';
import type { WorkerEvent } from '../../app/index.js';
import { runWorker, storeFlag } from '../../app/index.js';
import type { WorkerOptions } from '../commands/worker.js';
import { cliContext, fail, output, stopOnSignals } from '../common.js';
import type { Output } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { tuneHeap } from '../heap.js';

function version(): string {
  const pkg = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return pkg.version;
}

/** One text line for a worker event (the JSON form is the event itself with its time). */
export function renderWorkerEvent(e: WorkerEvent): string {
  const at = `[${new Date().toISOString().slice(11, 19)}] worker ${e.worker}:`;
  switch (e.kind) {
    case 'worker-started':
      return `${at} started (pid ${e.pid} on ${e.host})`;
    case 'took':
      return `${at} took workspace ${e.workspace} (lease epoch ${e.epoch})${e.tookOver ? `, taken over from ${e.tookOver.command} pid ${e.tookOver.pid} on ${e.tookOver.host}` : ''}`;
    case 'released':
      return `${at} released workspace ${e.workspace} (${e.reason})`;
    case 'lost':
      return `${at} lost workspace ${e.workspace}: ${e.reason}`;
    case 'pass': {
      const states = Object.entries(e.states)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      const from = e.commit ? ` (commit ${e.commit.slice(0, 12)})` : '';
      return `${at} workspace ${e.workspace} pass ${e.pass}${from} done in ${e.ms} ms: ${states || 'nothing declared'}`;
    }
    case 'failed':
      return `${at} workspace ${e.workspace} pass failed: ${e.message}${e.hint ? ` (hint: ${e.hint})` : ''}`;
    case 'warning':
      return `${at} warning${e.workspace ? ` (workspace ${e.workspace})` : ''}: ${e.message}`;
    case 'worker-stopped':
      return `${at} stopped cleanly after ${e.passes} passes`;
  }
}

function checkFlags(o: WorkerOptions): void {
  const bad = (flag: string, why: string) =>
    new TendError('cli.invalid-flag', `${flag} ${why}`, { hint: 'see tend worker --help' });
  if (o.leaseTtl < 3) throw bad('--lease-ttl', `must be at least 3 seconds, got ${o.leaseTtl}`);
  if (o.interval < 1) throw bad('--interval', `must be at least 1 second, got ${o.interval}`);
  if (o.maxWorkspaces === 0) throw bad('--max-workspaces', 'must be at least 1');
  if (o.id !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(o.id)) {
    throw bad(
      '--id',
      `must be letters, digits, '.', '_' or '-' (at most 128), got ${JSON.stringify(o.id)}`,
    );
  }
}

/** `tend worker`: until SIGINT/SIGTERM; exit 0 once every lease is released. */
export async function workerHandler(o: WorkerOptions): Promise<void> {
  tuneHeap();
  const out: Output = output(o.json);
  const stop = stopOnSignals(out);
  const report = (e: WorkerEvent) =>
    out.json
      ? out.record({ time: new Date().toISOString(), ...e })
      : out.line(renderWorkerEvent(e));
  try {
    checkFlags(o);
    await runWorker(cliContext(), {
      ...(o.store ? { store: storeFlag(o.store) } : {}),
      ...(o.id !== undefined ? { id: o.id } : {}),
      ...(o.maxWorkspaces !== undefined ? { maxWorkspaces: o.maxWorkspaces } : {}),
      intervalMs: o.interval * 1000,
      leaseTtlMs: o.leaseTtl * 1000,
      approveDestroy: Boolean(o.approveDestroy),
      prune: o.prune !== false,
      verifyTimeoutMs: o.verifyTimeout,
      ...(o.cacheDir !== undefined ? { cacheDir: resolve(o.cacheDir) } : {}),
      version: version(),
      signal: stop.signal,
      report,
    });
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  } finally {
    stop.dispose();
  }
}
