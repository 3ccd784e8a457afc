import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// The README's first command ends in `npm run quickstart`: run that script as a newcomer would (on a
// free port instead of 7781, so the test never collides with anything) and check it tells the story.

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

describe('npm run quickstart', () => {
  it('creates the app, lets alice change it, and shows Tend correcting it and the ledger', async () => {
    const port = await freePort();
    const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, 'scripts', 'quickstart.mjs')], {
        cwd: ROOT,
        env: { ...process.env, QUICKSTART_PORT: String(port), NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (c) => resolve({ code: c, out: text }));
    });
    const plain = stripVTControlCharacters(out);
    expect(code, plain).toBe(0);
    expect(plain).toMatch(/pass 1 done in \d+ ms: 5 converged/);
    expect(plain).toMatch(
      /! sb\.services\/api {2}updated by alice \(intent: availability, motivation: incident\): replicas 2 → 5, tags\.hotfix \(absent\) → "INC-42"/,
    );
    expect(plain).toMatch(
      /Tend put replicas back to 2 within \d+\.\d s; the tag it does not declare \(hotfix=INC-42\) was left alone/,
    );
    expect(plain).toMatch(/alice\s+audit\s+update sb\.services\/api/);
    expect(plain).toMatch(
      /tend\s+tend\s+update sb\.services\/api\s+\(consistency\/drift\)\s+replicas 5 → 2/,
    );
    expect(plain).toContain('ledger intact (7 entries, hash chain verified)');
  }, 60_000);
});
