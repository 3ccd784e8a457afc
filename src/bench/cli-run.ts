// Runs the built `tend` command as a user does (`node dist/cli/main.js …`), in a child process, with
// the probe (cli-probe.ts) loaded to report its CPU time, peak RSS and pass marks.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ProbeReport } from './cli-probe.js';
import { onTeardown } from './teardown.js';

/** The built CLI, as `npm run build` writes it. */
export const CLI = resolve(import.meta.dirname, '..', 'cli', 'main.js');
const PROBE = pathToFileURL(fileURLToPath(new URL('./cli-probe.js', import.meta.url))).href;

/** One `tend …` run. */
export interface TendRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Spawn to exit, as the parent saw it, milliseconds. */
  readonly wallMs: number;
  /** What the process reported of itself; absent when it was killed (SIGKILL). */
  readonly probe: ProbeReport | undefined;
  /** stderr, for error messages. */
  readonly stderr: string;
  /** stdout, when `keepStdout` was asked for. */
  readonly stdout: string;
}

/** How to run `tend`. */
export interface TendRunOptions {
  readonly cwd?: string;
  /** A `.cpuprofile` is written into this directory (node --cpu-prof). */
  readonly cpuProfDir?: string;
  /** Sees each line of stdout as it arrives (`--json` event lines). */
  readonly onLine?: (line: string) => void;
  /** Keep the whole stdout in the result (small outputs only). */
  readonly keepStdout?: boolean;
  /** Killed (SIGKILL) after this long. */
  readonly timeoutMs?: number;
  /** Called with the child once it is started (to signal it). */
  readonly started?: (stop: (signal: NodeJS.Signals) => void) => void;
  /** The environment instead of this process's (NO_COLOR and the probe's file are added). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Runs `node [--cpu-prof] dist/cli/main.js …args` and resolves when it exits. */
export function runTend(args: readonly string[], options: TendRunOptions = {}): Promise<TendRun> {
  return runNode([CLI, ...args], options);
}

/** Runs `node …argv` with the probe loaded (bare node: `runNode(['-e', ''])`). */
export function runNode(argv: readonly string[], options: TendRunOptions = {}): Promise<TendRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'tend-probe-'));
  const probeFile = join(scratch, 'probe.json');
  const execArgv = [
    `--import=${PROBE}`,
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : []),
  ];
  return new Promise((done, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...execArgv, ...argv], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...(options.env ?? process.env), NO_COLOR: '1', TEND_BENCH_PROBE: probeFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    options.started?.((signal) => child.kill(signal));
    const untear = onTeardown(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (options.keepStdout) stdout += chunk;
      if (!options.onLine) return;
      partial += chunk;
      let nl = partial.indexOf('\n');
      while (nl >= 0) {
        options.onLine(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
        nl = partial.indexOf('\n');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 64_000) stderr += chunk;
    });
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const wallMs = performance.now() - t0;
      untear();
      if (timer) clearTimeout(timer);
      if (partial !== '' && options.onLine) options.onLine(partial);
      const probe = existsSync(probeFile)
        ? (JSON.parse(readFileSync(probeFile, 'utf8')) as ProbeReport)
        : undefined;
      rmSync(scratch, { recursive: true, force: true });
      done({ code, signal, wallMs, probe, stderr, stdout });
    });
  });
}

/** The kind and time of a `--json` event line (`{"time":…,"kind":…}`), without parsing the rest. */
export function eventHead(line: string): { kind: string; at: number } | undefined {
  const m = /^\{"time":"([^"]+)","kind":"([a-z-]+)"/.exec(line);
  return m ? { kind: m[2]!, at: Date.parse(m[1]!) } : undefined;
}

/** Throws with the command's stderr unless it exited with one of `codes`. */
export function expectExit(run: TendRun, what: string, codes: readonly number[] = [0]): TendRun {
  if (run.code === null || !codes.includes(run.code)) {
    throw new Error(
      `${what} exited with ${run.code ?? run.signal}: ${run.stderr.trim().slice(0, 2000)}`,
    );
  }
  return run;
}
