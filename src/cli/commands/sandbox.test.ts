import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
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
      args: ['--api-key-from-env', 'TEND_TEST_SURELY_UNSET_VARIABLE'],
      message:
        'error: --api-key-from-env: environment variable TEND_TEST_SURELY_UNSET_VARIABLE is not set or empty',
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

    it('a bad flag exits 1 before listening, saying which flag and why', async () => {
      await expect(startSandboxProcess(['--error-rate', '1.5'])).rejects.toThrow(
        'tend sandbox exited with code 1 before listening: error: --error-rate must be a number between 0 and 1, got "1.5"',
      );
    });
  },
);
