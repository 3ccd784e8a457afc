import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import type { PassOptions, PassResult } from './reconciler.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { Workspace } from './workspace.js';

// The arbitrate step in the loop, on a fake clock shared with an in-process sandbox (its audit
// entries carry that clock's time): holds end exactly at their TTL, a plan decides without writing,
// and an intent that comes to declare another value takes a field back from its actor.

const spec = resolve(import.meta.dirname, '../sandbox/openapi.json');
const clock = steppedClock(Date.parse('2026-11-25T12:00:00Z'));
let sb: RunningSandbox;
let root: string;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, now: () => clock.now().getTime() });
  root = mkdtempSync(join(tmpdir(), 'tend-arbitrate-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  sb.sandbox.reset();
  dir = mkdtempSync(join(root, 'intent-'));
});

function writeIntent(replicas: number, policy: string): void {
  writeFileSync(
    join(dir, 'intent.yaml'),
    `kind: Provider
name: sb
type: openapi
spec: ${spec}
endpoint: ${sb.url}
---
kind: Resource
type: sb.services
name: api
spec: { name: api, image: 'nginx:1.27', replicas: ${replicas} }
---
${policy}`,
  );
}

async function withWorkspace<T>(fn: (ws: Workspace) => Promise<T>): Promise<T> {
  const ws = await openWorkspace({
    dir,
    name: 'arb',
    env: { TEND_SPEC_DIRS: dirname(spec) },
  });
  try {
    return await fn(ws);
  } finally {
    await ws.close();
  }
}

const pass = (mode: 'plan' | 'apply' = 'apply'): PassOptions => ({
  mode,
  approveDestroy: false,
  prune: false,
  actor: tendActor(),
  clock,
  report: () => {},
  verifyTimeoutMs: 2000,
  visibilityWindowMs: 1000,
  runChecks: false,
});

const apply = (mode: 'plan' | 'apply' = 'apply'): Promise<PassResult> =>
  withWorkspace((ws) => reconcilePass(ws, pass(mode)));

const service = () => sb.sandbox.state.all().find((o) => o.type === 'services')!;

async function patch(body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await fetch(`${sb.url}/services/${service().id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const alice = {
  'X-Tend-Actor': 'alice',
  'X-Tend-Actor-Kind': 'human',
  'X-Tend-Motivation': 'incident:INC-42; ttl=10m',
};

describe('arbitrate in the loop (fake clock, in-process sandbox)', () => {
  it('a hold lasts exactly its TTL: kept a second before it ends, put back when it ends', async () => {
    writeIntent(
      2,
      `kind: Arbitration
name: oncall
rules:
  - when: { motivation: incident }
    decide: hold
    until: ttl
    then: enforce
`,
    );
    await apply();
    await patch({ replicas: 5 }, alice);
    const held = await apply();
    expect(held.arbitration?.decisions.map((d) => [d.field, d.decision.decision])).toEqual([
      ['replicas', 'hold'],
    ]);
    expect(held.outcomes.get('sb.services/api')?.state).toBe('drifted');

    await clock.sleep(10 * 60_000 - 1000);
    const still = await apply();
    expect(service().fields['replicas']).toBe(5);
    expect(still.arbitration?.decisions[0]).toMatchObject({ fresh: false });
    expect(still.arbitration?.recorded).toEqual([]);

    await clock.sleep(1000);
    const ended = await apply();
    expect(service().fields['replicas']).toBe(2);
    expect(ended.arbitration?.recorded.map((c) => c.decision?.decision)).toEqual(['enforce']);
    expect(ended.outcomes.get('sb.services/api')?.state).toBe('converged');
    const claims = await withWorkspace((ws) => ws.store.claims());
    expect(claims).toEqual([]);
  });

  it('a plan decides as a pass would, and writes nothing: no ledger entry, no claim, the feed read again', async () => {
    writeIntent(2, `kind: Arbitration\nname: hands-off\nrules:\n  - decide: yield\n`);
    await apply();
    const before = await withWorkspace((ws) => ws.store.changes());
    await patch({ replicas: 4 }, { 'X-Tend-Actor': 'hpa', 'X-Tend-Motivation': 'traffic' });
    for (let i = 0; i < 2; i++) {
      const planned = await apply('plan');
      expect(planned.arbitration?.decisions.map((d) => [d.by.actor, d.decision.decision])).toEqual([
        ['hpa', 'yield'],
      ]);
      expect(planned.plan.counts.update).toBe(0);
    }
    await withWorkspace(async (ws) => {
      expect(await ws.store.changes()).toEqual(before);
      expect(await ws.store.claims()).toEqual([]);
    });
    const applied = await apply();
    expect(applied.arbitration?.recorded.map((c) => [c.actor, c.decision?.decision])).toEqual([
      ['hpa', 'yield'],
    ]);
  });

  it('an intent that comes to declare another value takes a yielded field back', async () => {
    writeIntent(2, `kind: Arbitration\nname: hands-off\nrules:\n  - decide: yield\n`);
    await apply();
    await patch({ replicas: 4 }, { 'X-Tend-Actor': 'hpa', 'X-Tend-Motivation': 'traffic' });
    await apply();
    expect(service().fields['replicas']).toBe(4);
    expect((await withWorkspace((ws) => ws.store.claims())).map((c) => c.actor)).toEqual(['hpa']);

    writeIntent(3, `kind: Arbitration\nname: hands-off\nrules:\n  - decide: yield\n`);
    await apply();
    expect(service().fields['replicas']).toBe(3);
    expect(await withWorkspace((ws) => ws.store.claims())).toEqual([]);
  });
});
