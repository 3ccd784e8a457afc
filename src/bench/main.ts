// `npm run bench`: Tend's benchmarks (issue 3, item 7; issue 13, item 5). Not tests: they measure and
// print, and fail only when something they set up goes wrong. See docs/benchmarks.md for what each
// figure means.
//
//   node dist/bench/main.js [--quick] [--only cli,core,<figure>,…] [--runs N] [--oob-changes N]
//                           [--sizes N,N] [--profile DIR] [--json FILE] [--keep]
//                           [--fleet-workspaces N] [--fleet-resources N] [--fleet-kills N]
//                           [--fleet-rounds N] [--fleet-latency MS] [--fleet-ttl S]
//
// First the figures a user feels, measured through the built tend command (cli-bench.ts) at 1,000,
// 10,000 and 100,000 resources; then the core (in-process) micro-benchmarks. --quick (or
// BENCH_QUICK=1) runs smaller sizes (the CLI at 1,000 and 10,000 only); --runs repeats each CLI
// figure (default 5); --profile also runs each CLI figure once with --cpu-prof and prints its top
// five functions; --json also writes every figure as JSON; --keep leaves the generated intents and
// stores in the temporary directory it prints.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Workspace } from '../engine/index.js';
import type { ApplyRun } from './apply-throughput.js';
import { runApply } from './apply-throughput.js';
import { runPolicyPasses } from './policy-pass.js';
import { startBenchSandbox } from './bench-sandbox.js';
import { installTeardown, onTeardown } from './teardown.js';
import type { CliFigure, CliSizeResults, StartFigures } from './cli-bench.js';
import { CLI_FIGURES, measureSize, measureStart, profileStart } from './cli-bench.js';
import { renderProfiles, renderSize, renderStart } from './cli-report.js';
import type { HotFunction } from './cpuprofile-top.js';
import { runInputBench } from './input-bench.js';
import { runRecovery } from './journal-recovery.js';
import { describeMachine, load } from './machine.js';
import { runNoDriftPasses } from './no-drift-pass.js';
import { runPdnsScale } from './pdns-scale.js';
import { runPlanBench } from './plan-bench.js';
import type { FleetBenchResult } from './fleet-bench.js';
import { FLEET_SIZES, renderFleetBench, runFleetBench } from './fleet-bench.js';
import { renderReport } from './report.js';
import type { ServeLoadResult } from './serve-load.js';
import { measureServeLoad, renderServeLoad } from './serve-load.js';
import type { ApplyPair, BenchResults, Loaded } from './results.js';

/** The API the throughput is measured against: 20 ms per request, at most 500 requests/s. */
const FAULTS = { latencyMs: 20, rateLimit: 500 } as const;

/** Tend's own settings: the declared rate limit feeds its limiter; concurrency is only a ceiling. */
const TEND = { concurrency: 64, rateLimit: FAULTS.rateLimit } as const;
/** Terraform's default: ten operations at a time, no rate limit of its own. */
const FIXED10 = { concurrency: 10, rateLimit: 0 } as const;
/** Tend told nothing about the limit: it starts unlimited and adapts to the platform's 429s. */
const ADAPTIVE = { concurrency: 64, rateLimit: 0 } as const;

const SIZES = {
  full: {
    cli: [1_000, 10_000, 100_000],
    oobChanges: 100,
    apply: [1_000, 10_000],
    noDrift: 10_000,
    plan: 100_000,
    recovery: 10_000,
    budgetMs: 60_000,
    input: { entries: 130_000, paths: 5_000, resources: 100_000 },
    pdnsRrsets: 1_000,
  },
  quick: {
    cli: [1_000, 10_000],
    oobChanges: 40,
    apply: [200, 1_000],
    noDrift: 1_000,
    plan: 10_000,
    recovery: 1_000,
    budgetMs: 20_000,
    input: { entries: 32_000, paths: 1_000, resources: 10_000 },
    pdnsRrsets: 1_000,
  },
} as const;

/** The core (in-process) benchmarks. */
const CORE = [
  'core-apply',
  'core-nodrift',
  'core-policies',
  'core-plan',
  'core-recovery',
  'input',
  'pdns',
  'serve',
] as const;
/** Run only when named (`--only fleet`): PostgreSQL, several workers, minutes at full size. */
const FLEET = 'fleet';
const BENCHES = [...CLI_FIGURES, ...CORE, FLEET] as const;
type BenchName = (typeof BENCHES)[number];
/** Names that stand for several: every CLI figure, every core benchmark. */
const GROUPS: Record<string, readonly BenchName[]> = { cli: CLI_FIGURES, core: CORE };

interface Args {
  readonly quick: boolean;
  readonly only: ReadonlySet<BenchName>;
  readonly runs: number;
  /** CLI sizes instead of the defaults. */
  readonly sizes?: number[];
  readonly oobChanges?: number;
  readonly profile?: string;
  readonly json?: string;
  readonly keep: boolean;
  /** The fleet benchmark's sizes given on the command line. */
  readonly fleet: Partial<Record<FleetFlag, number>>;
}

/** The fleet benchmark's flags (`--fleet-<name> N`) and the least each takes. */
const FLEET_FLAGS = {
  workspaces: 1,
  resources: 1,
  kills: 0,
  rounds: 0,
  latency: 0,
  ttl: 2,
} as const;
type FleetFlag = keyof typeof FLEET_FLAGS;

const USAGE = `usage: bench [--quick] [--only ${[...Object.keys(GROUPS), ...BENCHES].join(',')}] [--runs N] [--sizes N,N] [--oob-changes N] [--profile DIR] [--json FILE] [--keep] [--fleet-workspaces N] [--fleet-resources N] [--fleet-kills N] [--fleet-rounds N] [--fleet-latency MS] [--fleet-ttl S]`;

function count(flag: string, text: string | undefined, min: number): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min) {
    throw new Error(`${flag} takes an integer ≥ ${min}, got "${text ?? ''}"; ${USAGE}`);
  }
  return v;
}

function parseArgs(argv: readonly string[]): Args {
  let quick = process.env['BENCH_QUICK'] === '1';
  let only = new Set<BenchName>(BENCHES.filter((b) => b !== FLEET));
  const fleet: Partial<Record<FleetFlag, number>> = {};
  let json: string | undefined;
  let profile: string | undefined;
  let runs = 5;
  let oobChanges: number | undefined;
  let cliSizes: number[] | undefined;
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--quick') quick = true;
    else if (a === '--keep') keep = true;
    else if (a === '--json') json = argv[++i];
    else if (a === '--profile') profile = argv[++i];
    else if (a === '--runs') runs = count('--runs', argv[++i], 1);
    else if (a === '--sizes') {
      const text = argv[++i];
      cliSizes = (text ?? '').split(',').map((x) => count('--sizes', x, 2));
    } else if (a === '--oob-changes') oobChanges = count('--oob-changes', argv[++i], 1);
    else if (a.startsWith('--fleet-') && Object.hasOwn(FLEET_FLAGS, a.slice(8))) {
      const name = a.slice(8) as FleetFlag;
      fleet[name] = count(a, argv[++i], FLEET_FLAGS[name]);
    } else if (a === '--only') {
      const names = (argv[++i] ?? '').split(',').filter(Boolean);
      const bad = names.filter(
        (x) => !(BENCHES as readonly string[]).includes(x) && !(x in GROUPS),
      );
      if (bad.length > 0 || names.length === 0) {
        throw new Error(
          `--only takes a comma-separated list of ${[...Object.keys(GROUPS), ...BENCHES].join(', ')}; got "${names.join(',')}"`,
        );
      }
      only = new Set(names.flatMap((x) => GROUPS[x] ?? [x as BenchName]));
    } else throw new Error(`unknown argument ${a}; ${USAGE}`);
  }
  if (
    (json === undefined && argv.includes('--json')) ||
    (profile === undefined && argv.includes('--profile'))
  ) {
    throw new Error(`--json and --profile take a path; ${USAGE}`);
  }
  return {
    quick,
    only,
    runs,
    ...(oobChanges !== undefined ? { oobChanges } : {}),
    ...(cliSizes !== undefined ? { sizes: cliSizes } : {}),
    ...(profile !== undefined ? { profile: resolve(profile) } : {}),
    ...(json !== undefined ? { json } : {}),
    keep,
    fleet,
  };
}

const say = (text: string) => process.stderr.write(`[bench] ${text}\n`);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const sizes = args.quick ? SIZES.quick : SIZES.full;
  const started = performance.now();
  // Killed (SIGINT, SIGTERM) or an uncaught error: what was started is stopped, then exit 130/143/1.
  installTeardown(say);
  const work = mkdtempSync(join(tmpdir(), 'tend-bench-'));
  say(`working in ${work}`);
  const untearWork = onTeardown(() => {
    if (args.keep) say(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  });
  const sandbox = await startBenchSandbox(FAULTS);
  const apply: ApplyPair[] = [];
  const partial: Omit<BenchResults, 'totalMs'> = {
    machine: describeMachine(),
    quick: args.quick,
    rateLimit: FAULTS.rateLimit,
    latencyMs: FAULTS.latencyMs,
    apply,
  };
  let converged: Workspace | undefined;
  let serve: ServeLoadResult | undefined;
  let fleet: FleetBenchResult | undefined;
  const cli: {
    start?: StartFigures;
    sizes: CliSizeResults[];
    profiles: Record<string, HotFunction[]>;
  } = { sizes: [], profiles: {} };
  const cliOnly = new Set(CLI_FIGURES.filter((f) => args.only.has(f)));
  try {
    if (cliOnly.size > 0) {
      const options = {
        sandbox,
        faults: FAULTS,
        workDir: work,
        runs: args.runs,
        oobChanges: args.oobChanges ?? sizes.oobChanges,
        ...(args.profile !== undefined ? { profileDir: args.profile } : {}),
        say,
      };
      if (cliOnly.has('start')) {
        say(
          `cli: tend --help, --version, plan --help against node -e '' (${Math.max(20, args.runs)} runs each)…`,
        );
        cli.start = await measureStart(options);
        await profileStart(options, cli.profiles);
      }
      const sized = new Set<CliFigure>([...cliOnly].filter((f) => f !== 'start'));
      if (sized.size > 0) {
        for (const size of args.sizes ?? sizes.cli) {
          const r = await measureSize(options, size, sized);
          cli.sizes.push(r);
        }
      }
      await sandbox.reset();
    }

    const applyOnce = async (
      count: number,
      label: string,
      settings: { concurrency: number; rateLimit: number },
    ): Promise<{ run: Loaded<ApplyRun>; ws: Workspace }> => {
      say(
        `apply ${count} (${label}: concurrency ${settings.concurrency}, rateLimit ${settings.rateLimit})…`,
      );
      const l = load();
      const { run, ws } = await runApply(sandbox, {
        label,
        count,
        ...settings,
        workDir: work,
        listRequests: 5,
      });
      say(`  ${Math.round(run.requestsPerSecond)} requests/s, ${run.failures} failures`);
      return { run: { ...run, load: l }, ws };
    };

    if (args.only.has('core-apply')) {
      for (const count of sizes.apply) {
        const fixed = await applyOnce(count, 'fixed-10', FIXED10);
        await fixed.ws.close();
        const adaptive = await applyOnce(count, 'adaptive', ADAPTIVE);
        await adaptive.ws.close();
        const tend = await applyOnce(count, 'tend', TEND);
        apply.push({ count, fixed10: fixed.run, tend: tend.run, adaptive: adaptive.run });
        if (count === sizes.noDrift) converged = tend.ws;
        else await tend.ws.close();
      }
    }

    if (args.only.has('core-nodrift')) {
      if (!converged) converged = (await applyOnce(sizes.noDrift, 'setup', TEND)).ws;
      say(`no-drift passes over ${sizes.noDrift}…`);
      const l = load();
      partial.noDrift = { ...(await runNoDriftPasses(sandbox, converged, 3)), load: l };
      say(`  ${partial.noDrift.median.cpuUsPerResource.toFixed(1)} µs/resource`);
    }
    if (args.only.has('core-policies')) {
      if (!converged) converged = (await applyOnce(sizes.noDrift, 'setup', TEND)).ws;
      say(`no-drift passes over ${sizes.noDrift} without policies, with 20, and without again…`);
      const l = load();
      partial.policyPass = { ...(await runPolicyPasses(sandbox, converged, 5)), load: l };
      say(`  ${(partial.policyPass.overhead * 100).toFixed(1)} % more CPU with 20 policies`);
    }
    await converged?.close();

    if (args.only.has('core-plan')) {
      say(`plan ${sizes.plan} (separate process)…`);
      const l = load();
      partial.plan = { ...(await runPlanBench(sizes.plan)), load: l };
      say(`  ${Math.round(partial.plan.planPassColdMs)} ms`);
    }

    if (args.only.has('core-recovery')) {
      say(`recovery of ${sizes.recovery} unsettled creates (budget ${sizes.budgetMs / 1000} s)…`);
      const l = load();
      partial.recovery = {
        ...(await runRecovery(sandbox, {
          count: sizes.recovery,
          workDir: work,
          faults: FAULTS,
          ...TEND,
          budgetMs: sizes.budgetMs,
        })),
        load: l,
      };
      say(`  ${Math.round(partial.recovery.journalEmptyMs)} ms`);
    }
    if (args.only.has('input')) {
      say(
        `input: ${sizes.input.entries} properties, ${sizes.input.paths} paths, ${sizes.input.resources} resources (and a quarter of each)…`,
      );
      const l = load();
      partial.input = { ...(await runInputBench(work, sizes.input)), load: l };
      for (const r of partial.input.runs) say(`  ${r.label}: ${Math.round(r.ms)} ms`);
    }
    if (args.only.has('pdns')) {
      say(`pdns: ${sizes.pdnsRrsets} rrsets of one zone against a real pdns_server…`);
      const l = load();
      partial.pdns = { ...(await runPdnsScale(work, sizes.pdnsRrsets)), load: l };
      say(
        'skipped' in partial.pdns
          ? `  skipped: ${partial.pdns.skipped}`
          : `  pass ${partial.pdns.passMs} ms, ${partial.pdns.patches} PATCH`,
      );
    }
    if (args.only.has('serve')) {
      say('serve: tend serve on the quickstart, 20 connections, 15 s per route (3 rounds of 5 s)…');
      // A sandbox of its own, without latency: the loop converges at once, nothing else is on it.
      const own = await startBenchSandbox({});
      try {
        serve = await measureServeLoad({
          sandboxUrl: own.url,
          workDir: work,
          connections: 20,
          // 15 s per route as three rounds of 5 s, the order turning: the routes are measured side
          // by side, so a burst of other work on the machine does not fall on one route only.
          durationMs: 5_000,
          rounds: args.quick ? 1 : 3,
          say,
        });
      } finally {
        await own.stop();
      }
    }
    if (args.only.has(FLEET)) fleet = await fleetBench(args, work);
  } finally {
    untearWork();
    await sandbox.stop();
    if (args.keep) say(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  const results: BenchResults = {
    ...partial,
    ...(cliOnly.size > 0 ? { cli } : {}),
    totalMs: performance.now() - started,
  };
  process.stdout.write(
    `${renderReport(results, cliOnly.size > 0 ? renderCli(cli, FAULTS.rateLimit) : undefined)}\n`,
  );
  if (serve) process.stdout.write(`\n${renderServeLoad(serve)}\n`);
  if (fleet) process.stdout.write(`\n${renderFleetBench(fleet)}\n`);
  if (args.json) {
    writeFileSync(args.json, `${JSON.stringify({ ...results, serve, fleet }, null, 2)}\n`);
  }
}

/** The fleet benchmark at the sizes asked (docs/benchmarks.md, "A fleet"). */
function fleetBench(args: Args, work: string): Promise<FleetBenchResult> {
  const sizes = args.quick ? FLEET_SIZES.quick : FLEET_SIZES.full;
  const f = args.fleet;
  const workspaces = f.workspaces ?? sizes.workspaces;
  return runFleetBench({
    workspaces,
    resources: f.resources ?? sizes.resources,
    kills: f.kills ?? sizes.kills,
    rounds: f.rounds ?? sizes.rounds,
    latencyMs: f.latency ?? 50,
    leaseTtlS: f.ttl ?? 10,
    sandboxes: Math.min(3, workspaces),
    concurrency: 16,
    workDir: join(work, 'fleet'),
    say,
  });
}

/** The CLI figures: start-up, then one table per size, then the profiles. */
function renderCli(
  cli: { start?: StartFigures; sizes: CliSizeResults[]; profiles: Record<string, HotFunction[]> },
  rateLimit: number,
): string {
  const parts: string[] = [
    'Through the tend command (node dist/cli/main.js, a child process per run):',
  ];
  if (cli.start) parts.push('', 'start-up:', renderStart(cli.start));
  for (const [i, r] of cli.sizes.entries()) {
    parts.push(
      '',
      `${r.count.toLocaleString('en-US')} resources:`,
      renderSize(r, rateLimit, cli.sizes[i - 1]),
    );
  }
  for (const r of cli.sizes) {
    for (const f of r.apply?.firstFailures ?? []) parts.push(`apply ${r.count} failure: ${f}`);
  }
  const profiles = [cli.profiles, ...cli.sizes.map((r) => r.profiles)];
  if (profiles.some((p) => Object.keys(p).length > 0)) {
    parts.push('', 'profiles (--cpu-prof, one extra run each): top five functions by self time');
    for (const p of profiles) for (const line of renderProfiles(p)) parts.push(line);
  }
  return parts.join('\n');
}

main().catch((e: unknown) => {
  process.stderr.write(
    `bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`,
  );
  process.exitCode = 1;
});
