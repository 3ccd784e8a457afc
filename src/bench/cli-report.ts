import type { CliSizeResults, CommandFigure, StartFigures } from './cli-bench.js';
import { SIZE_LIMITS } from './cli-bench.js';
import type { HotFunction } from './cpuprofile-top.js';
import { formatTop } from './cpuprofile-top.js';
import { table } from './report.js';
import type { Spread } from './stats.js';

/** The targets of issue 13 for what a user runs. */
export const CLI_TARGETS = {
  /** `tend plan` of 100,000: cold (new store) and warm (second run), milliseconds. */
  planColdMs: 6000,
  planWarmMs: 2000,
  /** Peak RSS per resource of plan and apply, bytes. */
  rssBytes: 5 * 1024,
  /** CPU per resource of a no-drift pass, microseconds. */
  noDriftUs: 25,
  /** Out-of-band change → recorded decision at 10,000, p99, milliseconds. */
  oobP99Ms: 1000,
  /** Restart → resumed work with 10,000 unsettled operations, milliseconds. */
  recoveryMs: 2000,
  /** Apply throughput, share of the platform's rate limit. */
  applyRatio: 0.9,
  /** `tend --help` at most this many times bare node. */
  startRatio: 3,
} as const;

const n = (v: number, digits = 0): string =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '—';
const ms = (v: number) => `${n(v)} ms`;
const pct = (v: number) => `${n(v * 100, 1)}%`;
const kb = (bytes: number) => `${n(bytes / 1024, 1)} KB`;
const mb = (bytes: number) => `${n(bytes / 2 ** 20)} MB`;
const range = (s: Spread, f: (v: number) => string) => `${f(s.min)} – ${f(s.max)} (${s.runs})`;
const verdict = (ok: boolean, miss: string) => (ok ? 'met' : `MISSED (${miss})`);

type Row = [
  figure: string,
  median: string,
  spread: string,
  note: string,
  target: string,
  verdict: string,
  load: string,
];
const HEAD: Row = ['figure', 'median', 'min – max (runs)', 'also', 'target', 'verdict', 'load'];

/** The start-up table: `tend --help` and friends against bare node. */
export function renderStart(s: StartFigures): string {
  const rows: Row[] = [HEAD];
  const line = (label: string, x: Spread, judged: boolean) => {
    const ratio = x.median / s.bareMs.median;
    rows.push([
      label,
      ms(x.median),
      range(x, ms),
      judged ? `${ratio.toFixed(1)}× bare node` : '',
      judged ? `≤ ${CLI_TARGETS.startRatio}× bare node` : '—',
      judged ? verdict(ratio <= CLI_TARGETS.startRatio, `${ratio.toFixed(1)}×`) : '',
      judged ? '' : String(s.load),
    ]);
  };
  line("node -e ''", s.bareMs, false);
  line('tend --help', s.helpMs, true);
  line('tend --version', s.versionMs, true);
  line('tend plan --help', s.planHelpMs, true);
  return table(rows);
}

/**
 * One table per size: how each figure grows is read down the tables. Peak RSS per resource is judged
 * on its growth since the previous size (`prev`), since node and the loaded code take ~100 MB at any
 * size; the RSS targets are judged from 10,000 resources on.
 */
export function renderSize(r: CliSizeResults, rateLimit: number, prev?: CliSizeResults): string {
  const rows: Row[] = [HEAD];
  const at100k = r.count === 100_000;
  const judgeRss = r.count >= 10_000 && prev !== undefined;
  const growth = (now: CommandFigure, before: CommandFigure | undefined) =>
    before && prev ? (now.rssBytes.median - before.rssBytes.median) / (r.count - prev.count) : NaN;
  const before = (f: CommandFigure): CommandFigure | undefined =>
    f === r.validate
      ? prev?.validate
      : f === r.planCold
        ? prev?.planCold
        : f === r.planWarm
          ? prev?.planWarm
          : f === r.apply
            ? prev?.apply
            : undefined;
  const command = (
    label: string,
    f: CommandFigure,
    target?: { ms: number; what: string },
    rssTarget = false,
  ) => {
    const rss = growth(f, before(f));
    rows.push([
      label,
      ms(f.wallMs.median),
      range(f.wallMs, ms),
      `CPU ${ms(f.cpuMs.median)}; peak RSS ${mb(f.rssBytes.median)}${Number.isFinite(rss) ? `, +${kb(rss)}/resource over ${n(prev!.count)}` : ''}`,
      [
        target ? `< ${ms(target.ms)}${at100k ? '' : ' at 100,000'}` : '',
        rssTarget ? `< ${kb(CLI_TARGETS.rssBytes)}/resource` : '',
      ]
        .filter(Boolean)
        .join('; ') || '—',
      [
        target && at100k
          ? verdict(
              f.wallMs.median < target.ms,
              `${n(f.wallMs.median / target.ms, 1)}× ${target.what}`,
            )
          : '',
        rssTarget && judgeRss && Number.isFinite(rss)
          ? `RSS ${verdict(rss < CLI_TARGETS.rssBytes, `${n(rss / CLI_TARGETS.rssBytes, 1)}×`)}`
          : '',
      ]
        .filter(Boolean)
        .join('; '),
      String(f.load),
    ]);
  };
  if (r.validate) command('tend validate', r.validate);
  if (r.planCold)
    command(
      'tend plan, cold (new store)',
      r.planCold,
      { ms: CLI_TARGETS.planColdMs, what: 'the target' },
      true,
    );
  if (r.planWarm)
    command('tend plan, warm (second run)', r.planWarm, {
      ms: CLI_TARGETS.planWarmMs,
      what: 'the target',
    });
  if (r.apply) {
    const a = r.apply;
    command('tend apply (new store, empty sandbox)', a, undefined, true);
    rows.push([
      'tend apply: requests/s ÷ rate limit (whole command)',
      pct(a.ratio.median),
      range(a.ratio, pct),
      `execution phase alone ${pct(a.executeRatio.median)} (${range(a.executeRatio, pct)}); ${n(a.requests)} requests, ${a.failures} failures; limit ${rateLimit}/s`,
      `≥ ${pct(CLI_TARGETS.applyRatio)}`,
      verdict(a.ratio.median >= CLI_TARGETS.applyRatio, `${pct(a.ratio.median)}`),
      '',
    ]);
  } else if (r.count > SIZE_LIMITS.applyMax) {
    rows.push([
      'tend apply',
      'not run',
      '',
      `over ${n(SIZE_LIMITS.applyMax)} resources (≈ ${n((2 * r.count) / rateLimit / 60)} min per run at the rate limit)`,
      '',
      '',
      '',
    ]);
  }
  if (r.noDrift) {
    const d = r.noDrift;
    rows.push([
      'tend run: CPU per resource of a no-drift pass',
      `${n(d.cpuUsPerResource.median, 1)} µs`,
      range(d.cpuUsPerResource, (v) => `${n(v, 1)} µs`),
      `pass ${ms(d.passWallMs.median)} wall; peak RSS of tend run ${mb(d.rssBytesPerResource * r.count)}${prev?.noDrift ? `, +${kb((d.rssBytesPerResource * r.count - prev.noDrift.rssBytesPerResource * prev.count) / (r.count - prev.count))}/resource over ${n(prev.count)}` : ''}`,
      `< ${CLI_TARGETS.noDriftUs} µs`,
      verdict(
        d.cpuUsPerResource.median < CLI_TARGETS.noDriftUs,
        `${n(d.cpuUsPerResource.median / CLI_TARGETS.noDriftUs, 1)}×`,
      ),
      String(d.load),
    ]);
  }
  if (r.oob) {
    const o = r.oob;
    const judged = r.count === 10_000;
    rows.push([
      'tend run: out-of-band change → recorded decision',
      `p50 ${ms(o.p50Ms)}`,
      `p99 ${ms(o.p99Ms)}, max ${ms(o.maxMs)} (${o.samples}${o.timeouts ? `, ${o.timeouts} over 30 s` : ''})`,
      `peak RSS of tend run ${mb(o.rssBytesPerResource * r.count)}`,
      judged ? `p99 < ${ms(CLI_TARGETS.oobP99Ms)}` : '—',
      judged
        ? verdict(o.p99Ms < CLI_TARGETS.oobP99Ms && o.timeouts === 0, `p99 ${ms(o.p99Ms)}`)
        : '',
      String(o.load),
    ]);
  }
  if (r.recovery) {
    const c = r.recovery;
    rows.push([
      `tend apply after a crash: restart → journal empty (${n(c.resolved)} resolved)`,
      ms(c.journalEmptyMs.median),
      range(c.journalEmptyMs, ms),
      `CPU to journal empty ${ms(c.journalEmptyCpuMs.median)} (${range(c.journalEmptyCpuMs, ms)}); first pass done ${ms(c.passDoneMs.median)} (${range(c.passDoneMs, ms)})`,
      `< ${ms(CLI_TARGETS.recoveryMs)}`,
      verdict(
        c.journalEmptyMs.median < CLI_TARGETS.recoveryMs,
        `${n(c.journalEmptyMs.median / CLI_TARGETS.recoveryMs, 1)}×`,
      ),
      String(c.load),
    ]);
  }
  return table(rows);
}

/** The profiles, figure by figure: top five functions by self time. */
export function renderProfiles(profiles: Record<string, HotFunction[]>): string[] {
  const lines: string[] = [];
  for (const [name, top] of Object.entries(profiles)) {
    lines.push(`  ${name}:`);
    for (const l of formatTop(top)) lines.push(`    ${l}`);
  }
  return lines;
}
