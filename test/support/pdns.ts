// A real PowerDNS Authoritative server for tests: its own pdns_server process with a fresh SQLite
// database in a temporary directory, DNS and the HTTP API on free ports of 127.0.0.1, no outbound
// traffic. `pdnsutil` runs against the same database, for out-of-band changes.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  answersOk,
  callJson,
  findExecutable,
  launchInTempDir,
  platformAvailability,
  startServer,
} from './process.js';

/** Where the Debian packages put the schema of a fresh gsqlite3 database. */
const SCHEMA = '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql';

/** The result of one `pdnsutil` run. */
export interface ToolResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running pdns_server as tests see it. */
export interface PdnsHandle {
  /** Base of the HTTP API, what a Provider's `endpoint` is: `http://127.0.0.1:<port>/api/v1`. */
  readonly apiUrl: string;
  /** The webserver root (the API is under `/api/v1`, its Swagger document at `/api/docs`). */
  readonly webUrl: string;
  /** The API key (random per server); send it as `X-API-Key`. */
  readonly apiKey: string;
  /** The UDP and TCP port DNS answers on. */
  readonly dnsPort: number;
  /** `127.0.0.1:<dnsPort>`, as a `dns` check's `server`. */
  readonly dnsAddress: string;
  /** The directory holding pdns.conf (and the database). */
  readonly configDir: string;
  /** Runs the real `pdnsutil --config-dir <dir> …args` against this server's database. */
  pdnsutil(args: string[]): Promise<ToolResult>;
  /** Calls the raw API (`path` relative to apiUrl, e.g. `/servers/localhost/zones`); JSON in and out. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Everything pdns_server printed so far (for failure messages). */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes the temporary directory. */
  stop(): Promise<void>;
}

const PDNS_SERVER = findExecutable('pdns_server');
const PDNSUTIL = findExecutable('pdnsutil');

function missingReason(): string | undefined {
  const missing = [
    PDNS_SERVER ? undefined : 'pdns_server',
    PDNSUTIL ? undefined : 'pdnsutil',
    safeExists(SCHEMA) ? undefined : SCHEMA,
  ].filter((x) => x !== undefined);
  if (missing.length === 0) return undefined;
  return `${missing.join(', ')} not found: install the Debian packages pdns-server and pdns-backend-sqlite3 (.ci/run does)`;
}

function safeExists(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether PowerDNS suites can run here, and why not. In CI (`CI=true`) a missing server is never a
 * reason to skip: `skip` is then false and `startPdns` throws, so the suite fails.
 */
export const PDNS = platformAvailability(missingReason());

/** A port nobody listens on right now: bind port 0 on 127.0.0.1, read it, release it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function run(command: string, args: string[], timeoutMs = 30_000): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function config(dir: string, dnsPort: number, webPort: number, apiKey: string): string {
  return [
    'launch=gsqlite3',
    `gsqlite3-database=${join(dir, 'pdns.sqlite3')}`,
    // DNSSEC: cryptokeys live in the schema's cryptokeys table (and its settings in domainmetadata);
    // without this the backend refuses every cryptokey call.
    'gsqlite3-dnssec=yes',
    'local-address=127.0.0.1',
    `local-port=${dnsPort}`,
    'webserver=yes',
    'webserver-address=127.0.0.1',
    `webserver-port=${webPort}`,
    'webserver-allow-from=127.0.0.0/8',
    'webserver-loglevel=none',
    'api=yes',
    `api-key=${apiKey}`,
    'daemon=no',
    'guardian=no',
    'disable-syslog=yes',
    `socket-dir=${dir}`,
    // No outbound traffic: no security status polling, no notifications to secondaries.
    'security-poll-suffix=',
    'disable-axfr=yes',
    'primary=no',
    'secondary=no',
    'loglevel=3',
    // What DNS serves must follow the database at once: out-of-band changes made with pdnsutil
    // behind the server's back, and zones pdnsutil creates, must be visible to the next query.
    'cache-ttl=0',
    'negquery-cache-ttl=0',
    'query-cache-ttl=0',
    'zone-cache-refresh-interval=0',
    // Two cores shared by many: one thread each is plenty for tests.
    'receiver-threads=1',
    'distributor-threads=1',
    '',
  ].join('\n');
}

/**
 * Starts a pdns_server of its own (see the file comment) and resolves once its API answers
 * `GET /servers/localhost` with the key. Throws when pdns_server is not installed (suites use
 * `PDNS.skip` to skip outside CI), or with the server's output when it does not come up.
 */
export async function startPdns(): Promise<PdnsHandle> {
  const missing = missingReason();
  if (missing !== undefined || !PDNS_SERVER || !PDNSUTIL) {
    throw new Error(`cannot start PowerDNS: ${missing ?? 'not installed'}`);
  }
  const [server, tool] = [PDNS_SERVER, PDNSUTIL];
  return launchInTempDir(
    'tend-pdns-',
    (dir) => launch(dir, server, tool),
    (dir) => {
      const db = new Database(join(dir, 'pdns.sqlite3'));
      db.exec(readFileSync(SCHEMA, 'utf8'));
      db.close();
    },
  );
}

async function launch(dir: string, server: string, tool: string): Promise<PdnsHandle> {
  const dnsPort = await freePort();
  const webPort = await freePort();
  const apiKey = randomBytes(16).toString('hex');
  writeFileSync(join(dir, 'pdns.conf'), config(dir, dnsPort, webPort, apiKey), { mode: 0o600 });
  const webUrl = `http://127.0.0.1:${webPort}`;
  const apiUrl = `${webUrl}/api/v1`;
  const started = await startServer('pdns_server', server, [`--config-dir=${dir}`], {
    ready: () => answersOk(`${apiUrl}/servers/localhost`, { 'X-API-Key': apiKey }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  });
  return {
    apiUrl,
    webUrl,
    apiKey,
    dnsPort,
    dnsAddress: `127.0.0.1:${dnsPort}`,
    configDir: dir,
    pdnsutil: (args) => run(tool, [`--config-dir=${dir}`, ...args]),
    api: (method, path, body) => callJson(apiUrl, method, path, body, { 'X-API-Key': apiKey }),
    log: started.output,
    stop: started.stop,
  };
}
