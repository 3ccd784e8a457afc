import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from '../core/index.js';
import { canonicalJson, hashValue, TendError } from '../core/index.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { startSandbox } from '../sandbox/index.js';
import { steppedClock } from './clock.js';
import { noCrash } from './crash-points.js';
import { changedFields, Operator } from './operator.js';
import { recoverJournal } from './recovery.js';
import type { Workspace } from './workspace.js';
import { openWorkspaceAt as openWorkspace } from '../app/index.js';

// A create that the platform commits and never answers (a timeout after success), against the real
// sandbox over HTTP. The platform and Tend share a fake clock for visibility and waiting; the
// request timeout is real (and short).

const WINDOW_MS = 5000;
const ADDRESS = 'sb.networks/main' as Address;
const DESIRED = { name: 'main', cidr: '10.2.0.0/16' };

const fakeClock = steppedClock;

let sb: RunningSandbox;
let clock: ReturnType<typeof fakeClock>;
let dir: string;
const docs = { keyed: '', unkeyed: '' };

beforeAll(async () => {
  clock = fakeClock();
  sb = await startSandbox({
    port: 0,
    now: () => clock.now().getTime(),
    // Eventual consistency is switched on at run time below.
    consistentReads: false,
  });
  dir = mkdtempSync(join(tmpdir(), 'tend-operator-'));
  const served = JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../sandbox/openapi.json'), 'utf8'),
  ) as { paths: Record<string, Record<string, { parameters?: { $ref?: string }[] }>> };
  docs.keyed = join(dir, 'keyed.json');
  writeFileSync(docs.keyed, JSON.stringify(served));
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

async function workspace(doc: string): Promise<Workspace> {
  const intent = mkdtempSync(join(dir, 'intent-'));
  writeFileSync(
    join(intent, 'intent.yaml'),
    `kind: Provider
name: sb
type: openapi
spec: ${doc}
endpoint: ${sb.url}
timeoutMs: 300
---
kind: Resource
type: sb.networks
name: main
spec: { name: main, cidr: 10.2.0.0/16 }
`,
  );
  return openWorkspace({ dir: intent, name: 'op', env: { TEND_SPEC_DIRS: dir } });
}

const target = { address: ADDRESS, type: 'sb.networks', stateful: false, dependsOn: [] };

describe('Operator.create: the platform commits and never answers', () => {
  const CASES = [
    {
      name: 'keyed, visible at once',
      reason: 'the object is found by its marker; nothing is resent',
      doc: 'keyed' as const,
      invisibleMs: 0,
      waited: [0, 1],
    },
    {
      name: 'unkeyed, not visible for a while',
      reason: 'without a key Tend waits (within the window) for the object instead of resending',
      doc: 'unkeyed' as const,
      invisibleMs: 2000,
      waited: [2000, WINDOW_MS],
    },
  ];

  it.each(CASES)('$name: $reason', async ({ doc, invisibleMs, waited }) => {
    sb.sandbox.reset();
    sb.sandbox.setFaults({
      timeoutAfterSuccessRate: 1,
      methods: ['POST'],
      eventualConsistencyMs: invisibleMs,
    });
    const ws = await workspace(docs[doc]);
    try {
      const operator = new Operator(ws, { actor: 'tend' }, clock, () => {}, noCrash, {
        consistencyWindowMs: WINDOW_MS,
      });
      const t0 = clock.elapsed();
      const created = await operator.create(target, { ...DESIRED }, hashValue(DESIRED));
      expect(clock.elapsed() - t0).toBeGreaterThanOrEqual(waited[0]!);
      expect(clock.elapsed() - t0).toBeLessThan(waited[1]!);
      expect(sb.sandbox.state.all().map((o) => o.id)).toEqual([created.id]);
      expect(sb.sandbox.stats().faults.timeoutAfterSuccess).toBe(1);
      expect((await ws.store.getTwin(ADDRESS))?.objectId).toBe(created.id);
      expect(await ws.store.unsettled()).toEqual([]);
    } finally {
      await ws.close();
    }
  });

  it('leaves the create pending (not failed) while its outcome stays unknown, and recovery adopts it', async () => {
    sb.sandbox.reset();
    sb.sandbox.setFaults({
      timeoutAfterSuccessRate: 1,
      methods: ['POST'],
      eventualConsistencyMs: 3000,
    });
    const ws = await workspace(docs.keyed);
    try {
      const operator = new Operator(ws, { actor: 'tend' }, clock, () => {}, noCrash, {
        consistencyWindowMs: WINDOW_MS,
      });
      const err = await operator
        .create(target, { ...DESIRED }, hashValue(DESIRED))
        .then(() => undefined)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TendError);
      expect((err as TendError).outcomeUnknown).toBe(true);
      const [pending] = await ws.store.unsettled();
      expect(pending).toMatchObject({ action: 'create', address: ADDRESS, state: 'pending' });
      // Every resend carried the same key: the platform holds one object.
      expect(sb.sandbox.state.all()).toHaveLength(1);

      sb.sandbox.setFaults({ timeoutAfterSuccessRate: 0 });
      await clock.sleep(3000);
      await recoverJournal(ws, new Map(), { actor: 'tend' }, clock, () => {});
      const settled = await ws.store.getOperation(pending!.id);
      expect(settled).toMatchObject({ state: 'settled', objectId: sb.sandbox.state.all()[0]!.id });
    } finally {
      await ws.close();
    }
  });
});

/** One value held by both sides of a comparison. */
const SHARED = { deep: [1, { x: 2 }] };

describe('changedFields', () => {
  it.each([
    ['nothing before: every field with a value', undefined, { a: 1, b: null, c: 'x' }, ['a', 'c']],
    ['nothing after: every field that had one', { z: 1, y: [] }, undefined, ['y', 'z']],
    ['equal as data, keys in another order', { t: { b: 1, a: 2 } }, { t: { a: 2, b: 1 } }, []],
    ['absent and null are the same', { a: null }, {}, []],
    ['an array in another order differs', { l: [1, 2] }, { l: [2, 1] }, ['l']],
    ['1 and "1" differ', { n: 1 }, { n: '1' }, ['n']],
    ['sorted by name', { b: 1, a: 1 }, { b: 2, a: 2 }, ['a', 'b']],
    ['nested change', { t: { a: { x: 1 } } }, { t: { a: { x: 2 } } }, ['t']],
    ['the same object on both sides is unchanged', { s: SHARED }, { s: SHARED }, []],
    ['an empty object against nothing differs', undefined, { o: {}, l: [] }, ['l', 'o']],
    ['NaN writes as null, like absent', { n: Number.NaN }, {}, []],
  ])('%s', (_name, before, after, want) => {
    expect(changedFields(before, after)).toEqual(want);
  });

  it('names exactly the fields whose canonical JSON differs (property)', () => {
    const side = fc.option(
      fc.dictionary(
        fc.constantFrom('a', 'b', 'c', 'd'),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(undefined, Number.NaN)),
        { maxKeys: 4, noNullPrototype: true },
      ),
      { nil: undefined },
    );
    const reference = (
      before: Record<string, unknown> | undefined,
      after: Record<string, unknown> | undefined,
    ): string[] =>
      [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])]
        .filter((k) => canonicalJson(before?.[k] ?? null) !== canonicalJson(after?.[k] ?? null))
        .sort();
    fc.assert(
      fc.property(side, side, fc.boolean(), (before, after, share) => {
        // Sharing values between the sides exercises the same-value shortcut.
        const b = share && before && after ? { ...after, ...before } : before;
        expect(changedFields(b, after)).toEqual(reference(b, after));
        expect(changedFields(after, b)).toEqual(reference(after, b));
      }),
      { numRuns: 1000 },
    );
  });
});
