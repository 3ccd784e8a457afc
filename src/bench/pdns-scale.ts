// The PowerDNS at scale figure (issue 12, item 5): a zone of N rrsets applied by the built `tend`
// CLI against a real pdns_server (Debian's pdns-server and pdns-backend-sqlite3), started here in a
// temporary directory on free ports of 127.0.0.1, every request counted by a proxy in front of it.
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';

const SERVER = '/usr/sbin/pdns_server';
const SCHEMA = '/usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql';
const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/** What one run measured, or why it could not run. */
export type PdnsScaleRun =
  | {
      readonly rrsets: number;
      /** The pass as `tend apply` reports it (observe, plan, execute, verify). */
      readonly passMs: number;
      /** The whole CLI run: node start, document and intent loading, the pass, closing. */
      readonly cliMs: number;
      readonly requests: number;
      readonly patches: number;
      readonly zoneReads: number;
      /** A plan afterwards: its zone reads, and whether it was empty. */
      readonly planZoneReads: number;
      readonly planEmpty: boolean;
    }
  | { readonly skipped: string };

function missing(): string | undefined {
  for (const f of [SERVER, SCHEMA, CLI]) {
    try {
      accessSync(f, constants.R_OK);
    } catch {
      return `${f} not found (install pdns-server and pdns-backend-sqlite3; npm run build)`;
    }
  }
  return undefined;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => done({ code, out }));
  });
}

/** Applies a zone of `rrsets` A rrsets to a fresh pdns_server and measures it. */
export async function runPdnsScale(workDir: string, rrsets: number): Promise<PdnsScaleRun> {
  const why = missing();
  if (why) return { skipped: why };
  const dir = mkdtempSync(join(workDir, 'pdns-'));
  let child: ChildProcess | undefined;
  let proxy: Server | undefined;
  try {
    const db = new Database(join(dir, 'pdns.sqlite3'));
    db.exec(readFileSync(SCHEMA, 'utf8'));
    db.close();
    const web = await freePort();
    const dns = await freePort();
    const key = randomBytes(16).toString('hex');
    writeFileSync(
      join(dir, 'pdns.conf'),
      [
        'launch=gsqlite3',
        `gsqlite3-database=${join(dir, 'pdns.sqlite3')}`,
        'local-address=127.0.0.1',
        `local-port=${dns}`,
        'webserver=yes',
        'webserver-address=127.0.0.1',
        `webserver-port=${web}`,
        'webserver-allow-from=127.0.0.0/8',
        'api=yes',
        `api-key=${key}`,
        'daemon=no',
        'guardian=no',
        'disable-syslog=yes',
        `socket-dir=${dir}`,
        'security-poll-suffix=',
        'loglevel=3',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    child = spawn(SERVER, [`--config-dir=${dir}`], { stdio: 'ignore' });
    const upstream = `http://127.0.0.1:${web}`;
    const deadline = performance.now() + 15_000;
    for (;;) {
      const ok = await fetch(`${upstream}/api/v1/servers/localhost`, {
        headers: { 'X-API-Key': key },
      }).then(
        async (r) => (await r.body?.cancel(), r.ok),
        () => false,
      );
      if (ok) break;
      if (performance.now() > deadline) throw new Error('pdns_server did not answer within 15 s');
      await new Promise((r) => setTimeout(r, 50));
    }

    const seen: { method: string; path: string }[] = [];
    proxy = createServer((req, res) => {
      seen.push({ method: req.method ?? '', path: req.url ?? '' });
      const out = httpRequest(
        { host: '127.0.0.1', port: web, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      req.pipe(out);
    });
    await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/v1`;

    const intent = join(dir, 'intent');
    cpSync(join(ROOT, 'examples', 'powerdns', 'specs'), join(intent, 'specs'), {
      recursive: true,
    });
    const docs = [
      `kind: Provider\nname: pdns\ntype: openapi\nspec: ./specs/powerdns-auth-4.7.3.swagger.yaml\noverlay: ./specs/pdns.overlay.yaml\nendpoint: ${endpoint}\nauth: { header: X-API-Key, fromEnv: PDNS_API_KEY }\nconcurrency: 1`,
      'kind: Resource\ntype: pdns.zones\nname: bench\nspec:\n  name: bench.test.\n  kind: Native\n  nameservers: [ns1.bench.test.]',
    ];
    for (let i = 0; i < rrsets; i++) {
      docs.push(
        `kind: Resource\ntype: pdns.rrsets\nname: h${i}\nspec:\n  zone_id: \${pdns.zones/bench.id}\n  name: h${i}.bench.test.\n  type: A\n  ttl: 300\n  records:\n    - content: 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      );
    }
    writeFileSync(join(intent, 'main.yaml'), `${docs.join('\n---\n')}\n`);
    const env = { PDNS_API_KEY: key };
    const zonePath = /\/zones\/bench\.test\.$/;
    const count = (method: string) =>
      seen.filter((r) => r.method === method && zonePath.test(r.path)).length;

    const t0 = performance.now();
    const apply = await run(['apply', intent], env);
    const cliMs = performance.now() - t0;
    const pass = /pass \d+ done in (\d+) ms/.exec(apply.out);
    if (apply.code !== 0 || !pass) {
      throw new Error(`tend apply exited ${apply.code}:\n${apply.out.slice(-2000)}`);
    }
    const measured = {
      rrsets,
      passMs: Number(pass[1]),
      cliMs,
      requests: seen.length,
      patches: count('PATCH'),
      zoneReads: count('GET'),
    };
    seen.splice(0);
    const plan = await run(['plan', intent], env);
    return {
      ...measured,
      planZoneReads: count('GET'),
      planEmpty: plan.code === 0 && /No changes\./.test(plan.out),
    };
  } finally {
    proxy?.closeAllConnections();
    proxy?.close();
    if (child && child.exitCode === null) {
      const exited = new Promise<void>((r) => child!.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
