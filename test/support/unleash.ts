// A real Unleash server for tests: a PostgreSQL cluster of its own (test/support/postgres.ts), and `unleash-server` 6.10.1 from test/platforms/unleash (installed there
// with `npm ci --ignore-scripts`, never a dependency of Tend) started from a few lines of JavaScript
// with two admin API tokens: `tend`'s, and a person's (`alice`), whose changes the event log records
// under her name. No outbound traffic: version checks and telemetry are off.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './pdns.js';
import { postgresMissing, startPostgres, type PostgresHandle } from './postgres.js';
import { callJson, stopProcess } from './process.js';

/** Where `unleash-server` is installed (test/platforms/unleash/node_modules). */
export const UNLEASH_DIR = resolve(import.meta.dirname, '..', 'platforms', 'unleash');

/** A running Unleash (and its PostgreSQL) as tests see it. */
export interface UnleashHandle {
  /** The server's base URL, what a Provider's `endpoint` is: `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Tend's admin API token (named `tend`); send it as `Authorization`. */
  readonly tendToken: string;
  /** The person's name, as the event log records it (`createdBy`). */
  readonly person: string;
  /** The person's own admin API token. */
  readonly personToken: string;
  /** Calls the API as the person (or with `token`); JSON in and out. */
  api(
    method: string,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<{ status: number; body: unknown }>;
  /** Everything Unleash and PostgreSQL printed so far (for failure messages). */
  log(): string;
  /** Stops Unleash, then PostgreSQL, and removes the temporary directory. */
  stop(): Promise<void>;
}

const SERVER = join(UNLEASH_DIR, 'node_modules', 'unleash-server', 'package.json');

function missingReason(): string | undefined {
  const missing: string[] = [];
  const pg = postgresMissing();
  if (pg !== undefined) missing.push(pg);
  try {
    accessSync(SERVER, constants.R_OK);
  } catch {
    missing.push(
      'unleash-server: run `npm ci --ignore-scripts` in test/platforms/unleash (.ci/run does)',
    );
  }
  return missing.length === 0 ? undefined : `not found: ${missing.join('; ')}`;
}

/**
 * Whether Unleash suites can run here, and why not. In CI (`CI=true`) a missing server is never a
 * reason to skip: `skip` is then false and `startUnleash` throws, so the suite fails.
 */
export const UNLEASH = (() => {
  const reason = missingReason();
  const ci = process.env['CI'] === 'true';
  return {
    available: reason === undefined,
    skip: reason !== undefined && !ci,
    reason: reason ?? '',
    note: reason !== undefined && !ci ? ` (skipped: ${reason})` : '',
  } as const;
})();

/** The few lines of JavaScript that start Unleash; settings come from the environment. */
const START = `
const unleash = require('unleash-server');
const env = process.env;
unleash
  .start({
    db: { host: '127.0.0.1', port: Number(env.TEND_PG_PORT), user: 'postgres', password: '',
      database: 'unleash', ssl: false },
    server: { host: '127.0.0.1', port: Number(env.TEND_UNLEASH_PORT) },
    enableOAS: true,
    versionCheck: { enable: false },
    telemetry: false,
    logLevel: 'warn',
    authentication: {
      initApiTokens: [
        { environment: '*', project: '*', type: 'admin', secret: env.TEND_UNLEASH_TOKEN, tokenName: 'tend' },
        { environment: '*', project: '*', type: 'admin', secret: env.TEND_UNLEASH_PERSON_TOKEN,
          tokenName: env.TEND_UNLEASH_PERSON },
      ],
    },
  })
  .then(() => console.log('tend-test: unleash started'))
  .catch((e) => { console.error(e); process.exit(1); });
`;

/**
 * Creates the cluster, starts PostgreSQL and Unleash, and resolves once Unleash answers with the
 * tokens. Throws when something is missing (suites use `UNLEASH.skip` to skip outside CI), or with
 * the servers' output when they do not come up; whatever was started is stopped again.
 */
export async function startUnleash(): Promise<UnleashHandle> {
  const missing = missingReason();
  if (missing !== undefined) throw new Error(`cannot start Unleash: ${missing}`);
  let output = '';
  let pg: PostgresHandle | undefined;
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  const stopAll = async (): Promise<void> => {
    if (child) await stopProcess(child, exited, 5000);
    if (pg) {
      await pg.stop();
      output += pg.log();
    }
  };
  try {
    pg = await startPostgres();
    await pg.createDatabase('unleash');
    const pgPort = pg.port;

    const port = await freePort();
    const tendToken = `*:*.${randomBytes(16).toString('hex')}`;
    const personToken = `*:*.${randomBytes(16).toString('hex')}`;
    const person = 'alice';
    child = spawn(process.execPath, ['-e', START], {
      cwd: UNLEASH_DIR,
      env: {
        ...process.env,
        TEND_PG_PORT: String(pgPort),
        TEND_UNLEASH_PORT: String(port),
        TEND_UNLEASH_TOKEN: tendToken,
        TEND_UNLEASH_PERSON_TOKEN: personToken,
        TEND_UNLEASH_PERSON: person,
        CHECK_VERSION: 'false',
        SEND_TELEMETRY: 'false',
        SCARF_ANALYTICS: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const proc = child;
    exited = new Promise((r) => proc.once('exit', r));
    proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    proc.once('error', (e) => (output += `\n${e.message}`));
    const url = `http://127.0.0.1:${port}`;
    await waitForApi(url, tendToken, proc, () => output);

    const api: UnleashHandle['api'] = (method, path, body, token = personToken) =>
      callJson(url, method, path, body, { authorization: token });
    let stopping: Promise<void> | undefined;
    return {
      url,
      tendToken,
      person,
      personToken,
      api,
      log: () => output,
      stop: () => (stopping ??= stopAll()),
    };
  } catch (e) {
    await stopAll().catch(() => undefined);
    throw e instanceof Error ? new Error(`${e.message}\n${output}`) : e;
  }
}

/** Waits until Unleash answers an admin call with Tend's token (it migrates its database first). */
async function waitForApi(
  url: string,
  token: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `unleash-server exited (${child.exitCode ?? child.signalCode}) before it answered:\n${output()}`,
      );
    }
    try {
      const res = await fetch(`${url}/api/admin/projects/default/features`, {
        headers: { authorization: token },
        signal: AbortSignal.timeout(2000),
      });
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`unleash-server did not answer within 120 s:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
