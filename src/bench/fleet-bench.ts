// The fleet benchmark (issue 26, item 8; `npm run bench -- --only fleet`, docs/benchmarks.md): W
// workspaces of R sandbox services each, on sandboxes answering every request after L ms, one
// PostgreSQL cluster made here, `tend worker` processes of the built CLI. It measures, 1 worker
// against 3 side by side (the order alternating by round):
// - the time to converge after every workspace's intent changes (every service's replicas), from
//   the intent files written to the last object on the platforms at its new value;
// - with 3 workers, the takeover time after SIGKILL of the worker holding most: from the kill until
//   every workspace it held has a lease of another worker with a higher epoch (each worker in a UTS
//   namespace of its own when run as root, so a host name of its own: the others wait for the lease
//   to expire, as when a machine dies; otherwise the same host, where a dead pid is taken over at once);
// - with 1 worker holding every workspace, no drift: PostgreSQL statements per resource per pass
//   (pg_stat_statements: one statement is one round trip) and the worker's CPU per resource per pass
//   (/proc/<pid>/stat, everything it does in the window, ticks and heartbeats included);
// - against `tend run` of one of the workspaces on SQLite and on PostgreSQL (the probe's CPU of each
//   pass but the first; statements over the whole run on PostgreSQL).
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { startBenchPostgres } from './bench-postgres.js';
import type { BenchSandbox } from './bench-sandbox.js';
import { startBenchSandbox } from './bench-sandbox.js';
import { CLI, runTend } from './cli-run.js';
import { load } from './machine.js';
import type { Spread } from './stats.js';
import { spread } from './stats.js';
import { onTeardown } from './teardown.js';

/** Sizes and settings of a fleet benchmark run. */
export interface FleetBenchOptions {
  readonly workspaces: number;
  readonly resources: number;
  readonly kills: number;
  /** Convergence rounds per worker count. */
  readonly rounds: number;
  readonly latencyMs: number;
  readonly leaseTtlS: number;
  readonly sandboxes: number;
  /** The Provider document's `concurrency` of every workspace. */
  readonly concurrency: number;
  readonly workDir: string;
  readonly say: (text: string) => void;
}

export const FLEET_SIZES = {
  full: { workspaces: 30, resources: 1_000, kills: 10, rounds: 2 },
  quick: { workspaces: 6, resources: 100, kills: 3, rounds: 1 },
} as const;

/** Per resource per pass, with what it was computed from. */
export interface PassCost {
  readonly label: string;
  readonly passes: number;
  readonly resources: number;
  /** Statements (round trips) per resource per pass; undefined on SQLite. */
  readonly statementsPerResource?: number;
  readonly cpuUsPerResource: number;
}

export interface FleetBenchResult {
  readonly options: Omit<FleetBenchOptions, 'workDir' | 'say'>;
  /** Convergence after every intent changed, ms, by worker count. */
  readonly converge: { readonly one: number[]; readonly three: number[] };
  /** Leases taken, released or lost during each of those rounds (0 when the fleet held still). */
  readonly moves: { readonly one: number[]; readonly three: number[] };
  readonly takeoverMs: number[];
  /** Whether the workers had host names of their own (else the dead-pid shortcut applied). */
  readonly ownHosts: boolean;
  readonly costs: PassCost[];
  readonly statementsSource: 'pg_stat_statements' | 'xact_commit';
  readonly load: number;
  readonly totalMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OWN_HOSTS = process.getuid?.() === 0 && existsSync('/usr/bin/unshare');
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time of a process, microseconds (/proc/<pid>/stat). */
function cpuOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS;
}

interface Worker {
  readonly id: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  passes: number;
  /** Workspaces taken (`took` lines), released or lost so far. */
  moves: number;
}

/** The workers, the database and the platforms of one run. */
class Fleet {
  readonly workers = new Map<string, Worker>();
  #next = 1;
  constructor(
    readonly o: FleetBenchOptions,
    readonly url: string,
    readonly db: pg.Pool,
    readonly sandboxes: readonly BenchSandbox[],
    readonly dirs: readonly string[],
  ) {}

  get env(): NodeJS.ProcessEnv {
    return { ...process.env, NO_COLOR: '1', TEND_STORE_URL: this.url, TEND_LEDGER_KEY: KEY };
  }

  start(interval: number): Worker {
    const id = `bench-w${this.#next++}`;
    const args = [CLI, 'worker', '--id', id, '--interval', String(interval)];
    args.push('--lease-ttl', String(this.o.leaseTtlS), '--json');
    const child = OWN_HOSTS
      ? spawn(
          'unshare',
          ['--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', id, process.execPath, ...args],
          { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] },
        )
      : spawn(process.execPath, args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const worker: Worker = { id, child, exited, passes: 0, moves: 0 };
    let rest = '';
    child.stdout.on('data', (d: Buffer) => {
      const lines = (rest + d.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const l of lines) {
        if (l.includes('"kind":"pass"')) worker.passes++;
        if (/"kind":"(took|released|lost)"/.test(l)) worker.moves++;
      }
    });
    child.stderr.on('data', () => {});
    this.workers.set(id, worker);
    return worker;
  }

  /** SIGTERM to every worker (each releases its leases), SIGKILL to those still running after `graceMs`. */
  async stopAll(graceMs = 600_000): Promise<void> {
    const all = [...this.workers.values()];
    for (const w of all) w.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const w of all) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    }, graceMs);
    await Promise.all(all.map((w) => w.exited));
    clearTimeout(timer);
    this.workers.clear();
  }

  /** Holder → workspaces held (unexpired leases). */
  async holders(): Promise<Map<string, { workspace: string; epoch: number }[]>> {
    const { rows } = await this.db.query<{ worker: string; workspace: string; epoch: number }>(
      'SELECT worker, workspace, epoch FROM tend.leases WHERE expires_at > clock_timestamp()',
    );
    const map = new Map<string, { workspace: string; epoch: number }[]>();
    for (const r of rows) map.set(r.worker, [...(map.get(r.worker) ?? []), r]);
    return map;
  }

  /** Until every workspace is held, each live worker holding its share, and every resource converged. */
  async settle(what: string, timeoutMs = 3_600_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const n = this.workers.size;
    const W = this.o.workspaces;
    for (;;) {
      const held = await this.holders();
      const counts = [...this.workers.keys()].map((id) => held.get(id)?.length ?? 0);
      const balanced =
        counts.reduce((a, b) => a + b, 0) === W &&
        counts.every((c) => c >= Math.floor(W / n) && c <= Math.ceil(W / n));
      const { rows } = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tend.statuses WHERE state = 'converged'`,
      );
      if (balanced && rows[0]!.n === W * this.o.resources) return;
      if (Date.now() > deadline) throw new Error(`fleet bench: ${what} did not settle`);
      await sleep(1_000);
    }
  }

  /** Until every service on the platforms has these replicas; how long since `from`. */
  async platformsAt(replicas: number, from: number): Promise<number> {
    for (;;) {
      let ok = 0;
      for (const s of this.sandboxes) {
        for (const o of await s.objects()) {
          if (o.type === 'services' && o.fields['replicas'] === replicas) ok++;
        }
      }
      if (ok === this.o.workspaces * this.o.resources) return Date.now() - from;
      await sleep(1_000);
    }
  }

  writeIntents(replicas: number): void {
    for (const [i, dir] of this.dirs.entries()) {
      const sandbox = this.sandboxes[i % this.sandboxes.length]!;
      writeFileSync(join(dir, 'main.yaml'), intent(nameOf(i), sandbox.url, this.o, replicas));
    }
  }
}

const KEY = 'fleet-bench-ledger-key-0123456789abcdef';
/** Every worker's `--interval`: a change is seen at once (the intent files are watched), so this only paces the no-drift passes. */
const INTERVAL_S = 5;
const nameOf = (i: number) => `ws-${String(i + 1).padStart(2, '0')}`;

function intent(name: string, url: string, o: FleetBenchOptions, replicas: number): string {
  const head = `kind: Workspace\nname: ${name}\n---\nkind: Provider\nname: sb\ntype: openapi\nspec: ${url}/openapi.json\nendpoint: ${url}\nconcurrency: ${o.concurrency}\n`;
  const docs: string[] = [head];
  for (let r = 1; r <= o.resources; r++) {
    docs.push(
      `---\nkind: Resource\ntype: sb.services\nname: s${r}\nspec:\n  name: ${name}-s${r}\n  image: nginx:1.27\n  replicas: ${replicas}\n`,
    );
  }
  return docs.join('');
}

/** Statements executed in the database so far (or transactions committed, without the extension). */
async function statements(
  db: pg.Pool,
  source: FleetBenchResult['statementsSource'],
): Promise<number> {
  const sql =
    source === 'pg_stat_statements'
      ? 'SELECT COALESCE(sum(calls), 0)::float8 AS n FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())'
      : 'SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()';
  const { rows } = await db.query<{ n: number }>(sql);
  return rows[0]!.n;
}

/** Runs the fleet benchmark; everything it started is stopped. */
export async function runFleetBench(o: FleetBenchOptions): Promise<FleetBenchResult> {
  const started = performance.now();
  const l = load();
  o.say(
    `fleet: ${o.workspaces} workspaces × ${o.resources} services, ${o.sandboxes} sandboxes at ${o.latencyMs} ms, lease TTL ${o.leaseTtlS} s, ${OWN_HOSTS ? 'a host name per worker' : 'one host'}…`,
  );
  const server = await startBenchPostgres({
    max_connections: '500',
    shared_preload_libraries: 'pg_stat_statements',
  });
  o.say(`fleet: PostgreSQL in ${server.dir} on port ${server.port}`);
  const sandboxes: BenchSandbox[] = [];
  let db: pg.Pool | undefined;
  let fleet: Fleet | undefined;
  // Killed (SIGINT, SIGTERM): the workers first (registered after the cluster and the sandboxes, so
  // stopped before them), with little grace: the benchmark is being torn down.
  const untear = onTeardown(() => fleet?.stopAll(5_000));
  try {
    await server.createDatabase('fleet');
    const url = server.url('fleet');
    const { default: driver } = await import('pg');
    db = new driver.Pool({ connectionString: url, max: 2 });
    for (let i = 0; i < o.sandboxes; i++) {
      sandboxes.push(await startBenchSandbox({ latencyMs: o.latencyMs }));
    }
    const dirs = Array.from({ length: o.workspaces }, (_, i) => join(o.workDir, nameOf(i)));
    for (const d of dirs) mkdirSync(d, { recursive: true });
    fleet = new Fleet(o, url, db, sandboxes, dirs);
    const source = await prepare(fleet);
    const result = await measure(fleet, source);
    return { ...result, options: strip(o), load: l, totalMs: performance.now() - started };
  } finally {
    untear();
    await fleet?.stopAll().catch(() => undefined);
    await db?.end().catch(() => undefined);
    for (const s of sandboxes) await s.stop().catch(() => undefined);
    await server.stop().catch(() => undefined);
  }
}

function strip(o: FleetBenchOptions): FleetBenchResult['options'] {
  const { workDir: _w, say: _s, ...rest } = o;
  return rest;
}

/** Migrates, registers the workspaces, and creates every service with three workers (not measured). */
async function prepare(fleet: Fleet): Promise<FleetBenchResult['statementsSource']> {
  const tend = (args: string[]) =>
    runTend(args, { keepStdout: true, timeoutMs: 600_000, env: fleet.env });
  const migrated = await tend(['store', 'migrate']);
  if (migrated.code !== 0) throw new Error(`tend store migrate: ${migrated.stderr}`);
  let source: FleetBenchResult['statementsSource'] = 'pg_stat_statements';
  try {
    await fleet.db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await statements(fleet.db, source);
  } catch {
    source = 'xact_commit';
  }
  fleet.writeIntents(1);
  for (const [i, dir] of fleet.dirs.entries()) {
    const r = await tend(['workspace', 'add', nameOf(i), '--dir', dir]);
    if (r.code !== 0) throw new Error(`tend workspace add: ${r.stderr}`);
  }
  fleet.o.say('fleet: creating every service with 3 workers (setup, not measured)…');
  const t0 = Date.now();
  for (let i = 0; i < 3; i++) fleet.start(INTERVAL_S);
  await fleet.settle('the setup');
  fleet.o.say(`  ${Date.now() - t0} ms`);
  return source;
}

/** The measured part: convergence rounds, the per-pass costs, the takeovers, the tend runs. */
async function measure(
  fleet: Fleet,
  source: FleetBenchResult['statementsSource'],
): Promise<Omit<FleetBenchResult, 'options' | 'load' | 'totalMs'>> {
  const o = fleet.o;
  const converge = { one: [] as number[], three: [] as number[] };
  const moves = { one: [] as number[], three: [] as number[] };
  const movesNow = () => [...fleet.workers.values()].reduce((a, w) => a + w.moves, 0);
  const costs: PassCost[] = [];
  let replicas = 1;
  for (let round = 0; round < o.rounds; round++) {
    for (const n of round % 2 === 0 ? [1, 3] : [3, 1]) {
      await fleet.stopAll();
      for (let i = 0; i < n; i++) fleet.start(INTERVAL_S);
      await fleet.settle(`${n} worker(s)`);
      if (n === 1 && costs.length === 0) costs.push(await workerCost(fleet, source));
      replicas = (replicas % 5) + 1;
      o.say(`fleet: round ${round + 1}, ${n} worker(s): every intent to replicas ${replicas}…`);
      const m0 = movesNow();
      const t0 = Date.now();
      fleet.writeIntents(replicas);
      const ms = await fleet.platformsAt(replicas, t0);
      (n === 1 ? converge.one : converge.three).push(ms);
      (n === 1 ? moves.one : moves.three).push(movesNow() - m0);
      o.say(
        `  converged in ${ms} ms (${movesNow() - m0} leases taken, released or lost meanwhile)`,
      );
    }
  }
  await fleet.stopAll();
  for (let i = 0; i < 3; i++) fleet.start(INTERVAL_S);
  await fleet.settle('3 workers before the kills');
  const takeoverMs = await takeovers(fleet);
  await fleet.stopAll();
  for (const c of await runCosts(fleet, source)) costs.push(c);
  return { converge, moves, takeoverMs, ownHosts: OWN_HOSTS, costs, statementsSource: source };
}

/** One worker holding every workspace, no drift: statements and CPU per resource per pass. */
async function workerCost(
  fleet: Fleet,
  source: FleetBenchResult['statementsSource'],
): Promise<PassCost> {
  const [worker] = [...fleet.workers.values()];
  const pid = worker!.child.pid!;
  const want = fleet.o.workspaces * 3;
  fleet.o.say(`fleet: 1 worker, no drift: ${want} passes measured…`);
  if (source === 'pg_stat_statements') await fleet.db.query('SELECT pg_stat_statements_reset()');
  const s0 = await statements(fleet.db, source);
  const cpu0 = cpuOf(pid);
  const p0 = worker!.passes;
  while (worker!.passes - p0 < want) await sleep(200);
  const cpu1 = cpuOf(pid);
  const s1 = await statements(fleet.db, source);
  const passes = worker!.passes - p0;
  const perPass = passes * fleet.o.resources;
  return {
    label: `tend worker, ${fleet.o.workspaces} workspaces (PostgreSQL)`,
    passes,
    resources: fleet.o.resources,
    statementsPerResource: (s1 - s0) / perPass,
    cpuUsPerResource: (cpu1 - cpu0) / perPass,
  };
}

/** SIGKILL of the worker holding most, `kills` times: until its workspaces are held again. */
async function takeovers(fleet: Fleet): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < fleet.o.kills; k++) {
    const held = await fleet.holders();
    const [victim, list] = [...held].sort((a, b) => b[1].length - a[1].length)[0]!;
    const w = fleet.workers.get(victim)!;
    const t0 = Date.now();
    w.child.kill('SIGKILL');
    await w.exited;
    fleet.workers.delete(victim);
    for (;;) {
      const now = await fleet.holders();
      const again = list.every(({ workspace, epoch }) =>
        [...now].some(
          ([id, l]) => id !== victim && l.some((x) => x.workspace === workspace && x.epoch > epoch),
        ),
      );
      if (again) break;
      await sleep(100);
    }
    out.push(Date.now() - t0);
    fleet.o.say(`fleet: kill ${k + 1}: ${list.length} workspaces held again in ${out.at(-1)} ms`);
    fleet.start(INTERVAL_S);
    await fleet.settle(`the fleet after kill ${k + 1}`);
  }
  return out;
}

/** `tend run` of the first workspace on SQLite (a copy of its intent) and on PostgreSQL. */
async function runCosts(
  fleet: Fleet,
  source: FleetBenchResult['statementsSource'],
): Promise<PassCost[]> {
  const passes = 6;
  const sqliteDir = join(fleet.o.workDir, 'sqlite-ws-01');
  mkdirSync(sqliteDir, { recursive: true });
  writeFileSync(join(sqliteDir, 'main.yaml'), readFileSync(join(fleet.dirs[0]!, 'main.yaml')));
  const out: PassCost[] = [];
  for (const store of ['sqlite', 'postgres'] as const) {
    fleet.o.say(`fleet: tend run of ws-01 on ${store}, ${passes} passes…`);
    const env: NodeJS.ProcessEnv = { ...fleet.env };
    delete env['TEND_STORE_URL'];
    const dir = store === 'sqlite' ? sqliteDir : fleet.dirs[0]!;
    const args = ['run', dir, '--interval', '2', '--max-passes', String(passes), '--json'];
    if (store === 'postgres') args.push('--store', fleet.url);
    if (source === 'pg_stat_statements') await fleet.db.query('SELECT pg_stat_statements_reset()');
    const s0 = await statements(fleet.db, source);
    const run = await runTend(args, { timeoutMs: 600_000, env });
    const s1 = await statements(fleet.db, source);
    if (run.code !== 0 || !run.probe) throw new Error(`tend run on ${store}: ${run.stderr}`);
    const marks = run.probe.marks;
    const cpu: number[] = [];
    for (let i = 0; i + 1 < marks.length; i++) {
      if (marks[i]!.kind === 'pass-start' && marks[i + 1]!.kind === 'pass-done') {
        cpu.push(marks[i + 1]!.cpuUs - marks[i]!.cpuUs);
      }
    }
    const later = cpu.slice(1); // the first pass adopts (SQLite) or warms the JIT
    const r = fleet.o.resources;
    out.push({
      label: `tend run, 1 workspace (${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'})`,
      passes: later.length,
      resources: r,
      ...(store === 'postgres' ? { statementsPerResource: (s1 - s0) / (cpu.length * r) } : {}),
      cpuUsPerResource: spread(later).median / r,
    });
  }
  return out;
}

const ms = (v: number) => `${Math.round(v).toLocaleString('en-US')} ms`;
const range = (s: Spread) => `${ms(s.median)} (${ms(s.min)} – ${ms(s.max)}, ${s.runs} runs)`;

/** The fleet benchmark's report. */
export function renderFleetBench(r: FleetBenchResult): string {
  const o = r.options;
  const lines = [
    `Fleet (tend worker on PostgreSQL): ${o.workspaces} workspaces × ${o.resources} services, ${o.sandboxes} sandboxes answering after ${o.latencyMs} ms, concurrency ${o.concurrency} per workspace, lease TTL ${o.leaseTtlS} s, load ${r.load.toFixed(2)}`,
    '',
  ];
  if (r.converge.one.length > 0 && r.converge.three.length > 0) {
    const one = spread(r.converge.one);
    const three = spread(r.converge.three);
    lines.push(
      `converge after every intent changed, 1 worker : ${range(one)}`,
      `converge after every intent changed, 3 workers: ${range(three)}`,
      `ratio 1-worker / 3-worker time (medians): ${(one.median / three.median).toFixed(2)}×`,
      `leases taken, released or lost during the rounds: 1 worker ${r.moves.one.join(', ')}; 3 workers ${r.moves.three.join(', ')}`,
    );
  }
  if (r.takeoverMs.length > 0) {
    const t = spread(r.takeoverMs);
    lines.push(
      `takeover after SIGKILL (3 workers, ${r.ownHosts ? 'a host name each: the lease must expire' : 'one host: a dead pid is taken over at once'}): median ${ms(t.median)}, max ${ms(t.max)} over ${t.runs} kills`,
    );
  }
  lines.push('', `per resource per pass, no drift (statements: ${r.statementsSource}):`);
  for (const c of r.costs) {
    const st = c.statementsPerResource === undefined ? '—' : c.statementsPerResource.toFixed(3);
    lines.push(
      `  ${c.label.padEnd(48)} statements ${st.padStart(7)}   CPU ${c.cpuUsPerResource.toFixed(1).padStart(7)} µs   (${c.passes} passes)`,
    );
  }
  lines.push('', `total ${ms(r.totalMs)}`);
  return lines.join('\n');
}
