import { readFileSync } from 'node:fs';
import type {
  AppContext,
  AppEvent,
  FleetServe,
  HeldWorkspace,
  ServeLoop,
} from '../../app/index.js';
import {
  defaultContext,
  fleetReadiness,
  holdWorkspace,
  openFleetServe,
  startServeLoop,
  storeReadiness,
} from '../../app/index.js';
import { TendError } from '../../core/index.js';
import type { ServerOptions } from '../../server/index.js';
import { app, EventHub, fleetRoutes, listen, loadTokens, Metrics } from '../../server/index.js';
import type { ServeOptions } from '../commands/serve.js';
import { cliContext, fail, output, stopOnSignals, workspaceOptions } from '../common.js';
import { renderEvent } from '../render/events.js';
import { tuneHeap } from '../heap.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

function version(): string {
  const pkg = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return pkg.version;
}

/** `tend serve [dir]`, run: until a signal; exit 1 when it cannot start. */
export async function serveHandler(dir: string, o: ServeOptions): Promise<void> {
  // A command that holds many resources for long: bound the heap's growth (decision 0027).
  tuneHeap();
  const out = output(false);
  const base = cliContext();
  const jsonLog = o.logFormat === 'json';
  // One JSON object per line on stderr, through the redactor (no token, no secret).
  const log = (entry: Record<string, unknown>) =>
    process.stderr.write(`${base.redactor.json(entry)}\n`);
  let loop: ServeLoop | undefined;
  let held: HeldWorkspace | undefined;
  let fleet: FleetServe | undefined;
  const stop = stopOnSignals(out);
  try {
    if (o.logFormat !== 'text' && o.logFormat !== 'json') {
      throw new TendError(
        'serve.bad_flag',
        `--log-format must be text or json, got "${o.logFormat}"`,
      );
    }
    const tokens = loadTokens(o.tokens, base.env, base.redactor);
    if (o.auth === false) {
      if (!LOOPBACK.has(o.listen)) {
        throw new TendError(
          'serve.no_auth_exposed',
          `--no-auth serves the API to anyone who reaches ${o.listen}: it is allowed on 127.0.0.1 (or ::1) only`,
          { hint: 'configure tokens with --tokens <file> or TEND_API_TOKENS' },
        );
      }
    } else if (tokens.length === 0) {
      throw new TendError(
        'serve.no_tokens',
        'no API token is configured: nobody could call the API',
        {
          hint: 'pass --tokens <file> (a list of { tokenFromEnv, role, name }), set TEND_API_TOKENS, or --no-auth on 127.0.0.1',
        },
      );
    }
    const metrics = new Metrics();
    // The same redactor as every other output; notices (files tightened, the ledger key) are log
    // entries too when the log is JSON.
    const ctx = defaultContext({
      redactor: base.redactor,
      apiCalls: metrics.apiCall,
      ...(jsonLog
        ? {
            notice: (message: string) =>
              log({ time: new Date().toISOString(), kind: 'notice', message }),
          }
        : {}),
    });
    const hub = new EventHub(() => ctx.clock.now());
    hub.subscribe(metrics.event);
    hub.subscribe((e) => {
      if (jsonLog) log({ time: e.time, log: 'event', event: e.event });
      else {
        const text = renderEvent(e.event, out.style, false);
        if (text) out.err(text);
      }
    });
    const workspace = workspaceOptions(dir, o);
    if (o.fleet && o.workspace) {
      throw new TendError(
        'serve.bad_flag',
        '--fleet serves every workspace registered in the fleet’s store: --workspace does not go with it',
        { hint: 'drop --workspace; a workspace is served under /workspaces/{name}/…' },
      );
    }
    const common: Omit<ServerOptions, 'workspace' | 'hub'> = {
      ctx,
      metrics,
      lockTimeoutMs: o.lockTimeout * 1000,
      verifyTimeoutMs: o.verifyTimeout,
      version: version(),
      tokens: o.auth === false ? 'none' : tokens,
      ...(o.metricsPublic ? { metricsPublic: true } : {}),
      ...(jsonLog ? { log } : {}),
    };
    if (o.fleet) {
      const served = await serveFleet(ctx, { ...common, workspace, hub }, (text, entry) => {
        if (jsonLog) log(entry);
        else if (text) out.err(text);
      });
      fleet = served.fleet;
      const listening = await listen(served.api, o.listen, o.port);
      const message = `tend serve --fleet: ${listening.url} (${o.auth === false ? 'no authentication' : `${tokens.length} token${tokens.length === 1 ? '' : 's'}`}); the workspaces of the fleet under /workspaces/{name}/, no loop here. Ctrl-C to stop.`;
      if (jsonLog)
        log({ time: ctx.clock.now().toISOString(), kind: 'listening', url: listening.url });
      else out.err(out.style.bold(message));
      await untilStopped(stop.signal);
      await listening.close();
      await fleet.close();
      fleet = undefined;
      if (jsonLog) log({ time: ctx.clock.now().toISOString(), kind: 'stopped' });
      else out.err('stopped cleanly.');
      return;
    }
    if (o.loop !== false) {
      loop = startServeLoop(ctx, {
        ...workspace,
        intervalMs: o.interval * 1000,
        approveDestroy: false,
        prune: o.prune !== false,
        follow: o.follow !== false,
        verifyTimeoutMs: o.verifyTimeout,
        lockTimeoutMs: o.lockTimeout * 1000,
        report: hub.publish,
        onPassDone: ({ unsettled }) => metrics.backlog(unsettled),
      });
      await loop.started;
    }
    // Reads (status, graph) are answered from one workspace kept loaded, not a load per request.
    held = holdWorkspace(ctx, workspace);
    const reads = held;
    const api = app({
      ...common,
      ready: () => storeReadiness(reads),
      workspace,
      held,
      hub,
      ...(loop ? { loop } : {}),
    });
    const listening = await listen(api, o.listen, o.port);
    const message = `tend serve: ${listening.url} (${o.auth === false ? 'no authentication' : `${tokens.length} token${tokens.length === 1 ? '' : 's'}`}); loop ${loop ? 'running' : 'off'}. Ctrl-C to stop.`;
    if (jsonLog)
      log({ time: ctx.clock.now().toISOString(), kind: 'listening', url: listening.url });
    else out.err(out.style.bold(message));
    await untilStopped(stop.signal);
    await listening.close();
    await held.close();
    await loop?.stop();
    loop = undefined;
    if (jsonLog) log({ time: ctx.clock.now().toISOString(), kind: 'stopped' });
    else out.err('stopped cleanly.');
  } catch (e) {
    await fleet?.close();
    await held?.close();
    await loop?.stop();
    fail(out, e);
  } finally {
    stop.dispose();
  }
}

function untilStopped(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * `tend serve --fleet`: the fleet's store opened (a SQLite store is refused, saying what to give),
 * one event hub per workspace fed by the workers' events (the fleet's channel), the fleet's routes.
 * `say` gets each log line as text (may be empty) and as a JSON entry.
 */
async function serveFleet(
  ctx: AppContext,
  options: ServerOptions,
  say: (text: string, entry: Record<string, unknown>) => void,
): Promise<{ api: ReturnType<typeof app>; fleet: FleetServe }> {
  const hubs = new Map<string, EventHub>();
  const hubOf = (name: string): EventHub => {
    let hub = hubs.get(name);
    if (!hub) {
      hub = new EventHub(() => ctx.clock.now());
      hub.subscribe((e) => {
        const worker = (e.event as { worker?: unknown }).worker;
        say(`[${name}${typeof worker === 'string' ? ` ${worker}` : ''}] ${e.event.kind}`, {
          time: e.time,
          log: 'event',
          workspace: name,
          event: e.event,
        });
      });
      hubs.set(name, hub);
    }
    return hub;
  };
  const fleet = await openFleetServe(ctx, {
    ...(options.workspace.store ? { store: options.workspace.store } : {}),
    onEvent: (n) =>
      hubOf(n.workspace).publish({ ...n.event, worker: n.worker } as unknown as AppEvent),
    onConnection: (state, message) =>
      say(
        state === 'lost'
          ? `the fleet's event channel dropped (${message ?? 'no reason'}): listening again`
          : '',
        {
          time: ctx.clock.now().toISOString(),
          kind: state === 'lost' ? 'warning' : 'listening-events',
          ...(message ? { message } : {}),
        },
      ),
  });
  const api = app({
    ...options,
    ready: () => fleetReadiness(fleet),
    fleet,
    hubs: hubOf,
    routes: fleetRoutes(),
  });
  return { api, fleet };
}
