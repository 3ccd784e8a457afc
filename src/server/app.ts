import { Hono } from 'hono';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { TendError, toTendError } from '../core/index.js';
import type { ApiToken, Caller } from './auth.js';
import { allows, authenticate } from './auth.js';
import { openApiDocument, pathParams } from './openapi.js';
import type { Route, RouteResult, ServerContext } from './routes.js';
import { ROUTES } from './routes.js';
import { check, queryValues } from './validate.js';
import { addWebPage } from './web.js';

/** How the API is protected and what it logs. */
export interface ServerOptions extends ServerContext {
  /** The configured tokens; `none`: no authentication (`--no-auth`, only on a loopback address). */
  readonly tokens: readonly ApiToken[] | 'none';
  /** One JSON object per request (`--log-format json`); secrets pass through the redactor first. */
  readonly log?: (entry: Record<string, unknown>) => void;
  /** The route table (tests add none; default ROUTES). */
  readonly routes?: readonly Route[];
}

/** The HTTP status of an error, decided in this one place from its code. */
export function statusOf(code: string): number {
  if (code === 'auth.unauthorized') return 401;
  if (code === 'auth.forbidden') return 403;
  if (code === 'workspace.locked' || code === 'store.lease-lost') return 409;
  if (code === 'intent.invalid') return 422;
  // A capability this server does not offer for that resource (a fleet's git workspace).
  if (code.endsWith('.git_not_served')) return 501;
  if (
    code.endsWith('.not_found') ||
    code.endsWith('.unknown_address') ||
    code.endsWith('.unknown_field') ||
    code.endsWith('.unknown_target') ||
    code === 'route.not_found'
  ) {
    return 404;
  }
  if (
    /\.(bad_[a-z_]+|invalid[a-z_]*|unknown_[a-z_]+|approval_required|usage)$/.test(code) ||
    code.startsWith('accept.') ||
    code.startsWith('request.')
  ) {
    return 400;
  }
  return 500;
}

/** `{ error: { code, message, hint?, errors? } }`: every error the API answers has this shape. */
function errorBody(e: TendError): Record<string, unknown> {
  const extra = e as TendError & { errors?: readonly string[]; diagnostics?: readonly unknown[] };
  return {
    error: {
      code: e.code,
      message: e.message,
      ...(e.hint ? { hint: e.hint } : {}),
      ...(extra.errors ? { errors: extra.errors } : {}),
      ...(extra.diagnostics ? { diagnostics: extra.diagnostics } : {}),
    },
  };
}

/**
 * Hono's path for an OpenAPI path. An `{address}` holds one `/` (`sb.services/api`), sent as is or
 * encoded (`%2F`): its segment matches both, and nothing after it (`/resources/{address}/owners`).
 */
function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'address' ? `:${name}{[A-Za-z0-9_.-]+(?:/|%2[Ff])[^/]+}` : `:${name}`,
  );
}

/**
 * The API as a Hono app on Web-standard Request/Response: testable in-process with `app.request()`,
 * bound to a port by `listen`. Every request is authenticated (except `public` routes), authorised by
 * the route's role, validated against the route's schemas, handed to the application layer, and
 * answered with JSON; errors become statuses in `statusOf` only.
 */
export function app(options: ServerOptions): Hono {
  const routes = options.routes ?? ROUTES;
  const server: ServerContext = options;
  const redact = (v: unknown) => JSON.parse(options.ctx.redactor.json(v)) as unknown;
  const document = openApiDocument(routes, options.version);
  const hono = new Hono();

  const json = (c: Context, status: number, body: unknown) =>
    c.body(options.ctx.redactor.json(body), status as 200, {
      'content-type': 'application/json; charset=utf-8',
    });
  const fail = (c: Context, e: unknown) => {
    const err = toTendError(e);
    return json(c, statusOf(err.code), errorBody(err));
  };

  hono.use('*', async (c, next) => {
    const t0 = performance.now();
    await next();
    const route = c.req.routePath;
    options.metrics.request(c.req.method, route, c.res.status);
    options.log?.(
      redact({
        time: options.ctx.clock.now().toISOString(),
        kind: 'request',
        method: c.req.method,
        path: new URL(c.req.url).pathname,
        route,
        status: c.res.status,
        ms: Math.round(performance.now() - t0),
        caller: (c.get('caller' as never) as Caller | undefined)?.name,
      }) as Record<string, unknown>,
    );
  });

  // The web page of the twin (docs/web.md): a client of the routes below, served without a token.
  // `tend serve --fleet` serves the page that picks a workspace first.
  addWebPage(hono, { fleet: options.fleet !== undefined });

  for (const route of routes) {
    const path = honoPath(route.path);
    hono.on(route.method.toUpperCase(), path, async (c) => {
      try {
        // Who is calling: 401 without a known token, 403 when its role is too low.
        let caller: Caller | undefined;
        const open =
          route.role === 'public' || (route.path === '/metrics' && options.metricsPublic);
        if (options.tokens !== 'none' && !open) {
          caller = authenticate(c.req.header('authorization'), options.tokens);
          if (!caller) {
            const given = c.req.header('authorization') !== undefined;
            throw new TendError(
              'auth.unauthorized',
              given
                ? 'the bearer token is not one this server knows'
                : 'a bearer token is required',
              { hint: 'send Authorization: Bearer <token> (docs/api.md, "Tokens and roles")' },
            );
          }
          c.set('caller' as never, caller as never);
          if (!allows(caller.role, route.role)) {
            throw new TendError(
              'auth.forbidden',
              `${route.method.toUpperCase()} ${route.path} needs the ${route.role} role; ${caller.name} is ${caller.role}`,
            );
          }
        }
        // What it asks: params, query and body against the route's schemas.
        const url = new URL(c.req.url);
        const params: Record<string, string> = {};
        for (const name of pathParams(route.path)) {
          Object.defineProperty(params, name, {
            value: c.req.param(name) ?? '',
            enumerable: true,
          });
        }
        const query = queryValues(url, route.query);
        const problems: string[] = [];
        if (route.query) for (const p of check(route.query, query, 'query')) problems.push(p);
        else if (url.searchParams.size > 0) problems.push('query: this endpoint takes no query');
        let body: unknown;
        if (route.body) {
          const text = await c.req.text();
          if (text.trim() === '') body = route.body['required'] ? undefined : {};
          else {
            try {
              body = JSON.parse(text) as unknown;
            } catch (e) {
              throw new TendError(
                'request.bad_json',
                `the body is not JSON: ${(e as Error).message}`,
              );
            }
          }
          if (body === undefined) problems.push('body: a JSON body is required');
          else for (const p of check(route.body, body, 'body')) problems.push(p);
        }
        if (problems.length > 0) {
          const e = new TendError('request.invalid', problems.join('; '), {
            hint: `see GET /openapi.json, operation ${route.operationId}`,
          });
          Object.defineProperty(e, 'errors', { value: problems, enumerable: true });
          throw e;
        }
        if (route.operationId === 'openapi') return json(c, 200, document);
        // The server this request is for (a fleet's workspace named in the path), else this one.
        const scoped = route.scope ? await route.scope(params, server) : server;
        if (route.operationId === 'events') return events(c, scoped);
        const result: RouteResult = await route.handler({
          params,
          query,
          body,
          caller,
          server: scoped,
          signal: c.req.raw.signal,
        });
        if (result instanceof Response) return result;
        for (const [name, value] of Object.entries(result.headers ?? {})) c.header(name, value);
        return json(c, result.status ?? 200, result.body);
      } catch (e) {
        return fail(c, e);
      }
    });
  }
  hono.notFound((c) =>
    fail(
      c,
      new TendError(
        'route.not_found',
        `${c.req.method} ${new URL(c.req.url).pathname} is not an endpoint of this API`,
        {
          hint: 'GET /openapi.json lists them',
        },
      ),
    ),
  );
  return hono;
}

/** The SSE stream: every event from now on (and those after `Last-Event-ID`), one JSON each. */
function events(c: Context, server: ServerContext): Response {
  const redactor = server.ctx.redactor;
  const last = Number(c.req.header('last-event-id') ?? '');
  return streamSSE(c, async (stream) => {
    const queue = Number.isSafeInteger(last) && last > 0 ? server.hub.since(last) : [];
    let wake: (() => void) | undefined;
    const unsubscribe = server.hub.subscribe((e) => {
      queue.push(e);
      wake?.();
    });
    stream.onAbort(() => {
      unsubscribe();
      wake?.();
    });
    await stream.writeSSE({ event: 'ready', data: '{}' });
    try {
      while (!stream.aborted && !stream.closed) {
        const e = queue.shift();
        if (!e) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            // A comment every 15 s keeps proxies from closing an idle stream.
            const t = setTimeout(resolve, 15_000);
            t.unref();
          });
          wake = undefined;
          if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
          continue;
        }
        await stream.writeSSE({
          id: String(e.id),
          event: e.event.kind,
          data: redactor.json({ time: e.time, ...e.event }),
        });
      }
    } finally {
      unsubscribe();
    }
  });
}
