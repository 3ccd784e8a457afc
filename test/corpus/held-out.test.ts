// The held-out measure (issue 27, item 3; test/corpus/README.md, "The split"): what counts as a
// wrong natural key, how a document is scored, and when a score falls below its floor. No document
// is loaded here: the inspections are made by hand.
import { describe, expect, it } from 'vitest';
import {
  type Expectation,
  type ExpectedType,
  type InspectedType,
  type Inspection,
  score,
  wrongKey,
} from './corpus.js';
import { belowFloor, ratio, totals } from './held-out.js';
import { renderHeldOut } from './summary.js';

const expected = (over: Partial<ExpectedType>): ExpectedType => ({
  name: 'things',
  path: '/orgs/{org}/things',
  alt: [],
  identity: 'safe',
  key: [],
  why: 'w',
  overlay: false,
  ...over,
});
const inspected = (over: Partial<InspectedType>): InspectedType => ({
  name: 'things',
  collectionPath: '/orgs/{org}/things',
  itemPath: '/orgs/{org}/things/{id}',
  create: { method: 'POST', path: '/orgs/{org}/things' },
  identity: null,
  identityReason: 'no key',
  ...over,
});
const keyed = (naturalKey: string[]): InspectedType =>
  inspected({ identity: 'natural-key', naturalKey });

describe('a wrong natural key', () => {
  it.each([
    ['a field the document supports', expected({ key: ['name'] }), keyed(['name']), undefined],
    ['with its parent scope', expected({ key: ['name'] }), keyed(['org', 'name']), undefined],
    ['a field it does not support', expected({ key: ['slug'] }), keyed(['org', 'name']), ['name']],
    ['any field where it supports none', expected({}), keyed(['label']), ['label']],
    ['one of two fields', expected({ key: ['type'] }), keyed(['type', 'name']), ['name']],
    ['not a natural key (a marker)', expected({}), inspected({ identity: 'marker' }), undefined],
    ['no identity', expected({}), inspected({}), undefined],
  ])('%s', (_name, e, found, bad) => {
    expect(wrongKey(e, found)).toEqual(bad);
  });
});

const doc = (types: ExpectedType[]): Expectation => ({
  slug: 'x',
  set: 'held-out',
  document: 'x.json',
  types,
});
const report = (types: InspectedType[]): Inspection => ({
  ms: 1200,
  report: {
    version: '3.0.0',
    types,
    unmapped: [{ path: '/gone', reason: 'no GET' }],
    warnings: [],
  },
});

describe('scoring a held-out document', () => {
  const e = doc([
    expected({ name: 'things', key: ['name'] }),
    expected({ name: 'others', path: '/others', identity: 'none' }),
    expected({ name: 'gone', path: '/gone' }),
    expected({ name: 'guessed', path: '/guessed', identity: 'none' }),
  ]);
  const found = report([
    keyed(['org', 'name']),
    inspected({
      name: 'others',
      collectionPath: '/others',
      create: { method: 'POST', path: '/others' },
    }),
    inspected({
      name: 'guessed',
      collectionPath: '/guessed',
      create: { method: 'POST', path: '/guessed' },
      identity: 'natural-key',
      naturalKey: ['title'],
    }),
  ]);

  it('counts found, identity agreement and wrong keys, with one line per miss', () => {
    expect(score(e, found)).toEqual({
      expected: 4,
      found: 3,
      identity: 2,
      wrongKeys: ['guessed: title'],
      misses: [
        'gone (/gone): not found; inspect says /gone: no GET',
        'guessed (/guessed): found as guessed, but identity natural-key where a person sees none that is safe (w)',
      ],
    });
  });

  it('counts nothing found when the document does not load, saying why', () => {
    const s = score(e, { ms: 1, crashed: 'did not finish within 30 s (killed)' });
    expect(s).toMatchObject({ expected: 4, found: 0, identity: 0, wrongKeys: [] });
    expect(s.misses[0]).toBe(
      'things (/orgs/{org}/things): the document did not load (did not finish within 30 s (killed))',
    );
  });

  it('leaves out types that need an overlay (a held-out document is measured without one)', () => {
    expect(score(doc([expected({ overlay: true })]), found).expected).toBe(0);
  });

  it('holds at its floor, and fails below it or with a new wrong key', () => {
    const s = score(e, found);
    expect(belowFloor(e, s, { found: 3, identity: 2, wrongKeys: ['guessed: title'] })).toEqual([]);
    expect(belowFloor(e, s, { found: 4, identity: 3, wrongKeys: [] })).toEqual([
      'x: 3 expected types found, below its floor of 4',
      'x: 2 with the expected identity, below its floor of 3',
      'x: a natural key on a field the document does not support (guessed: title); a guess is worse than no identity',
    ]);
    expect(belowFloor(e, s, undefined)[0]).toMatch(/^x is held out but has no floor/);
  });

  it('adds up and renders the held-out figure first', () => {
    expect(totals([score(e, found), score(e, found)])).toEqual({
      documents: 2,
      expected: 8,
      found: 6,
      identity: 4,
      wrongKeys: 2,
    });
    expect(ratio(42, 73)).toBe('42 of 73 (57.5 %)');
    const text = renderHeldOut([
      { expectation: e, plain: found, declaredVersion: 'openapi 3.0.0' },
    ]);
    expect(text.split('\n')[0]).toBe(
      '**The held-out figure** (1 documents the inference was never tuned on): **3 of 4 (75.0 %)** of the expected types found; **2 of 4 (50.0 %)** with the identity a person expects; **1** natural keys on a field the document does not support.',
    );
    expect(text).toContain('| x.json | openapi 3.0.0 | yes | 4 | 3 | 2 | 1 | none | 1.2 |');
    expect(text).toContain('- x: gone (/gone): not found; inspect says /gone: no GET');
    expect(text).toContain('- x: wrong natural key: guessed: title');
  });
});
