// The figures a user feels (issue 13, item 5): every one measured by running the built `tend`
// command (`node dist/cli/main.js …`) in a child process, start-up, loading the intent and opening the
// store included, against the sandbox in its own process (latency and rate limit as the core
// benchmarks use). Each figure is repeated (median and spread); where two sides are compared the
// order alternates from run to run.
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setKey } from '../core/index.js';
import type { BenchSandbox } from './bench-sandbox.js';
import type { TendRun, TendRunOptions } from './cli-run.js';
import { eventHead, expectExit, runNode, runTend } from './cli-run.js';
import type { HotFunction } from './cpuprofile-top.js';
import { topOfFile } from './cpuprofile-top.js';
import { fixtureAddress, writeIntentFixture } from './intent-fixture.js';
import { fillUnsettled } from './journal-recovery.js';
import { load } from './machine.js';
import type { Spread } from './stats.js';
import { percentile, spread } from './stats.js';

/** What the CLI benchmarks are told. */
export interface CliBenchOptions {
  readonly sandbox: BenchSandbox;
  readonly faults: { readonly latencyMs: number; readonly rateLimit: number };
  readonly workDir: string;
  /** Repetitions of each figure (at least 5 asked by the issue). */
  readonly runs: number;
  /** Out-of-band changes timed per size under `tend run`. */
  readonly oobChanges: number;
  /** One extra run per figure with `--cpu-prof`, its profiles kept here; none when absent. */
  readonly profileDir?: string;
  readonly say: (text: string) => void;
}

/** Wall time, CPU time and peak RSS of repeated runs of one command. */
export interface CommandFigure {
  readonly wallMs: Spread;
  readonly cpuMs: Spread;
  readonly rssBytes: Spread;
  readonly load: number;
}

/** `tend --help` and friends against bare node, alternating. */
export interface StartFigures {
  readonly bareMs: Spread;
  readonly helpMs: Spread;
  readonly versionMs: Spread;
  readonly planHelpMs: Spread;
  readonly load: number;
}

/** `tend apply` of N new resources from an empty sandbox and a new store. */
export interface ApplyFigure extends CommandFigure {
  /** Sandbox requests over the CLI's wall time, as a share of the rate limit. */
  readonly ratio: Spread;
  /** Sandbox requests from the first operation started to the last done, share of the limit. */
  readonly executeRatio: Spread;
  readonly requests: number;
  /** Failed operations over all runs, and the first few `op-failed` lines. */
  readonly failures: number;
  readonly firstFailures: readonly string[];
}

/** CPU of no-drift passes of `tend run` (each pass's own CPU, from the probe's pass marks). */
export interface NoDriftFigure {
  readonly cpuUsPerResource: Spread;
  readonly passWallMs: Spread;
  /** Peak RSS of the `tend run` process (twin held), per resource. */
  readonly rssBytesPerResource: number;
  readonly load: number;
}

/** Out-of-band change → recorded decision under `tend run` with the audit feed. */
export interface OobFigure {
  readonly samples: number;
  readonly timeouts: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly rssBytesPerResource: number;
  readonly load: number;
}

/** Restart of `tend apply` on a journal of N unsettled creates. */
export interface RecoveryFigure {
  /** Spawn → the last pending operation resolved: work resumes (the pass plans next). */
  readonly journalEmptyMs: Spread;
  /** Spawn → the first pass done (`pass-done`: recovery, plan, nothing left to do, statuses). */
  readonly passDoneMs: Spread;
  /** The whole `tend apply`. */
  readonly wallMs: Spread;
  /** CPU time of the process (user + system) from its start to the last operation resolved. */
  readonly journalEmptyCpuMs: Spread;
  readonly resolved: number;
  readonly load: number;
}

/** Every CLI figure at one size. */
export interface CliSizeResults {
  readonly count: number;
  validate?: CommandFigure;
  planCold?: CommandFigure;
  planWarm?: CommandFigure;
  apply?: ApplyFigure;
  noDrift?: NoDriftFigure;
  oob?: OobFigure;
  recovery?: RecoveryFigure;
  /** Top five functions by self time, per figure, when profiled. */
  readonly profiles: Record<string, HotFunction[]>;
}

/** The CLI figures that can be chosen with --only. */
export const CLI_FIGURES = [
  'start',
  'validate',
  'plan',
  'apply',
  'nodrift',
  'oob',
  'recovery',
] as const;
export type CliFigure = (typeof CLI_FIGURES)[number];

/** Sizes at which some figures are not run, and why (printed in the report). */
export const SIZE_LIMITS = {
  /** An apply of 100,000 at 500 requests/s is ~7 minutes per run. */
  applyMax: 10_000,
  /** The issue asks for 1,000 and 10,000. */
  oobMax: 10_000,
  /** The issue asks for 10,000 unsettled operations. */
  recoverySizes: [10_000],
} as const;

const WORKSPACE = 'bench';

function figure(runs: readonly TendRun[], l: number): CommandFigure {
  return {
    wallMs: spread(runs.map((r) => r.wallMs)),
    cpuMs: spread(runs.map((r) => (r.probe?.cpuUs ?? NaN) / 1000)),
    rssBytes: spread(runs.map((r) => r.probe?.maxRssBytes ?? NaN)),
    load: l,
  };
}

/** Runs `tend …args` once more with --cpu-prof and ranks the profile it wrote. */
async function profile(
  o: CliBenchOptions,
  name: string,
  run: (extra: TendRunOptions) => Promise<unknown>,
  into: Record<string, HotFunction[]>,
): Promise<void> {
  if (!o.profileDir) return;
  const dir = join(o.profileDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await run({ cpuProfDir: dir });
  // One file per thread; the busiest is the one that matters.
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  if (files[0]) setKey(into, name, topOfFile(files[0], 5));
}

/** `tend --help`, `--version`, `plan --help` and bare `node -e ''`, interleaved, order alternating. */
export async function measureStart(o: CliBenchOptions): Promise<StartFigures> {
  const sides: [keyof Omit<StartFigures, 'load'>, string[]][] = [
    ['bareMs', ['-e', '']],
    ['helpMs', ['dist/cli/main.js', '--help']],
    ['versionMs', ['dist/cli/main.js', '--version']],
    ['planHelpMs', ['dist/cli/main.js', 'plan', '--help']],
  ];
  const times = new Map<string, number[]>(sides.map(([k]) => [k, []]));
  const l = load();
  const runs = Math.max(20, o.runs);
  const root = join(import.meta.dirname, '..', '..');
  for (let i = 0; i < runs; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const [key, argv] of order) {
      const r = await runNode(argv, { cwd: root });
      expectExit(r, `node ${argv.join(' ')}`);
      times.get(key)!.push(r.wallMs);
    }
  }
  const of = (k: string) => spread(times.get(k)!);
  return {
    bareMs: of('bareMs'),
    helpMs: of('helpMs'),
    versionMs: of('versionMs'),
    planHelpMs: of('planHelpMs'),
    load: l,
  };
}

/** The profile of `tend --help`. */
export async function profileStart(o: CliBenchOptions, into: Record<string, HotFunction[]>) {
  await profile(o, 'start', (extra) => runTend(['--help'], extra), into);
}

/** Measures the chosen figures at `count` resources. */
export async function measureSize(
  o: CliBenchOptions,
  count: number,
  only: ReadonlySet<CliFigure>,
): Promise<CliSizeResults> {
  const { sandbox, say } = o;
  const result: CliSizeResults = { count, profiles: {} };
  const base = join(o.workDir, `cli-${count}`);
  const dir = join(base, 'intent');
  const stores = join(base, 'stores');
  rmSync(base, { recursive: true, force: true });
  mkdirSync(stores, { recursive: true });
  const fixture = (rateLimit: number) =>
    writeIntentFixture(dir, count, { endpoint: sandbox.url, concurrency: 64, rateLimit });
  fixture(o.faults.rateLimit);
  let storeN = 0;
  const newStore = () => join(stores, `s${storeN++}`, 'tend.db');
  const ws = ['--workspace', WORKSPACE];

  if (only.has('validate')) {
    say(`cli ${count}: validate ×${o.runs}…`);
    const l = load();
    const runs: TendRun[] = [];
    for (let i = 0; i < o.runs; i++) {
      runs.push(expectExit(await runTend(['validate', dir, '--json', ...ws]), 'tend validate'));
    }
    result.validate = figure(runs, l);
    await profile(
      o,
      `${count}-validate`,
      (x) => runTend(['validate', dir, ...ws], x),
      result.profiles,
    );
  }

  if (only.has('plan')) {
    say(`cli ${count}: plan cold/warm ×${o.runs} (empty sandbox: every resource a create)…`);
    await sandbox.reset();
    const l = load();
    const plan = (store: string, extra: TendRunOptions = {}) =>
      runTend(['plan', dir, '--json', '--store', store, ...ws], extra).then((r) =>
        expectExit(r, 'tend plan', [0, 2]),
      );
    const cold: TendRun[] = [];
    const warm: TendRun[] = [];
    let last = '';
    for (let i = 0; i < o.runs; i++) {
      const store = newStore();
      mkdirSync(join(store, '..'), { recursive: true });
      if (i % 2 === 0 || last === '') {
        cold.push(await plan(store));
        warm.push(await plan(store));
      } else {
        warm.push(await plan(last));
        cold.push(await plan(store));
      }
      last = store;
    }
    result.planCold = figure(cold, l);
    result.planWarm = figure(warm, l);
    await profile(o, `${count}-plan-warm`, (x) => plan(last, x), result.profiles);
  }

  // A converged workspace for the figures that need one: the last measured apply's, or a setup apply
  // run without latency or rate limit (not a figure).
  let converged: string | undefined;
  const needConverged = only.has('nodrift') || (only.has('oob') && count <= SIZE_LIMITS.oobMax);

  if (only.has('apply') && count <= SIZE_LIMITS.applyMax) {
    say(`cli ${count}: apply ×${o.runs} (empty sandbox, new store each)…`);
    const l = load();
    const runs: TendRun[] = [];
    const ratios: number[] = [];
    const executeRatios: number[] = [];
    let requests = 0;
    let failures = 0;
    const firstFailures: string[] = [];
    for (let i = 0; i < o.runs; i++) {
      await sandbox.reset();
      const store = newStore();
      mkdirSync(join(store, '..'), { recursive: true });
      let firstStart: number | undefined;
      let lastDone: number | undefined;
      const r = expectExit(
        await runTend(['apply', dir, '--json', '--yes', '--store', store, ...ws], {
          onLine: (line) => {
            const head = eventHead(line);
            if (!head) return;
            if (head.kind === 'op-start') firstStart ??= head.at;
            else if (head.kind === 'op-done' || head.kind === 'verified') lastDone = head.at;
            else if (head.kind === 'op-failed') {
              failures++;
              if (firstFailures.length < 3) firstFailures.push(line.slice(0, 300));
            }
          },
        }),
        'tend apply',
        // 1: some operation failed (a timeout on a loaded machine): counted and shown, not fatal.
        [0, 1],
      );
      if (r.code === 1 && failures === 0) {
        throw new Error(
          `tend apply exited with 1 and no failed operation: ${r.stderr.slice(0, 2000)}`,
        );
      }
      const stats = await sandbox.stats();
      requests = stats.requests;
      runs.push(r);
      ratios.push(stats.requests / (r.wallMs / 1000) / o.faults.rateLimit);
      const executeMs = (lastDone ?? 0) - (firstStart ?? 0);
      executeRatios.push(
        executeMs > 0 ? stats.requests / (executeMs / 1000) / o.faults.rateLimit : NaN,
      );
      converged = store;
    }
    result.apply = {
      ...figure(runs, l),
      ratio: spread(ratios),
      executeRatio: spread(executeRatios),
      requests,
      failures,
      firstFailures,
    };
    if (o.profileDir) {
      await sandbox.reset();
      const store = newStore();
      mkdirSync(join(store, '..'), { recursive: true });
      await profile(
        o,
        `${count}-apply`,
        (x) => runTend(['apply', dir, '--json', '--yes', '--store', store, ...ws], x),
        result.profiles,
      );
      converged = store;
    }
  }

  if (needConverged && converged === undefined) {
    say(`cli ${count}: setting up a converged workspace (apply without latency or rate limit)…`);
    await sandbox.reset();
    await sandbox.setFaults({ latencyMs: 0, rateLimit: 0 });
    fixture(0);
    const store = newStore();
    mkdirSync(join(store, '..'), { recursive: true });
    expectExit(
      await runTend(['apply', dir, '--json', '--yes', '--store', store, ...ws]),
      'tend apply (setup)',
    );
    await sandbox.setFaults(o.faults);
    fixture(o.faults.rateLimit);
    converged = store;
  }

  if (only.has('nodrift') && converged) {
    say(`cli ${count}: tend run, ${o.runs} no-drift passes after the first…`);
    const l = load();
    const args = ['run', dir, '--json', '--store', converged, '--interval', '1', ...ws];
    const r = expectExit(
      await runTend([...args, '--max-passes', String(o.runs + 1)]),
      'tend run (no drift)',
    );
    const marks = r.probe?.marks ?? [];
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i + 1 < marks.length; i++) {
      const [a, b] = [marks[i]!, marks[i + 1]!];
      if (a.kind === 'pass-start' && b.kind === 'pass-done') {
        cpu.push((b.cpuUs - a.cpuUs) / count);
        wall.push(b.atMs - a.atMs);
      }
    }
    // The first pass also warms the JIT and caches: the figure is the passes after it.
    if (cpu.length < 2)
      throw new Error(`tend run: expected ${o.runs + 1} passes, saw ${cpu.length}`);
    result.noDrift = {
      cpuUsPerResource: spread(cpu.slice(1)),
      passWallMs: spread(wall.slice(1)),
      rssBytesPerResource: (r.probe?.maxRssBytes ?? NaN) / count,
      load: l,
    };
    await profile(
      o,
      `${count}-nodrift`,
      (x) => runTend([...args, '--max-passes', '3'], x),
      result.profiles,
    );
  }

  if (only.has('oob') && converged && count <= SIZE_LIMITS.oobMax) {
    say(`cli ${count}: tend run with the audit feed, ${o.oobChanges} out-of-band changes…`);
    result.oob = await measureOob(o, dir, converged, count, false, result.profiles);
    if (o.profileDir) await measureOob(o, dir, converged, count, true, result.profiles);
  }

  if (only.has('recovery') && (SIZE_LIMITS.recoverySizes as readonly number[]).includes(count)) {
    say(`cli ${count}: restart on ${count} unsettled creates ×${o.runs}…`);
    result.recovery = await measureRecovery(o, base, count, result.profiles);
  }
  return result;
}

/**
 * `tend run --interval 3600` on a converged workspace (so every pass after the first is woken by the
 * audit feed); then, one at a time, a bucket's declared `versioning` is flipped by an actor through
 * the API, and the time from the API's answer to the `change-observed` event (the change recorded
 * with Tend's decision) is taken; the next change waits for the pass that follows to end.
 */
async function measureOob(
  o: CliBenchOptions,
  dir: string,
  store: string,
  count: number,
  profiled: boolean,
  profiles: Record<string, HotFunction[]>,
): Promise<OobFigure> {
  const l = load();
  const waiters: {
    match: (kind: string, line: string) => boolean;
    resolve: (at: number) => void;
  }[] = [];
  const wait = (match: (kind: string, line: string) => boolean, timeoutMs: number) =>
    new Promise<number | undefined>((resolve) => {
      const w = {
        match,
        resolve: (at: number) => {
          clearTimeout(timer);
          resolve(at);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        resolve(undefined);
      }, timeoutMs);
      waiters.push(w);
    });
  let passesDone = 0;
  let stop: ((s: NodeJS.Signals) => void) | undefined;
  const profileDir = profiled && o.profileDir ? join(o.profileDir, `${count}-oob`) : undefined;
  if (profileDir) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  const firstPass = wait((kind) => kind === 'pass-done', 600_000);
  const running = runTend(
    ['run', dir, '--json', '--store', store, '--interval', '3600', '--workspace', WORKSPACE],
    {
      ...(profileDir ? { cpuProfDir: profileDir } : {}),
      started: (s) => (stop = s),
      onLine: (line) => {
        const head = eventHead(line);
        if (!head) return;
        if (head.kind === 'pass-done') passesDone++;
        for (const w of [...waiters]) {
          if (w.match(head.kind, line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(head.at);
          }
        }
      },
    },
  );
  if ((await firstPass) === undefined) throw new Error('tend run: no first pass in 10 minutes');
  const latencies: number[] = [];
  let timeouts = 0;
  const changes = profiled ? Math.min(20, o.oobChanges) : o.oobChanges;
  for (let k = 0; k < changes; k++) {
    // Buckets are the odd resources; spread the changes over the workspace.
    const i = (Math.floor((k * count) / changes) | 1) % count;
    const address = fixtureAddress(i);
    const name = `tend-bench-${String(i).padStart(6, '0')}`;
    // The pass that records the change: it is over when one more pass-done has come.
    let passesBefore = Infinity;
    const decided = wait((kind, line) => {
      const hit =
        kind === 'change-observed' &&
        line.includes(`"address":"${address}"`) &&
        line.includes('"actor":"bench-oob"');
      if (hit) passesBefore = passesDone;
      return hit;
    }, 30_000);
    const response = await fetch(`${o.sandbox.url}/buckets/${name}`, {
      method: 'PATCH',
      headers: {
        'content-type': 'application/json',
        'X-Tend-Actor': 'bench-oob',
        'X-Tend-Intent': 'performance',
      },
      body: JSON.stringify({ versioning: i % 3 !== 0 }),
    });
    const t0 = Date.now();
    await response.text();
    if (!response.ok) throw new Error(`PATCH /buckets/${name}: ${response.status}`);
    const at = await decided;
    if (at === undefined) timeouts++;
    else latencies.push(Math.max(0, at - t0));
    if (passesDone <= passesBefore && at !== undefined) {
      await wait((kind) => kind === 'pass-done', 60_000);
    }
  }
  stop?.('SIGINT');
  const r = await running;
  if (profileDir) {
    const files = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(profileDir, f))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (files[0]) setKey(profiles, `${count}-oob`, topOfFile(files[0], 5));
  }
  if (latencies.length === 0) throw new Error(`tend run: no out-of-band change was decided`);
  return {
    samples: latencies.length,
    timeouts,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    rssBytesPerResource: (r.probe?.maxRssBytes ?? NaN) / count,
    load: l,
  };
}

/**
 * Each run: `count` unsettled creates left in a new store (fillUnsettled, in-process and without
 * faults: setup, not measured), the sandbox's latency and rate limit back on, then `tend apply` is
 * started as after a crash. Timed from the spawn to the plan being ready.
 */
async function measureRecovery(
  o: CliBenchOptions,
  base: string,
  count: number,
  profiles: Record<string, HotFunction[]>,
): Promise<RecoveryFigure> {
  const dir = join(base, 'recovery');
  const l = load();
  const done: number[] = [];
  const empty: number[] = [];
  const walls: number[] = [];
  const cpus: number[] = [];
  let resolved = 0;
  const once = async (extra: TendRunOptions = {}) => {
    await fillUnsettled(o.sandbox, dir, count);
    await o.sandbox.setFaults(o.faults);
    writeIntentFixture(dir, count, {
      endpoint: o.sandbox.url,
      concurrency: 64,
      rateLimit: o.faults.rateLimit,
    });
    let doneAt: number | undefined;
    let lastRecovered: number | undefined;
    let n = 0;
    const t0 = Date.now();
    const r = expectExit(
      await runTend(['apply', dir, '--json', '--yes', '--workspace', WORKSPACE], {
        ...extra,
        onLine: (line) => {
          const head = eventHead(line);
          if (head?.kind === 'recovered') {
            n++;
            lastRecovered = head.at;
          } else if (head?.kind === 'pass-done') doneAt ??= head.at;
        },
      }),
      'tend apply (restart)',
    );
    return { r, t0, doneAt, lastRecovered, n };
  };
  for (let i = 0; i < o.runs; i++) {
    const { r, t0, doneAt, lastRecovered, n } = await once();
    if (doneAt === undefined || lastRecovered === undefined) {
      throw new Error(`tend apply (restart): ${n} recovered, pass ${doneAt ? 'done' : 'not done'}`);
    }
    done.push(doneAt - t0);
    empty.push(lastRecovered - t0);
    walls.push(r.wallMs);
    const cpu = r.probe?.lastRecovered?.cpuUs;
    if (cpu === undefined) throw new Error('tend apply (restart): the probe saw no recovered line');
    cpus.push(cpu / 1000);
    resolved = n;
  }
  if (o.profileDir) {
    await profile(o, `${count}-recovery`, (x) => once(x), profiles);
  }
  return {
    journalEmptyMs: spread(empty),
    passDoneMs: spread(done),
    wallMs: spread(walls),
    journalEmptyCpuMs: spread(cpus),
    resolved,
    load: l,
  };
}

/** Writes the results as JSON (for --json). */
export function writeCliJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}
