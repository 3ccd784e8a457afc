// Loaded into a benchmarked `tend` process with `node --import` (src/bench/cli-run.ts): records what
// the process cost, as the process itself sees it, without changing what it does. At exit it writes
// one JSON document (a ProbeReport) to the file named by TEND_BENCH_PROBE: CPU time, peak RSS, wall
// time since the process started, the CPU time at each pass start and end (`--json` output lines
// of kind pass-start / pass-done, seen as they are written), and at the last `recovered` line.
import { writeFileSync } from 'node:fs';

/** CPU time of the process at one `--json` event line. */
export interface ProbeMark {
  readonly kind: 'pass-start' | 'pass-done';
  /** User + system CPU time so far, microseconds. */
  readonly cpuUs: number;
  /** Milliseconds since the process started. */
  readonly atMs: number;
}

/** What the probe reports at exit. */
export interface ProbeReport {
  /** User + system CPU time of the whole process, microseconds. */
  readonly cpuUs: number;
  /** Peak resident set size, bytes. */
  readonly maxRssBytes: number;
  /** Process start to exit, milliseconds (Node's own clock: includes its start-up). */
  readonly wallMs: number;
  readonly marks: readonly ProbeMark[];
  /** CPU time and time at the last `recovered` event line (the journal's last operation resolved). */
  readonly lastRecovered?: { readonly cpuUs: number; readonly atMs: number };
}

const file = process.env['TEND_BENCH_PROBE'];
if (file) {
  const marks: ProbeMark[] = [];
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const write = process.stdout.write.bind(process.stdout);
  const mark = /^\{"time":"[^"]*","kind":"(pass-start|pass-done|recovered)"/;
  let lastRecovered: ProbeReport['lastRecovered'];
  process.stdout.write = (chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') {
      const m = mark.exec(chunk);
      if (m?.[1] === 'recovered') lastRecovered = { cpuUs: cpu(), atMs: performance.now() };
      else if (m) {
        marks.push({ kind: m[1] as ProbeMark['kind'], cpuUs: cpu(), atMs: performance.now() });
      }
    }
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  };
  process.on('exit', () => {
    const usage = process.resourceUsage();
    const report: ProbeReport = {
      cpuUs: usage.userCPUTime + usage.systemCPUTime,
      maxRssBytes: usage.maxRSS * 1024,
      wallMs: performance.now(),
      marks,
      ...(lastRecovered ? { lastRecovered } : {}),
    };
    writeFileSync(file, JSON.stringify(report));
  });
}
