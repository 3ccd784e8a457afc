import { readFileSync } from 'node:fs';
import { userAgent } from '../core/index.js';

let version: string | undefined;

/** Tend's version, from package.json (read once). */
export function tendVersion(): string {
  if (version !== undefined) return version;
  try {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version?: unknown };
    version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    version = '0.0.0';
  }
  return version;
}

/**
 * The User-Agent of this process's requests to platforms: `tend/<version> (worker <id>; pid <pid>)`,
 * the worker named by `TEND_WORKER_ID` in the context's environment when set (core `userAgent`
 * builds it; decision 0040).
 */
export function processUserAgent(
  env: Readonly<Record<string, string | undefined>>,
  pid: number,
): string {
  const worker = env['TEND_WORKER_ID'];
  return userAgent({ version: tendVersion(), pid, ...(worker ? { worker } : {}) });
}
