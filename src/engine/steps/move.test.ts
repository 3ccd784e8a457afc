import { describe, expect, it } from 'vitest';
import type { Address, MoveStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { executeMove } from './move.js';

const A = 'sb.buckets/static' as Address;
const OLD = 'sb.buckets/assets' as Address;
const step = (changes: MoveStep['changes'] = []): MoveStep => ({
  kind: 'move',
  address: A,
  type: 'sb.buckets',
  dependsOn: [],
  objectId: 'b-1',
  from: OLD,
  changes,
});
const bucket = obj('b-1', { name: 'b-1', versioning: true }, OLD);

describe('executeMove', () => {
  const cases: {
    name: string;
    reason: string;
    step: MoveStep;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'rename',
      reason: 'a move re-records the object under the new address and nothing else',
      step: step(),
      world: { objects: { [A]: bucket }, specs: { [A]: { name: 'b-1', versioning: true } } },
      want: { calls: [{ op: 'takeOver', address: A, id: 'b-1', from: OLD }] },
    },
    {
      name: 'rename and change',
      reason: 'a move combined with an update sends the planned change after re-recording',
      step: step([{ path: 'versioning', before: true, after: false }]),
      world: { objects: { [A]: bucket }, specs: { [A]: { name: 'b-1', versioning: false } } },
      want: {
        calls: [
          { op: 'takeOver', address: A, id: 'b-1', from: OLD },
          {
            op: 'update',
            address: A,
            id: 'b-1',
            body: { versioning: false },
            why: 'intent-change',
          },
        ],
      },
    },
    {
      name: 'gone',
      reason: 'the object is gone at execution: fail, never create or delete',
      step: step(),
      world: { specs: { [A]: { name: 'b-1' } } },
      want: { calls: [], error: 'plan.object_gone' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      expect(await outcome(() => executeMove(c.step, ctx), calls)).toEqual(c.want);
    });
  }
});
