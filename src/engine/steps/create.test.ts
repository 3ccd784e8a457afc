import { describe, expect, it } from 'vitest';
import type { Address, CreateStep } from '../../core/index.js';
import type { FakeWorld, OpCall } from '../../../test/support/step-fakes.js';
import { fakeContext, obj, outcome } from '../../../test/support/step-fakes.js';
import { executeCreate } from './create.js';

const A = 'sb.instances/web' as Address;
const step = (desired: Record<string, unknown>): CreateStep => ({
  kind: 'create',
  address: A,
  type: 'sb.instances',
  dependsOn: ['sb.networks/main'],
  desired,
});

describe('executeCreate', () => {
  const cases: {
    name: string;
    reason: string;
    step: CreateStep;
    world: FakeWorld;
    want: { calls: OpCall[]; error?: string };
  }[] = [
    {
      name: 'plain',
      reason: 'a create sends the planned fields once',
      step: step({ name: 'web' }),
      world: { specs: { [A]: { name: 'web' } } },
      want: { calls: [{ op: 'create', address: A, body: { name: 'web' } }] },
    },
    {
      name: 'unknown resolved',
      reason: 'a reference Unknown at plan time is resolved from what was just created',
      step: step({ name: 'web', network_id: { $unknown: '${sb.networks/main.id}' } }),
      world: {
        specs: { [A]: { name: 'web', network_id: '${sb.networks/main.id}' } },
        objects: { 'sb.networks/main': obj('net-2', {}) },
      },
      want: { calls: [{ op: 'create', address: A, body: { name: 'web', network_id: 'net-2' } }] },
    },
    {
      name: 'still unknown',
      reason: 'a reference whose target does not exist fails the step, nothing is sent',
      step: step({ name: 'web', network_id: { $unknown: '${sb.networks/main.id}' } }),
      world: { specs: { [A]: { name: 'web', network_id: '${sb.networks/main.id}' } } },
      want: { calls: [], error: 'ref.unresolved' },
    },
    {
      name: 'not as planned',
      reason: 'a known value that differs from the plan is never sent',
      step: step({ name: 'web' }),
      world: { specs: { [A]: { name: 'web-2' } } },
      want: { calls: [], error: 'plan.changed' },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const { ctx, calls } = fakeContext(c.world);
      const got = await outcome(() => executeCreate(c.step, ctx), calls);
      expect(got).toEqual(c.want);
    });
  }

  it('verifies the created object and checks it at once', async () => {
    const { ctx } = fakeContext({ specs: { [A]: { name: 'web' } } });
    const got = await executeCreate(step({ name: 'web' }), ctx);
    expect(got).toMatchObject({ checkNow: true, desired: { name: 'web' } });
    expect(ctx.object(A)?.id).toBe(got.object.id);
  });
});
