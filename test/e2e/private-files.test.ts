import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { copyExample, runCli } from '../support/cli.js';
import { startSandboxProcess, type SandboxHandle } from '../support/sandbox-process.js';

// Files and servers closed by default, through the built `tend` command: `.tend/` is 0700 and every
// file in it 0600 after a real apply (even under umask 000), a looser one is tightened and reported,
// and a sandbox with an API key refuses its admin routes without it.

const KEY = 'private-files-key-4242';
const env = { QUICKSTART_ADMIN_PASSWORD: 'private-files-secret', SB_KEY: KEY };

/** `.tend/` and everything under it, as `relative path → mode` in octal. */
function modes(dir: string): Record<string, string> {
  const tend = join(dir, '.tend');
  const out: Record<string, string> = { '.tend': (statSync(tend).mode & 0o777).toString(8) };
  for (const f of readdirSync(tend, { recursive: true, encoding: 'utf8' })) {
    out[`.tend/${f}`] = (statSync(join(tend, f)).mode & 0o777).toString(8);
  }
  return out;
}

describe.skipIf(process.platform === 'win32')('private files and a closed sandbox (CLI)', () => {
  let sandbox: SandboxHandle;
  let ex: ReturnType<typeof copyExample> | undefined;

  beforeAll(async () => {
    sandbox = await startSandboxProcess(['--api-key-from-env', 'SB_KEY'], { env: { SB_KEY: KEY } });
  });
  afterEach(async () => {
    ex?.cleanup();
    ex = undefined;
    await sandbox.reset();
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function example() {
    ex = copyExample('quickstart', sandbox.url);
    ex.write(
      'provider.yaml',
      ex.read('provider.yaml').concat('auth: { header: X-API-Key, fromEnv: SB_KEY }\n'),
    );
    return ex;
  }

  it('after tend apply under umask 000, .tend/ is 0700 and each file in it 0600', async () => {
    const { dir } = example();
    const old = process.umask(0o000); // the tend process inherits it
    let r;
    try {
      r = await runCli(['apply', dir, '--no-checks'], { env });
    } finally {
      process.umask(old);
    }
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const got = modes(dir);
    // The store, the cached document and their directories (WAL files exist only while open).
    expect(got).toMatchObject({
      '.tend': '700',
      '.tend/tend.db': '600',
      '.tend/cache': '700',
      '.tend/cache/sb.openapi.json': '600',
    });
    for (const [path, mode] of Object.entries(got)) {
      const isDir = statSync(join(dir, path)).isDirectory();
      expect(mode, path).toBe(isDir ? '700' : '600');
    }
    expect(r.stderr).not.toContain('open to others');
  });

  it('a .tend/ left open by an older tend is tightened at the next apply, which says so', async () => {
    const { dir } = example();
    expect((await runCli(['apply', dir, '--no-checks'], { env })).code).toBe(0);
    chmodSync(join(dir, '.tend'), 0o755);
    chmodSync(join(dir, '.tend', 'tend.db'), 0o644);
    chmodSync(join(dir, '.tend', 'cache', 'sb.openapi.json'), 0o644);
    const r = await runCli(['apply', dir, '--no-checks'], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const got = modes(dir);
    expect(got).toMatchObject({
      '.tend': '700',
      '.tend/tend.db': '600',
      '.tend/cache': '700',
      '.tend/cache/sb.openapi.json': '600',
    });
    // Everything else below it too (the intent cache, .tend/cache/intent/*.json).
    for (const [path, mode] of Object.entries(got)) {
      const isDir = statSync(join(dir, path)).isDirectory();
      expect(mode, path).toBe(isDir ? '700' : '600');
    }
    expect(r.stderr).toContain(
      `tend: ${join(dir, '.tend')} was open to others (mode 0755); it is now 0700`,
    );
    expect(r.stderr).toContain(
      `tend: ${join(dir, '.tend', 'tend.db')} was open to others (mode 0644); it is now 0600`,
    );
  });

  it('the sandbox refuses /_sandbox/reset without its key (401) and does nothing', async () => {
    const { dir } = example();
    expect((await runCli(['apply', dir, '--no-checks'], { env })).code).toBe(0);
    const before = (await sandbox.objects()).length;
    expect(before).toBe(5);
    const bare = await fetch(`${sandbox.url}/_sandbox/reset`, { method: 'POST' });
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({
      code: 'unauthorized',
      message: 'missing or wrong X-API-Key header',
    });
    expect((await fetch(`${sandbox.url}/_sandbox/objects`)).status).toBe(401);
    expect(await sandbox.objects()).toHaveLength(before);
    await sandbox.reset(); // the harness sends the key
    expect(await sandbox.objects()).toEqual([]);
  });
});
