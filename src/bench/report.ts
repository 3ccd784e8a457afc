import type { ApplyRun } from './apply-throughput.js';
import type { BenchResults } from './results.js';
import { TARGETS } from './results.js';

const n = (v: number, digits = 0): string =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const verdict = (ok: boolean, miss: string): string => (ok ? 'met' : `MISSED (${miss})`);

/**
 * Renders the results as `npm run bench` prints them (and docs/benchmarks.md quotes): the header,
 * then `cli` (the figures measured through the tend command, rendered by cli-report.ts) when given,
 * then the core (in-process) micro-benchmarks' table.
 */
export function renderReport(r: BenchResults, cli?: string): string {
  const m = r.machine;
  const lines: string[] = [];
  lines.push(
    `Tend benchmarks${r.quick ? ' (quick sizes)' : ''} — ${m.date}`,
    `machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB; node ${m.node}; commit ${m.commit}`,
    `sandbox: separate process, latency ${r.latencyMs} ms, rate limit ${r.rateLimit} requests/s`,
    '',
  );
  const core =
    r.apply.length > 0 ||
    r.noDrift ||
    r.policyPass ||
    r.plan ||
    r.recovery ||
    r.input ||
    r.pdns !== undefined;
  if (cli !== undefined) {
    lines.push(cli, '');
    if (!core) {
      lines.push(`total benchmark time ${n(r.totalMs / 1000)} s`);
      return lines.join('\n');
    }
    lines.push('Core (in-process) micro-benchmarks:', '');
  }
  const rows: string[][] = [['figure', 'result', 'target', 'verdict', 'load']];
  const limit = r.rateLimit;
  const rate = (a: ApplyRun) =>
    `${n(a.requestsPerSecond)} req/s = ${pct(a.requestsPerSecond / limit)}`;
  for (const p of r.apply) {
    const ratio = p.tend.requestsPerSecond / limit;
    rows.push(
      [
        `apply ${n(p.count)}: Tend (concurrency ${p.tend.concurrency}, rateLimit ${p.tend.rateLimit})`,
        `${rate(p.tend)} of limit`,
        `≥ ${pct(TARGETS.applyRatio)}`,
        verdict(ratio >= TARGETS.applyRatio, `by ${pct(TARGETS.applyRatio - ratio)} of the limit`),
        String(p.tend.load),
      ],
      [
        `apply ${n(p.count)}: fixed parallelism 10`,
        `${rate(p.fixed10)} of limit`,
        '—',
        '',
        String(p.fixed10.load),
      ],
      ...(p.adaptive
        ? [
            [
              `apply ${n(p.count)}: Tend, no rate limit declared (adapts to 429s)`,
              `${rate(p.adaptive)} of limit, ${n(p.adaptive.throttled)} × 429`,
              '—',
              '',
              String(p.adaptive.load),
            ],
          ]
        : []),
      [
        `apply ${n(p.count)}: Tend ÷ fixed-10`,
        `${(p.tend.requestsPerSecond / p.fixed10.requestsPerSecond).toFixed(2)}×`,
        '—',
        '',
        '',
      ],
      [
        `apply ${n(p.count)}: 429 answers (Tend / fixed-10)`,
        `${n(p.tend.throttled)} / ${n(p.fixed10.throttled)}`,
        '—',
        '',
        '',
      ],
    );
  }
  if (r.noDrift) {
    const d = r.noDrift.median;
    rows.push([
      `no-drift pass ${n(r.noDrift.count)}: Tend CPU per resource`,
      `${n(d.cpuUsPerResource, 1)} µs (${n(d.cpuMs)} ms CPU, ${n(d.wallMs)} ms wall)`,
      `< ${TARGETS.noDriftUs} µs`,
      verdict(
        d.cpuUsPerResource < TARGETS.noDriftUs,
        `${(d.cpuUsPerResource / TARGETS.noDriftUs).toFixed(1)}× the target`,
      ),
      String(r.noDrift.load),
    ]);
  }
  if (r.policyPass) {
    const p = r.policyPass;
    rows.push([
      `no-drift pass ${n(p.count)}: ${p.policies} policies vs none (CPU, median)`,
      `${n(p.with.median.cpuMs)} ms vs ${n(p.without.median.cpuMs)} / ${n(p.withoutAgain.median.cpuMs)} ms: ${(p.overhead * 100).toFixed(1)} % more`,
      `≤ ${TARGETS.policyOverhead * 100} % more`,
      verdict(p.overhead <= TARGETS.policyOverhead, `${(p.overhead * 100).toFixed(1)} %`),
      String(p.load),
    ]);
  }
  if (r.plan) {
    const p = r.plan;
    const scale = p.count === 100_000 ? '' : ` (size ${n(p.count)}, target is for 100,000)`;
    rows.push(
      [
        `plan ${n(p.count)}: planPass, first run (wall / CPU)`,
        `${n(p.planPassColdMs)} ms / ${n(p.planPassColdCpuMs)} ms${scale}`,
        `< ${n(TARGETS.planMs)} ms`,
        verdict(p.planPassColdMs < TARGETS.planMs, `by ${n(p.planPassColdMs - TARGETS.planMs)} ms`),
        String(p.load),
      ],
      [
        `plan ${n(p.count)}: planPass warm / pure core warm`,
        `${n(p.planPassWarmMs)} ms / ${n(p.coreWarmMs)} ms`,
        `< ${n(TARGETS.planMs)} ms`,
        verdict(p.planPassWarmMs < TARGETS.planMs, `by ${n(p.planPassWarmMs - TARGETS.planMs)} ms`),
        '',
      ],
      [
        `plan ${n(p.count)}: heap retained per resource (intent + observation + plan, after GC)`,
        `${n(p.retainedBytesPerResource)} B (inputs alone ${n(p.inputBytesPerResource)} B)`,
        `< ${n(TARGETS.memoryBytes)} B`,
        verdict(
          p.retainedBytesPerResource < TARGETS.memoryBytes,
          `by ${n(p.retainedBytesPerResource - TARGETS.memoryBytes)} B`,
        ),
        '',
      ],
      [
        `plan ${n(p.count)}: peak live heap per resource while planning (inputs included)`,
        `${n(p.peakLiveHeapBytesPerResource)} B`,
        `< ${n(TARGETS.memoryBytes)} B`,
        verdict(
          p.peakLiveHeapBytesPerResource < TARGETS.memoryBytes,
          `by ${n(p.peakLiveHeapBytesPerResource - TARGETS.memoryBytes)} B`,
        ),
        '',
      ],
      [
        `plan ${n(p.count)}: peak heap with uncollected garbage / peak RSS, per resource`,
        `${n(p.peakHeapBytesPerResource)} B / ${n(p.peakRssBytesPerResource)} B`,
        `< ${n(TARGETS.memoryBytes)} B`,
        verdict(
          p.peakHeapBytesPerResource < TARGETS.memoryBytes &&
            p.peakRssBytesPerResource < TARGETS.memoryBytes,
          `by ${n(Math.max(p.peakHeapBytesPerResource, p.peakRssBytesPerResource) - TARGETS.memoryBytes)} B`,
        ),
        '',
      ],
    );
  }
  if (r.recovery) {
    const c = r.recovery;
    rows.push([
      `recovery ${n(c.count)}: restart → journal empty${c.projected ? ' (projected)' : ''}`,
      `${n(c.journalEmptyMs)} ms${c.projected ? ` (${n(c.resolved)} of ${n(c.count)} resolved in ${n(c.budgetMs / 1000)} s budget)` : ''}`,
      `< ${n(TARGETS.recoveryMs)} ms`,
      verdict(
        c.journalEmptyMs < TARGETS.recoveryMs,
        `${(c.journalEmptyMs / TARGETS.recoveryMs).toFixed(1)}× the target`,
      ),
      String(c.load),
    ]);
  }
  if (r.input) {
    for (const run of r.input.runs) {
      const ratio = run.ms / Math.max(run.quarterMs, 1);
      rows.push([
        `input: ${run.label.replace('N', n(run.size))}`,
        `${n(run.ms)} ms (${n(run.cpuMs)} ms CPU); ${n(run.quarterSize)}: ${n(run.quarterMs)} ms → ${ratio.toFixed(1)}× for 4×`,
        `linear: < ${TARGETS.inputRatio}× for 4×`,
        verdict(ratio < TARGETS.inputRatio, `${ratio.toFixed(1)}× for 4× the size`),
        String(r.input.load),
      ]);
    }
    for (const refusal of r.input.refusals) {
      rows.push([
        `input: ${refusal.label}`,
        `refused in ${n(refusal.ms)} ms`,
        '< 1,000 ms',
        verdict(refusal.ms < 1000 && !refusal.outcome.startsWith('loaded'), refusal.outcome),
        '',
      ]);
    }
  }
  if (r.pdns) {
    const p = r.pdns;
    rows.push(
      'skipped' in p
        ? [`PowerDNS: apply rrsets of one zone`, `skipped: ${p.skipped}`, '', '', '']
        : [
            `PowerDNS: apply ${n(p.rrsets)} rrsets of one zone (real pdns_server)`,
            `pass ${n(p.passMs)} ms (CLI ${n(p.cliMs)} ms); ${n(p.patches)} PATCH, ${n(p.zoneReads)} GET of the zone`,
            `< ${n(TARGETS.pdnsPassMs)} ms`,
            verdict(p.passMs < TARGETS.pdnsPassMs, `${n(p.passMs)} ms`),
            String(p.load),
          ],
    );
  }
  lines.push(table(rows), '');

  lines.push('details:');
  for (const p of r.apply) {
    for (const a of [p.fixed10, ...(p.adaptive ? [p.adaptive] : []), p.tend]) {
      lines.push(
        `  apply ${n(a.count)} ${a.label}: open ${n(a.openMs)} ms; pass ${n(a.wallMs)} ms, ${n(a.requests)} requests (${n(a.requestsPerSecond)}/s); execute ${n(a.executeMs)} ms (${n(a.executeRequestsPerSecond)}/s); statuses ${JSON.stringify(a.byStatus)}; ${n(a.created)} created, ${n(a.failures)} failures${a.firstFailures.length ? `: ${a.firstFailures.join(' | ')}` : ''}`,
      );
    }
  }
  if (r.noDrift) {
    for (const [i, d] of r.noDrift.passes.entries()) {
      lines.push(
        `  no-drift pass ${i + 1}: ${n(d.wallMs)} ms wall, ${n(d.cpuMs)} ms Tend CPU (${n(d.cpuUsPerResource, 1)} µs/resource), sandbox CPU ${n(d.sandboxCpuMs)} ms, ${d.requests} requests`,
      );
    }
  }
  if (r.plan) {
    lines.push(`  plan: steps ${JSON.stringify(r.plan.counts)}`);
  }
  if (r.recovery) {
    const c = r.recovery;
    lines.push(
      `  recovery: ${n(c.pending)} pending, ${n(c.objectsBefore)} objects with markers; open ${n(c.openMs)} ms, observed ${n(c.observedMs)} ms, ${n(c.resolved)} resolved (${JSON.stringify(c.outcomes)}), last at ${c.lastResolvedMs === undefined ? '—' : `${n(c.lastResolvedMs)} ms`}, plan ready ${c.planMs === undefined ? '—' : `${n(c.planMs)} ms`}, first pass ${c.passMs === undefined ? '—' : `${n(c.passMs)} ms`}${c.leftPending === undefined ? '' : `, ${c.leftPending} left pending`}`,
    );
  }
  if (r.input) {
    for (const run of r.input.runs)
      lines.push(`  input ${run.label.replace('N', n(run.size))}: ${run.outcome}`);
    for (const refusal of r.input.refusals)
      lines.push(`  input ${refusal.label}: ${refusal.outcome}`);
  }
  if (r.pdns && !('skipped' in r.pdns)) {
    const p = r.pdns;
    lines.push(
      `  pdns: ${n(p.requests)} requests in the apply; a plan afterwards read the zone ${p.planZoneReads} time(s) and was ${p.planEmpty ? 'empty' : 'NOT empty'}`,
    );
  }
  lines.push(`  total benchmark time ${n(r.totalMs / 1000)} s`);
  return lines.join('\n');
}

/** Rows as an aligned text table, the first row a header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) =>
    rows.reduce((max, r) => Math.max(max, (r[i] ?? '').length), 0),
  );
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd();
  return [
    line(rows[0]!),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...rows.slice(1).map(line),
  ].join('\n');
}
