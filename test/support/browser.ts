import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

// The browser tests' harness (docs/web.md): Debian's chromium driven by playwright-core (never
// `playwright install`), and `tend serve` started as a user starts it. In CI (`CI=true`) a missing
// chromium fails the suite; elsewhere it is skipped with the reason.

export const CHROMIUM = process.env['TEND_CHROMIUM'] ?? '/usr/bin/chromium';
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Why the browser tests cannot run here, or undefined when they can. Throws in CI. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `no chromium at ${CHROMIUM} (apt-get install chromium, or set TEND_CHROMIUM)`;
  if (process.env['CI'] === 'true') throw new Error(`CI=true: ${reason}`);
  return reason;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** Where a test keeps its screenshots: test-artifacts/<name>/ (git-ignored). */
export function artifactsDir(name: string): string {
  const dir = join(ROOT, 'test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A screenshot of the page as step `n-what.png`, its path printed for whoever reads the log. */
export async function snap(page: Page, dir: string, name: string): Promise<string> {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}

export interface Served {
  readonly url: string;
  readonly child: ChildProcess;
  readonly log: string[];
  stop(): Promise<void>;
}

/** `tend serve <dir> --port 0 --log-format json …`, resolved once it listens. */
export async function startServe(
  dir: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<Served> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', dir, '--port', '0', '--log-format', 'json', ...args],
    { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const lines = createInterface({ input: child.stderr });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      log.push(line);
      try {
        const entry = JSON.parse(line) as { kind?: string; url?: string };
        if (entry.kind === 'listening' && entry.url) resolve(entry.url);
      } catch {
        // not JSON
      }
    });
    void exited.then((code) => reject(new Error(`tend serve exited ${code}: ${log.join('\n')}`)));
  });
  return {
    url,
    child,
    log,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
