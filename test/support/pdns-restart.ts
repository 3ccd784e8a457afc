// Killing a test's pdns_server the hard way and starting it again on the same database, for the
// suites that prove what Tend does when PowerDNS dies in the middle of an apply. Kept apart from
// pdns.ts: it finds the server by the pid file pdns_server writes in its socket directory.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PdnsHandle } from './pdns.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded) until `done()` holds, checking every 20 ms. */
async function until(done: () => boolean | Promise<boolean>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIGKILLs the server of `pdns` (no shutdown of any kind) and resolves once it is gone. */
export async function killPdns(pdns: PdnsHandle): Promise<void> {
  const pid = Number(readFileSync(join(pdns.configDir, 'pdns.pid'), 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid in ${pdns.configDir}/pdns.pid`);
  process.kill(pid, 'SIGKILL');
  await until(() => !alive(pid), `pdns_server ${pid} is gone`);
}

/**
 * Starts pdns_server again on the same configuration and database (same ports, same key) and
 * resolves once its API answers; `stop()` ends that process (before `pdns.stop()` removes the folder).
 */
export async function restartPdns(pdns: PdnsHandle): Promise<{ stop(): Promise<void> }> {
  const child = spawn('/usr/sbin/pdns_server', [`--config-dir=${pdns.configDir}`], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await until(async () => {
    try {
      const res = await fetch(`${pdns.apiUrl}/servers/localhost`, {
        headers: { 'X-API-Key': pdns.apiKey },
        signal: AbortSignal.timeout(1000),
      });
      await res.body?.cancel();
      return res.ok;
    } catch {
      return false;
    }
  }, 'the restarted pdns_server answers');
  return {
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
