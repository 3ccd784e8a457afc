import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Provider } from '../core/index.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock, systemClock } from './clock.js';
import type { PassResult } from './reconciler.js';
import { reconcilePass, tendActor } from './reconciler.js';
import { runContinuously } from './runner.js';
import type { Workspace } from './workspace.js';

// A focused pass (issue 13, item 1): an audit-feed event re-reads the object it names (one GET) and
// re-plans that resource and what it references, not the workspace; anything only a full
// observation can sort out sends the pass back to a full one. The platform is the real sandbox; the
// provider is wrapped only to count what Tend asks of it.

const SPEC = resolve(import.meta.dirname, '../sandbox/openapi.json');
const NETWORK = 'sb.networks/main' as Address;
const service = (n: number) => `sb.services/api${n}` as Address;
const SERVICES = 5;

let sb: RunningSandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'tend-focus-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One network and SERVICES services on it. */
function intentText(): string {
  const parts = [
    `kind: Provider
name: sb
type: openapi
spec: ${SPEC}
endpoint: ${sb.url}
---
kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: 10.20.0.0/16`,
  ];
  for (let i = 0; i < SERVICES; i++) {
    parts.push(`kind: Resource
type: sb.services
name: api${i}
spec:
  name: api${i}
  image: nginx:1.27
  replicas: 2
  network_id: \${sb.networks/main.id}`);
  }
  return parts.join('\n---\n') + '\n';
}

/** Every call Tend makes to the provider, as `<method> <type>`. */
function counting(real: Provider, calls: string[]): Provider {
  return {
    ...real,
    name: real.name,
    describe: () => real.describe(),
    list: (type, signal) => (calls.push(`list ${type}`), real.list(type, signal)),
    read: (type, id, signal) => (calls.push(`read ${type}`), real.read(type, id, signal)),
    create: (type, d, ctx) => (calls.push(`create ${type}`), real.create(type, d, ctx)),
    update: (type, id, d, c, ctx) => (
      calls.push(`update ${type}`),
      real.update(type, id, d, c, ctx)
    ),
    delete: (type, id, ctx) => (calls.push(`delete ${type}`), real.delete(type, id, ctx)),
    evaluate: (type, c, d) => real.evaluate(type, c, d),
    ...(real.changes ? { changes: real.changes.bind(real) } : {}),
    ...(real.find ? { find: real.find.bind(real) } : {}),
    ...(real.normalize ? { normalize: real.normalize.bind(real) } : {}),
  };
}

const passOptions = {
  mode: 'apply',
  approveDestroy: false,
  prune: true,
  actor: tendActor('drift'),
  report: () => {},
  verifyTimeoutMs: 2000,
  visibilityWindowMs: 0,
  runChecks: false,
} as const;

let opened: Workspace;
let ws: Workspace;
let calls: string[];

beforeEach(async () => {
  sb.sandbox.reset();
  const intent = mkdtempSync(join(dir, 'intent-'));
  writeFileSync(join(intent, 'intent.yaml'), intentText());
  opened = await openWorkspace({
    dir: intent,
    name: 'focus',
    env: { TEND_SPEC_DIRS: dirname(SPEC) },
  });
  calls = [];
  const provider = counting(opened.providers.get('sb')!, calls);
  ws = {
    ...opened,
    providers: new Map([['sb', provider]]),
    typeOf: (type) => ({ provider, info: opened.typeOf(type).info }),
  };
  const first = await reconcilePass(ws, { ...passOptions, clock: steppedClock() });
  expect(first.focused).toBeUndefined();
  expect([...first.outcomes.values()].every((o) => o.state === 'converged')).toBe(true);
  // Tend's own writes are in the feed too; a full pass moves the cursor past them.
  await reconcilePass(ws, { ...passOptions, clock: steppedClock() });
  calls.length = 0;
  return async () => {
    await opened.close();
  };
});

/** Changes a service out of band, as `alice`, through the sandbox's HTTP API. */
async function hotfix(n: number, body: Record<string, unknown>, method = 'PATCH'): Promise<void> {
  const id = (await ws.store.getTwin(service(n)))!.objectId;
  const res = await fetch(`${sb.url}/services/${id}`, {
    method,
    headers: { 'content-type': 'application/json', 'X-Tend-Actor': 'alice' },
    ...(method === 'PATCH' ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.ok).toBe(true);
}

const focusedPass = (): Promise<PassResult> =>
  reconcilePass(ws, { ...passOptions, focused: true, clock: steppedClock() });

describe('a focused pass re-reads and re-plans only what the audit feed names', () => {
  it('an out-of-band update: one GET, no list, the one resource corrected and the change attributed', async () => {
    await hotfix(3, { replicas: 7 });
    const result = await focusedPass();
    expect(result.focused).toBe(true);
    expect(calls.filter((c) => c.startsWith('list'))).toEqual([]);
    // One read to observe it, one to verify the correction.
    expect(calls.sort()).toEqual(['read services', 'read services', 'update services']);
    expect(result.plan.steps.map((s) => `${s.kind} ${s.address}`)).toEqual([
      `update ${service(3)}`,
    ]);
    // The network it references was planned from Tend's record only: not read, not acted on.
    expect([...result.outcomes.keys()]).toEqual([service(3)]);
    expect(result.outcomes.has(NETWORK)).toBe(false);
    expect(result.arbitration?.recorded.map((c) => `${c.actor} ${c.action} ${c.address}`)).toEqual([
      `alice update ${service(3)}`,
    ]);
    const live = sb.sandbox.state.all().filter((o) => o.type === 'services');
    expect(live.map((o) => o.fields['replicas'])).toEqual([2, 2, 2, 2, 2]);
  });

  it('events that arrive together are handled in one focused pass', async () => {
    await hotfix(1, { replicas: 4 });
    await hotfix(4, { replicas: 9 });
    const result = await focusedPass();
    expect(result.focused).toBe(true);
    expect(result.plan.steps.map((s) => s.address).sort()).toEqual([service(1), service(4)]);
    expect(calls.filter((c) => c.startsWith('list'))).toEqual([]);
  });

  it('an out-of-band delete: a full pass runs instead, which creates the object again', async () => {
    await hotfix(2, {}, 'DELETE');
    const result = await focusedPass();
    // Someone may have made a replacement since: only listing can tell, so nothing is created blind.
    expect(result.focused).toBeUndefined();
    expect(calls.filter((c) => c.startsWith('list')).length).toBeGreaterThan(0);
    expect(
      result.plan.steps.filter((s) => s.kind !== 'noop').map((s) => `${s.kind} ${s.address}`),
    ).toEqual([`create ${service(2)}`]);
    expect(result.arbitration?.recorded.map((c) => `${c.actor} ${c.action} ${c.address}`)).toEqual([
      `alice delete ${service(2)}`,
    ]);
  });

  it('nothing new in the feed: a full pass runs instead (every type listed)', async () => {
    const result = await focusedPass();
    expect(result.focused).toBeUndefined();
    expect(calls.filter((c) => c.startsWith('list')).length).toBeGreaterThan(0);
  });

  it('with unsettled operations in the journal: a full pass runs instead, recovery first', async () => {
    await hotfix(0, { replicas: 5 });
    await ws.store.journal({
      id: 'op-unsettled',
      address: service(0),
      type: 'sb.services',
      action: 'update',
      objectId: (await ws.store.getTwin(service(0)))!.objectId,
      desiredHash: 'h',
      marker: { workspace: 'focus', address: service(0) },
      state: 'pending',
      createdAt: new Date(0).toISOString(),
    });
    const result = await focusedPass();
    expect(result.focused).toBeUndefined();
    expect(calls.filter((c) => c.startsWith('list')).length).toBeGreaterThan(0);
  });
});

describe('the continuous loop runs focused passes between full ones', () => {
  it('a feed event wakes a focused pass; the interval still brings a full pass', async () => {
    const passes: { pass: number; focused: boolean; trigger: string }[] = [];
    const triggers: string[] = [];
    const abort = new AbortController();
    const loop = runContinuously(
      ws,
      {
        ...passOptions,
        clock: systemClock,
        report: (e) => {
          if (e.kind === 'pass-start') triggers.push(e.trigger);
        },
        intervalMs: 1500,
        feedWaitMs: 100,
        maxPasses: 3,
        onPass: (p) => {
          passes.push({
            pass: p.pass,
            focused: p.ok && p.result.focused === true,
            trigger: triggers.at(-1)!,
          });
          // After the first (full) pass, someone changes a service.
          if (p.pass === 1) void hotfix(0, { replicas: 6 });
        },
      },
      abort.signal,
    );
    const outcome = await loop;
    expect(outcome.passes).toBe(3);
    expect(passes.map((p) => [p.pass, p.focused])).toEqual([
      [1, false],
      [2, true],
      [3, false],
    ]);
    expect(passes[1]!.trigger).toMatch(/^audit: alice updated sb\.services /);
    // The full pass comes an interval after the last full one, not after the focused one.
    expect(passes[2]!.trigger).toBe('interval');
    const live = sb.sandbox.state.all().filter((o) => o.fields['name'] === 'api0');
    expect(live[0]?.fields['replicas']).toBe(2);
  });

  it('with incremental: false every pass is full', async () => {
    const passes: boolean[] = [];
    await runContinuously(
      ws,
      {
        ...passOptions,
        clock: systemClock,
        intervalMs: 60_000,
        feedWaitMs: 100,
        maxPasses: 2,
        incremental: false,
        onPass: (p) => {
          passes.push(p.ok && p.result.focused === true);
          if (p.pass === 1) void hotfix(0, { replicas: 6 });
        },
      },
      new AbortController().signal,
    );
    expect(passes).toEqual([false, false]);
  });
});

describe('the continuous loop holds one pass in memory at a time', () => {
  it("a finished pass's observation is not kept alive while the next pass runs", async () => {
    // A full collection on demand, to see what the loop still references (issue 13: the previous
    // pass's observation, plan and outcomes were live through the next pass, a few KB per resource).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let first: WeakRef<object> | undefined;
    const seen: boolean[] = [];
    await runContinuously(
      ws,
      {
        ...passOptions,
        clock: systemClock,
        intervalMs: 10,
        feedWaitMs: 100,
        maxPasses: 2,
        incremental: false,
        report: (e) => {
          if (e.kind !== 'observed' || first === undefined) return;
          gc();
          seen.push(first.deref() !== undefined);
        },
        onPass: (p) => {
          if (p.pass === 1 && p.ok) first = new WeakRef(p.result.observation);
        },
      },
      new AbortController().signal,
    );
    // Observed in pass 2, after a collection: pass 1's observation is gone.
    expect(seen).toEqual([false]);
  });
});
