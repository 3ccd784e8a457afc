import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * Stops a server process a test started: SIGTERM, then SIGKILL after `graceMs`, and waits until it
 * has exited. A process that already exited is left as it is.
 */
export async function stopProcess(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs = 3000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** An answer of a platform's API: its status and its body, parsed as JSON when it is JSON. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * A JSON call to a platform's API as a test (a person, another actor) makes it: `headers` on every
 * call, a JSON body when one is given; error bodies in plain text are returned as text.
 */
export async function callJson(
  baseUrl: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // some platforms answer errors in plain text
  }
  return { status: res.status, body: parsed };
}

/** The first of `dirs` holding an executable `name`, as its path. */
export function findIn(dirs: readonly string[], name: string): string | undefined {
  for (const dir of dirs) {
    if (dir === '') continue;
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Finds an executable on PATH, else in the usual bin and sbin directories (pdns_server is in /usr/sbin). */
export function findExecutable(name: string): string | undefined {
  return findIn(
    [
      ...(process.env['PATH'] ?? '').split(delimiter),
      '/usr/bin',
      '/usr/sbin',
      '/usr/local/bin',
      '/usr/local/sbin',
    ],
    name,
  );
}

/** Whether the suites of a real platform can run here (see `platformAvailability`). */
export interface PlatformAvailability {
  readonly available: boolean;
  /** True when suites should be skipped: the server is missing and this is not CI. */
  readonly skip: boolean;
  readonly reason: string;
  /** Appended to a suite's name: ` (skipped: <reason>)` when skipped, else nothing. */
  readonly note: string;
}

/**
 * Whether a platform's suites can run, from the reason it cannot (undefined: it can). In CI
 * (`CI=true`) a missing server is never a reason to skip: `skip` is then false and the suite's start
 * function throws, so the suite fails.
 */
export function platformAvailability(reason: string | undefined): PlatformAvailability {
  const ci = process.env['CI'] === 'true';
  const skip = reason !== undefined && !ci;
  return {
    available: reason === undefined,
    skip,
    reason: reason ?? '',
    note: skip ? ` (skipped: ${reason})` : '',
  };
}

/**
 * Waits until `probe` answers true (a server's API is up), failing with the server's output when the
 * process exits first or `timeoutMs` passes. `name` names the server in those messages.
 */
export async function waitForServer(
  name: string,
  child: ChildProcess,
  output: () => string,
  probe: () => Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${name} exited (${child.exitCode ?? child.signalCode}) before its API answered:\n${output()}`,
      );
    }
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${name}'s API did not answer within ${timeoutMs / 1000} s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether GET `url` (with `headers`) answers a 2xx within a second; throws when nothing listens. */
export async function answersOk(
  url: string,
  headers: Record<string, string> = {},
): Promise<boolean> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(1000) });
  await res.body?.cancel();
  return res.ok;
}

/** A server process a test started, its output captured. */
export interface ServerProcess {
  /** Everything the server printed so far (for failure messages). */
  readonly output: () => string;
  /** Stops the server (SIGTERM, then SIGKILL), then runs the start's `cleanup`; once, however often called. */
  readonly stop: () => Promise<void>;
}

/**
 * Spawns `binary args` (in `cwd`) and resolves once `ready` answers true (see `waitForServer`); a
 * server that exits first or does not come up is stopped, and the error carries its output. `name`
 * names it in those messages; `cleanup` runs after `stop` (removing its directory).
 */
export async function startServer(
  name: string,
  binary: string,
  args: readonly string[],
  options: { cwd?: string; ready: () => Promise<boolean>; cleanup: () => void },
): Promise<ServerProcess> {
  const child = spawn(binary, args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  child.once('error', (e) => (output += `\n${e.message}`));
  try {
    await waitForServer(name, child, () => output, options.ready);
  } catch (e) {
    await stopProcess(child, exited);
    throw e;
  }
  let stopping: Promise<void> | undefined;
  return {
    output: () => output,
    stop: () => (stopping ??= stopProcess(child, exited).finally(options.cleanup)),
  };
}

/**
 * Makes a temporary directory for a server (`prefix`…), fills it with `prepare`, and calls `launch`
 * with it, up to three times: a port picked free may be taken by someone else before the server
 * binds it. When every attempt fails the directory is removed and the last error thrown.
 */
export async function launchInTempDir<T>(
  prefix: string,
  launch: (dir: string) => Promise<T>,
  prepare: (dir: string) => void = () => undefined,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    prepare(dir);
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await launch(dir);
      } catch (e) {
        lastError = e;
      }
    }
    throw lastError;
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
