// A tiny HTTP proxy on 127.0.0.1 that forwards every request to an upstream (a test's pdns_server)
// and counts what passed through, by method and path: how tests count the requests a pass makes
// against a real server whose own log does not say.
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request that went through. */
export interface ProxiedRequest {
  readonly method: string;
  /** The path and query as sent, e.g. `/api/v1/servers/localhost/zones/scale.test.`. */
  readonly path: string;
  /** The upstream's status, or 0 when the upstream could not be reached. */
  status: number;
}

/** A running counting proxy. */
export interface CountingProxy {
  /** `http://127.0.0.1:<port>`: use it in place of the upstream's origin. */
  readonly url: string;
  /** Every request, in the order received (cleared by `clear`). */
  readonly requests: ProxiedRequest[];
  /** How many requests had this method (and, when given, a path matching `path`). */
  count(method: string, path?: RegExp): number;
  /** Called with each request as it arrives; the request is forwarded once what it returns settles. */
  onRequest(listener: ((r: ProxiedRequest) => void | Promise<void>) | undefined): void;
  /**
   * Behaves as a server that died: drops every open connection (a request in flight gets no answer)
   * and accepts no new one (a client gets ECONNREFUSED).
   */
  refuse(): void;
  clear(): void;
  stop(): Promise<void>;
}

/** Starts a proxy in front of `upstream` (`http://127.0.0.1:<port>`). */
export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  const requests: ProxiedRequest[] = [];
  let listener: ((r: ProxiedRequest) => void | Promise<void>) | undefined;
  const server = createServer((req, res) => {
    const entry: ProxiedRequest = { method: req.method ?? '', path: req.url ?? '', status: 0 };
    requests.push(entry);
    void Promise.resolve(listener?.(entry)).then(() => forward(req, res, entry));
  });
  const forward = (req: IncomingMessage, res: ServerResponse, entry: ProxiedRequest) => {
    if (res.destroyed || req.destroyed) return;
    const out = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        entry.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', () => {
      // The upstream is gone: the client sees the connection dropped, as it would without the proxy.
      res.destroy();
    });
    req.pipe(out);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    count: (method, path) =>
      requests.filter((r) => r.method === method && (path === undefined || path.test(r.path)))
        .length,
    onRequest: (l) => (listener = l),
    refuse: () => {
      server.close();
      server.closeAllConnections();
    },
    clear: () => void requests.splice(0),
    stop: async () => {
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
