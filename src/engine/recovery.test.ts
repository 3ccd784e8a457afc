import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Operation } from '../core/index.js';
import { hashValue } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import type { EngineEvent } from './events.js';
import { resolveDesired } from './planner.js';
import { recoverJournal } from './recovery.js';
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
  sb = await startSandbox({ port: 0, now: () => clock.now().getTime() });
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
