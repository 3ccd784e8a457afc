import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
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

/** Finds an executable on PATH, else in the usual bin and sbin directories (pdns_server is in /usr/sbin). */
export function findExecutable(name: string): string | undefined {
  const dirs = [
    ...(process.env['PATH'] ?? '').split(delimiter),
    '/usr/bin',
    '/usr/sbin',
    '/usr/local/bin',
    '/usr/local/sbin',
  ];
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
