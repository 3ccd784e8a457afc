#!/usr/bin/env node
// The quickstart: start the sandbox platform, run `tend run` on a copy of examples/quickstart, then
// — a few seconds in — make an out-of-band change as another actor, so you can watch Tend notice it
// from the platform's audit feed, attribute it, and correct it. Stops by itself; --keep runs until
// Ctrl-C.
//
// Everything the run writes (the intent copy, Tend's store, its copy of the platform's OpenAPI
// document) lives in one temporary folder that is removed at the end: the example folder is left
// exactly as it was, so a quickstart never changes what the next one (or `npm test`) finds there.
// The sandbox listens on 7781 (or QUICKSTART_PORT); when that port is taken by anything, it listens
// on a free port instead, says which, and the intent copy points there.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const example = join(root, 'examples', 'quickstart');
/** The address the example's Provider document names. */
const EXAMPLE_URL = 'http://127.0.0.1:7781';
const wantedPort = Number(process.env.QUICKSTART_PORT ?? 7781);
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'tend-quickstart-'));
const store = join(work, 'tend.db');
const intentDir = join(work, 'quickstart');
/** The sandbox's base URL, known once it listens. */
let base = '';
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

/**
 * Starts `tend sandbox` on `port` and resolves with its URL once it listens, or with `busy` when the
 * port is taken (by another sandbox or any other program: the sandbox cannot bind it). Any other
 * failure rejects with the sandbox's own message.
 */
function startSandbox(port) {
  const child = spawn(process.execPath, [cli, 'sandbox', '--port', String(port), '--log'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (/EADDRINUSE/.test(stderr)) resolve({ busy: true });
      else reject(new Error(`tend sandbox exited (code ${code}): ${stderr.trim()}`));
    });
    lines.once('line', (first) => {
      const url = /^sandbox listening on (http:\/\/\S+)$/.exec(first.trim())?.[1];
      if (!url) {
        child.kill('SIGINT');
        reject(new Error(`unexpected first line from tend sandbox: ${first}`));
        return;
      }
      children.push(child);
      // From now on its lines (one per mutation, --log) and errors are part of the show.
      lines.on('line', (l) => process.stdout.write(`\x1b[2m[sandbox]\x1b[0m ${l}\n`));
      child.stderr.on('data', (d) => process.stderr.write(d));
      process.stderr.write(stderr);
      resolve({ url });
    });
  });
}

/** Copies the example's intent files into `intentDir`, its Provider pointed at `url`. */
function copyIntent(url) {
  mkdirSync(intentDir);
  for (const f of readdirSync(example, { withFileTypes: true })) {
    if (!f.isFile() || !/\.ya?ml$/i.test(f.name)) continue;
    const text = readFileSync(join(example, f.name), 'utf8');
    writeFileSync(join(intentDir, f.name), text.replaceAll(EXAMPLE_URL, url));
  }
}

/** Runs `tend …` to the end and resolves with its stdout. */
function capture(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

function stopAll() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGINT');
}

async function main() {
  say(`Starting the sandbox platform (tend sandbox --port ${wantedPort})`);
  let sandbox = await startSandbox(wantedPort);
  if (sandbox.busy) {
    // Something already answers there (maybe another quickstart): never manage what it is.
    sandbox = await startSandbox(0);
    if (sandbox.busy) throw new Error('could not start the sandbox on a free port');
    const port = new URL(sandbox.url).port;
    say(
      `Port ${wantedPort} is in use by another program (perhaps another sandbox); the sandbox listens on port ${port} instead: ${sandbox.url}`,
    );
  } else {
    say(`The sandbox listens on ${sandbox.url}`);
  }
  base = sandbox.url;
  copyIntent(base);
  await waitFor('the sandbox', async () => (await fetch(`${base}/openapi.json`)).ok, 10_000);

  say(
    `Starting \`tend run\` on a copy of examples/quickstart (${intentDir}, endpoint ${base}): it creates everything, verifies it, and keeps it correct`,
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

  say(
    'The autoscaler (actor hpa, a controller) sees a traffic spike and raises the service to 4 replicas, saying why: motivation traffic, for 10 minutes (tend sandbox actor autoscaler)',
  );
  const actor = start([
    'sandbox',
    'actor',
    'autoscaler',
    '--service',
    'api',
    '--load',
    '400',
    '--ref',
    'spike on api',
    '--ttl',
    '10m',
    '--url',
    base,
  ]);
  const actorCode = await new Promise((r2) => actor.on('exit', r2));
  if (actorCode !== 0) throw new Error(`tend sandbox actor autoscaler exited ${actorCode}`);
  const decided = await orEarly(
    waitFor(
      "Tend's decision about the autoscaler's change",
      async () => {
        const h = JSON.parse(
          await capture(['history', intentDir, '--store', store, '--json', '--actor', 'hpa']),
        );
        return h.changes.find((c) => c.decision)?.decision;
      },
      10_000,
    ),
  );
  await sleep(1500);
  const still = (await api('GET', `/services/${service.id}`)).body.replicas;
  say(
    `Tend decided "${decided.decision}" by the workspace's Arbitration policy (examples/quickstart/arbitration.yaml): ${decided.reason}. Replicas are ${still}.`,
  );

  if (keep) {
    say(
      `Still running (--keep) against ${base}. Try: curl ${base}/services, or npx tend status ${intentDir} --store ${store}. Ctrl-C stops (and removes ${work}).`,
    );
    await exited;
    return;
  }
  stopping = true;
  tend.kill('SIGINT');
  await exited;
  say(`The change ledger (npx tend history ${intentDir} --store ${store})`);
  const history = start(['history', intentDir, '--store', store, '--limit', '20']);
  await new Promise((r2) => history.on('exit', r2));
  say(
    `Every entry is signed with your ledger key (npx tend ledger verify ${intentDir} --store ${store})`,
  );
  const verify = start(['ledger', 'verify', intentDir, '--store', store]);
  await new Promise((r2) => verify.on('exit', r2));
  say('Done. Run `npm test` for the whole suite; README.md explains what you just saw.');
}

process.on('SIGINT', () => {
  stopAll();
  rmSync(work, { recursive: true, force: true });
  process.exit(130);
});

main()
  .catch((e) => {
    process.stderr.write(`quickstart failed: ${e.message}\n`);
    process.exitCode = 1;
  })
  .finally(async () => {
    // Children first (Tend may still hold the store open), then the temporary folder.
    const alive = children.filter((c) => c.exitCode === null && c.signalCode === null);
    const gone = Promise.all(alive.map((c) => new Promise((r) => c.once('exit', r))));
    stopAll();
    await Promise.race([gone, sleep(5000)]);
    rmSync(work, { recursive: true, force: true });
  });
