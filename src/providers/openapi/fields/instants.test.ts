import { describe, expect, it } from 'vitest';
import { PAST, canonicalInstant, pastIsNow } from './instants.js';
import { normalizeValue } from './normalize.js';

// Date-times compare as instants: the spelling a platform answers with (milliseconds, an offset, a
// lower-case z) never shows as drift, and a text that is not a date-time is left as it is.

describe('canonicalInstant', () => {
  it.each([
    ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 'already canonical'],
    ['2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00Z', 'zero milliseconds (Alertmanager)'],
    ['2026-12-01T00:00:00.120Z', '2026-12-01T00:00:00.12Z', 'trailing zeros of a fraction'],
    ['2026-12-01T01:00:00+01:00', '2026-12-01T00:00:00Z', 'an offset east'],
    ['2026-11-30T19:30:00-04:30', '2026-12-01T00:00:00Z', 'an offset west, across midnight'],
    ['2026-12-01t00:00:00z', '2026-12-01T00:00:00Z', 'lower-case t and z'],
    ['2026-12-01 00:00:00Z', '2026-12-01T00:00:00Z', 'a space for T (RFC 3339 allows it)'],
    ['2026-12-01T00:00:00.123456789Z', '2026-12-01T00:00:00.123456789Z', 'nanoseconds kept'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z', "Go's zero time"],
  ])('%s is %s (%s)', (text, want) => {
    expect(canonicalInstant(text)).toBe(want);
  });

  it.each([
    ['2026-12-01', 'a date without a time'],
    ['2026-12-01T00:00:00', 'no offset: not an instant'],
    ['2026-02-30T00:00:00Z', 'a day its month does not have'],
    ['2026-13-01T00:00:00Z', 'month 13'],
    ['2026-12-01T24:00:00Z', 'hour 24'],
    ['2026-12-01T00:00:60Z', 'a leap second'],
    ['2026-12-01T00:00:00+24:00', 'an offset of a day'],
    ['tomorrow', 'words'],
    ['', 'nothing'],
  ])('%s is not an instant (%s)', (text) => {
    expect(canonicalInstant(text)).toBeUndefined();
  });

  it('makes format: date-time strings compare equal, and leaves other strings alone', () => {
    const schema = { type: 'string', format: 'date-time' };
    expect(normalizeValue(schema, '2026-12-01T00:00:00.000Z')).toBe(
      normalizeValue(schema, '2026-12-01T00:00:00Z'),
    );
    expect(normalizeValue(schema, 'soon')).toBe('soon');
    expect(normalizeValue({ type: 'string' }, '2026-12-01T00:00:00.000Z')).toBe(
      '2026-12-01T00:00:00.000Z',
    );
  });
});

describe('pastIsNow', () => {
  const schema = { type: 'string', format: 'date-time', 'x-tend-normalize': ['past-is-now'] };
  const NOW = Date.parse('2026-11-25T12:00:00Z');
  it.each([
    ['2026-11-25T11:59:59Z', PAST, 'a second ago'],
    ['2026-11-25T12:00:00Z', PAST, 'now itself'],
    ['2020-01-01T00:00:00Z', PAST, 'long ago'],
    ['2026-11-25T12:00:00.5Z', '2026-11-25T12:00:00.5Z', 'half a second ahead'],
    ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 'next week'],
    ['not a time', 'not a time', 'not an instant'],
  ])('%s compares as %s (%s)', (value, want) => {
    expect(pastIsNow(schema, value, NOW)).toBe(want);
  });

  it('does nothing without the annotation', () => {
    expect(pastIsNow({ format: 'date-time' }, '2020-01-01T00:00:00Z', NOW)).toBe(
      '2020-01-01T00:00:00Z',
    );
  });
});
