import { describe, expect, it } from 'vitest';
import type { Address, ObservedObject } from '../core/index.js';
import { ObjectIndex } from './object-index.js';

const A = 'sb.buckets/a' as Address;
const B = 'sb.buckets/b' as Address;
const o = (id: string, marker?: [string, Address], name = id): ObservedObject => ({
  type: 'buckets',
  id,
  fields: { id, name },
  ...(marker ? { marker: { workspace: marker[0], address: marker[1] } } : {}),
});

describe('ObjectIndex', () => {
  const lists = new Map<string, ObservedObject[]>([
    [
      'sb.buckets',
      [
        o('b1', ['w', A], 'logs'),
        o('b2', ['w', A], 'logs'),
        o('b3', ['prod', A], 'logs'),
        o('b1', ['w', B], 'again'),
        o('b4', undefined, 'data'),
      ],
    ],
    ['sb.networks', []],
  ]);
  const ids = (objects: readonly ObservedObject[]) => objects.map((x) => x.id);

  const cases: {
    name: string;
    reason: string;
    got: (ix: ObjectIndex) => unknown;
    want: unknown;
  }[] = [
    {
      name: 'by id',
      reason: 'a list that repeats an id keeps the first object listed',
      got: (ix) => ix.byId('sb.buckets', 'b1')?.fields.name,
      want: 'logs',
    },
    {
      name: 'by id, other type',
      reason: 'ids are per type',
      got: (ix) => ix.byId('sb.networks', 'b1'),
      want: undefined,
    },
    {
      name: 'marked',
      reason: "only this workspace's marker for the address counts, in list order",
      got: (ix) => ids(ix.marked('sb.buckets', A)),
      want: ['b1', 'b2'],
    },
    {
      name: 'marked, none',
      reason: 'an address nothing is marked for has no objects',
      got: (ix) => ids(ix.marked('sb.buckets', 'sb.buckets/c')),
      want: [],
    },
    {
      name: 'listed none',
      reason: 'an empty list and a type never listed (a failed list) have nothing to match',
      got: (ix) => [
        ix.listedNone('sb.buckets'),
        ix.listedNone('sb.networks'),
        ix.listedNone('sb.zones'),
      ],
      want: [false, true, true],
    },
    {
      name: 'natural key',
      reason: 'objects by the key keyOf computes, whoever marked them, in list order',
      got: (ix) => ids(ix.withKey('sb.buckets', 'logs', (x) => String(x.fields.name))),
      want: ['b1', 'b2', 'b3'],
    },
    {
      name: 'claims',
      reason: 'a claim is per type and id',
      got: (ix) => {
        ix.markMatched('sb.buckets', 'b2');
        return [ix.isMatched('sb.buckets', 'b2'), ix.isMatched('sb.networks', 'b2')];
      },
      want: [true, false],
    },
    {
      name: 'unmatched marked',
      reason: "what carries this workspace's marker and nothing matched: orphan candidates",
      got: (ix) => {
        ix.markMatched('sb.buckets', 'b1');
        return ix.unmatchedMarked().map((u) => `${u.type} ${u.object.id}`);
      },
      want: ['sb.buckets b2'],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(c.got(new ObjectIndex('w', lists))).toEqual(c.want);
    });
  }

  it('builds a natural-key index once per type, on first use', () => {
    const ix = new ObjectIndex('w', lists);
    let calls = 0;
    const keyOf = (x: ObservedObject) => {
      calls++;
      return String(x.fields.name);
    };
    expect(calls).toBe(0);
    expect(ids(ix.withKey('sb.buckets', 'data', keyOf))).toEqual(['b4']);
    expect(ids(ix.withKey('sb.buckets', 'none', keyOf))).toEqual([]);
    expect(calls).toBe(5);
  });
});
