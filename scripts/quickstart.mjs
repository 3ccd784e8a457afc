#!/usr/bin/env node
// The quickstart: start the sandbox platform, run `tend run` on examples/quickstart, then — a few
// seconds in — make an out-of-band change as another actor, so you can watch Tend notice it from
// the platform's audit feed, attribute it, and correct it. Stops by itself; --keep runs until Ctrl-C.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const port = Number(process.env.QUICKSTART_PORT ?? 7781);
const base = `http://127.0.0.1:${port}`;
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'tend-quickstart-'));
const store = join(work, 'tend.db');
// On another port (QUICKSTART_PORT), Tend manages a copy of the example pointed at that port.
let intentDir = 'examples/quickstart';
if (port !== 7781) {
  intentDir = join(work, 'quickstart');
  cpSync(join(root, 'examples', 'quickstart'), intentDir, { recursive: true });
  for (const f of readdirSync(intentDir)) {
    const p = join(intentDir, f);
    writeFileSync(p, readFileSync(p, 'utf8').replaceAll('127.0.0.1:7781', `127.0.0.1:${port}`));
  }
}
const children = [];
let stopping = false;
const say = (text) => process.stdout.write(`\n\x1b[1m\x1b[35m▶ ${text}\x1b[0m\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function start(args, env = {}, prefix = '') {
  const child = spawn(process.execPath, [cli, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const pipe = (stream, out) => {
    let buf = '';
    stream.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const l of lines) out.write(`${prefix}${l}\n`);
    });
  };
  pipe(child.stdout, process.stdout);
  pipe(child.stderr, process.stderr);
  return child;
}

async function api(method, path, body, headers = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function waitFor(what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function stopAll() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGINT');
}

async function main() {
  say(`Starting the sandbox platform on ${base} (tend sandbox --port ${port})`);
  start(['sandbox', '--port', String(port), '--log'], {}, '\x1b[2m[sandbox]\x1b[0m ');
  await waitFor('the sandbox', async () => (await fetch(`${base}/openapi.json`)).ok, 10_000);

  say(
    'Starting `tend run examples/quickstart`: it creates everything, verifies it, and keeps it correct',
  );
  const tend = start(['run', intentDir, '--store', store, '--interval', '10'], {
    QUICKSTART_ADMIN_PASSWORD: 'quickstart-only-secret',
  });
  const exited = new Promise((r) => tend.on('exit', r));
  // If Tend stops on its own (an error it printed above), there is nothing to wait for.
  const early = exited.then((code) => {
    if (!stopping) throw new Error(`tend run exited early (code ${code}); see its output above`);
  });
  early.catch(() => {});
  const orEarly = (p) => Promise.race([p, early]);

  const service = await orEarly(
    waitFor(
      'the service to exist and converge',
      async () => {
        const list = (await api('GET', '/services')).body;
        const svc = list.find((s) => s.name === 'api');
        const vols = (await api('GET', '/volumes')).body;
        return svc && vols.length > 0 ? svc : undefined;
      },
      20_000,
    ),
  );
  await sleep(2500);

  say(
    `Out-of-band change: alice (on call, motivation "incident") scales ${service.id} to 5 replicas and tags it hotfix=INC-42`,
  );
  const changedAt = Date.now();
  const r = await api(
    'PATCH',
    `/services/${service.id}`,
    { replicas: 5, tags: { ...service.tags, hotfix: 'INC-42' } },
    { 'X-Tend-Actor': 'alice', 'X-Tend-Intent': 'availability', 'X-Tend-Motivation': 'incident' },
  );
  if (r.status !== 200)
    throw new Error(`the out-of-band PATCH failed: ${r.status} ${JSON.stringify(r.body)}`);

  const fixed = await orEarly(
    waitFor(
      'Tend to correct the replica count',
      async () => {
        const s = (await api('GET', `/services/${service.id}`)).body;
        return s.replicas === 2 ? s : undefined;
      },
      10_000,
    ),
  );
  const secs = ((Date.now() - changedAt) / 1000).toFixed(1);
  say(
    `Tend put replicas back to 2 within ${secs} s; the tag it does not declare (hotfix=${fixed.tags.hotfix}) was left alone`,
  );
  await sleep(1000);

  if (keep) {
    say(
      'Still running (--keep). Try: curl -X PATCH ... or edit examples/quickstart/*.yaml. Ctrl-C stops.',
    );
    await exited;
    return;
  }
  stopping = true;
  tend.kill('SIGINT');
  await exited;
  say(`The change ledger (tend history --store ${store} ${intentDir})`);
  const history = start(['history', intentDir, '--store', store, '--limit', '20']);
  await new Promise((r2) => history.on('exit', r2));
  say('Done. Run `npm test` for the whole suite; README.md explains what you just saw.');
}

process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

main()
  .catch((e) => {
    process.stderr.write(`quickstart failed: ${e.message}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    stopAll();
    rmSync(work, { recursive: true, force: true });
  });
