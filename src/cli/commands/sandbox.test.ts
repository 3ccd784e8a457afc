import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/cli.js';
import { startSandboxProcess } from '../../../test/support/sandbox-process.js';
import { registerSandboxCommand } from './sandbox.js';

/** Runs `tend sandbox <args>` in-process and returns what it printed to stderr when it failed. */
async function usageError(args: string[]): Promise<{ message: string; exitCode: number }> {
  let stderr = '';
  const program = new Command()
    .exitOverride()
    .configureOutput({ writeErr: (s) => (stderr += s), writeOut: () => {} });
  registerSandboxCommand(program);
  try {
    await program.parseAsync(['sandbox', ...args], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return { message: stderr.trim(), exitCode: error.exitCode };
  }
  throw new Error('the command did not fail');
}

describe('tend sandbox: flag validation', () => {
  it.each([
    {
      args: ['--error-rate', '2'],
      message: 'error: --error-rate must be a number between 0 and 1, got "2"',
    },
    { args: ['--rate-429', 'abc'], message: 'error: --rate-429 must be a number, got "abc"' },
    {
      args: ['--timeout-after-success', '1.01'],
      message: 'error: --timeout-after-success must be a number between 0 and 1, got "1.01"',
    },
    { args: ['--latency=-5'], message: 'error: --latency must be a number >= 0, got "-5"' },
    {
      args: ['--retry-after', '1.5'],
      message: 'error: --retry-after must be an integer >= 0, got "1.5"',
    },
    { args: ['--seed', 'x'], message: 'error: --seed must be a number, got "x"' },
    { args: ['--rate-limit', ''], message: 'error: --rate-limit must be a number, got ""' },
    {
      args: ['--port', '70000'],
      message: 'error: --port must be an integer from 0 to 65535, got "70000"',
    },
    {
      args: ['--port', 'http'],
      message: 'error: --port must be an integer from 0 to 65535, got "http"',
    },
    {
      args: ['--fault-methods', 'GET,FETCH'],
      message:
        'error: --fault-methods must list HTTP methods from GET, POST, PUT, PATCH, DELETE (or be null for all), got "GET,FETCH"',
    },
    {
      args: ['--request-log', ''],
      message: 'error: --request-log needs a file to append to, got ""',
    },
    {
      args: ['--api-key-from-env', 'TEND_TEST_SURELY_UNSET_VARIABLE'],
      message:
        'error: --api-key-from-env: environment variable TEND_TEST_SURELY_UNSET_VARIABLE is not set or empty',
    },
  ])('$args → exit 1', async ({ args, message }) => {
    expect(await usageError(args)).toEqual({ message, exitCode: 1 });
  });
});

describe('tend sandbox actor: flag validation (nothing is sent)', () => {
  const act = (...args: string[]) => ['actor', ...args];
  it.each([
    {
      args: act('autoscaler', '--service', 'api'),
      message: 'error: autoscaler needs --load',
    },
    {
      args: act('scanner', '--service', 'api', '--image', '1.25.4'),
      message: 'error: scanner needs --ref',
    },
    {
      args: act('console', '--service', 'api'),
      message: 'error: console needs --field and --value',
    },
    {
      args: act('scanner', '--service', 'api', '--image', '1.2', '--ref', 'CVE-1', '--load', '5'),
      message:
        'error: --load does not apply to scanner (it takes --image, --ref, --actor, --actor-kind)',
    },
    {
      args: act(
        'console',
        '--service',
        'api',
        '--field',
        'replicas',
        '--value',
        '5',
        '--ttl',
        '2h',
      ),
      message:
        'error: --ttl does not apply to console (it takes --field, --value, --actor, --intent, --motivation)',
    },
    {
      args: act('autoscaler', '--service', 'api', '--load', 'lots'),
      message: 'error: --load must be a number, got "lots"',
    },
    {
      args: act('cost-optimiser', '--service', 'api', '--target', ''),
      message: 'error: --target must be a number, got ""',
    },
    {
      args: act(
        'scanner',
        '--service',
        'api',
        '--image',
        '1.2',
        '--ref',
        'CVE-1',
        '--actor-kind',
        'human',
      ),
      message: 'error: --actor-kind of a scanner is controller or agent, got "human"',
    },
    {
      args: act('autoscaler', '--service', 'api', '--load', '5', '--url', 'ftp://sandbox'),
      message: 'error: --url must be an http(s) URL, got "ftp://sandbox"',
    },
    {
      args: act('autoscaler', '--service', 'api', '--load', '5', '--log'),
      message: 'error: --log is a flag of `tend sandbox` (the server), not of `tend sandbox actor`',
    },
    {
      args: ['--port', '0', ...act('autoscaler', '--service', 'api', '--load', '5')],
      message:
        'error: --port is a flag of `tend sandbox` (the server), not of `tend sandbox actor`',
    },
    {
      args: act(
        'autoscaler',
        '--service',
        'api',
        '--load',
        '5',
        '--api-key-from-env',
        'TEND_TEST_SURELY_UNSET_VARIABLE',
      ),
      message:
        'error: --api-key-from-env: environment variable TEND_TEST_SURELY_UNSET_VARIABLE is not set or empty',
    },
    {
      args: act('robot', '--service', 'api'),
      message:
        "error: command-argument value 'robot' is invalid for argument 'actor'. Allowed choices are autoscaler, cost-optimiser, scanner, console.",
    },
    {
      args: act('autoscaler', '--load', '5'),
      message: "error: required option '--service <name-or-id>' not specified",
    },
  ])('$args → exit 1', async ({ args, message }) => {
    expect(await usageError(args)).toEqual({ message, exitCode: 1 });
  });
});

const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const built = existsSync(CLI);

// These run the built CLI, like a user would; `npm test` builds first. Skipped when dist/ is missing
// (running this file alone before a build) — except in CI, where a missing build must fail.
describe.skipIf(!built && process.env['CI'] !== 'true')(
  'tend sandbox as a process (needs npm run build)',
  () => {
    const dirs: string[] = [];
    afterAll(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('prints its URL first, serves the API and the oracle, and takes faults at runtime', async () => {
      const sandbox = await startSandboxProcess(['--seed', '3']);
      try {
        expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const created = await fetch(`${sandbox.url}/buckets`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'from-a-process' }),
        });
        expect(created.status).toBe(201);
        expect(await sandbox.objects()).toMatchObject([{ type: 'buckets', id: 'from-a-process' }]);
        expect(await sandbox.setFaults({ errorRate: 1 })).toMatchObject({ seed: 3, errorRate: 1 });
        expect([500, 503]).toContain((await fetch(`${sandbox.url}/buckets`)).status);
        expect(await sandbox.stats()).toMatchObject({
          requests: 2,
          creates: 1,
          faults: { error: 1 },
        });
      } finally {
        await sandbox.stop();
      }
    });

    it.each([
      {
        reason: 'without --eventual-consistency its document promises consistent reads',
        args: [] as string[],
        promise: true,
      },
      {
        reason: '--eventual-consistency 0: no lag yet, no promise (it may be switched on)',
        args: ['--eventual-consistency', '0'],
        promise: false,
      },
      {
        reason: '--eventual-consistency 300: no promise',
        args: ['--eventual-consistency', '300'],
        promise: false,
      },
    ])('$reason', async ({ args, promise }) => {
      const sandbox = await startSandboxProcess(args);
      try {
        const doc = (await (await fetch(`${sandbox.url}/openapi.json`)).json()) as Record<
          string,
          unknown
        >;
        expect(doc['x-tend-consistent-reads']).toBe(promise ? true : undefined);
        const switched = await fetch(`${sandbox.url}/_sandbox/faults`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ eventualConsistencyMs: 1000 }),
        });
        // A promise a client may hold is never broken at run time.
        expect(switched.status).toBe(promise ? 409 : 200);
      } finally {
        await sandbox.stop();
      }
    });

    it('--json prints {"url"} first; --log prints one JSON line per mutation; SIGINT exits 0', async () => {
      const child = spawn(process.execPath, [CLI, 'sandbox', '--port', '0', '--json', '--log'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines = createInterface({ input: child.stdout });
      const iterator = lines[Symbol.asyncIterator]();
      const first = JSON.parse(String((await iterator.next()).value)) as { url: string };
      expect(Object.keys(first)).toEqual(['url']);
      await fetch(`${first.url}/networks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'cli-test' },
        body: JSON.stringify({ name: 'n', cidr: '10.0.0.0/24' }),
      });
      const log = JSON.parse(String((await iterator.next()).value)) as Record<string, unknown>;
      expect(log).toMatchObject({ seq: 1, action: 'create', type: 'networks', actor: 'cli-test' });
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    });

    it('--state keeps objects across a stop and a start', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-sandbox-cli-'));
      dirs.push(dir);
      const state = join(dir, 'state.json');
      const first = await startSandboxProcess(['--state', state]);
      await fetch(`${first.url}/buckets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'kept' }),
      });
      await first.stop();
      expect(readFileSync(state, 'utf8')).toContain('"kept"');
      const second = await startSandboxProcess(['--state', state]);
      try {
        expect((await fetch(`${second.url}/buckets/kept`)).status).toBe(200);
      } finally {
        await second.stop();
      }
    });

    it('--api-key-from-env reads the key from the environment', async () => {
      const sandbox = await startSandboxProcess(['--api-key-from-env', 'SANDBOX_TEST_KEY'], {
        env: { SANDBOX_TEST_KEY: 'from-env' },
      });
      try {
        expect((await fetch(`${sandbox.url}/buckets`)).status).toBe(401);
        const ok = await fetch(`${sandbox.url}/buckets`, { headers: { 'X-API-Key': 'from-env' } });
        expect(ok.status).toBe(200);
      } finally {
        await sandbox.stop();
      }
    });

    it('--request-log: one JSON line per API request, readable while it runs, never the key', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tend-sandbox-cli-'));
      dirs.push(dir);
      const requestLog = join(dir, 'logs', 'requests.jsonl');
      const sandbox = await startSandboxProcess(['--api-key-from-env', 'SANDBOX_TEST_KEY'], {
        env: { SANDBOX_TEST_KEY: 'request-log-key' },
        requestLog,
      });
      try {
        const headers = {
          'X-API-Key': 'request-log-key',
          'User-Agent': 'tend/0.1.0 worker-7',
          'content-type': 'application/json',
        };
        const made = await fetch(`${sandbox.url}/buckets`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'logged' }),
        });
        expect(made.status).toBe(201);
        expect((await fetch(`${sandbox.url}/buckets/logged`)).status).toBe(401);
        await sandbox.objects(); // the oracle: not an API request, not logged
        // Read back while the sandbox still runs.
        expect(sandbox.requestLog).toBe(requestLog);
        expect(sandbox.requests()).toMatchObject([
          { method: 'POST', path: '/buckets', status: 201, userAgent: 'tend/0.1.0 worker-7' },
          { method: 'GET', path: '/buckets/logged', status: 401 },
        ]);
        for (const entry of sandbox.requests()) {
          expect(Date.parse(entry.time)).toBeGreaterThan(Date.now() - 60_000);
        }
        expect(readFileSync(requestLog, 'utf8')).not.toContain('request-log-key');
      } finally {
        await sandbox.stop();
      }
    });

    it('actor: each action shows in the audit feed with its actor, kind, intent and motivation', async () => {
      const env = { SANDBOX_TEST_KEY: 'actor-key' };
      const sandbox = await startSandboxProcess(['--api-key-from-env', 'SANDBOX_TEST_KEY'], {
        env,
      });
      const key = { 'X-API-Key': 'actor-key' };
      try {
        const created = await fetch(`${sandbox.url}/services`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...key },
          body: JSON.stringify({ name: 'api', image: 'nginx:1.25.3', replicas: 2 }),
        });
        const { id } = (await created.json()) as { id: string };
        const actor = (...args: string[]) =>
          runCli(
            [
              'sandbox',
              'actor',
              ...args,
              '--url',
              sandbox.url,
              '--api-key-from-env',
              'SANDBOX_TEST_KEY',
            ],
            { env },
          );

        const scaled = await actor(
          'autoscaler',
          '--service',
          'api',
          '--load',
          '450',
          '--ttl',
          '2h',
          '--json',
        );
        expect(scaled.stderr).toBe('');
        expect(scaled.code).toBe(0);
        const result = JSON.parse(scaled.stdout) as Record<string, unknown>;
        expect(result).toMatchObject({
          acted: true,
          plan: { actor: 'autoscaler', service: id, patch: { replicas: 5 } },
          after: { replicas: 5 },
          audit: {
            action: 'update',
            id,
            actor: 'hpa',
            actorKind: 'controller',
            intent: 'availability',
            motivation: expect.stringMatching(/^traffic:load 450 at \S+Z; ttl=2h$/),
          },
        });

        const clicked = await actor(
          'console',
          '--service',
          id,
          '--field',
          'replicas',
          '--value',
          '3',
          '--actor',
          'alice',
        );
        expect(clicked.code).toBe(0);
        expect(clicked.stdout.split('\n')).toEqual([
          `console changed services/${id} (api): alice sets replicas 5 → 3 in the console`,
          '  sent:  X-Tend-Actor: alice, X-Tend-Actor-Kind: human',
          expect.stringMatching(
            new RegExp(`^  audit: #3 \\S+Z update services/${id} actor=alice kind=human$`),
          ),
          '',
        ]);

        const idle = await actor('cost-optimiser', '--service', 'api', '--target', '4');
        expect(idle.code).toBe(0);
        expect(idle.stdout).toBe(
          `cost-optimiser left services/${id} (api) alone: it has 3 replicas, within the budget of 4\n`,
        );

        const audit = (await (await fetch(`${sandbox.url}/audit`, { headers: key })).json()) as {
          entries: Record<string, unknown>[];
        };
        expect(
          audit.entries.map((e) => [
            e['actor'],
            e['actorKind'],
            e['intent'],
            e['motivation'] === null,
          ]),
        ).toEqual([
          ['anonymous', null, null, true],
          ['hpa', 'controller', 'availability', false],
          ['alice', 'human', null, true],
        ]);
      } finally {
        await sandbox.stop();
      }
    }, 90_000);

    it('actor: no sandbox at the URL, or something else there, is an error naming the URL, exit 1', async () => {
      const port = await closedPort();
      const other = createHttpServer((_req, res) => res.end('<html>not a sandbox</html>'));
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
      try {
        const act = (url: string) =>
          runCli([
            'sandbox',
            'actor',
            'autoscaler',
            '--service',
            'api',
            '--load',
            '5',
            '--url',
            url,
          ]);
        const [nothing, something] = await Promise.all([
          act(`http://127.0.0.1:${port}`),
          act(otherUrl),
        ]);
        expect(nothing.code).toBe(1);
        expect(nothing.stdout).toBe('');
        expect(nothing.stderr).toMatch(
          `error: cannot reach the sandbox at http://127.0.0.1:${port} (is \`tend sandbox\` running there?): fetch failed`,
        );
        expect(something.code).toBe(1);
        expect(something.stderr).toMatch(`error: ${otherUrl} did not answer like a sandbox: `);
      } finally {
        other.close();
      }
    });

    it('a bad flag exits 1 before listening, saying which flag and why', async () => {
      await expect(startSandboxProcess(['--error-rate', '1.5'])).rejects.toThrow(
        'tend sandbox exited with code 1 before listening: error: --error-rate must be a number between 0 and 1, got "1.5"',
      );
    });
  },
);

/** A port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
