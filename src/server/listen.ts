import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Hono } from 'hono';
import { TendError } from '../core/index.js';

/** A bound server: where it listens and how to close it. */
export interface Listening {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Binds the app to `host:port` (port 0: any free one). Rejects with `serve.cannot_listen`. */
export function listen(app: Hono, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            // SSE streams stay open: end every connection, then wait for the server to close.
            const s = server as unknown as { closeAllConnections?: () => void };
            server.close(() => done());
            s.closeAllConnections?.();
          }),
      });
    });
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new TendError('serve.cannot_listen', `cannot listen on ${host}:${port}: ${e.message}`, {
          hint: e.code === 'EADDRINUSE' ? 'another process uses that port: pass --port' : undefined,
        }),
      ),
    );
  });
}
