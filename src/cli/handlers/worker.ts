import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TendError, toTendError } from '../../core/index.js';
import type { AppContext, WorkerEvent, WorkerProbe } from '../../app/index.js';
import {
  defaultContext,
  defaultWorkerId,
  probes,
  runWorker,
  storeFlag,
  WorkerHealth,
} from '../../app/index.js';
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
    case 'store-unreachable':
      return `${at} cannot reach the store (attempt ${e.attempt}): ${e.message}; trying again in ${Math.round(e.retryInMs / 100) / 10} s`;
    case 'worker-stopped':
      return `${at} stopped cleanly after ${e.passes} passes`;
  }
}

/** Where `--listen` binds: `[host:]port`, the host 127.0.0.1 by default (`[::1]:9464` for IPv6). */
export function parseListen(given: string): { host: string; port: number } {
  const m = /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(given.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65_535) {
    throw new TendError(
      'cli.invalid-flag',
      `--listen must be [host:]port (a port from 0 to 65535), got ${JSON.stringify(given)}`,
      { hint: 'e.g. --listen 9464 (127.0.0.1), --listen 0.0.0.0:9464, --listen [::1]:9464' },
    );
  }
  const host = m[1] === undefined ? '127.0.0.1' : m[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
}

/** The worker's endpoint, when `--listen` asks for one: its probe, and how to close it. */
async function startEndpoint(
  o: WorkerOptions,
  id: string,
  clock: AppContext['clock'],
  announce: (url: string) => void,
): Promise<{ probe: WorkerProbe; event: (e: WorkerEvent) => void; close: () => Promise<void> }> {
  if (o.listen === undefined) {
    return { probe: {}, event: () => undefined, close: () => Promise.resolve() };
  }
  const where = parseListen(o.listen);
  // Loaded only for a worker that serves (decision 0033): Hono and prom-client.
  const { FleetMetrics, listen, workerApp } = await import('../../server/index.js');
  const health = new WorkerHealth(clock);
  const metrics = new FleetMetrics();
  const listening = await listen(
    workerApp({
      worker: id,
      version: version(),
      readiness: () => health.readiness(),
      metrics: () => metrics.render(),
    }),
    where.host,
    where.port,
  );
  announce(listening.url);
  return { probe: probes(health, metrics), event: metrics.event, close: () => listening.close() };
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
  let counted: (e: WorkerEvent) => void = () => undefined;
  const report = (e: WorkerEvent) => {
    counted(e);
    if (out.json) out.record({ time: new Date().toISOString(), ...e });
    else out.line(renderWorkerEvent(e));
  };
  const base = cliContext();
  // Every line names the worker: its id is fixed here when --id does not give it.
  const id = o.id ?? defaultWorkerId(base);
  let endpoint: Awaited<ReturnType<typeof startEndpoint>> | undefined;
  try {
    checkFlags(o);
    // Notices (a store's files tightened, the ledger key) are warnings of this worker's log.
    const ctx = defaultContext({
      redactor: base.redactor,
      notice: (message) => report({ worker: id, kind: 'warning', message }),
    });
    endpoint = await startEndpoint(o, id, ctx.clock, (url) =>
      out.json
        ? out.record({ time: new Date().toISOString(), worker: id, kind: 'listening', url })
        : out.line(`[${new Date().toISOString().slice(11, 19)}] worker ${id}: listening on ${url}`),
    );
    counted = endpoint.event;
    await runWorker(ctx, {
      ...(o.store ? { store: storeFlag(o.store) } : {}),
      id,
      probe: endpoint.probe,
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
    if (!out.json) fail(out, e);
    else {
      // The error is a line of the worker's log too, naming it.
      out.record({
        time: new Date().toISOString(),
        worker: id,
        kind: 'error',
        ok: false,
        error: toTendError(e).toJSON(),
      });
      process.exitCode = EXIT.error;
    }
  } finally {
    await endpoint?.close();
    stop.dispose();
  }
}
