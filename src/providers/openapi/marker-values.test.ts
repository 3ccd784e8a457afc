import { describe, expect, it } from 'vitest';
import type { Address, Marker, MarkerKind, ObservedObject } from '../../core/index.js';
import type { DerivedType } from './derive-types.js';
import { markerOf, withMarker, withoutMarkerAt } from './marker-values.js';

// What Tend sends in a type's marker field on create and update, per marker kind: the declared value
// with the marker, the create's op kept on later updates, and nothing at all when an update would
// not change the field.

const A = 'am.silences/db' as Address;
const CREATE: Marker = { workspace: 'prod', address: A, op: 'op1' };
const LATER: Marker = { workspace: 'prod', address: A };
const OTHER: Marker = { workspace: 'prod', address: 'am.silences/web' };

function typeWith(field: string, kind: MarkerKind): DerivedType {
  return { info: { markerField: field, markerKind: kind } } as unknown as DerivedType;
}

function current(fields: Record<string, unknown>): ObservedObject {
  return { type: 't', id: '1', fields };
}

const TEXT = typeWith('comment', 'text');
const LIST = typeWith('tags', 'list');
const MAP = typeWith('metadata.labels', 'map');

interface Case {
  name: string;
  t: DerivedType;
  body: Record<string, unknown>;
  current?: ObservedObject;
  marker?: Marker;
  want: Record<string, unknown>;
}

const cases: Case[] = [
  {
    name: 'text, create: the declared text and the token',
    t: TEXT,
    body: { comment: 'db upgrade' },
    marker: CREATE,
    want: { comment: 'db upgrade [tend:prod/am.silences/db#op1]' },
  },
  {
    name: 'text, create without a declared text: the token alone',
    t: TEXT,
    body: {},
    marker: CREATE,
    want: { comment: '[tend:prod/am.silences/db#op1]' },
  },
  {
    name: 'text, update of the text: the create op is kept',
    t: TEXT,
    body: { comment: 'new' },
    current: current({ comment: 'old [tend:prod/am.silences/db#op1]' }),
    marker: LATER,
    want: { comment: 'new [tend:prod/am.silences/db#op1]' },
  },
  {
    name: 'text, update of another field with the marker in place: the text is not sent',
    t: TEXT,
    body: { size: 2 },
    current: current({ comment: 'old [tend:prod/am.silences/db#op1]' }),
    marker: LATER,
    want: { size: 2 },
  },
  {
    name: 'text, marker removed by someone: the text comes back with it',
    t: TEXT,
    body: {},
    current: current({ comment: 'edited by hand' }),
    marker: LATER,
    want: { comment: 'edited by hand [tend:prod/am.silences/db]' },
  },
  {
    name: 'text, moved to another address: the new address',
    t: TEXT,
    body: {},
    current: current({ comment: 'x [tend:prod/am.silences/db#op1]' }),
    marker: OTHER,
    want: { comment: 'x [tend:prod/am.silences/web#op1]' },
  },
  {
    name: 'list, create: user entries then marker entries',
    t: LIST,
    body: { tags: ['web'] },
    marker: CREATE,
    want: { tags: ['web', 'tend:workspace=prod', 'tend:address=am.silences/db', 'tend:op=op1'] },
  },
  {
    name: 'list, update of the list: the create op is kept, stale entries dropped',
    t: LIST,
    body: { tags: ['db', 'tend:workspace=old'] },
    current: current({
      tags: ['web', 'tend:workspace=prod', 'tend:address=am.silences/db', 'tend:op=op1'],
    }),
    marker: LATER,
    want: { tags: ['db', 'tend:workspace=prod', 'tend:address=am.silences/db', 'tend:op=op1'] },
  },
  {
    name: 'list, update without the list and the marker in place: not sent',
    t: LIST,
    body: {},
    current: current({ tags: ['tend:workspace=prod', 'tend:address=am.silences/db'] }),
    marker: LATER,
    want: {},
  },
  {
    name: 'list, marker missing: the current entries and the marker',
    t: LIST,
    body: {},
    current: current({ tags: ['web'] }),
    marker: LATER,
    want: { tags: ['web', 'tend:workspace=prod', 'tend:address=am.silences/db'] },
  },
  {
    name: 'nested map, create: the path is made',
    t: MAP,
    body: { metadata: { name: 'x' } },
    marker: CREATE,
    want: {
      metadata: {
        name: 'x',
        labels: { 'tend.workspace': 'prod', 'tend.address': 'am.silences/db', 'tend.op': 'op1' },
      },
    },
  },
  {
    name: 'nested map, declared labels: declared, kept and new marker keys',
    t: MAP,
    body: { metadata: { labels: { team: 'a' } } },
    current: current({ metadata: { labels: { 'tend.op': 'op1', 'tend.workspace': 'prod' } } }),
    marker: LATER,
    want: {
      metadata: {
        labels: { team: 'a', 'tend.op': 'op1', 'tend.workspace': 'prod', 'tend.address': A },
      },
    },
  },
  {
    name: 'no marker to write and nothing declared: unchanged',
    t: TEXT,
    body: { size: 1 },
    want: { size: 1 },
  },
];

describe('withMarker', () => {
  it.each(cases)('$name', ({ t, body, current, marker, want }) => {
    expect(withMarker(t, body, current, marker)).toEqual(want);
  });
});

describe('markerOf and withoutMarkerAt', () => {
  it.each<[string, DerivedType, Record<string, unknown>, Marker | undefined]>([
    ['a text', TEXT, { comment: 'x [tend:prod/am.silences/db#op1]' }, CREATE],
    ['a list', LIST, { tags: ['tend:workspace=prod', 'tend:address=am.silences/db'] }, LATER],
    [
      'a nested map',
      MAP,
      { metadata: { labels: { 'tend.workspace': 'prod', 'tend.address': A, 'tend.op': 'op1' } } },
      CREATE,
    ],
    ['a text without token', TEXT, { comment: 'x' }, undefined],
  ])('reads the marker of %s', (_name, t, fields, want) => {
    expect(markerOf(t, fields)).toEqual(want);
  });

  it('compares the marker field without the marker, and other fields as they are', () => {
    expect(withoutMarkerAt(TEXT, 'comment', 'x [tend:prod/am.silences/db#op1]')).toBe('x');
    expect(withoutMarkerAt(TEXT, 'other', 'x [tend:prod/am.silences/db#op1]')).toBe(
      'x [tend:prod/am.silences/db#op1]',
    );
    expect(withoutMarkerAt(LIST, 'tags', ['a', 'tend:workspace=prod'])).toEqual(['a']);
  });
});
