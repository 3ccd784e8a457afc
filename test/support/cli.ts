import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

/** The built CLI (tests run after `npm run build`, which `npm test` does first). */
export const CLI = resolve(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
export const ROOT = resolve(import.meta.dirname, '..', '..');

/** The result of one CLI run. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `tend …` to completion; its stdin is empty, or `input` (then closed). */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tend ${args.join(' ')} timed out\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** A long-running `tend …` (e.g. `run`) whose output can be awaited line by line. */
export interface CliProcess {
  readonly child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `tend …` in the background. */
export function startCli(
  args: string[],
  options: { env?: Record<string, string> } = {},
): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise<void>((resolvePromise, reject) => {
        const check = () => {
          if (pattern.test(out)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolvePromise();
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${pattern}\noutput:\n${out}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    stop: async (signal = 'SIGINT') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * Copies an example folder as shipped: everything but Tend's own state (`.tend/`: a store, the
 * cached OpenAPI documents), which a user's `tend apply examples/…` or an older quickstart may have
 * left there. Tests start from the intent alone, never from what an earlier run remembered.
 */
export function copyExampleFiles(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => basename(src) !== '.tend' });
}

/** A temporary copy of an example intent directory, with the sandbox address rewritten. */
export function copyExample(
  name: string,
  sandboxUrl: string,
): {
  dir: string;
  write(file: string, text: string): void;
  read(file: string): string;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), `tend-${name}-`));
  copyExampleFiles(join(ROOT, 'examples', name), dir);
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.yaml')) continue;
    const p = join(dir, f);
    writeFileSync(p, readFileSync(p, 'utf8').replaceAll('http://127.0.0.1:7781', sandboxUrl));
  }
  return {
    dir,
    write: (file, text) => writeFileSync(join(dir, file), text),
    read: (file) => readFileSync(join(dir, file), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
