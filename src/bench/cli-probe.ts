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
  let lastRecovered: { cpuUs: number; atMs: number; readAtMs: number } | undefined;
  process.stdout.write = (chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') {
      const m = mark.exec(chunk);
      if (m?.[1] === 'recovered') {
        // One line per operation (10,000 at a time): the CPU clock is read at most every 5 ms, so
        // the probe costs the process little; the mark is at most 5 ms of CPU early.
        const atMs = performance.now();
        if (lastRecovered === undefined || atMs - lastRecovered.readAtMs >= 5) {
          lastRecovered = { cpuUs: cpu(), atMs, readAtMs: atMs };
        } else lastRecovered.atMs = atMs;
      } else if (m) {
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
      ...(lastRecovered
        ? { lastRecovered: { cpuUs: lastRecovered.cpuUs, atMs: lastRecovered.atMs } }
        : {}),
    };
    writeFileSync(file, JSON.stringify(report));
  });
}
