import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BLOCK, DOCUMENT } from '../support/endless-platform.js';
import { CLI, ROOT } from '../support/cli.js';

// One bad platform must not take down a worker (issue 26, 6b; decision 0040). A real HTTP server on
// 127.0.0.1 answers the list with `200`, `[` and then `{"id":…},` forever, as fast as the socket
// takes it. Before the limit, `tend plan` read it until the 10 s timeout, four times over, growing
// by hundreds of MB; now the answer is cut off at the provider's maxResponseBytes: the built CLI
// fails within seconds with a clear error and exit 1, its peak RSS (VmHWM, read from /proc while it
// runs) stays under 500 MB, the server sees its connection closed, and the request is not retried.
// The server also sees Tend's User-Agent, naming the worker (TEND_WORKER_ID) and the pid.

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

interface Seen {
  readonly userAgent: string | undefined;
  /** Bytes written before the connection closed; undefined while it is open. */
  closedAfter?: number;
}

let server: Server;
let url = '';
let seen: Seen[] = [];
/** How /items answers: forever, or a JSON list of about `bytes` bytes. */
let answer: { endless: true } | { bytes: number } = { endless: true };

function flood(req: IncomingMessage, res: ServerResponse): void {
  const s: Seen = { userAgent: req.headers['user-agent'] };
  seen.push(s);
  res.writeHead(200, { 'content-type': 'application/json' });
  let written = 0;
  let open = true;
  res.on('close', () => {
    open = false;
    s.closedAfter = written;
  });
  if (!('endless' in answer)) {
    const entries = Math.floor(answer.bytes / 40);
    const list = Array.from({ length: entries }, (_, n) => ({ id: `i${n}`, name: `n${n}` }));
    res.end(JSON.stringify(list));
    return;
  }
  const more = () => {
    while (open) {
      written += BLOCK.length;
      if (!res.write(BLOCK)) return void res.once('drain', more);
    }
  };
  res.write('[');
  more();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/items')) return flood(req, res);
    if (req.method === 'GET' && req.url === '/openapi.json') return flood(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tend-endless-'));
  seen = [];
  answer = { endless: true };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeIntent(providerLines: string[] = [], spec = './flood.json'): void {
  writeFileSync(join(dir, 'flood.json'), JSON.stringify(DOCUMENT));
  writeFileSync(
    join(dir, 'main.yaml'),
    [
      'kind: Provider',
      'name: flood',
      'type: openapi',
      `spec: ${spec}`,
      `endpoint: ${url}`,
      ...providerLines,
      '---',
      'kind: Resource',
      'type: flood.items',
      'name: one',
      'spec: { name: one }',
      '',
    ].join('\n'),
  );
}

/** The peak resident set of a process so far, in bytes (Linux: VmHWM); undefined once it is gone. */
function peakRss(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the built `tend plan`, reading its peak RSS every 20 ms until it exits. */
function plan(env: Record<string, string> = {}): Promise<{
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  pid: number;
  peakRss: number;
}> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, 'plan', dir], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let peak = 0;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const sample = setInterval(() => {
      peak = Math.max(peak, peakRss(child.pid!) ?? 0);
    }, 20);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`tend plan did not end within 120 s\nstdout:\n${stdout}\nstderr:\n${stderr}`),
      );
    }, 120_000);
    child.on('exit', (code) => {
      clearInterval(sample);
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        ms: performance.now() - started,
        pid: child.pid!,
        peakRss: peak,
      });
    });
  });
}

const MB = 1024 * 1024;

describe('a platform that streams an endless answer (built CLI, real HTTP server)', () => {
  it('fails tend plan within seconds with a clear error, under 500 MB, the connection closed', async () => {
    writeIntent();
    const r = await plan({ TEND_WORKER_ID: 'w-e2e' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'error flood.items: provider flood: GET /items: the answer (status 200) is larger than maxResponseBytes, 16 MiB (16777216 bytes): reading stopped after',
    );
    expect(r.stderr).toContain(
      'hint: raise maxResponseBytes on provider flood if this answer is legitimate; otherwise the platform is misbehaving',
    );
    // Sent once (not retried), cut off just past the limit.
    expect(seen).toHaveLength(1);
    expect(seen[0]!.closedAfter).toBeDefined();
    expect(seen[0]!.closedAfter!).toBeLessThan(64 * MB);
    expect(seen[0]!.userAgent).toBe(`tend/${pkg.version} (worker w-e2e; pid ${r.pid})`);
    // Generous for a loaded machine: the whole command, node's start included. Before the limit it
    // took 4 attempts of the 10 s timeout.
    expect(r.ms).toBeLessThan(30_000);
    expect(r.peakRss).toBeGreaterThan(0);
    expect(r.peakRss).toBeLessThan(500 * MB);
    console.log(
      `endless answer: exit ${r.code} after ${Math.round(r.ms)} ms, peak RSS ${Math.round(r.peakRss / MB)} MB, ${Math.round(seen[0]!.closedAfter! / MB)} MB written before the close`,
    );
  }, 150_000);

  it('honours a lower maxResponseBytes, and a raised one lets a legitimate large list through', async () => {
    answer = { bytes: 2 * MB };
    writeIntent(['maxResponseBytes: 1048576']);
    const low = await plan();
    expect(low.code).toBe(1);
    expect(low.stderr).toContain(
      'provider flood: GET /items: the answer (status 200) is larger than maxResponseBytes, 1 MiB (1048576 bytes)',
    );
    expect(seen[0]!.userAgent).toBe(`tend/${pkg.version} (pid ${low.pid})`);

    writeIntent(['maxResponseBytes: 4194304']);
    const raised = await plan();
    // The list is read: the one declared item is a create (exit 2: changes).
    expect(raised.stderr).toBe('');
    expect(raised.code).toBe(2);
    expect(raised.stdout).toContain('flood.items/one');
  }, 300_000);

  it('fails on an OpenAPI document served without end, within the document bound', async () => {
    writeIntent([], `${url}/openapi.json`);
    const r = await plan();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `provider flood: the OpenAPI document ${url}/openapi.json is larger than 64 MiB; Tend reads OpenAPI documents up to that size, so reading stopped and the connection was closed`,
    );
    expect(seen).toHaveLength(1);
    expect(seen[0]!.closedAfter!).toBeLessThan(128 * MB);
    expect(r.peakRss).toBeLessThan(500 * MB);
    console.log(
      `endless document: exit ${r.code} after ${Math.round(r.ms)} ms, peak RSS ${Math.round(r.peakRss / MB)} MB`,
    );
  }, 150_000);
});
