// A tiny real HTTP server on 127.0.0.1 that records every request it gets and answers through a
// handler the test sets: the "other origin" of the redirect tests, or a platform that redirects.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Answers one request; `n` counts requests from 1. */
export type RecordingHandler = (req: RecordedRequest, res: ServerResponse, n: number) => void;

/** A running recording server. */
export interface RecordingServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in order (cleared by `clear`). */
  readonly requests: RecordedRequest[];
  /** Replaces the handler (the default answers 200 `{}`). */
  handle(handler: RecordingHandler): void;
  clear(): void;
  stop(): Promise<void>;
}

/** Starts a recording server on 127.0.0.1 and a free port. */
export async function startRecordingServer(
  handler: RecordingHandler = (_req, res) => json(res, 200, {}),
): Promise<RecordingServer> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(r);
      current(r, res, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    handle: (h) => (current = h),
    clear: () => void requests.splice(0),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers JSON. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Answers a redirect to `location`. */
export function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location }).end();
}
