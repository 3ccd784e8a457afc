import { describe, expect, it } from 'vitest';
import type { Address, ObservedObject, Operation } from '../core/index.js';
import { explainExtras } from './observe.js';

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
