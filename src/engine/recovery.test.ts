import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, ObservedObject, Operation } from '../core/index.js';
import { hashValue } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import type { EngineEvent } from './events.js';
import { resolveDesired } from './planner.js';
import { observe } from './observe.js';
import { tendActor, reconcilePass } from './reconciler.js';
import { recoverJournal, resolvesLocally } from './recovery.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// Recovery of a create whose outcome is unknown (DESIGN.md §4, step 4), against the real sandbox:
// with an idempotency key a resend is safe at once; without one, Tend waits out the platform's
// consistency window and looks again before it resends. The sandbox and Tend share a fake clock, so
// "waiting" is the clock moving, and how far it moved is part of what is checked.

const WINDOW_MS = 5000;
const INVISIBLE_MS = 2000;
const ADDRESS = 'sb.networks/main' as Address;

const fakeClock = steppedClock;

let sb: RunningSandbox;
let clock: ReturnType<typeof fakeClock>;
let dir: string;
const docs: Record<'keyed' | 'unkeyed', string> = { keyed: '', unkeyed: '' };

beforeAll(async () => {
  clock = fakeClock();
  sb = await startSandbox({
    port: 0,
    now: () => clock.now().getTime(),
    // Eventual consistency is switched on at run time below.
    consistentReads: false,
  });
  dir = mkdtempSync(join(tmpdir(), 'tend-recovery-'));
  const served = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../sandbox/openapi.json'), 'utf8'),
  ) as { paths: Record<string, Record<string, { parameters?: { $ref?: string }[] }>> };
  docs.keyed = join(dir, 'keyed.json');
  writeFileSync(docs.keyed, JSON.stringify(served));
  // The same API, but its creates take no Idempotency-Key: the types fall back to marker identity.
  for (const item of Object.values(served.paths)) {
    const post = item['post'];
    if (post?.parameters) {
      post.parameters = post.parameters.filter((p) => !p.$ref?.endsWith('/IdempotencyKey'));
    }
  }
  docs.unkeyed = join(dir, 'unkeyed.json');
  writeFileSync(docs.unkeyed, JSON.stringify(served));
});
afterAll(async () => {
  await sb.close();
  rmSync(dir, { recursive: true, force: true });
});

async function workspace(doc: string, cidr: string): Promise<Workspace> {
  const intent = mkdtempSync(join(dir, 'intent-'));
  writeFileSync(
    join(intent, 'intent.yaml'),
    `kind: Provider
name: sb
type: openapi
spec: ${doc}
endpoint: ${sb.url}
---
kind: Resource
type: sb.networks
name: main
spec:
  name: main
  cidr: ${cidr}
`,
  );
  return openWorkspace({ dir: intent, name: 'rec', env: { TEND_SPEC_DIRS: dir } });
}

/** Journals the create a crashed Tend would have left pending, as it would have written it. */
async function pendingCreate(ws: Workspace, desiredHash?: string): Promise<Operation> {
  const decl = ws.intent.resources[0]!;
  const op: Operation = {
    id: 'op-crashed-1',
    address: ADDRESS,
    type: 'sb.networks',
    action: 'create',
    desiredHash: desiredHash ?? hashValue(resolveDesired(decl, () => undefined)),
    marker: { workspace: ws.name, address: ADDRESS, op: 'op-crashed-1' },
    state: 'pending',
    createdAt: clock.now().toISOString(),
  };
  await ws.store.journal(op);
  return op;
}

interface Case {
  readonly name: string;
  readonly reason: string;
  readonly doc: 'keyed' | 'unkeyed';
  /** Whether the crashed process's create reached the platform (and is not visible yet). */
  readonly sentBeforeCrash: boolean;
  /** The intent changed since the operation was journaled. */
  readonly superseded?: boolean;
  readonly want: {
    readonly state: 'settled' | 'failed';
    readonly objects: number;
    /** How far the clock moved: [at least, less than]. */
    readonly waited: readonly [number, number];
    readonly outcome: RegExp;
  };
}

const CASES: Case[] = [
  {
    name: 'keyed, never sent',
    reason: 'a resend with the same key cannot make a second object, so it is sent at once',
    doc: 'keyed',
    sentBeforeCrash: false,
    want: {
      state: 'settled',
      objects: 1,
      waited: [0, 1],
      outcome: /resent with the same idempotency key/,
    },
  },
  {
    name: 'keyed, sent and not visible yet',
    reason: 'the resend at once is answered with the first object (a replay), not a second one',
    doc: 'keyed',
    sentBeforeCrash: true,
    want: {
      state: 'settled',
      objects: 1,
      waited: [0, 1],
      outcome: /resent with the same idempotency key/,
    },
  },
  {
    name: 'unkeyed, sent and not visible yet',
    reason:
      'without a key Tend keeps looking within the window and adopts the object when it shows',
    doc: 'unkeyed',
    sentBeforeCrash: true,
    want: { state: 'settled', objects: 1, waited: [INVISIBLE_MS, WINDOW_MS], outcome: /adopted/ },
  },
  {
    name: 'unkeyed, never sent',
    reason: 'without a key the create is resent only once the whole window has passed',
    doc: 'unkeyed',
    sentBeforeCrash: false,
    want: {
      state: 'settled',
      objects: 1,
      waited: [WINDOW_MS, WINDOW_MS + 1],
      outcome: /not found after the consistency window; resent/,
    },
  },
  {
    name: 'keyed, never sent, intent changed since',
    reason: 'a superseded create is given up only after the window, so a late object is adopted',
    doc: 'keyed',
    sentBeforeCrash: false,
    superseded: true,
    want: {
      state: 'failed',
      objects: 0,
      waited: [WINDOW_MS, WINDOW_MS + 1],
      outcome: /superseded/,
    },
  },
];

describe('recoverJournal: a create left pending by a crash', () => {
  it.each(CASES)('$name: $reason', async (c) => {
    sb.sandbox.reset();
    sb.sandbox.setFaults({ eventualConsistencyMs: INVISIBLE_MS });
    const ws = await workspace(docs[c.doc], '10.1.0.0/16');
    try {
      const op = await pendingCreate(
        ws,
        c.superseded ? hashValue({ before: 'a change' }) : undefined,
      );
      if (c.sentBeforeCrash) {
        const { provider, info } = ws.typeOf('sb.networks');
        await provider.create(
          info.name,
          { name: 'main', cidr: '10.1.0.0/16' },
          { idempotencyKey: op.id, marker: op.marker, actor: { actor: 'tend' } },
        );
      }
      const createsBefore = sb.sandbox.stats().creates;
      const events: EngineEvent[] = [];
      const t0 = clock.elapsed();
      const n = await recoverJournal(
        ws,
        new Map(),
        { actor: 'tend' },
        clock,
        (e) => events.push(e),
        undefined,
        { consistencyWindowMs: WINDOW_MS },
      );
      const waited = clock.elapsed() - t0;

      expect(n).toBe(1);
      const outcome = events.find((e) => e.kind === 'recovered');
      expect(outcome).toMatchObject({
        kind: 'recovered',
        outcome: expect.stringMatching(c.want.outcome),
      });
      expect(waited).toBeGreaterThanOrEqual(c.want.waited[0]);
      expect(waited).toBeLessThan(c.want.waited[1]);
      const objects = sb.sandbox.state.all();
      expect(objects).toHaveLength(c.want.objects);
      // Never created twice: the platform made at most the one object the crashed process sent.
      expect(sb.sandbox.stats().creates).toBe(c.sentBeforeCrash ? 1 : c.want.objects);
      if (c.sentBeforeCrash) expect(sb.sandbox.stats().creates).toBe(createsBefore);
      const settled = await ws.store.getOperation(op.id);
      expect(settled?.state).toBe(c.want.state);
      if (c.want.state === 'settled') {
        expect(settled?.objectId).toBe(objects[0]!.id);
        expect((await ws.store.getTwin(ADDRESS))?.objectId).toBe(objects[0]!.id);
      }
      expect(await ws.store.unsettled()).toEqual([]);
    } finally {
      await ws.close();
    }
  });
});

/** Thrown by the crash hook: the pass stops as a kill -9 would, after the platform answered. */
class Interrupted extends Error {}

/**
 * A workspace of `count` networks whose creates the platform carried out but Tend never settled
 * (a crash right before each twin write), plus a pending update of one of them journaled by hand.
 */
async function crashedWorkspace(name: string, count: number): Promise<Workspace> {
  const intent = mkdtempSync(join(dir, `many-${name}-`));
  const resources = Array.from(
    { length: count },
    (_, i) => `---
kind: Resource
type: sb.networks
name: ${name}-${i}
spec:
  name: ${name}-${i}
  cidr: 10.${i}.0.0/16
`,
  ).join('');
  writeFileSync(
    join(intent, 'intent.yaml'),
    `kind: Provider\nname: sb\ntype: openapi\nspec: ${docs.keyed}\nendpoint: ${sb.url}\n${resources}`,
  );
  const ws = await openWorkspace({ dir: intent, name, env: { TEND_SPEC_DIRS: dir } });
  let skipped = false;
  await reconcilePass(ws, {
    mode: 'apply',
    approveDestroy: false,
    prune: false,
    actor: tendActor(),
    clock,
    report: () => {},
    verifyTimeoutMs: 1000,
    visibilityWindowMs: 0,
    runChecks: false,
    crash: (when, point, action) => {
      // The first create is not even journaled (nothing sent); the others reach the platform.
      if (when === 'before' && point === 'journal' && action === 'create' && !skipped) {
        skipped = true;
        throw new Interrupted();
      }
      if (when === 'before' && point === 'twin' && action === 'create') throw new Interrupted();
    },
  }).catch((e: unknown) => {
    if (!(e instanceof Interrupted)) throw e;
  });
  return ws;
}

/** What recovery left, with the workspace's name taken out so that two workspaces compare. */
async function recoveredState(ws: Workspace, events: readonly EngineEvent[]) {
  const plain = (s: string) => s.replaceAll(ws.name, 'W').replace(/(net|op)-[\w-]+/g, '$1-x');
  const outcomes = events
    .flatMap((e) => (e.kind === 'recovered' ? [`${plain(e.address)}: ${plain(e.outcome)}`] : []))
    .sort();
  const ops = (await ws.store.operations())
    .map((o) => `${plain(o.address)} ${o.action} ${o.state}`)
    .sort();
  const twin = (await ws.store.listTwin()).map(
    (t) => `${plain(t.address)} ${String(t.fields['cidr'])}`,
  );
  const ledger = (await ws.store.changes())
    .map((c) => `${plain(c.address ?? '')} ${c.action} ${c.fields.join(',')}`)
    .sort();
  return { outcomes, ops, twin, ledger, pending: (await ws.store.unsettled()).length };
}

describe('recoverJournal: many operations at once', () => {
  it('resolves exactly what one-at-a-time recovery resolves, local and remote alike', async () => {
    sb.sandbox.reset();
    sb.sandbox.setFaults({ eventualConsistencyMs: 0 });
    const COUNT = 40;
    const run = async (name: string, concurrency?: { local: number; remote: number }) => {
      const ws = await crashedWorkspace(name, COUNT);
      try {
        const pending = await ws.store.unsettled();
        expect(pending).toHaveLength(COUNT - 1);
        // The create that was never sent, journaled as the crashed process would have (remote:
        // looked up, not found, resent with the same key), and a pending update of another address
        // after its create (local: settled as it is).
        const journaled = new Set(pending.map((op) => op.address));
        const decl = ws.intent.resources.find((r) => !journaled.has(r.address))!;
        const lostId = `op-${name}-never-sent`;
        await ws.store.journal({
          id: lostId,
          address: decl.address,
          type: 'sb.networks',
          action: 'create',
          desiredHash: hashValue(resolveDesired(decl, () => undefined)),
          marker: { workspace: ws.name, address: decl.address, op: lostId },
          state: 'pending',
          createdAt: clock.now().toISOString(),
        });
        const updated = pending[7]!;
        await ws.store.journal({
          ...updated,
          id: `${updated.id}-u`,
          action: 'update',
          marker: { ...updated.marker, op: `${updated.id}-u` },
          createdAt: clock.now().toISOString(),
        });
        const known = (await observe(ws, { visibilityWindowMs: 0, now: clock.now() })).objects;
        const local = (await ws.store.unsettled()).filter((op) => resolvesLocally(op, known));
        expect(local).toHaveLength(COUNT); // COUNT - 1 creates and the update
        const events: EngineEvent[] = [];
        const n = await recoverJournal(
          ws,
          known,
          { actor: 'tend' },
          clock,
          (e) => events.push(e),
          undefined,
          concurrency ? { concurrency } : {},
        );
        expect(n).toBe(COUNT + 1);
        return await recoveredState(ws, events);
      } finally {
        await ws.close();
      }
    };
    const together = await run('together');
    const oneByOne = await run('onebyone', { local: 1, remote: 1 });
    expect(together).toEqual(oneByOne);
    expect(together.pending).toBe(0);
    expect(together.outcomes.filter((o) => o.includes(': adopted'))).toHaveLength(COUNT - 1);
    expect(
      together.outcomes.filter((o) => o.includes('resent with the same idempotency key')),
    ).toHaveLength(1);
    expect(together.outcomes.filter((o) => o.includes('settled; the next plan'))).toHaveLength(1);
    expect(together.twin).toHaveLength(COUNT);
    expect(together.ledger).toHaveLength(COUNT);
    expect(together.ops.filter((o) => o.endsWith(' settled'))).toHaveLength(COUNT + 1);
  });
});

describe('resolvesLocally', () => {
  const op = (action: Operation['action'], id = 'op-1'): Operation => ({
    id,
    address: ADDRESS,
    type: 'sb.networks',
    action,
    desiredHash: 'h',
    marker: { workspace: 'w', address: ADDRESS, op: id },
    state: 'pending',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  const seen = (markerOp?: string) =>
    new Map([
      [
        ADDRESS,
        {
          id: 'net-1',
          fields: {},
          ...(markerOp ? { marker: { workspace: 'w', address: ADDRESS, op: markerOp } } : {}),
        },
      ],
    ]);
  it.each([
    ['an update', op('update'), new Map(), true],
    ['a create whose object was listed with its marker', op('create'), seen('op-1'), true],
    ['a create whose object is not listed', op('create'), new Map(), false],
    ['a create whose address holds another operation’s object', op('create'), seen('op-0'), false],
    ['a create whose address holds an unmarked object', op('create'), seen(), false],
    ['a delete (re-read and resent)', op('delete'), seen('op-1'), false],
  ])('%s', (_name, operation, known, want) => {
    expect(resolvesLocally(operation, known as Map<Address, ObservedObject>)).toBe(want);
  });
});
