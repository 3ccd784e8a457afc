import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Address, Operation } from '../core/index.js';
import { hashValue } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { EngineEvent } from './events.js';
import { observe } from './observe.js';
import { resolveDesired } from './planner.js';
import type { PassOptions } from './reconciler.js';
import { reconcilePass, tendActor } from './reconciler.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// Objects Tend created that the intent no longer explains must not be left behind (issue 9, item 2):
// the leftovers of a replace interrupted between its steps whose resource is then removed, and the
// object of a create that recovery gave up as superseded but that became visible later. The journal
// says Tend made them, so the normal plan deletes them. Against the in-process sandbox, sharing a
// fake clock with Tend (so "later" is the clock moving, not a sleep).

const INSTANCE = 'sb.instances/web' as Address;

/** A clock that moves only when someone sleeps on it (or a test moves it). */
function fakeClock(): Clock & { advance(ms: number): void } {
  let t = Date.parse('2026-01-01T00:00:00Z');
  return {
    now: () => new Date(t),
    sleep: (ms) => {
      t += Math.max(0, ms);
      return Promise.resolve();
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/** The shape of the test intent: a network, maybe an instance on it, maybe a volume on that. */
interface Shape {
  readonly instance?: { readonly image: string; readonly size?: string };
  readonly volume?: boolean;
  /** The address name of a bucket named `tt-shared` (its natural key). */
  readonly bucket?: string;
}

let sb: RunningSandbox;
let clock: ReturnType<typeof fakeClock>;
let root: string;
let dir: string;
let spec: string;

beforeAll(async () => {
  clock = fakeClock();
  sb = await startSandbox({
    port: 0,
    now: () => clock.now().getTime(),
    // Eventual consistency is switched on at run time below.
    consistentReads: false,
  });
  root = mkdtempSync(join(tmpdir(), 'tend-orphans-'));
  spec = resolve(import.meta.dirname, '../sandbox/openapi.json');
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
timeoutMs: 500
`,
    `kind: Resource
type: sb.networks
name: main
spec: { name: main, cidr: 10.3.0.0/16 }
`,
  ];
  if (shape.instance) {
    docs.push(`kind: Resource
type: sb.instances
name: web
spec:
  name: web-1
  network_id: \${sb.networks/main.id}
  image: ${shape.instance.image}
  size: ${shape.instance.size ?? 'small'}
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
name: ${shape.bucket}
spec: { name: tt-shared }
`);
  }
  writeFileSync(join(dir, 'intent.yaml'), docs.join('---\n'));
}

/** Opens the workspace as a fresh process would (after a kill, or a change of intent). */
async function withWorkspace<T>(shape: Shape, fn: (ws: Workspace) => Promise<T>): Promise<T> {
  writeIntent(shape);
  const ws = await openWorkspace({ dir, name: 'orph', env: { TEND_SPEC_DIRS: dirname(spec) } });
  try {
    return await fn(ws);
  } finally {
    await ws.close();
  }
}

function pass(events: EngineEvent[] = [], crash?: CrashHook): PassOptions {
  return {
    mode: 'apply',
    approveDestroy: true,
    prune: true,
    actor: tendActor(),
    clock,
    report: (e) => events.push(e),
    verifyTimeoutMs: 2000,
    visibilityWindowMs: 1000,
    runChecks: false,
    ...(crash ? { crash } : {}),
  };
}

/** A crash hook that stops the pass at a named point, as a kill there would (nothing after it runs). */
class Killed extends Error {}
function killAt(spec: string): CrashHook {
  let dead = false;
  return (when, point, action) => {
    if (dead || `${when}:${point}:${action}` === spec) {
      dead = true;
      throw new Killed(spec);
    }
  };
}

const live = (type: string) =>
  sb.sandbox.state
    .all()
    .filter((o) => o.type === type)
    .map((o) => o.id)
    .sort();

describe('the normal plan deletes what the journal says Tend created for a dropped address', () => {
  it.each([
    {
      kill: 'after:ledger:replace-create',
      reason: 'the replacement settled; the old object is the leftover',
    },
    {
      kill: 'after:twin:replace-create',
      reason: 'the replacement is remembered but step 1 is still pending',
    },
    {
      kill: 'after:journal:replace-create',
      reason: 'step 1 was journaled and never sent',
    },
  ])('a replace killed at $kill, then the resource removed ($reason)', async ({ kill }) => {
    await withWorkspace({ instance: { image: 'debian-12' } }, async (ws) => {
      const r = await reconcilePass(ws, pass());
      expect(r.outcomes.get(INSTANCE)?.state).toBe('converged');
    });
    await withWorkspace({ instance: { image: 'debian-13' } }, (ws) =>
      reconcilePass(ws, pass([], killAt(kill))),
    );
    expect(live('instances').length).toBeGreaterThanOrEqual(1);

    const events: EngineEvent[] = [];
    await withWorkspace({}, async (ws) => {
      await reconcilePass(ws, pass(events));
      const after = await observe(ws, { visibilityWindowMs: 1000, now: clock.now() });
      expect(after.orphans).toEqual([]);
      expect(after.duplicates).toEqual([]);
      expect(after.removed).toEqual([]);
      expect(await ws.store.unsettled()).toEqual([]);
    });
    expect(live('instances'), JSON.stringify(events, null, 1)).toEqual([]);
    expect(live('networks')).toHaveLength(1);
  });

  it('a replace killed between its steps, its volume and instance then removed together', async () => {
    await withWorkspace({ instance: { image: 'debian-12' }, volume: true }, (ws) =>
      reconcilePass(ws, pass()),
    );
    await withWorkspace({ instance: { image: 'debian-13' }, volume: true }, (ws) =>
      reconcilePass(ws, pass([], killAt('after:ledger:replace-create'))),
    );
    expect(live('instances')).toHaveLength(2);
    // One pass: the volume first, then both instances (the old one still carries the volume until
    // the volume is gone, and the platform refuses to delete an instance in use).
    await withWorkspace({}, (ws) => reconcilePass(ws, pass()));
    expect(live('volumes')).toEqual([]);
    expect(live('instances')).toEqual([]);
  });
});

describe('a create recovery gave up as superseded whose object shows up later', () => {
  /** Journals a create of the instance and sends it (the crashed process did), invisible for long. */
  async function crashedCreate(ws: Workspace, invisibleMs: number): Promise<Operation> {
    sb.sandbox.setFaults({ eventualConsistencyMs: invisibleMs });
    const decl = ws.intent.resources.find((r) => r.address === INSTANCE)!;
    const net = await observe(ws, { visibilityWindowMs: 0, now: clock.now() });
    const desired = resolveDesired(decl, (a) => net.objects.get(a));
    const op: Operation = {
      id: 'op-crashed-create',
      address: INSTANCE,
      type: 'sb.instances',
      action: 'create',
      desiredHash: hashValue(desired),
      marker: { workspace: ws.name, address: INSTANCE, op: 'op-crashed-create' },
      state: 'pending',
      createdAt: clock.now().toISOString(),
    };
    await ws.store.journal(op);
    const { provider, info } = ws.typeOf('sb.instances');
    await provider.create(info.name, desired, {
      idempotencyKey: op.id,
      marker: op.marker,
      actor: { actor: 'tend' },
    });
    // Visibility is fixed when an object is made: later objects are visible at once.
    sb.sandbox.setFaults({ eventualConsistencyMs: 0 });
    return op;
  }

  it('the resource removed meanwhile: the late object is deleted by the normal plan', async () => {
    await withWorkspace({}, (ws) => reconcilePass(ws, pass()));
    await withWorkspace({ instance: { image: 'debian-12' } }, (ws) => crashedCreate(ws, 60_000));
    await withWorkspace({}, async (ws) => {
      const events: EngineEvent[] = [];
      await reconcilePass(ws, pass(events));
      expect(events).toContainEqual(
        expect.objectContaining({
          kind: 'recovered',
          outcome: expect.stringMatching(/superseded/),
        }),
      );
    });
    expect(live('instances')).toHaveLength(1);
    clock.advance(60_000);
    await withWorkspace({}, async (ws) => {
      const seen = await observe(ws, { visibilityWindowMs: 1000, now: clock.now() });
      expect(seen.orphans).toEqual([]);
      expect(seen.removed.map((r) => r.address)).toEqual([INSTANCE]);
      await reconcilePass(ws, pass());
    });
    expect(live('instances')).toEqual([]);
  });

  it('the resource changed meanwhile: the late object is deleted, the new one kept', async () => {
    await withWorkspace({}, (ws) => reconcilePass(ws, pass()));
    await withWorkspace({ instance: { image: 'debian-12' } }, (ws) => crashedCreate(ws, 60_000));
    const changed: Shape = { instance: { image: 'debian-12', size: 'medium' } };
    let kept = '';
    await withWorkspace(changed, async (ws) => {
      const r = await reconcilePass(ws, pass());
      kept = r.outcomes.get(INSTANCE)?.objectId ?? '';
    });
    expect(kept).not.toBe('');
    clock.advance(60_000);
    expect(live('instances')).toHaveLength(2);
    await withWorkspace(changed, async (ws) => {
      const seen = await observe(ws, { visibilityWindowMs: 1000, now: clock.now() });
      expect(seen.duplicates).toEqual([]);
      expect(seen.objects.get(INSTANCE)?.id).toBe(kept);
      await reconcilePass(ws, pass());
    });
    expect(live('instances')).toEqual([kept]);
  });

  it('the resource unchanged: the late object is the address object (adopted, no second create)', async () => {
    await withWorkspace({}, (ws) => reconcilePass(ws, pass()));
    const shape: Shape = { instance: { image: 'debian-12' } };
    await withWorkspace(shape, (ws) => crashedCreate(ws, 3000));
    await withWorkspace(shape, async (ws) => {
      await reconcilePass(ws, pass());
      await reconcilePass(ws, pass());
    });
    expect(live('instances')).toHaveLength(1);
    expect(sb.sandbox.stats().creates).toBe(2);
  });
});

describe('a delete left pending whose natural-key id was reused since', () => {
  it('recovery does not delete the object another address now owns', async () => {
    // The bucket `tt-shared` was sb.buckets/old's; its delete reached the platform and the process
    // died before settling. Since then the name was taken again, by sb.buckets/new.
    await withWorkspace({ bucket: 'new' }, (ws) => reconcilePass(ws, pass()));
    await withWorkspace({ bucket: 'new' }, async (ws) => {
      const old = 'sb.buckets/old' as Address;
      await ws.store.journal({
        id: 'op-crashed-delete',
        address: old,
        type: 'sb.buckets',
        action: 'delete',
        objectId: 'tt-shared',
        desiredHash: hashValue({ delete: 'tt-shared' }),
        marker: { workspace: ws.name, address: old, op: 'op-crashed-delete' },
        state: 'pending',
        createdAt: clock.now().toISOString(),
      });
      const deletes = sb.sandbox.stats().deletes;
      const events: EngineEvent[] = [];
      await reconcilePass(ws, pass(events));
      expect(sb.sandbox.stats().deletes, JSON.stringify(events)).toBe(deletes);
      expect(await ws.store.unsettled()).toEqual([]);
    });
    expect(live('buckets')).toEqual(['tt-shared']);
  });
});
