import { describe, expect, it } from 'vitest';
import type { AdoptStep, Address } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { executeAdopt } from './adopt.js';

const A = 'sb.buckets/logs' as Address;
const step = (changes: AdoptStep['changes'] = []): AdoptStep => ({
  kind: 'adopt',
  address: A,
  type: 'sb.buckets',
  dependsOn: [],
  objectId: 'logs',
  foundBy: 'natural-key',
  changes,
});
const found = obj('logs', { name: 'logs', versioning: false });

describe('executeAdopt', () => {
  const cases: {
    name: string;
    reason: string;
    step: AdoptStep;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'record',
      reason: 'adopting records the object; nothing else is sent',
      step: step(),
      world: { objects: { [A]: found }, specs: { [A]: { name: 'logs', versioning: false } } },
      want: { calls: [{ op: 'takeOver', address: A, id: 'logs' }] },
    },
    {
      name: 'record and correct',
      reason: 'an adopted object that differs gets exactly the planned changes',
      step: step([{ path: 'versioning', before: false, after: true }]),
      world: { objects: { [A]: found }, specs: { [A]: { name: 'logs', versioning: true } } },
      want: {
        calls: [
          { op: 'takeOver', address: A, id: 'logs' },
          {
            op: 'update',
            address: A,
            id: 'logs',
            body: { versioning: true },
            why: 'intent-change',
          },
        ],
      },
    },
    {
      name: 'record refused',
      reason: 'when recording fails, no change is sent',
      step: step([{ path: 'versioning', before: false, after: true }]),
      world: {
        objects: { [A]: found },
        specs: { [A]: { name: 'logs', versioning: true } },
        fail: (c) => (c.op === 'takeOver' ? new Error('store down') : undefined),
      },
      want: { calls: [{ op: 'takeOver', address: A, id: 'logs' }], error: 'store down' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      expect(await outcome(() => executeAdopt(c.step, ctx), calls)).toEqual(c.want);
    });
  }
});
