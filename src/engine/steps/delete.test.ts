import { describe, expect, it } from 'vitest';
import type { Address, DeleteStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { executeDelete } from './delete.js';

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
