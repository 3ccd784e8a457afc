import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * One API request as the sandbox's request log records it: who asked (the User-Agent), what, and
 * what the sandbox answered. Nothing else of the request is kept: never a header besides the
 * User-Agent (so never the X-API-Key), never the query string, never a body.
 */
export interface RequestLogEntry {
  /** When the request arrived (ISO 8601, from the sandbox's clock). */
  readonly time: string;
  readonly method: string;
  /** The path without the query string (`/services/svc-1a2b3c4d`). */
  readonly path: string;
  /** The status answered; null when a mutation committed and its answer was withheld (the timeout-after-success fault). */
  readonly status: number | null;
  /** The User-Agent header as sent, null when there was none. */
  readonly userAgent: string | null;
  /** How long the sandbox took to answer (injected latency included), in milliseconds. */
  readonly ms: number;
  /** Present (true) when an injected fault decided the answer: an error, a 429, a withheld answer. */
  readonly injected?: true;
}

/** The longest User-Agent kept: a longer one is cut there, so a line stays small. */
export const MAX_USER_AGENT = 512;

/** The entry's line in the log file: one JSON object, then a newline. */
export function requestLogLine(entry: RequestLogEntry): string {
  return `${JSON.stringify(entry)}\n`;
}

/** A request about to be answered: the parts of it the log keeps, read when it arrives. */
export interface ArrivedRequest {
  readonly method: string;
  readonly path: string;
  readonly userAgent: string | undefined;
  /** Epoch milliseconds. */
  readonly at: number;
}

/** The log entry of a request and its answer. */
export function requestLogEntry(
  request: ArrivedRequest,
  status: number | null,
  answeredAt: number,
  injected: boolean,
): RequestLogEntry {
  const ua = request.userAgent;
  return {
    time: new Date(request.at).toISOString(),
    method: request.method,
    path: request.path,
    status,
    userAgent: ua === undefined || ua === '' ? null : ua.slice(0, MAX_USER_AGENT),
    ms: Math.max(0, answeredAt - request.at),
    ...(injected ? { injected: true as const } : {}),
  };
}

/**
 * Appends entries to a JSON-lines file, one write per request (no buffering in the process: a
 * reader sees each line as soon as its request is answered). The file is opened for appending when
 * the sandbox starts, so a sandbox restarted on the same file adds to it.
 */
export class RequestLogFile {
  private fd: number | undefined;

  constructor(readonly path: string) {
    try {
      mkdirSync(dirname(path), { recursive: true });
      this.fd = openSync(path, 'a', 0o600);
    } catch (error) {
      throw new Error(
        `the request log ${path} cannot be opened for appending (${(error as Error).message}): give a file in a directory you can write`,
      );
    }
  }

  write(entry: RequestLogEntry): void {
    if (this.fd === undefined) return; // closed: the sandbox is shutting down
    writeSync(this.fd, requestLogLine(entry));
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
