import { Agent, request } from 'node:http';

/** What `httpLoad` is asked: a bounded load on one URL of a loopback server. */
export interface HttpLoadOptions {
  /** The full URL, e.g. `http://127.0.0.1:41234/status`. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Requests in flight at once, each on its own kept-alive connection. */
  readonly connections: number;
  /** How long requests are started; those in flight at the end are waited for and counted. */
  readonly durationMs: number;
}

/** What a load run saw: every answer by status, the rate of all answers, latency. */
export interface HttpLoadResult {
  readonly url: string;
  readonly connections: number;
  /** Wall time from the first request to the last answer. */
  readonly seconds: number;
  /** Every answer, whatever its status, and transport failures (`error`). */
  readonly requests: number;
  /** Answers by status (`"200"`, `"422"`, …; `"error"`: no answer). */
  readonly statuses: Readonly<Record<string, number>>;
  /** Answers with status 200 per second. */
  readonly okPerSecond: number;
  /** Nearest-rank percentiles of every request's time, in milliseconds. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** The first answer other than 200, shortened (what went wrong, for the report). */
  readonly firstFailure?: string;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Loads one URL with `connections` requests in flight for `durationMs` (a closed loop: each
 * connection sends its next request when the previous answer is read), the way autocannon does,
 * and counts what came back. Meant for loopback servers in tests and benchmarks: bounded in time
 * and in connections, nothing retried.
 */
export async function httpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const statuses = new Map<string, number>();
  const times: number[] = [];
  let firstFailure: string | undefined;
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);

  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request(options.url, { agent, headers: options.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          times.push(performance.now() - t0);
          const status = String(res.statusCode ?? 0);
          count(status);
          if (status !== '200' && firstFailure === undefined) {
            firstFailure = `${status} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`;
          }
          resolve();
        });
        res.on('error', () => {
          times.push(performance.now() - t0);
          count('error');
          resolve();
        });
      });
      req.on('error', (e) => {
        times.push(performance.now() - t0);
        count('error');
        firstFailure ??= `error ${e.message}`;
        resolve();
      });
      req.end();
    });

  const started = performance.now();
  const deadline = started + options.durationMs;
  const worker = async () => {
    while (performance.now() < deadline) await once();
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  times.sort((a, b) => a - b);
  const ok = statuses.get('200') ?? 0;
  return {
    url: options.url,
    connections: options.connections,
    seconds,
    requests: times.length,
    statuses: Object.fromEntries(statuses),
    okPerSecond: ok / seconds,
    latencyMs: {
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      max: times.at(-1) ?? 0,
    },
    ...(firstFailure !== undefined ? { firstFailure } : {}),
  };
}
