// A real Prometheus Alertmanager (Debian's prometheus-alertmanager 0.25) for tests: its own process
// with a minimal configuration and a fresh storage directory in a temporary directory, the HTTP API
// on a free port of 127.0.0.1, clustering off (no gossip port, no peers).
import { accessSync, constants, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './pdns.js';
import {
  answersOk,
  callJson,
  findExecutable,
  launchInTempDir,
  platformAvailability,
  startServer,
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
  const binary = BINARY;
  return launchInTempDir(
    'tend-alertmanager-',
    (dir) => launch(dir, binary),
    (dir) => writeFileSync(join(dir, 'alertmanager.yml'), CONFIG),
  );
}

async function launch(dir: string, binary: string): Promise<AlertmanagerHandle> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}/api/v2`;
  const args = [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    // No cluster: no gossip listener, no peers to find.
    '--cluster.listen-address=',
  ];
  const server = await startServer('prometheus-alertmanager', binary, args, {
    cwd: dir,
    ready: () => answersOk(`${apiUrl}/status`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  });
  return {
    apiUrl,
    api: (method, path, body) => callJson(apiUrl, method, path, body),
    log: server.output,
    stop: server.stop,
  };
}
