import { describe, expect, it } from 'vitest';
import type { ObservedObject, Operation } from '../core/index.js';
import type { Store } from '../store/index.js';
import { fakePlatform, workspaceOver } from '../../test/support/fake-workspace.js';
import { steppedClock } from './clock.js';
import { noCrash } from './crash-points.js';
import { Operator } from './operator.js';

// A create whose answer was lost is looked for by its natural key (a type without a marker). The
// key may be a path into the object (`spec.name`): the lookup reads it there, on both sides.

const app = (id: string, spec: Record<string, unknown>): ObservedObject => ({
  type: 'apps',
  id,
  fields: { id, spec },
});
const op: Operation = {
  id: 'op-1',
  address: 'sb.apps/web',
  type: 'sb.apps',
  action: 'create',
  desiredHash: 'h',
  marker: { workspace: 'w', address: 'sb.apps/web', op: 'op-1' },
  state: 'pending',
  createdAt: '2026-01-01T00:00:00Z',
};

describe('finding a lost create by a nested natural key', () => {
  it.each([
    {
      reason: 'the object whose spec.name is the desired one',
      desired: { spec: { name: 'web', region: 'ams' } },
      want: 'a-2',
    },
    {
      reason: 'no object has that spec.name: nothing is found (the create may be resent)',
      desired: { spec: { name: 'db' } },
      want: undefined,
    },
    {
      reason: 'a desired spec without the key finds nothing (never the first object)',
      desired: { spec: { region: 'ams' } },
      want: undefined,
    },
  ])('$reason', async ({ desired, want }) => {
    const { provider } = fakePlatform([
      app('a-1', { name: 'api' }),
      app('a-2', { name: 'web', region: 'fra' }),
      { ...app('web', { name: 'other' }) },
    ]);
    const ws = workspaceOver([], provider, {} as Store);
    const operator = new Operator(ws, { actor: 'tend' }, steppedClock(), () => {}, noCrash);
    const found = await operator.findCreated(op, desired);
    expect(found?.id).toBe(want);
  });
});
