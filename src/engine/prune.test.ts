import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, ObservedObject } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { EngineEvent } from './events.js';
import type { Observation } from './observe.js';
import { observe } from './observe.js';
import type { PrunePlan } from './prune.js';
import { executePrune, planPrune } from './prune.js';
import type { PassOptions } from './reconciler.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { TwinEntry } from '../store/index.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// `prune` deletes what carries this workspace's marker and the intent does not declare, only when
// asked, each delete through the journal; stateful ones only with approval.

const WS = 'pr';

// --- planPrune: pure, table-driven ---------------------------------------------------------------

const obj = (
  id: string,
  address: string,
  fields: Record<string, unknown> = {},
): ObservedObject => ({
  type: id.split('-')[0]!,
  id,
  fields: { id, ...fields },
  marker: { workspace: WS, address: address as Address },
});
const orphan = (type: string, o: ObservedObject) => ({ type, object: o });
const twinOf = (address: string, type: string, objectId: string, stateful: boolean): TwinEntry => ({
  address: address as Address,
  type,
  objectId,
  fields: {},
  stateful,
  dependsOn: [],
  observedAt: '2026-01-01T00:00:00Z',
});

type Obs = Pick<Observation, 'orphans' | 'removed' | 'objects' | 'twin'>;
const observation = (o: Partial<Obs>): Obs => ({
  orphans: o.orphans ?? [],
  removed: o.removed ?? [],
  objects: o.objects ?? new Map(),
  twin: o.twin ?? new Map(),
});

const net = obj('net-1', 'sb.networks/old');
const inst = obj('i-1', 'sb.instances/old', { network_id: 'net-1' });
const vol = obj('vol-1', 'sb.volumes/old', { instance_id: 'i-1' });

const PLANS: {
  name: string;
  reason: string;
  observation: Obs;
  approveDestroy: boolean;
  want: { toDelete: string[]; gated: [string, RegExp][] };
}[] = [
  {
    name: 'orphans in reference order',
    reason: 'what references another orphan is deleted first (the platform refuses otherwise)',
    observation: observation({
      orphans: [
        orphan('sb.networks', net),
        orphan('sb.instances', inst),
        orphan('sb.volumes', vol),
      ],
    }),
    approveDestroy: false,
    want: { toDelete: ['vol-1', 'i-1', 'net-1'], gated: [] },
  },
  {
    name: 'an orphan the store does not know is not stateful',
    reason: 'nothing records it was: it is deleted without --approve-destroy',
    observation: observation({ orphans: [orphan('sb.volumes', obj('vol-2', 'sb.volumes/x'))] }),
    approveDestroy: false,
    want: { toDelete: ['vol-2'], gated: [] },
  },
  {
    name: 'a removed stateful resource the store remembers, without approval',
    reason: 'the twin says it is stateful: gated, and what it uses is held with it',
    observation: observation({
      orphans: [orphan('sb.instances', inst)],
      removed: [
        {
          address: 'sb.volumes/old',
          type: 'sb.volumes',
          objectId: 'vol-1',
          stateful: true,
          dependsOn: [],
        },
      ],
      objects: new Map([['sb.volumes/old', vol]]),
      twin: new Map([['sb.volumes/old', twinOf('sb.volumes/old', 'sb.volumes', 'vol-1', true)]]),
    }),
    approveDestroy: false,
    want: {
      toDelete: [],
      gated: [
        ['vol-1', /stateful: approve with --approve-destroy/],
        ['i-1', /still used by sb\.volumes\/old/],
      ],
    },
  },
  {
    name: 'the same, approved',
    reason: '--approve-destroy lets both go, the volume first',
    observation: observation({
      orphans: [orphan('sb.instances', inst)],
      removed: [
        {
          address: 'sb.volumes/old',
          type: 'sb.volumes',
          objectId: 'vol-1',
          stateful: true,
          dependsOn: [],
        },
      ],
      objects: new Map([['sb.volumes/old', vol]]),
      twin: new Map([['sb.volumes/old', twinOf('sb.volumes/old', 'sb.volumes', 'vol-1', true)]]),
    }),
    approveDestroy: true,
    want: { toDelete: ['vol-1', 'i-1'], gated: [] },
  },
  {
    name: 'an orphan a declared resource still uses',
    reason: 'deleting it would break (or be refused): held',
    observation: observation({
      orphans: [orphan('sb.networks', net)],
      objects: new Map([
        ['sb.instances/web', obj('i-9', 'sb.instances/web', { network_id: 'net-1' })],
      ]),
    }),
    approveDestroy: true,
    want: { toDelete: [], gated: [['net-1', /still used by sb\.instances\/web/]] },
  },
  {
    name: "another workspace's object",
    reason: 'prune deletes only objects carrying this workspace marker',
    observation: observation({
      orphans: [
        orphan('sb.networks', {
          ...net,
          marker: { workspace: 'other', address: 'sb.networks/old' },
        }),
      ],
    }),
    approveDestroy: true,
    want: { toDelete: [], gated: [] },
  },
];

describe('planPrune', () => {
  it.each(PLANS)('$name: $reason', (c) => {
    const plan = planPrune({ name: WS }, c.observation, { approveDestroy: c.approveDestroy });
    expect(plan.toDelete.map((t) => t.id)).toEqual(c.want.toDelete);
    expect(plan.gated.map((g) => g.target.id)).toEqual(c.want.gated.map(([id]) => id));
    plan.gated.forEach((g, i) => expect(g.reason).toMatch(c.want.gated[i]![1]));
  });
});

// --- against the sandbox: lost store, journal protocol, crash --------------------------------------

function fakeClock(): Clock {
  let t = Date.parse('2026-01-01T00:00:00Z');
  return {
    now: () => new Date(t),
    sleep: (ms) => {
      t += Math.max(0, ms);
      return Promise.resolve();
    },
  };
}

interface Shape {
  /** Default true. */
  readonly instance?: boolean;
  readonly volume: boolean;
  readonly bucket: boolean;
}

let sb: RunningSandbox;
let clock: Clock;
let root: string;
let dir: string;
const spec = resolve(import.meta.dirname, '../sandbox/openapi.json');

beforeAll(async () => {
  clock = fakeClock();
  sb = await startSandbox({ port: 0, now: () => clock.now().getTime() });
  root = mkdtempSync(join(tmpdir(), 'tend-prune-'));
});
afterAll(async () => {
  await sb.close();
  rmSync(root, { recursive: true, force: true });
});
beforeEach(() => {
  sb.sandbox.reset();
  dir = mkdtempSync(join(root, 'intent-'));
});

function writeIntent(shape: Shape): void {
  const docs = [
    `kind: Provider
name: sb
type: openapi
spec: ${spec}
endpoint: ${sb.url}
`,
    `kind: Resource
type: sb.networks
name: main
spec: { name: main, cidr: 10.4.0.0/16 }
`,
  ];
  if (shape.instance !== false) {
    docs.push(`kind: Resource
type: sb.instances
name: web
spec:
  name: web-1
  network_id: \${sb.networks/main.id}
  image: debian-12
`);
  }
  if (shape.volume) {
    docs.push(`kind: Resource
type: sb.volumes
name: data
spec:
  name: web-data
  instance_id: \${sb.instances/web.id}
  size: 20
lifecycle: { stateful: true }
`);
  }
  if (shape.bucket) {
    docs.push(`kind: Resource
type: sb.buckets
name: assets
spec: { name: tend-prune-assets }
`);
  }
  writeFileSync(join(dir, 'intent.yaml'), docs.join('---\n'));
}

async function withWorkspace<T>(shape: Shape, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  writeIntent(shape);
  const ws = await openWorkspace({ dir, name: WS, env: { TEND_SPEC_DIRS: dirname(spec) } });
  try {
    return await fn(ws);
  } finally {
    await ws.close();
  }
}

const loseStore = () => rmSync(join(dir, '.tend'), { recursive: true, force: true });

function pass(prune = true): PassOptions {
  return {
    mode: 'apply',
    approveDestroy: true,
    prune,
    actor: tendActor(),
    clock,
    report: () => {},
    verifyTimeoutMs: 2000,
    visibilityWindowMs: 1000,
    runChecks: false,
  };
}

const see = (ws: Workspace) => observe(ws, { visibilityWindowMs: 1000, now: clock.now() });
const live = () =>
  sb.sandbox.state
    .all()
    .map((o) => `${o.type}/${o.id}`)
    .sort();

async function prune(
  ws: Workspace,
  plan: PrunePlan,
  crash?: CrashHook,
  events: EngineEvent[] = [],
) {
  return executePrune(ws, plan, {
    actor: tendActor('prune'),
    clock,
    report: (e) => events.push(e),
    ...(crash ? { crash } : {}),
  });
}

const FULL: Shape = { volume: true, bucket: true };
const SMALL: Shape = { volume: false, bucket: false };

describe('executePrune (sandbox)', () => {
  it('after the store is lost, removed resources are orphans: listed, left by apply, deleted by prune only', async () => {
    await withWorkspace(FULL, (ws) => reconcilePass(ws, pass()));
    const all = live();
    // The volume and the bucket are removed from the intent, and then the store is lost.
    loseStore();
    await withWorkspace(SMALL, async (ws) => {
      const seen = await see(ws);
      expect(seen.orphans.map((o) => o.object.marker?.address).sort()).toEqual([
        'sb.buckets/assets',
        'sb.volumes/data',
      ]);
      await reconcilePass(ws, pass());
      expect(live(), 'apply deletes no orphan').toEqual(all);

      const plan = planPrune(ws, await see(ws), { approveDestroy: false });
      // The store lost the volume's stateful flag: it is not stateful as far as prune knows.
      expect(plan.toDelete.map((t) => [t.address, t.stateful])).toEqual([
        ['sb.buckets/assets', false],
        ['sb.volumes/data', false],
      ]);
      const events: EngineEvent[] = [];
      const result = await prune(ws, plan, undefined, events);
      expect(result.deleted.map((t) => t.address)).toEqual([
        'sb.buckets/assets',
        'sb.volumes/data',
      ]);
      expect(result.failed).toEqual([]);
      expect(result.skipped).toEqual([]);
      expect(
        events.filter((e) => e.kind === 'op-done').map((e) => e.kind === 'op-done' && e.action),
      ).toEqual(['delete', 'delete']);

      // Journaled and recorded: settled deletes, ledger entries with motivation `prune`.
      const ops = await ws.store.operations();
      expect(ops.filter((o) => o.action === 'delete').map((o) => o.state)).toEqual([
        'settled',
        'settled',
      ]);
      const changes = await ws.store.changes();
      expect(
        changes.filter((c) => c.action === 'delete').map((c) => [c.address, c.motivation]),
      ).toEqual([
        ['sb.buckets/assets', { kind: 'prune' }],
        ['sb.volumes/data', { kind: 'prune' }],
      ]);
      expect((await see(ws)).orphans).toEqual([]);
    });
    expect(live()).toEqual(
      all.filter((o) => !o.startsWith('buckets/') && !o.startsWith('volumes/')),
    );
  });

  it('a removed stateful resource left by --no-prune needs --approve-destroy, and its twin entry goes with it', async () => {
    await withWorkspace(FULL, (ws) => reconcilePass(ws, pass()));
    await withWorkspace({ volume: false, bucket: true }, async (ws) => {
      await reconcilePass(ws, pass(false));
      const seen = await see(ws);
      expect(seen.removed.map((r) => r.address)).toEqual(['sb.volumes/data']);
      const gated = planPrune(ws, seen, { approveDestroy: false });
      expect(gated.toDelete).toEqual([]);
      expect(gated.gated.map((g) => [g.target.address, g.target.stateful])).toEqual([
        ['sb.volumes/data', true],
      ]);
      expect((await prune(ws, gated)).gated).toHaveLength(1);
      expect(live().some((o) => o.startsWith('volumes/'))).toBe(true);

      const approved = planPrune(ws, seen, { approveDestroy: true });
      const result = await prune(ws, approved);
      expect(result.deleted.map((t) => t.address)).toEqual(['sb.volumes/data']);
      expect(await ws.store.getTwin('sb.volumes/data')).toBeUndefined();
    });
    expect(live().some((o) => o.startsWith('volumes/'))).toBe(false);
  });

  it('a prune killed after journaling its delete is finished by the next pass, never lost', async () => {
    await withWorkspace(FULL, (ws) => reconcilePass(ws, pass()));
    loseStore();
    await withWorkspace({ volume: true, bucket: false }, async (ws) => {
      const plan = planPrune(ws, await see(ws), { approveDestroy: false });
      expect(plan.toDelete.map((t) => t.address)).toEqual(['sb.buckets/assets']);
      const result = await prune(ws, plan, (when, point, action) => {
        if (`${when}:${point}:${action}` === 'after:journal:delete') throw new Error('killed');
      });
      expect(result.failed.map((f) => f.message)).toEqual(['killed']);
      expect((await ws.store.unsettled()).map((o) => `${o.action} ${o.address}`)).toEqual([
        'delete sb.buckets/assets',
      ]);
      expect(live().some((o) => o.startsWith('buckets/'))).toBe(true);
    });
    await withWorkspace({ volume: true, bucket: false }, async (ws) => {
      await reconcilePass(ws, pass());
      expect(await ws.store.unsettled()).toEqual([]);
    });
    expect(live().some((o) => o.startsWith('buckets/'))).toBe(false);
  });

  it('skips an object that is already gone, and what a failed delete still uses', async () => {
    await withWorkspace(FULL, (ws) => reconcilePass(ws, pass()));
    loseStore();
    // Only the network stays declared: the instance, its volume and the bucket are orphans.
    await withWorkspace({ instance: false, volume: false, bucket: false }, async (ws) => {
      const plan = planPrune(ws, await see(ws), { approveDestroy: false });
      expect(plan.toDelete.map((t) => t.address)).toEqual([
        'sb.buckets/assets',
        'sb.volumes/data',
        'sb.instances/web',
      ]);
      // Someone deletes the bucket first; the platform refuses every DELETE for a while.
      sb.sandbox.state.remove('buckets', plan.toDelete[0]!.id);
      sb.sandbox.setFaults({ errorRate: 1, methods: ['DELETE'] });
      const result = await prune(ws, plan);
      sb.sandbox.setFaults({ errorRate: 0, methods: null });
      expect(result.deleted).toEqual([]);
      expect(result.skipped.map((s) => [s.target.address, s.reason])).toEqual([
        ['sb.buckets/assets', 'already gone'],
        ['sb.instances/web', 'not attempted: sb.volumes/data, which uses it, was not deleted'],
      ]);
      expect(result.failed.map((f) => f.target.address)).toEqual(['sb.volumes/data']);
      expect(live().filter((o) => !o.startsWith('networks/'))).toHaveLength(2);
    });
  });

  it('leaves an object whose marker changed since the plan (someone took it over)', async () => {
    await withWorkspace(FULL, (ws) => reconcilePass(ws, pass()));
    loseStore();
    await withWorkspace({ volume: true, bucket: false }, async (ws) => {
      const plan = planPrune(ws, await see(ws), { approveDestroy: false });
      expect(plan.toDelete.map((t) => t.address)).toEqual(['sb.buckets/assets']);
      const r = await fetch(`${sb.url}/buckets/${plan.toDelete[0]!.id}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tags: { owner: 'someone-else' } }),
      });
      expect(r.status).toBe(200);
      const result = await prune(ws, plan);
      expect(result.deleted).toEqual([]);
      expect(result.skipped.map((s) => s.reason)).toEqual([
        'its marker changed since it was observed; not deleted',
      ]);
    });
    expect(live().some((o) => o.startsWith('buckets/'))).toBe(true);
  });
});
