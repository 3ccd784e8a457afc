// A real Podman Docker-compatible service (Debian's podman 4.3) for tests: `podman system service`
// as its own process on a free port of 127.0.0.1, with every piece of state it keeps — storage,
// run directory, temporary files, network configurations, volumes, secrets — in a temporary
// directory of its own, so it never sees nor touches the host's containers, networks or volumes.
// No image is needed: networks, volumes and secrets are plain API objects.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './pdns.js';
import {
  answersOk,
  callJson,
  findExecutable,
  launchInTempDir,
  platformAvailability,
  startServer,
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
  const binary = BINARY;
  if (binary === undefined) throw new Error(`cannot start Podman: ${PODMAN.reason}`);
  return launchInTempDir('tend-podman-', (dir) => launch(dir, binary));
}

async function launch(dir: string, binary: string): Promise<PodmanHandle> {
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}/v1.41`;
  const args = [
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
  ];
  const server = await startServer('podman system service', binary, args, {
    cwd: dir,
    ready: () => answersOk(`${apiUrl}/version`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  });
  return {
    apiUrl,
    dir,
    api: (method, path, body) => callJson(apiUrl, method, path, body),
    log: server.output,
    stop: server.stop,
  };
}
