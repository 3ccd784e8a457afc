// The HTTP API under load (issue 25, item 9): `tend serve` on the quickstart, its loop running, and
// N connections on `GET /status`, `GET /graph` and `GET /healthz` with a viewer token, one route at a
// time, side by side in the same run. Used by `npm run bench -- --only serve` (15 s per route) and by
// test/e2e/serve-load.test.ts (a few seconds per route).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { HttpLoadResult } from './http-load.js';
import { httpLoad } from './http-load.js';
import { load } from './machine.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** The built CLI (`npm run build` first). */
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/** The routes measured, the cheapest first: it is the yardstick. */
export const SERVE_LOAD_ROUTES = ['/healthz', '/status', '/graph'] as const;

/** What `measureServeLoad` is asked. */
export interface ServeLoadOptions {
  /** A sandbox platform the quickstart is pointed at. */
  readonly sandboxUrl: string;
  /** Where the quickstart is copied (a folder of its own is made in it and removed after). */
  readonly workDir: string;
  readonly connections: number;
  /** How long each route is loaded, per round. */
  readonly durationMs: number;
  /** Rounds over the routes (default 1); the order turns by one route each round. */
  readonly rounds?: number;
  readonly say?: (text: string) => void;
}

/** One route's answers over every round. */
export interface RouteLoad {
  readonly path: string;
  readonly requests: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly okPerSecond: number;
  /** The worst round's percentiles. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** How many times `/healthz`'s rate this route's is below it (1 for `/healthz` itself). */
  readonly slowerThanHealthz: number;
  readonly firstFailure?: string;
}

/** What the load run measured, with the machine's load average before it. */
export interface ServeLoadResult {
  readonly connections: number;
  readonly durationMs: number;
  readonly rounds: number;
  readonly routes: readonly RouteLoad[];
  readonly load: number;
}

const VIEWER = 'bench-viewer-token-0123456789abcdef';

/** Starts `tend serve` on a copy of the quickstart, loads each route, stops the server. */
export async function measureServeLoad(options: ServeLoadOptions): Promise<ServeLoadResult> {
  const say = options.say ?? (() => {});
  const rounds = options.rounds ?? 1;
  const dir = mkdtempSync(join(options.workDir, 'serve-load-'));
  cpSync(join(ROOT, 'examples', 'quickstart'), dir, {
    recursive: true,
    filter: (src) => !src.endsWith('.tend'),
  });
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.yaml')) continue;
    const p = join(dir, f);
    writeFileSync(
      p,
      readFileSync(p, 'utf8').replaceAll('http://127.0.0.1:7781', options.sandboxUrl),
    );
  }
  const child = spawn(process.execPath, [CLI, 'serve', dir, '--port', '0', '--interval', '60'], {
    env: {
      ...process.env,
      NO_COLOR: '1',
      QUICKSTART_ADMIN_PASSWORD: 'serve-load-admin-password',
      TEND_API_TOKENS: JSON.stringify([{ token: VIEWER, role: 'viewer', name: 'bench' }]),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        // Kept short: the loop's events are printed as they happen for as long as it runs.
        stderr = (stderr + d.toString()).slice(-20_000);
        const m = /tend serve: (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (m) resolveUrl(m[1]!);
      });
      void exited.then((code) => reject(new Error(`tend serve exited ${code}:\n${stderr}`)));
    });
    const headers = { authorization: `Bearer ${VIEWER}` };
    say(`tend serve at ${url}; waiting for the loop to converge the quickstart…`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await fetch(`${url}/status`, { headers }).catch(() => undefined);
      const body = res?.ok ? ((await res.json()) as { resources: { state: string }[] }) : undefined;
      if (body?.resources.every((r) => r.state === 'converged')) break;
      if (Date.now() > deadline) throw new Error(`the quickstart did not converge:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const machineLoad = load();
    const runs = new Map<string, HttpLoadResult[]>(SERVE_LOAD_ROUTES.map((p) => [p, []]));
    for (let round = 0; round < rounds; round++) {
      const order = SERVE_LOAD_ROUTES.map(
        (_, i) => SERVE_LOAD_ROUTES[(i + round) % SERVE_LOAD_ROUTES.length]!,
      );
      for (const path of order) {
        say(`GET ${path}: ${options.connections} connections for ${options.durationMs} ms…`);
        const r = await httpLoad({
          url: `${url}${path}`,
          headers,
          connections: options.connections,
          durationMs: options.durationMs,
        });
        say(
          `  ${Math.round(r.okPerSecond)} answers 200/s; ${JSON.stringify(r.statuses)}; p99 ${r.latencyMs.p99.toFixed(1)} ms`,
        );
        runs.get(path)!.push(r);
      }
    }
    const rate = (rs: readonly HttpLoadResult[]) =>
      rs.reduce((n, r) => n + (r.statuses['200'] ?? 0), 0) / rs.reduce((s, r) => s + r.seconds, 0);
    const yardstick = rate(runs.get('/healthz')!);
    const routes: RouteLoad[] = SERVE_LOAD_ROUTES.map((path) => {
      const rs = runs.get(path)!;
      const statuses = new Map<string, number>();
      for (const r of rs) {
        for (const [k, v] of Object.entries(r.statuses))
          statuses.set(k, (statuses.get(k) ?? 0) + v);
      }
      const failure = rs.find((r) => r.firstFailure !== undefined)?.firstFailure;
      const okPerSecond = rate(rs);
      return {
        path,
        requests: rs.reduce((n, r) => n + r.requests, 0),
        statuses: Object.fromEntries(statuses),
        okPerSecond,
        latencyMs: {
          p50: worst(rs.map((r) => r.latencyMs.p50)),
          p99: worst(rs.map((r) => r.latencyMs.p99)),
          max: worst(rs.map((r) => r.latencyMs.max)),
        },
        slowerThanHealthz: okPerSecond > 0 ? yardstick / okPerSecond : Infinity,
        ...(failure !== undefined ? { firstFailure: failure } : {}),
      };
    });
    return {
      connections: options.connections,
      durationMs: options.durationMs,
      rounds,
      routes,
      load: machineLoad,
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  }
}

const worst = (values: readonly number[]) => values.reduce((a, b) => (b > a ? b : a), 0);

/** The figures as a table: one line per route. */
export function renderServeLoad(r: ServeLoadResult): string {
  const rows = r.routes.map((x) => {
    const other = Object.entries(x.statuses)
      .filter(([k]) => k !== '200')
      .reduce((n, [, v]) => n + v, 0);
    return [
      `GET ${x.path}`,
      x.requests.toLocaleString('en-US'),
      `${other.toLocaleString('en-US')} (${((100 * other) / Math.max(1, x.requests)).toFixed(1)} %)`,
      Math.round(x.okPerSecond).toLocaleString('en-US'),
      `${x.latencyMs.p50.toFixed(1)} / ${x.latencyMs.p99.toFixed(1)} ms`,
      x.path === '/healthz' ? '—' : `${x.slowerThanHealthz.toFixed(1)}×`,
    ];
  });
  const head = ['route', 'answers', 'not 200', '200/s', 'p50 / p99', 'below /healthz'];
  const widths = head.map((h, i) => worst([h.length, ...rows.map((row) => row[i]!.length)]));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  const failures = r.routes
    .filter((x) => x.firstFailure !== undefined)
    .map((x) => `  first failure of GET ${x.path}: ${x.firstFailure}`);
  return [
    `tend serve under load: ${r.connections} connections, ${r.durationMs / 1000} s per route × ${r.rounds} round(s), viewer token, load ${r.load}`,
    line(head),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...rows.map(line),
    ...failures,
  ].join('\n');
}
