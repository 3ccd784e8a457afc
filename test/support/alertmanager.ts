// A real Prometheus Alertmanager (Debian's prometheus-alertmanager 0.25) for tests: its own process
// with a minimal configuration and a fresh storage directory in a temporary directory, the HTTP API
// on a free port of 127.0.0.1, clustering off (no gossip port, no peers).
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './pdns.js';
import {
  callJson,
  findExecutable,
  platformAvailability,
  stopProcess,
  waitForServer,
} from './process.js';

/** The notification template the binary loads at start; the Debian package installs it. */
const TEMPLATE = '/usr/share/prometheus/alertmanager/default.tmpl';

/** A running Alertmanager as tests see it. */
export interface AlertmanagerHandle {
  /** Base of the API v2, what a Provider's `endpoint` is: `http://127.0.0.1:<port>/api/v2`. */
  readonly apiUrl: string;
  /** Calls the raw API (`path` relative to apiUrl, e.g. `/silences`); JSON in and out. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Everything the server printed so far (for failure messages). */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes the temporary directory. */
  stop(): Promise<void>;
}

const BINARY = findExecutable('prometheus-alertmanager');

function missingReason(): string | undefined {
  const missing = [
    BINARY ? undefined : 'prometheus-alertmanager',
    readable(TEMPLATE) ? undefined : TEMPLATE,
  ].filter((x) => x !== undefined);
  if (missing.length === 0) return undefined;
  return `${missing.join(', ')} not found: install the Debian package prometheus-alertmanager (.ci/run does)`;
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether Alertmanager suites can run here, and why not. In CI (`CI=true`) a missing server is never
 * a reason to skip: `skip` is then false and `startAlertmanager` throws, so the suite fails.
 */
export const ALERTMANAGER = platformAvailability(missingReason());

/** The smallest configuration Alertmanager accepts: every alert goes to a receiver that does nothing. */
const CONFIG = ['route:', '  receiver: "null"', 'receivers:', '  - name: "null"', ''].join('\n');

/**
 * Starts an Alertmanager of its own (see the file comment) and resolves once `GET /api/v2/status`
 * answers. Throws when the binary is not installed (suites use `ALERTMANAGER.skip` to skip outside
 * CI), or with the server's output when it does not come up.
 */
export async function startAlertmanager(): Promise<AlertmanagerHandle> {
  const missing = missingReason();
  if (missing !== undefined || BINARY === undefined) {
    throw new Error(`cannot start Alertmanager: ${missing ?? 'not installed'}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'tend-alertmanager-'));
  try {
    writeFileSync(join(dir, 'alertmanager.yml'), CONFIG);
    // A port picked free may be taken by someone else before the server binds it: try again.
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await launch(dir, BINARY);
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

async function launch(dir: string, binary: string): Promise<AlertmanagerHandle> {
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // No cluster: no gossip listener, no peers to find.
      '--cluster.listen-address=',
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  child.once('error', (e) => (output += `\n${e.message}`));
  const apiUrl = `http://127.0.0.1:${port}/api/v2`;
  try {
    await waitForServer(
      'prometheus-alertmanager',
      child,
      () => output,
      async () => {
        const res = await fetch(`${apiUrl}/status`, { signal: AbortSignal.timeout(1000) });
        await res.body?.cancel();
        return res.ok;
      },
    );
  } catch (e) {
    await stopProcess(child, exited);
    throw e;
  }
  let stopping: Promise<void> | undefined;
  return {
    apiUrl,
    api: (method, path, body) => callJson(apiUrl, method, path, body),
    log: () => output,
    stop: () =>
      (stopping ??= stopProcess(child, exited).finally(() =>
        rmSync(dir, { recursive: true, force: true }),
      )),
  };
}
