// A real Podman Docker-compatible service (Debian's podman 4.3) for tests: `podman system service`
// as its own process on a free port of 127.0.0.1, with every piece of state it keeps — storage,
// run directory, temporary files, network configurations, volumes, secrets — in a temporary
// directory of its own, so it never sees nor touches the host's containers, networks or volumes.
// No image is needed: networks, volumes and secrets are plain API objects.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './pdns.js';
import {
  callJson,
  findExecutable,
  platformAvailability,
  stopProcess,
  waitForServer,
  type ApiAnswer,
} from './process.js';

/** A running Podman service as tests see it. */
export interface PodmanHandle {
  /** Base of the Docker-compatible API at the document's version: `http://127.0.0.1:<port>/v1.41`. */
  readonly apiUrl: string;
  /** Calls the raw API (`path` relative to apiUrl, e.g. `/networks`); JSON in and out. */
  api(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  /** The directory holding all of the service's state. */
  readonly dir: string;
  /** Everything the service printed so far (for failure messages). */
  log(): string;
  /** Stops the service (SIGTERM, then SIGKILL) and removes its directory with all it created. */
  stop(): Promise<void>;
}

const BINARY = findExecutable('podman');

/**
 * Whether Podman suites can run here, and why not. In CI (`CI=true`) a missing podman is never a
 * reason to skip: `skip` is then false and `startPodman` throws, so the suite fails.
 */
export const PODMAN = platformAvailability(
  BINARY === undefined
    ? 'podman not found: install the Debian package podman (.ci/run does)'
    : undefined,
);

/**
 * Starts a Podman service of its own (see the file comment) and resolves once `GET /v1.41/version`
 * answers. Throws when podman is not installed (suites use `PODMAN.skip` to skip outside CI), or
 * with the service's output when it does not come up.
 */
export async function startPodman(): Promise<PodmanHandle> {
  if (BINARY === undefined) throw new Error(`cannot start Podman: ${PODMAN.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'tend-podman-'));
  try {
    // A port picked free may be taken by someone else before the service binds it: try again.
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

async function launch(dir: string, binary: string): Promise<PodmanHandle> {
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--root=${join(dir, 'root')}`, // images, volumes, secrets, the state database
      `--runroot=${join(dir, 'run')}`,
      `--tmpdir=${join(dir, 'tmp')}`,
      `--network-config-dir=${join(dir, 'networks')}`, // not /etc/cni/net.d
      '--events-backend=none', // no journal, no events file
      '--storage-driver=vfs', // no overlay mounts: nothing here runs a container
      'system',
      'service',
      '--time=0', // serve until stopped, not 5 s after the last call
      `tcp:127.0.0.1:${port}`,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  child.once('error', (e) => (output += `\n${e.message}`));
  const apiUrl = `http://127.0.0.1:${port}/v1.41`;
  try {
    await waitForServer(
      'podman system service',
      child,
      () => output,
      async () => {
        const res = await fetch(`${apiUrl}/version`, { signal: AbortSignal.timeout(1000) });
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
    dir,
    api: (method, path, body) => callJson(apiUrl, method, path, body),
    log: () => output,
    stop: () =>
      (stopping ??= stopProcess(child, exited).finally(() =>
        rmSync(dir, { recursive: true, force: true }),
      )),
  };
}
