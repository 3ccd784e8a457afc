import { describe, expect, it } from 'vitest';
import type { Address, DeleteStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { deleteGate, executeDelete } from './delete.js';
import type { Gate } from './gate.js';

const A = 'sb.networks/old' as Address;
const step: DeleteStep = {
  kind: 'delete',
  address: A,
  type: 'sb.networks',
  dependsOn: [],
  objectId: 'net-1',
  gated: false,
  blastRadius: [],
  waitsFor: [],
};

describe('executeDelete', () => {
  const cases: {
    name: string;
    reason: string;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'removed',
      reason: 'the object the plan named is deleted and forgotten',
      world: { objects: { [A]: obj('net-1', {}, A) } },
      want: { calls: [{ op: 'delete', address: A, id: 'net-1', forget: true }] },
    },
    {
      name: 'refused',
      reason: 'a refusal (409 has_dependents) fails the step; the executor makes it an error',
      world: {
        objects: { [A]: obj('net-1', {}, A) },
        fail: (c) => (c.op === 'delete' ? new Error('has_dependents') : undefined),
      },
      want: {
        calls: [{ op: 'delete', address: A, id: 'net-1', forget: true }],
        error: 'has_dependents',
      },
    },
    {
      name: 'another object',
      reason: 'never deletes an object the plan did not name',
      world: { objects: { [A]: obj('net-9', {}, A) } },
      want: { calls: [], error: 'plan.object_gone' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      expect(await outcome(() => executeDelete(step, ctx), calls)).toEqual(c.want);
    });
  }
});

describe('deleteGate', () => {
  const cases: {
    name: string;
    reason: string;
    step: Partial<DeleteStep>;
    want: Gate;
  }[] = [
    {
      name: 'open',
      reason: 'a delete the plan neither gated nor found impossible runs',
      step: {},
      want: { kind: 'open' },
    },
    {
      name: 'stateful',
      reason: "a stateful resource's own delete waits for --approve-destroy",
      step: { gated: true },
      want: {
        kind: 'blocked',
        reason: `deleting ${A} destroys a stateful resource: approve with --approve-destroy`,
        why: 'which needs --approve-destroy',
      },
    },
    {
      name: 'under a stateful resource',
      reason: 'a delete gated by the stateful resource it lives under names that resource',
      step: { gated: true, gate: 'lives under sb.zones/z', gatedBy: 'sb.zones/z' },
      want: {
        kind: 'blocked',
        reason: `deleting ${A} waits for the deletion of sb.zones/z, a stateful resource it lives under: approve with --approve-destroy`,
        why: 'which needs --approve-destroy',
      },
    },
    {
      name: 'cannot happen',
      reason: 'a type without DELETE is never deleted, approved or not',
      step: { gated: true, blocked: 'the API offers no DELETE for sb.networks' },
      want: {
        kind: 'blocked',
        reason: `deleting ${A} cannot happen: the API offers no DELETE for sb.networks`,
        why: 'whose deletion cannot happen',
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      const got = deleteGate({ ...step, ...c.step });
      expect(got).toEqual(c.want);
      expect(Object.isFrozen(got)).toBe(true);
    });
  }
});
