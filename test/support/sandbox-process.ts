// Starting sandboxes for tests: as a real `tend sandbox` process (what users run), or in-process
// (fast). Both give the same handle, so a suite can switch between them.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  startSandbox,
  type FaultSettings,
  type ListenOptions,
  type OracleObject,
  type RequestLogEntry,
  type SandboxOptions,
  type SandboxStats,
} from '../../src/sandbox/index.js';
import { stopProcess } from './process.js';

/** A running sandbox as tests see it. */
export interface SandboxHandle {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Stops the sandbox (the process gets SIGTERM, and SIGKILL if it lingers). */
  stop(): Promise<void>;
  /** The test oracle: every object, visible to reads yet or not. */
  objects(): Promise<OracleObject[]>;
  /** Merges fault settings; resolves to the settings now in force. */
  setFaults(partial: Partial<FaultSettings>): Promise<FaultSettings>;
  stats(): Promise<SandboxStats>;
  /** Forgets every object, audit entry and counter; faults go back to the start settings. */
  reset(): Promise<void>;
  /** The API key the sandbox requires (and its /_sandbox/* admin routes), when it has one. */
  readonly apiKey?: string;
  /** The request log file (`--request-log`), when the sandbox keeps one. */
  readonly requestLog?: string;
  /**
   * Every API request answered so far, read back from the request log (throws when the sandbox was
   * started without one). Lines are written as requests are answered, so this reads a running sandbox.
   */
  requests(): RequestLogEntry[];
}

/** Options for the process: extra environment (e.g. the variable named by --api-key-from-env). */
export interface SandboxProcessOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** The CLI entry to run; defaults to the built `dist/cli/main.js`. */
  readonly cli?: string;
  /** Keep a request log in this file (`--request-log <file>`), read back by `requests()`. */
  readonly requestLog?: string;
}

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/**
 * Spawns `node dist/cli/main.js sandbox --port 0 ...args` (build first: `npm run build`) and
 * resolves once the first stdout line gives its URL. Rejects with the process's stderr when it
 * exits before listening.
 */
export async function startSandboxProcess(
  args: string[] = [],
  options: SandboxProcessOptions = {},
): Promise<SandboxHandle> {
  const logArgs = options.requestLog === undefined ? [] : ['--request-log', options.requestLog];
  const cliArgs = [options.cli ?? CLI, 'sandbox', '--port', '0', ...logArgs, ...args];
  const child = spawn(process.execPath, cliArgs, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then((code) => {
      throw new Error(`tend sandbox exited with code ${code} before listening: ${stderr.trim()}`);
    }),
  ]);
  lines.on('line', () => {}); // keep draining stdout (--log lines)
  const url = parseUrl(first);
  // A sandbox started with --api-key-from-env VAR wants that key on /_sandbox/* too.
  const keyVar = args[args.indexOf('--api-key-from-env') + 1];
  const apiKey = args.includes('--api-key-from-env') && keyVar ? options.env?.[keyVar] : undefined;
  const logFile = args.includes('--request-log')
    ? args[args.indexOf('--request-log') + 1]
    : options.requestLog;
  let stopping: Promise<void> | undefined;
  return {
    ...oracle(url, apiKey),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...requestLogOf(logFile),
    url,
    stop: () => (stopping ??= stopProcess(child, exited, 5000)),
  };
}

/** The same handle around an in-process sandbox (`startSandbox`), for fast tests. */
export async function startSandboxInProcess(
  options: SandboxOptions & ListenOptions = {},
): Promise<SandboxHandle> {
  const running = await startSandbox(options);
  return {
    ...oracle(running.url, options.apiKey),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...requestLogOf(options.requestLog),
    url: running.url,
    stop: () => running.close(),
  };
}

/** The handle's request log: the file, and `requests()` reading it back. */
function requestLogOf(file: string | undefined): Pick<SandboxHandle, 'requestLog' | 'requests'> {
  if (file === undefined) {
    return {
      requests: () => {
        throw new Error('this sandbox keeps no request log: start it with requestLog: <file>');
      },
    };
  }
  return { requestLog: file, requests: () => readRequestLog(file) };
}

/**
 * The entries of a sandbox's request log file (`tend sandbox --request-log`), oldest first; none when
 * the file does not exist yet. A last line without its newline (being written) is left for later.
 */
export function readRequestLog(file: string): RequestLogEntry[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RequestLogEntry);
}

function parseUrl(line: string): string {
  const text = line.trim();
  if (text.startsWith('{')) {
    const parsed = JSON.parse(text) as { url?: unknown };
    if (typeof parsed.url === 'string') return parsed.url;
  }
  const match = /^sandbox listening on (http:\/\/\S+)$/.exec(text);
  if (!match?.[1]) throw new Error(`unexpected first line from tend sandbox: ${line}`);
  return match[1];
}

/** The /_sandbox/* admin calls, with the sandbox's API key when it has one. */
function oracle(url: string, apiKey: string | undefined) {
  const send = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${url}${path}`, {
      ...init,
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        ...(apiKey !== undefined ? { 'X-API-Key': apiKey } : {}),
      },
    });
  const json = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await send(path, init);
    const body = (await response.json()) as T;
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
    return body;
  };
  return {
    reset: async () => {
      const response = await send('/_sandbox/reset', { method: 'POST' });
      if (response.status !== 204) throw new Error(`/_sandbox/reset: ${response.status}`);
    },
    objects: async () => (await json<{ objects: OracleObject[] }>('/_sandbox/objects')).objects,
    setFaults: (partial: Partial<FaultSettings>) =>
      json<FaultSettings>('/_sandbox/faults', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(partial),
      }),
    stats: () => json<SandboxStats>('/_sandbox/stats'),
  };
}

/**
 * Another writer scales the quickstart's service on the platform, behind Tend's back: a PATCH of
 * `replicas` through the sandbox's own API as `actor` (and `actorKind`, when given). Resolves to the
 * answer's status.
 */
export async function scaleServiceAs(
  sandbox: SandboxHandle,
  replicas: number,
  actor = 'alice',
  actorKind?: string,
): Promise<number> {
  const service = (await sandbox.objects()).find((o) => o.type === 'services');
  if (!service) throw new Error('the sandbox holds no service to scale');
  const r = await fetch(`${sandbox.url}/services/${service.id}`, {
    method: 'PATCH',
    headers: {
      'content-type': 'application/json',
      'x-tend-actor': actor,
      ...(actorKind !== undefined ? { 'x-tend-actor-kind': actorKind } : {}),
    },
    body: JSON.stringify({ replicas }),
  });
  return r.status;
}
