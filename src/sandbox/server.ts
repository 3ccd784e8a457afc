import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createSandbox, type Sandbox, type SandboxOptions } from './app.js';

/** Where to listen, besides the sandbox options. */
export interface ListenOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Defaults to 127.0.0.1: the sandbox is for this machine only. */
  readonly host?: string;
}

/** A sandbox serving HTTP. */
export interface RunningSandbox {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly sandbox: Sandbox;
  /** Stops listening, cuts every open connection (hanging ones included) and flushes state. */
  close(): Promise<void>;
}

/** Starts a sandbox on a real HTTP port; resolves once it is listening. */
export async function startSandbox(
  options: SandboxOptions & ListenOptions = {},
): Promise<RunningSandbox> {
  const sandbox = createSandbox(options);
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({
      fetch: sandbox.app.fetch,
      port: options.port ?? 0,
      hostname: host,
    }) as Server;
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    sandbox,
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        sandbox.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }).finally(() => sandbox.flush())),
  };
}
