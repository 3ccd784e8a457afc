import { spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { copyExampleFiles, ROOT } from '../support/cli.js';

// The README's first command ends in `npm run quickstart`: run that script as a newcomer would and
// check it tells the story — on a free port, on its default port 7781 twice in a row, and with 7781
// taken by another program — and that it leaves examples/quickstart exactly as it found it.

const EXAMPLE = join(ROOT, 'examples', 'quickstart');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Runs `node scripts/quickstart.mjs` to the end; `port` undefined means its default (7781). `root`
 * is the checkout it runs in (default this one; see `scratchCheckout`).
 */
async function quickstart(
  port?: number,
  root = ROOT,
): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env['QUICKSTART_PORT'];
  if (port !== undefined) env['QUICKSTART_PORT'] = String(port);
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'quickstart.mjs')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('exit', (c) => resolve({ code: c, out: text }));
  });
  return { code, out: stripVTControlCharacters(out) };
}

/**
 * A throw-away checkout to run the quickstart in: its script and example copied, `dist` linked to
 * this one's. A test that plants state in the example plants it there, never in the repository (a
 * test stopped half-way must not leave anything behind in examples/).
 */
function scratchCheckout(): { root: string; example: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'tend-checkout-'));
  mkdirSync(join(root, 'scripts'));
  cpSync(join(ROOT, 'scripts', 'quickstart.mjs'), join(root, 'scripts', 'quickstart.mjs'));
  symlinkSync(join(ROOT, 'dist'), join(root, 'dist'), 'dir');
  const example = join(root, 'examples', 'quickstart');
  copyExampleFiles(EXAMPLE, example);
  return { root, example, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** What a quickstart must show: create, alice's change attributed, Tend's correction, the ledger. */
function expectTheStory(plain: string): void {
  expect(plain).toMatch(/pass 1 done in \d+ ms: 5 converged/);
  expect(plain).toMatch(
    /! sb\.services\/api {2}updated by alice \(intent: availability, motivation: incident\): replicas 2 → 5, tags\.hotfix \(absent\) → "INC-42"/,
  );
  expect(plain).toMatch(
    /Tend put replicas back to 2 within \d+\.\d s; the tag it does not declare \(hotfix=INC-42\) was left alone/,
  );
  expect(plain).toMatch(/alice\s+audit\s+update\s+sb\.services\/api/);
  expect(plain).toMatch(
    /tend \(tend\)\s+tend\s+update\s+sb\.services\/api\s+replicas 5 → 2\s+\(intent consistency, motivation drift\)/,
  );
  // The autoscaler's change, attributed and decided by examples/quickstart/arbitration.yaml.
  expect(plain).toMatch(
    /Tend decided "yield" by the workspace's Arbitration policy \(examples\/quickstart\/arbitration\.yaml\): kept replicas=4 from hpa: rule scaling#1 yields to traffic spike on api\. Replicas are 4\./,
  );
  expect(plain).toContain(
    'ledger links intact (8 entries); signatures not checked: run tend ledger verify',
  );
  expect(plain).toMatch(
    /ledger intact: 8 entries of workspace \S+, verified with key id [0-9a-f]{16}/,
  );
}

/** Every entry under a folder with its size and modification time. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => {
      const p = join(e.parentPath, e.name);
      const s = statSync(p);
      return `${p} ${e.isDirectory() ? 'dir' : s.size} ${s.mtimeMs}`;
    })
    .sort();
}

/** Listens on 127.0.0.1:`port` and counts connections; undefined when something else has it. */
async function hold(
  port: number,
): Promise<{ server: Server; connections: () => number } | undefined> {
  let n = 0;
  const server = createServer((socket) => {
    n++;
    socket.destroy();
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EADDRINUSE' ? resolve(undefined) : reject(e),
    );
    server.listen(port, '127.0.0.1', () => resolve({ server, connections: () => n }));
  });
}

describe('npm run quickstart', () => {
  it('creates the app, lets alice change it, and shows Tend correcting it and the ledger', async () => {
    const before = snapshot(EXAMPLE);
    const { code, out } = await quickstart(await freePort());
    expect(code, out).toBe(0);
    expectTheStory(out);
    // Nothing is written into the repository's example (its state lives in a temporary folder).
    expect(snapshot(EXAMPLE)).toEqual(before);
  }, 60_000);

  it('runs twice in a row and leaves the example folder as it found it, even with Tend state in it', async () => {
    // `tend apply examples/quickstart` (README) or an older quickstart leaves `.tend/` there; the
    // quickstart used to read `.tend` as an intent file (EISDIR) and copyExample copied the store.
    const checkout = scratchCheckout();
    mkdirSync(join(checkout.example, '.tend', 'cache'), { recursive: true });
    writeFileSync(join(checkout.example, '.tend', 'cache', 'sb.openapi.json'), '{}');
    const copy = mkdtempSync(join(tmpdir(), 'tend-copy-'));
    try {
      const before = snapshot(checkout.example);
      for (const run of [1, 2]) {
        const { code, out } = await quickstart(undefined, checkout.root);
        expect(code, `run ${run}:\n${out}`).toBe(0);
        expectTheStory(out);
      }
      expect(snapshot(checkout.example)).toEqual(before);
      copyExampleFiles(checkout.example, copy);
      expect(readdirSync(copy).sort()).toEqual(['app.yaml', 'arbitration.yaml', 'provider.yaml']);
    } finally {
      checkout.cleanup();
      rmSync(copy, { recursive: true, force: true });
    }
  }, 120_000);

  it('with port 7781 taken by another program, runs on a free port, says which, and never calls 7781', async () => {
    // If something else already holds 7781 (another sandbox), the case still holds: it is taken.
    const held = await hold(7781);
    try {
      const { code, out } = await quickstart();
      expect(code, out).toBe(0);
      const said =
        /Port 7781 is in use by another program \(perhaps another sandbox\); the sandbox listens on port (\d+) instead: (http:\/\/127\.0\.0\.1:\d+)/.exec(
          out,
        );
      expect(said, out).not.toBeNull();
      const [, port, url] = said!;
      expect(port).not.toBe('7781');
      expect(url).toBe(`http://127.0.0.1:${port}`);
      // The intent Tend runs points at that port.
      expect(out).toContain(`endpoint ${url})`);
      expectTheStory(out);
      if (held) expect(held.connections()).toBe(0);
    } finally {
      await new Promise<void>((r) => (held ? held.server.close(() => r()) : r()));
    }
  }, 60_000);
});
