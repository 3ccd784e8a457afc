import { describe, expect, it } from 'vitest';
import type { Address, Operation, ReplaceStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import type { Gate } from './gate.js';
import { deleteReplaced, executeReplace, replaceGate } from './replace.js';

const A = 'sb.volumes/data' as Address;
const step = (strategy: ReplaceStep['strategy']): ReplaceStep => ({
  kind: 'replace',
  address: A,
  type: 'sb.volumes',
  dependsOn: [],
  objectId: 'vol-1',
  changes: [{ path: 'size', before: 20, after: 10 }],
  forcedBy: ['size'],
  decidedBy: 'platform',
  strategy,
  gated: false,
  blastRadius: [],
});
const old = obj('vol-1', { size: 20 }, A);
const settledStepOne: Operation = {
  id: 'op-1',
  address: A,
  type: 'sb.volumes',
  action: 'create',
  objectId: 'vol-2',
  desiredHash: 'h',
  marker: { workspace: 'w', address: A },
  state: 'settled',
  createdAt: '2026-01-01T00:00:00Z',
  settledAt: '2026-01-01T00:00:01Z',
};
const group = (calls: OpCall[]) =>
  calls.map((c) => ({ ...c, ...('group' in c && c.group ? { group: 'g' } : {}) }));

describe('executeReplace', () => {
  const cases: {
    name: string;
    reason: string;
    step: ReplaceStep;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
    wantReplaced?: string;
  }[] = [
    {
      name: 'create before destroy',
      reason: 'step 1 creates the replacement; the old object is left for step 2',
      step: step('create-before-destroy'),
      world: { objects: { [A]: old }, specs: { [A]: { size: 10 } } },
      want: { calls: [{ op: 'create', address: A, group: 'g', step: 1, body: { size: 10 } }] },
      wantReplaced: 'vol-1',
    },
    {
      name: 'delete before create',
      reason: 'the platform cannot hold both: delete first (step 1), then create (step 2)',
      step: step('delete-before-create'),
      world: { objects: { [A]: old }, specs: { [A]: { size: 10 } } },
      want: {
        calls: [
          { op: 'delete', address: A, id: 'vol-1', forget: false, group: 'g', step: 1 },
          { op: 'create', address: A, group: 'g', step: 2, body: { size: 10 } },
        ],
      },
    },
    {
      name: 'resume step 1',
      reason: 'a replacement a crashed pass already created is reused, never created twice',
      step: step('create-before-destroy'),
      world: {
        objects: { [A]: old },
        specs: { [A]: { size: 10 } },
        journal: { [`${A}:create`]: settledStepOne },
        platform: { 'vol-2': obj('vol-2', { size: 10 }, A) },
      },
      want: { calls: [] },
      wantReplaced: 'vol-1',
    },
    {
      name: 'old object gone',
      reason: 'the object the plan would replace is gone: fail, nothing sent',
      step: step('create-before-destroy'),
      world: { specs: { [A]: { size: 10 } } },
      want: { calls: [], error: 'plan.object_gone' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      let replaced: string | undefined;
      const got = await outcome(async () => {
        replaced = (await executeReplace(c.step, ctx)).replaced?.old.id;
      }, calls);
      expect({ ...got, calls: group(got.calls) }).toEqual(c.want);
      expect(replaced).toBe(c.wantReplaced);
    });
  }
});

describe('deleteReplaced (step 2)', () => {
  const cases: {
    name: string;
    reason: string;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'nothing references it',
      reason:
        'the old object is deleted as step 2 of the group, and not forgotten (the address lives on)',
      world: {},
      want: {
        calls: [{ op: 'delete', address: A, id: 'vol-1', forget: false, group: 'g', step: 2 }],
      },
    },
    {
      name: 'still referenced',
      reason: 'a declared resource still holds the old id: keep it for a later pass',
      world: { referenced: { 'vol-1': 'sb.snapshots/s' } },
      want: { calls: [] },
    },
    {
      name: 'refused',
      reason: 'a refused step 2 throws, so the executor records the resource as error',
      world: { fail: (c) => (c.op === 'delete' ? new Error('conflict') : undefined) },
      want: {
        calls: [{ op: 'delete', address: A, id: 'vol-1', forget: false, group: 'g', step: 2 }],
        error: 'conflict',
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      const got = await outcome(
        () => deleteReplaced(step('create-before-destroy'), old, 'g', ctx),
        calls,
      );
      expect(got).toEqual(c.want);
    });
  }
});

describe('replaceGate', () => {
  const cases: {
    name: string;
    reason: string;
    step: Partial<ReplaceStep>;
    want: Gate;
  }[] = [
    {
      name: 'open',
      reason: 'a replace the plan neither gated nor found impossible runs',
      step: {},
      want: { kind: 'open' },
    },
    {
      name: 'gated',
      reason: 'a gated replace waits for --approve-destroy, and says why the plan gated it',
      step: { gated: true, gate: 'delete before create' },
      want: {
        kind: 'blocked',
        reason: `replacing ${A} (size) is gated (delete before create): approve with --approve-destroy`,
        why: 'which needs --approve-destroy',
      },
    },
    {
      name: 'gated, stateful',
      reason: 'without a gate of its own, the plan gated it as a stateful resource',
      step: { gated: true },
      want: {
        kind: 'blocked',
        reason: `replacing ${A} (size) is gated (stateful resource): approve with --approve-destroy`,
        why: 'which needs --approve-destroy',
      },
    },
    {
      name: 'cannot happen',
      reason: 'a replace whose old object cannot be deleted never runs, approved or not',
      step: { gated: true, blocked: 'the API offers no DELETE for sb.volumes' },
      want: {
        kind: 'blocked',
        reason: `replacing ${A} (size) cannot happen: the API offers no DELETE for sb.volumes`,
        why: 'whose replacement cannot happen',
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const got = replaceGate({ ...step('create-before-destroy'), ...c.step });
      expect(got).toEqual(c.want);
      expect(Object.isFrozen(got)).toBe(true);
    });
  }
});
