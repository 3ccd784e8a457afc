import type { ChildProcess } from 'node:child_process';

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
