import { describe, expect, it } from 'vitest';
import type { Address, ObservedObject, ResourceDecl } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import {
  decl,
  fakeWorkspace,
  listed,
  twinOf,
  twinWith,
} from '../../test/support/fake-workspace.js';
import { observe } from './observe.js';
import { planPass } from './planner.js';

// observe + plan over a workspace of functions: what each resource's step is, and what deletes wait
// for. The cases state the plan's contract for moves, adoption, conflicts and delete order.

const net = (id: string, address: string, fields: Record<string, unknown> = {}) =>
  listed('networks', id, ['w', address], fields);
const bucket = (id: string, address?: string, fields: Record<string, unknown> = {}) =>
  listed('buckets', id, address ? ['w', address] : undefined, fields);

describe('planPass', () => {
  const cases: {
    name: string;
    reason: string;
    declared: ResourceDecl[];
    objects: ObservedObject[];
    twin: TwinEntry[];
    want: Record<string, Record<string, unknown>>;
  }[] = [
    {
      name: 'rename by natural key',
      reason: 'the same platform identity is moved, never deleted and created',
      declared: [decl('sb.buckets/static', 'b1')],
      objects: [bucket('b1', 'sb.buckets/assets')],
      twin: [twinOf('sb.buckets/assets', 'b1')],
      want: {
        'sb.buckets/static': { kind: 'move', from: 'sb.buckets/assets', objectId: 'b1' },
      },
    },
    {
      name: 'rename with a change',
      reason: 'a move carries the in-place change of a declared field',
      declared: [decl('sb.buckets/static', 'b1', undefined, { name: 'b1', versioning: true })],
      objects: [bucket('b1', 'sb.buckets/assets', { versioning: false })],
      twin: [twinOf('sb.buckets/assets', 'b1')],
      want: {
        'sb.buckets/static': {
          kind: 'move',
          changes: [{ path: 'versioning', before: false, after: true }],
        },
      },
    },
    {
      name: 'adoption',
      reason: 'an object Tend has no record of is adopted explicitly',
      declared: [decl('sb.buckets/logs', 'logs')],
      objects: [bucket('logs')],
      twin: [],
      want: { 'sb.buckets/logs': { kind: 'adopt', foundBy: 'natural-key' } },
    },
    {
      name: 'conflict',
      reason: "another workspace's object is a conflict, not a create over it",
      declared: [decl('sb.buckets/logs', 'logs')],
      objects: [listed('buckets', 'logs', ['prod', 'sb.buckets/logs'])],
      twin: [],
      want: { 'sb.buckets/logs': { kind: 'conflict', owner: 'prod', objectId: 'logs' } },
    },
    {
      name: 'repointed dependent first',
      reason: 'a delete waits for the declared resource that referenced it in the old graph',
      declared: [
        decl('sb.networks/b', 'b'),
        decl('sb.buckets/app', 'app', undefined, { name: 'app', net: '${sb.networks/b.id}' }),
      ],
      objects: [
        net('net-a', 'sb.networks/a'),
        net('net-b', 'sb.networks/b'),
        bucket('app', 'sb.buckets/app', { net: 'net-a' }),
      ],
      twin: [
        twinOf('sb.networks/a', 'net-a'),
        twinOf('sb.networks/b', 'net-b'),
        twinWith('sb.buckets/app', 'app', ['sb.networks/a']),
      ],
      want: {
        'sb.buckets/app': { kind: 'update' },
        'sb.networks/a': { kind: 'delete', waitsFor: ['sb.buckets/app'] },
      },
    },
    {
      name: 'old reference Tend did not record',
      reason: 'an observed object that still holds the removed id makes the delete wait too',
      declared: [
        decl('sb.networks/b', 'b'),
        decl('sb.buckets/app', 'app', undefined, { name: 'app', net: '${sb.networks/b.id}' }),
      ],
      objects: [
        net('net-a', 'sb.networks/a'),
        net('net-b', 'sb.networks/b'),
        bucket('app', 'sb.buckets/app', { net: 'net-a' }),
      ],
      twin: [
        twinOf('sb.networks/a', 'net-a'),
        twinOf('sb.networks/b', 'net-b'),
        twinOf('sb.buckets/app', 'app'),
      ],
      want: { 'sb.networks/a': { kind: 'delete', waitsFor: ['sb.buckets/app'] } },
    },
    {
      name: 'reference to a field being updated',
      reason: 'a value the plan is about to change is not known until it has changed',
      declared: [
        decl('sb.networks/n', 'n', undefined, { name: 'n', label: 'new' }),
        decl('sb.buckets/b', 'b', undefined, { name: 'b', label: '${sb.networks/n.label}' }),
      ],
      objects: [
        net('net-n', 'sb.networks/n', { label: 'old' }),
        bucket('b', 'sb.buckets/b', { label: 'old' }),
      ],
      twin: [twinOf('sb.networks/n', 'net-n'), twinOf('sb.buckets/b', 'b')],
      want: {
        'sb.networks/n': { kind: 'update' },
        'sb.buckets/b': {
          kind: 'update',
          changes: [
            { path: 'label', before: 'old', after: { $unknown: '${sb.networks/n.label}' } },
          ],
        },
      },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const ws = fakeWorkspace(c.declared, c.objects, c.twin);
      const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date(0) });
      const { plan } = await planPass(ws, observation, { approveDestroy: false, prune: true });
      const got = Object.fromEntries(plan.steps.map((s) => [s.address, s]));
      for (const [address, want] of Object.entries(c.want)) {
        expect(got[address], `${address}: ${c.reason}`).toMatchObject(want);
      }
      // Never a delete of an object another step of the same plan keeps.
      const kept = new Set(
        plan.steps.filter((s) => s.kind !== 'delete').map((s) => 'objectId' in s && s.objectId),
      );
      for (const s of plan.steps) if (s.kind === 'delete') expect(kept.has(s.objectId)).toBe(false);
    });
  }
});

describe('planPass: addresses held by an unresolved journal operation', () => {
  const CASES = [
    {
      reason:
        'a declared address whose create may still have landed gets no step: a second create could make a duplicate',
      declared: [decl('sb.buckets/logs', 'logs')],
      objects: [] as ObservedObject[],
      twin: [] as TwinEntry[],
      held: 'sb.buckets/logs',
    },
    {
      reason: 'a removed address whose delete is unresolved is not deleted again this pass',
      declared: [] as ResourceDecl[],
      objects: [bucket('old', 'sb.buckets/old')],
      twin: [twinOf('sb.buckets/old', 'old')],
      held: 'sb.buckets/old',
    },
  ];
  for (const c of CASES) {
    it(c.reason, async () => {
      const ws = fakeWorkspace(c.declared, c.objects, c.twin);
      const observation = await observe(ws, { visibilityWindowMs: 0, now: new Date(0) });
      const free = await planPass(ws, observation, { approveDestroy: false, prune: true });
      expect(free.plan.steps.map((s) => s.address)).toContain(c.held);
      const why = 'journal operation op-1 (create) is still unresolved';
      const held = await planPass(ws, observation, {
        approveDestroy: false,
        prune: true,
        held: new Map([[c.held as Address, why]]),
      });
      expect(held.plan.steps.map((s) => s.address)).not.toContain(c.held);
      expect(held.held?.get(c.held as Address)).toBe(why);
    });
  }
});
