import { Hono } from 'hono';
import type { Readiness } from '../app/index.js';

// `tend worker --listen` (docs/fleet.md, decision 0046): three GET endpoints, no token (bind it to
// an address only the probes and the scraper reach): /healthz (the process answers), /readyz (its
// registry answers and its last heartbeat is recent: 200, else 503 with why) and /metrics.

/** What the worker's endpoint answers from. */
export interface WorkerEndpointOptions {
  readonly worker: string;
  readonly version: string;
  readonly readiness: () => Promise<Readiness>;
  readonly metrics: () => Promise<{ text: string; contentType: string }>;
}

/** The worker's HTTP endpoint as a Hono app (bound by `listen`). */
export function workerApp(options: WorkerEndpointOptions): Hono {
  const hono = new Hono();
  const { worker, version } = options;
  hono.get('/healthz', (c) => c.json({ ok: true, worker, version }));
  hono.get('/readyz', async (c) => {
    const r = await options.readiness();
    return r.ready
      ? c.json({ ready: true, worker }, 200)
      : c.json({ ready: false, worker, reason: r.reason ?? 'not ready' }, 503);
  });
  hono.get('/metrics', async () => {
    const m = await options.metrics();
    return new Response(m.text, { headers: { 'content-type': m.contentType } });
  });
  hono.notFound((c) =>
    c.json(
      {
        error: {
          code: 'route.not_found',
          message: `${c.req.method} ${new URL(c.req.url).pathname} is not an endpoint of tend worker`,
          hint: 'a worker answers GET /healthz, /readyz and /metrics',
        },
      },
      404,
    ),
  );
  return hono;
}
