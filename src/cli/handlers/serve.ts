import { readFileSync } from 'node:fs';
import type { HeldWorkspace, ServeLoop } from '../../app/index.js';
import { defaultContext, holdWorkspace, startServeLoop, storeReadiness } from '../../app/index.js';
import { TendError } from '../../core/index.js';
import { app, EventHub, listen, loadTokens, Metrics } from '../../server/index.js';
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
      ready: () => storeReadiness(reads),
      ctx,
      workspace,
      held,
      hub,
      metrics,
      ...(loop ? { loop } : {}),
      lockTimeoutMs: o.lockTimeout * 1000,
      verifyTimeoutMs: o.verifyTimeout,
      version: version(),
      tokens: o.auth === false ? 'none' : tokens,
      ...(o.metricsPublic ? { metricsPublic: true } : {}),
      ...(jsonLog ? { log } : {}),
    });
    const listening = await listen(api, o.listen, o.port);
    const message = `tend serve: ${listening.url} (${o.auth === false ? 'no authentication' : `${tokens.length} token${tokens.length === 1 ? '' : 's'}`}); loop ${loop ? 'running' : 'off'}. Ctrl-C to stop.`;
    if (jsonLog)
      log({ time: ctx.clock.now().toISOString(), kind: 'listening', url: listening.url });
    else out.err(out.style.bold(message));
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await listening.close();
    await held.close();
    await loop?.stop();
    loop = undefined;
    if (jsonLog) log({ time: ctx.clock.now().toISOString(), kind: 'stopped' });
    else out.err('stopped cleanly.');
  } catch (e) {
    await held?.close();
    await loop?.stop();
    fail(out, e);
  } finally {
    stop.dispose();
  }
}
