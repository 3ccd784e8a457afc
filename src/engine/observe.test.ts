import { describe, expect, it } from 'vitest';
import type { Address, ObservedObject, Operation, ResourceDecl } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import { decl, fakeWorkspace, listed, twinOf } from '../../test/support/fake-workspace.js';
import { explainExtras, observe } from './observe.js';

// Several objects carrying one address's marker: the journal tells an interrupted replace (finish
// it) from a duplicate (report it, never delete it).

const A = 'sb.instances/web' as Address;
const obj = (id: string): ObservedObject => ({
  type: 'instances',
  id,
  fields: { id },
  marker: { workspace: 'w', address: A },
});
const replaced = (
  old: string,
  now: string,
  group: string,
  state: Operation['state'] = 'settled',
): Operation => ({
  id: `op-${now}`,
  address: A,
  type: 'sb.instances',
  action: 'create',
  objectId: now,
  desiredHash: 'h',
  marker: { workspace: 'w', address: A, op: `op-${now}` },
  group,
  step: 1,
  replaces: old,
  state,
  createdAt: '2026-01-01T00:00:00Z',
});
const plainCreate = (now: string): Operation => ({
  id: `op-${now}`,
  address: A,
  type: 'sb.instances',
  action: 'create',
  objectId: now,
  desiredHash: 'h',
  marker: { workspace: 'w', address: A, op: `op-${now}` },
  state: 'settled',
  createdAt: '2026-01-01T00:00:00Z',
});

const CASES: {
  name: string;
  reason: string;
  found: string;
  mine: string[];
  history: Operation[];
  want: { current: string; leftovers: [string, string][]; duplicates: string[] };
}[] = [
  {
    name: 'remembered old, replacement exists',
    reason: 'a crash between step 1 settling and the twin naming the new object',
    found: 'i-old',
    mine: ['i-old', 'i-new'],
    history: [plainCreate('i-old'), replaced('i-old', 'i-new', 'g1')],
    want: { current: 'i-new', leftovers: [['i-old', 'g1']], duplicates: [] },
  },
  {
    name: 'remembered new, old still there',
    reason: 'a crash after step 1, before step 2 deleted the old object',
    found: 'i-new',
    mine: ['i-old', 'i-new'],
    history: [plainCreate('i-old'), replaced('i-old', 'i-new', 'g1')],
    want: { current: 'i-new', leftovers: [['i-old', 'g1']], duplicates: [] },
  },
  {
    name: 'two interrupted replaces in a row',
    reason: 'the chain is followed to the newest replacement; both older objects are leftovers',
    found: 'i-a',
    mine: ['i-a', 'i-b', 'i-c'],
    history: [replaced('i-a', 'i-b', 'g1'), replaced('i-b', 'i-c', 'g2')],
    want: {
      current: 'i-c',
      leftovers: [
        ['i-a', 'g1'],
        ['i-b', 'g2'],
      ],
      duplicates: [],
    },
  },
  {
    name: 'a duplicate no replace explains',
    reason: 'an extra object without a journaled replace is only reported',
    found: 'i-one',
    mine: ['i-one', 'i-two'],
    history: [plainCreate('i-one'), plainCreate('i-two')],
    want: { current: 'i-one', leftovers: [], duplicates: ['i-two'] },
  },
  {
    name: 'a replace that never settled',
    reason: 'a pending step 1 proves nothing (recovery resolves it first)',
    found: 'i-old',
    mine: ['i-old', 'i-new'],
    history: [replaced('i-old', 'i-new', 'g1', 'pending')],
    want: { current: 'i-old', leftovers: [], duplicates: ['i-new'] },
  },
  {
    name: 'replacement gone',
    reason: 'the remembered object stays the current one when its replacement no longer exists',
    found: 'i-old',
    mine: ['i-old', 'i-other'],
    history: [replaced('i-old', 'i-new', 'g1')],
    want: { current: 'i-old', leftovers: [], duplicates: ['i-other'] },
  },
];

describe('explainExtras', () => {
  it.each(CASES)('$name: $reason', ({ found, mine, history, want }) => {
    const objects = new Map(mine.map((id) => [id, obj(id)] as const));
    const got = explainExtras(objects.get(found)!, [...objects.values()], history);
    expect({
      current: got.current.id,
      leftovers: got.leftovers.map((l) => [l.old.id, l.group]),
      duplicates: got.duplicates.map((d) => d.id),
    }).toEqual(want);
  });
});

// Matching objects to addresses when addresses change: moves (renames by natural key, `moved: {
// from }`), explicit adoption of objects Tend has no record of, and another workspace's objects.

describe('observe: moves, adoption and conflicts', () => {
  const cases: {
    name: string;
    reason: string;
    declared: ResourceDecl[];
    objects: ObservedObject[];
    twin: TwinEntry[];
    want: {
      objects: Record<string, string>;
      moves?: Record<string, string>;
      adoptions?: Record<string, string>;
      conflicts?: Record<string, string>;
      removed?: string[];
      orphans?: string[];
    };
  }[] = [
    {
      name: 'rename by natural key',
      reason: 'the new address claims the bucket by name; the removed twin never matches it again',
      declared: [decl('sb.buckets/static', 'assets-b')],
      objects: [listed('buckets', 'assets-b', ['w', 'sb.buckets/assets'])],
      twin: [twinOf('sb.buckets/assets', 'assets-b')],
      want: {
        objects: { 'sb.buckets/static': 'assets-b' },
        moves: { 'sb.buckets/static': 'sb.buckets/assets' },
      },
    },
    {
      name: 'rename of a tagless type',
      reason: 'without a marker, the remembered id of the removed address says it is a move',
      declared: [decl('sb.tagless/new', 'k')],
      objects: [listed('tagless', 'k')],
      twin: [twinOf('sb.tagless/old', 'k')],
      want: { objects: { 'sb.tagless/new': 'k' }, moves: { 'sb.tagless/new': 'sb.tagless/old' } },
    },
    {
      name: 'moved from, marker type',
      reason: 'moved: { from } finds the object Tend recorded under the old address',
      declared: [decl('sb.networks/primary', 'x', 'sb.networks/main')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/main'])],
      twin: [twinOf('sb.networks/main', 'net-1')],
      want: {
        objects: { 'sb.networks/primary': 'net-1' },
        moves: { 'sb.networks/primary': 'sb.networks/main' },
      },
    },
    {
      name: 'moved from, store lost',
      reason: 'without a record, the old address in the marker still finds the object',
      declared: [decl('sb.networks/primary', 'x', 'sb.networks/main')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/main'])],
      twin: [],
      want: {
        objects: { 'sb.networks/primary': 'net-1' },
        moves: { 'sb.networks/primary': 'sb.networks/main' },
      },
    },
    {
      name: 'interrupted move',
      reason:
        'the marker was rewritten but the record not: still a move (re-record), not an adoption',
      declared: [decl('sb.networks/primary', 'x')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/primary'])],
      twin: [twinOf('sb.networks/main', 'net-1')],
      want: {
        objects: { 'sb.networks/primary': 'net-1' },
        moves: { 'sb.networks/primary': 'sb.networks/main' },
      },
    },
    {
      name: 'move half recorded',
      reason: 'a crash left both records: still a move, so the old record is forgotten',
      declared: [decl('sb.networks/primary', 'x')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/primary'])],
      twin: [twinOf('sb.networks/main', 'net-1'), twinOf('sb.networks/primary', 'net-1')],
      want: {
        objects: { 'sb.networks/primary': 'net-1' },
        moves: { 'sb.networks/primary': 'sb.networks/main' },
      },
    },
    {
      name: 'no move marker without moved',
      reason:
        'a marker type found by nothing but an old address is not taken without moved: { from }',
      declared: [decl('sb.networks/primary', 'x')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/main'])],
      twin: [twinOf('sb.networks/main', 'net-1')],
      want: { objects: { 'sb.networks/main': 'net-1' }, removed: ['sb.networks/main'] },
    },
    {
      name: 'store lost',
      reason: 'an object carrying our marker that Tend has no record of is adopted explicitly',
      declared: [decl('sb.networks/main', 'x')],
      objects: [listed('networks', 'net-1', ['w', 'sb.networks/main'])],
      twin: [],
      want: {
        objects: { 'sb.networks/main': 'net-1' },
        adoptions: { 'sb.networks/main': 'marker' },
      },
    },
    {
      name: 'hand-made',
      reason: 'an unmarked object with the natural key is adopted explicitly',
      declared: [decl('sb.buckets/logs', 'logs')],
      objects: [listed('buckets', 'logs')],
      twin: [],
      want: {
        objects: { 'sb.buckets/logs': 'logs' },
        adoptions: { 'sb.buckets/logs': 'natural-key' },
      },
    },
    {
      name: "another workspace's",
      reason: 'an object marked by another workspace is never matched: a conflict, and no orphan',
      declared: [decl('sb.buckets/logs', 'logs')],
      objects: [listed('buckets', 'logs', ['prod', 'sb.buckets/logs'])],
      twin: [],
      want: { objects: {}, conflicts: { 'sb.buckets/logs': 'prod' } },
    },
    {
      name: 'removed',
      reason: 'a remembered object nothing declared claims is removed (deleted by the plan)',
      declared: [],
      objects: [listed('buckets', 'old-b', ['w', 'sb.buckets/old'])],
      twin: [twinOf('sb.buckets/old', 'old-b')],
      want: { objects: { 'sb.buckets/old': 'old-b' }, removed: ['sb.buckets/old'] },
    },
    {
      name: 'nested key, store lost',
      reason: 'a type named by spec.name finds its object by the nested value (no marker)',
      declared: [decl('sb.apps/web', 'x', undefined, { spec: { name: 'web', region: 'ams' } })],
      objects: [
        listed('apps', 'a-2', undefined, { spec: { name: 'api' } }),
        listed('apps', 'a-1', undefined, { spec: { name: 'web', region: 'ams' } }),
      ],
      twin: [],
      want: { objects: { 'sb.apps/web': 'a-1' }, adoptions: { 'sb.apps/web': 'natural-key' } },
    },
    {
      name: 'nested key, not the top-level name',
      reason: 'a listed object whose top-level name equals the nested key is not the one',
      declared: [decl('sb.apps/web', 'x', undefined, { spec: { name: 'web' } })],
      objects: [listed('apps', 'web', undefined, { spec: { name: 'other' } })],
      twin: [],
      want: { objects: {} },
    },
    {
      name: 'nested key missing from the declaration',
      reason: 'a declared spec without spec.name matches nothing (the key is what finds it)',
      declared: [decl('sb.apps/web', 'x', undefined, { spec: { region: 'ams' } })],
      objects: [listed('apps', 'a-1', undefined, { spec: { region: 'ams' } })],
      twin: [],
      want: { objects: {} },
    },
    {
      name: 'marked for another declared address',
      reason: "the natural key never takes an object another declared address's marker names",
      declared: [decl('sb.buckets/a', 'same'), decl('sb.buckets/b', 'same')],
      objects: [listed('buckets', 'same', ['w', 'sb.buckets/b'])],
      twin: [twinOf('sb.buckets/b', 'same')],
      want: { objects: { 'sb.buckets/b': 'same' } },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, async () => {
      const ws = fakeWorkspace(c.declared, c.objects, c.twin);
      const got = await observe(ws, { visibilityWindowMs: 0, now: new Date(0) });
      expect({
        objects: Object.fromEntries([...got.objects].map(([a, o]) => [a, o.id])),
        ...(got.moves.size > 0 ? { moves: Object.fromEntries(got.moves) } : {}),
        ...(got.adoptions.size > 0 ? { adoptions: Object.fromEntries(got.adoptions) } : {}),
        ...(got.conflicts.size > 0
          ? {
              conflicts: Object.fromEntries([...got.conflicts].map(([a, x]) => [a, x.owner])),
            }
          : {}),
        ...(got.removed.length > 0 ? { removed: got.removed.map((r) => r.address) } : {}),
        ...(got.orphans.length > 0 ? { orphans: got.orphans.map((o) => o.object.id) } : {}),
      }).toEqual(c.want);
    });
  }
});
