import { describe, expect, it } from 'vitest';
import type { Address, UpdateStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { executeUpdate } from './update.js';

const A = 'sb.services/api' as Address;
const step = (changes: UpdateStep['changes'], objectId = 'svc-1'): UpdateStep => ({
  kind: 'update',
  address: A,
  type: 'sb.services',
  dependsOn: ['sb.networks/main'],
  objectId,
  changes,
});
const observed = obj('svc-1', { replicas: 2, image: 'nginx', network_id: 'net-1' });

describe('executeUpdate', () => {
  const cases: {
    name: string;
    reason: string;
    step: UpdateStep;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'intent change',
      reason: 'only the planned fields are sent',
      step: step([{ path: 'replicas', before: 2, after: 3 }]),
      world: {
        objects: { [A]: observed },
        specs: { [A]: { replicas: 3, image: 'nginx' } },
        remembered: { [A]: { replicas: 2 } },
      },
      want: {
        calls: [
          { op: 'update', address: A, id: 'svc-1', body: { replicas: 3 }, why: 'intent-change' },
        ],
      },
    },
    {
      name: 'drift',
      reason: 'the platform no longer holds what Tend recorded: the update is a drift correction',
      step: step([{ path: 'replicas', before: 5, after: 2 }]),
      world: {
        objects: { [A]: observed },
        specs: { [A]: { replicas: 2 } },
        remembered: { [A]: { replicas: 2 } },
      },
      want: {
        calls: [{ op: 'update', address: A, id: 'svc-1', body: { replicas: 2 }, why: 'drift' }],
      },
    },
    {
      name: 'repointed',
      reason: 'an Unknown reference is resolved from the replacement just created',
      step: step([
        { path: 'network_id', before: 'net-1', after: { $unknown: '${sb.networks/main.id}' } },
      ]),
      world: {
        objects: { [A]: observed, 'sb.networks/main': obj('net-2', {}) },
        specs: { [A]: { network_id: '${sb.networks/main.id}' } },
      },
      want: {
        calls: [
          {
            op: 'update',
            address: A,
            id: 'svc-1',
            body: { network_id: 'net-2' },
            why: 'intent-change',
          },
        ],
      },
    },
    {
      name: 'object gone',
      reason: 'the object the plan was computed from is gone: fail, never create',
      step: step([{ path: 'replicas', before: 2, after: 3 }]),
      world: { specs: { [A]: { replicas: 3 } } },
      want: { calls: [], error: 'plan.object_gone' },
    },
    {
      name: 'another object',
      reason: 'the address now has another object than the plan named: fail',
      step: step([{ path: 'replicas', before: 2, after: 3 }], 'svc-0'),
      world: { objects: { [A]: observed }, specs: { [A]: { replicas: 3 } } },
      want: { calls: [], error: 'plan.object_gone' },
    },
    {
      name: 'not as planned',
      reason: 'a value that differs from what the plan showed is never sent',
      step: step([{ path: 'replicas', before: 2, after: 3 }]),
      world: { objects: { [A]: observed }, specs: { [A]: { replicas: 4 } } },
      want: { calls: [], error: 'plan.changed' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      expect(await outcome(() => executeUpdate(c.step, ctx), calls)).toEqual(c.want);
    });
  }
});
