// How the MCP server is reached: stdio (what an agent client starts as a child process) or
// streamable HTTP on 127.0.0.1 (one server per session, all bound to the same workspace).
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { serve } from '@hono/node-server';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import type { AppContext } from '../app/index.js';
import { TendError } from '../core/index.js';
import type { McpServerOptions } from './server.js';
import { createMcpServer } from './server.js';

/** The streams the stdio server speaks over (the process's own by default; tests give others). */
export interface StdioStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
}

/**
 * Serves on stdin/stdout until stdin ends: the requests already received are answered, then the
 * server closes (the SDK's transport never notices the end of its input by itself, and a process
 * left waiting on it exits 13, "unsettled top-level await"). Nothing but the protocol is written to
 * stdout: Tend's notices go to stderr.
 */
export async function serveStdio(
  ctx: AppContext,
  options: McpServerOptions,
  io: StdioStreams = { stdin: process.stdin, stdout: process.stdout },
): Promise<void> {
  const server = createMcpServer(ctx, options);
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  // Set before connecting: the SDK's connect keeps callbacks already set and calls them first.
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  const answered = unanswered(transport);
  const ended = new Promise<void>((resolve) => io.stdin.once('end', resolve));
  await server.connect(transport);
  void ended.then(answered).then(() => server.close());
  await closed;
}

/**
 * Follows the requests `transport` receives and has not answered (nor seen cancelled) yet; the
 * function returned resolves once there are none. Set up before the transport is connected.
 */
function unanswered(transport: Transport): () => Promise<void> {
  const open = new Set<RequestId>();
  let idle: (() => void) | undefined;
  const settle = (id: RequestId | undefined) => {
    if (id !== undefined) open.delete(id);
    if (open.size === 0) idle?.();
  };
  transport.onmessage = (message) => {
    if (isJSONRPCRequest(message)) open.add(message.id);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      settle(message.params?.['requestId'] as RequestId | undefined);
    }
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, sendOptions) => {
    await send(message, sendOptions);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) settle(message.id);
  };
  return () =>
    open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve));
}

/** A streamable HTTP server that is listening. */
export interface RunningHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Where the HTTP server listens. */
export interface HttpListen {
  /** 0 picks a free port. */
  readonly port: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
}

const JSON_RPC_ERROR = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
});

/** How long an HTTP session may sit unused, and how many may be open at once. */
export interface SessionLimits {
  /** A session unused this long is closed; its next request is told to initialize again. */
  readonly idleMs: number;
  /** At this many open sessions, a new one closes the least recently used. */
  readonly maxSessions: number;
}

/** 30 minutes idle; 64 sessions (each holds an MCP server object, nothing of the workspace). */
export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 30 * 60_000, maxSessions: 64 };

/** The HTTP app and how to end its sessions. */
export interface McpHttpApp {
  readonly app: Hono;
  /** Closes every open session. */
  close(): Promise<void>;
}

/**
 * The HTTP app: `/mcp` speaks the streamable HTTP transport with sessions (the client's name, given
 * when it initializes, is the actor its calls are recorded under). A request whose Host header is not
 * the address the server listens on is refused (403): a web page the user visits cannot reach the
 * server through a DNS name rebound to 127.0.0.1. Sessions are bounded (`limits`): one unused for
 * `idleMs` (by `ctx.clock`) is closed when the next request arrives, and at `maxSessions` a new one
 * closes the least recently used — a client that never says goodbye cannot grow the server forever.
 */
export function mcpHttpApp(
  ctx: AppContext,
  options: McpServerOptions,
  allowedHosts: () => readonly string[],
  limits: SessionLimits = DEFAULT_SESSION_LIMITS,
): McpHttpApp {
  const app = new Hono();
  // In insertion order = least recently used first (a used session is moved to the end).
  const sessions = new Map<
    string,
    { server: McpServer; transport: WebStandardStreamableHTTPServerTransport; usedAt: number }
  >();
  const now = () => ctx.clock.now().getTime();
  const end = (sid: string) => {
    const session = sessions.get(sid);
    if (!session) return;
    sessions.delete(sid);
    void session.server.close().catch(() => undefined);
  };
  const sweep = () => {
    const cutoff = now() - limits.idleMs;
    for (const [sid, session] of sessions) {
      if (session.usedAt > cutoff) break;
      end(sid);
    }
  };
  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!allowedHosts().includes(host)) {
      return c.json(
        JSON_RPC_ERROR(-32000, `host ${JSON.stringify(host)} is not this server's address`),
        403,
      );
    }
    await next();
  });
  app.all('/mcp', async (c) => {
    sweep();
    const id = c.req.header('mcp-session-id');
    if (id !== undefined) {
      const session = sessions.get(id);
      if (!session) {
        return c.json(
          JSON_RPC_ERROR(
            -32001,
            `no such session (it ended, sat unused for ${Math.round(limits.idleMs / 60_000)} min, or the server restarted): initialize again`,
          ),
          404,
        );
      }
      sessions.delete(id);
      sessions.set(id, { ...session, usedAt: now() });
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST') {
      return c.json(JSON_RPC_ERROR(-32000, 'no session: POST an initialize request first'), 400);
    }
    const server = createMcpServer(ctx, options);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sid) => {
        while (sessions.size >= limits.maxSessions) end(sessions.keys().next().value as string);
        sessions.set(sid, { server, transport, usedAt: now() });
      },
      onsessionclosed: (sid) => {
        sessions.delete(sid);
      },
    });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
  app.notFound((c) => c.json(JSON_RPC_ERROR(-32000, 'not found: the MCP endpoint is /mcp'), 404));
  return {
    app,
    close: async () => {
      const open = [...sessions.values()];
      sessions.clear();
      for (const s of open) await s.server.close();
    },
  };
}

/** Serves streamable HTTP on 127.0.0.1 (or `listen.host`); resolves once listening. */
export async function serveHttp(
  ctx: AppContext,
  options: McpServerOptions,
  listen: HttpListen,
): Promise<RunningHttpServer> {
  const host = listen.host ?? '127.0.0.1';
  const shown = host.includes(':') ? `[${host}]` : host;
  let port = 0;
  const hosts = () => [`${shown}:${port}`, `localhost:${port}`];
  const http = mcpHttpApp(ctx, options, hosts);
  const app = http.app;
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: listen.port, hostname: host }) as Server;
    s.once('listening', () => resolve(s));
    s.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new TendError('mcp.port_in_use', `${shown}:${listen.port} is already in use`, {
              hint: 'pick another --port, or --port 0 for a free one',
            })
          : e,
      ),
    );
  });
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${port}/mcp`,
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        void http.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      })),
  };
}
