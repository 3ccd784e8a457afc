import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Address } from './address.js';
import type { Marker, MarkerKind } from './marker.js';
import {
  isMarkerEntry,
  markerEntries,
  markerTags,
  markerToken,
  readMarker,
  readMarkerEntries,
  readMarkerIn,
  splitMarkerText,
  withMarkerText,
  withoutMarkerIn,
} from './marker.js';

// Ownership markers in the three places platforms offer: a map of strings (tags, labels), a list of
// strings, and a free-text field as the last resort. Every form reads back to the marker written,
// and the user's part of the field comes back exactly as declared.

const M: Marker = { workspace: 'prod', address: 'am.silences/db-maint', op: 'op-1f3a' };
const NO_OP: Marker = { workspace: 'prod', address: 'am.silences/db-maint' };

describe('marker in a list of strings', () => {
  it('writes one entry per part, the op only when there is one', () => {
    expect(markerEntries(M)).toEqual([
      'tend:workspace=prod',
      'tend:address=am.silences/db-maint',
      'tend:op=op-1f3a',
    ]);
    expect(markerEntries(NO_OP)).toEqual([
      'tend:workspace=prod',
      'tend:address=am.silences/db-maint',
    ]);
  });

  it.each([
    ['the entries alone', [...markerEntries(M)], M],
    ['among the user tags, in any order', ['web', ...markerEntries(M).reverse(), 'db'], M],
    ['without an op', ['web', ...markerEntries(NO_OP)], NO_OP],
    ['the first of two entries of a key wins', [...markerEntries(M), 'tend:address=x.y/z'], M],
  ] as const)('reads back %s', (_reason, list, want) => {
    expect(readMarkerEntries(list)).toEqual(want);
  });

  it.each([
    ['no entries', ['web', 'db']],
    ['a workspace but no address', ['tend:workspace=prod']],
    ['an address that is not one', ['tend:workspace=prod', 'tend:address=nothing']],
    ['not a list', { 'tend.workspace': 'prod' }],
    ['a list of non-strings', [1, null, {}]],
  ] as const)('reads no marker from %s', (_reason, list) => {
    expect(readMarkerEntries(list)).toBeUndefined();
  });

  it.each([
    ['tend:workspace=a', true],
    ['tend:address=a.b/c', true],
    ['tend:op=x', true],
    ['tend:other=x', false],
    ['tend:workspace', false],
    ['workspace=a', false],
    [3, false],
  ] as const)('%s is a marker entry: %s', (entry, want) => {
    expect(isMarkerEntry(entry)).toBe(want);
  });
});

describe('marker in free text', () => {
  it.each([
    ['a text', 'db upgrade', M, 'db upgrade [tend:prod/am.silences/db-maint#op-1f3a]'],
    ['an empty text: the token alone', '', M, '[tend:prod/am.silences/db-maint#op-1f3a]'],
    ['a marker without op', 'x', NO_OP, 'x [tend:prod/am.silences/db-maint]'],
  ] as const)('appends the token to %s', (_reason, text, marker, want) => {
    expect(withMarkerText(text, marker)).toBe(want);
    expect(splitMarkerText(want)).toEqual({ text, marker });
  });

  it.each([
    ['no token', 'db upgrade'],
    ['a token not at the end', '[tend:prod/am.silences/db-maint] and more'],
    ['a token glued to a word', 'word[tend:prod/am.silences/db-maint]'],
    ['a workspace that is not a workspace name', 'x [tend:Prod/am.silences/db]'],
    ['an address without a type', 'x [tend:prod/db/maint]'],
    ['an address with an invalid name', 'x [tend:prod/am.silences/DB]'],
    ['an empty op', 'x [tend:prod/am.silences/db#]'],
    ['an unclosed token', 'x [tend:prod/am.silences/db'],
  ] as const)('reads no marker from a text with %s, and keeps the text whole', (_r, text) => {
    expect(splitMarkerText(text)).toEqual({ text });
  });

  it('keeps white space before the separator as the user wrote it', () => {
    expect(splitMarkerText(withMarkerText('a\n', M))).toEqual({ text: 'a\n', marker: M });
    expect(splitMarkerText(withMarkerText('a ', M))).toEqual({ text: 'a ', marker: M });
    expect(splitMarkerText(`a\n${markerToken(M)}`)).toEqual({ text: 'a\n', marker: M });
  });

  it('takes only the last token: a text that itself ends like a token round-trips', () => {
    const own = 'see [tend:other/x.y/z]';
    expect(splitMarkerText(withMarkerText(own, M))).toEqual({ text: own, marker: M });
  });
});

describe('readMarkerIn and withoutMarkerIn: the user part of each kind', () => {
  it.each<[string, MarkerKind | undefined, unknown, Marker | undefined, unknown]>([
    ['a map (the default kind)', undefined, { team: 'a', ...markerTags(M) }, M, { team: 'a' }],
    ['a map', 'map', { team: 'a', ...markerTags(M) }, M, { team: 'a' }],
    ['a list', 'list', ['web', ...markerEntries(M)], M, ['web']],
    ['a text', 'text', withMarkerText('hi', M), M, 'hi'],
    [
      'a text ending like a token twice: all tokens go',
      'text',
      withMarkerText('hi [tend:other/x.y/z]', M),
      M,
      'hi',
    ],
    ['a text without marker', 'text', 'hi', undefined, 'hi'],
    ['a map given a list', 'map', ['a'], undefined, ['a']],
    ['a list given a string', 'list', 'a', undefined, 'a'],
    ['a text given a number', 'text', 3, undefined, 3],
    ['nothing', 'text', undefined, undefined, undefined],
  ])('%s', (_reason, kind, value, marker, user) => {
    expect(readMarkerIn(kind, value)).toEqual(marker);
    expect(withoutMarkerIn(kind, value)).toEqual(user);
  });
});

const workspace = fc.stringMatching(/^[a-z0-9](?:[a-z0-9._-]{0,20}[a-z0-9])?$/);
const address = fc
  .tuple(
    fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,8}$/),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,8}$/),
    fc.stringMatching(/^[a-z0-9]([a-z0-9_-]{0,8}[a-z0-9])?$/),
  )
  .map(([p, t, n]) => `${p}.${t}/${n}` as Address);
const op = fc.option(fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/), { nil: undefined });
const marker = fc
  .tuple(workspace, address, op)
  .map(([w, a, o]): Marker =>
    o === undefined ? { workspace: w, address: a } : { workspace: w, address: a, op: o },
  );

describe('round trips (properties)', () => {
  it('any text with a marker appended splits back into exactly the text and the marker', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), marker, (text, m) => {
        expect(splitMarkerText(withMarkerText(text, m))).toEqual({ text, marker: m });
      }),
    );
  });

  it('a text made of tokens and spaces still gives back the text before the last token', () => {
    const tokenish = fc.array(fc.oneof(marker.map(markerToken), fc.constantFrom(' ', '\n', 'x')), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(tokenish, marker, (parts, m) => {
        const text = parts.join('');
        expect(splitMarkerText(withMarkerText(text, m))).toEqual({ text, marker: m });
      }),
    );
  });

  it('any list of user entries with the marker entries gives back the marker and the user list', () => {
    const userEntry = fc.string({ maxLength: 20 }).filter((s) => !s.startsWith('tend:'));
    fc.assert(
      fc.property(fc.array(userEntry, { maxLength: 8 }), marker, fc.nat(8), (user, m, at) => {
        const list = [...user.slice(0, at), ...markerEntries(m), ...user.slice(at)];
        expect(readMarkerEntries(list)).toEqual(m);
        expect(withoutMarkerIn('list', list)).toEqual(user);
      }),
    );
  });

  it('map tags read back to the marker', () => {
    fc.assert(
      fc.property(marker, (m) => {
        expect(readMarker(markerTags(m))).toEqual(m);
      }),
    );
  });
});
