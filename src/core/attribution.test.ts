import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkActorKind,
  checkIntentWord,
  checkMotivationKind,
  checkUrgency,
  formatDuration,
  formatMotivation,
  motivationExpired,
  parseDuration,
  parseMotivation,
} from './attribution.js';

// The attribution vocabulary: every text form an actor sends (the X-Tend-Motivation header, the
// flags of tend announce) parses to one value or is refused with a message that says what to write.

const AT = new Date('2026-11-24T12:00:00Z');

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['15m', 900_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
    ['1w', 604_800_000],
    ['250ms', 250],
    [' 2h ', 7_200_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: ms });
  });

  it.each([
    ['2', 'is not a duration: write a number and a unit, e.g. 30s, 15m, 2h, 1h30m, 7d'],
    ['2 hours', 'is not a duration'],
    ['-5m', 'is not a duration'],
    ['', 'is not a duration'],
    ['0s', 'is a zero duration: give a positive one'],
  ])('"%s" is refused: %s', (text, message) => {
    const r = parseDuration(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [-5, '0s'],
    [250, '250ms'],
    [45_000, '45s'],
    [5_400_000, '1h30m'],
    [90_061_000, '1d1h1m1s'],
  ])('%d ms reads %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('reads back as the same duration (whole seconds)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (s) => {
        expect(parseDuration(formatDuration(s * 1000))).toEqual({ ok: true, value: s * 1000 });
      }),
    );
  });
});

describe('words', () => {
  it.each([
    ['availability', true],
    ['security', true],
    ['revenue-protection', true],
    ['Cost', false],
    ['cost saving', false],
    ['', false],
    ['a'.repeat(41), false],
  ])('intent %j accepted: %s', (word, ok) => {
    const r = checkIntentWord(word);
    expect(r.ok).toBe(ok);
    if (!r.ok) expect(r.error).toMatch(/use one of availability, cost, .* or a custom word/);
  });

  it.each([
    ['incident', true],
    ['cve', true],
    ['release-train', true],
    ['INC', false],
  ])('motivation kind %j accepted: %s', (word, ok) => {
    const r = checkMotivationKind(word);
    expect(r.ok).toBe(ok);
    if (!r.ok) expect(r.error).toMatch(/use one of incident, cve, traffic/);
  });

  it('actor kinds and urgencies are closed lists, named in the message', () => {
    expect(checkActorKind('controller')).toEqual({ ok: true, value: 'controller' });
    expect(checkActorKind('robot')).toEqual({
      ok: false,
      error: 'actor kind "robot" is not one of human, controller, agent, pipeline, tend',
    });
    expect(checkUrgency('high')).toEqual({ ok: true, value: 'high' });
    expect(checkUrgency('urgent')).toEqual({
      ok: false,
      error: 'urgency "urgent" is not one of low, normal, high, critical',
    });
  });
});

describe('parseMotivation', () => {
  it.each([
    ['incident', { kind: 'incident' }],
    ['incident:INC-42', { kind: 'incident', ref: 'INC-42' }],
    ['traffic:spike 2026-11-24', { kind: 'traffic', ref: 'spike 2026-11-24' }],
    ['cve:CVE-2026-1234; urgency=high', { kind: 'cve', ref: 'CVE-2026-1234', urgency: 'high' }],
    [
      'incident:INC-42; ttl=2h',
      { kind: 'incident', ref: 'INC-42', expiresAt: '2026-11-24T14:00:00.000Z' },
    ],
    [
      'traffic; expires=2026-11-24T14:30:00Z',
      { kind: 'traffic', expiresAt: '2026-11-24T14:30:00.000Z' },
    ],
    ['budget:q4:target', { kind: 'budget', ref: 'q4:target' }],
    ['budget; ', { kind: 'budget' }],
  ])('%j', (text, want) => {
    expect(parseMotivation(text, AT)).toEqual({ ok: true, value: want });
  });

  it.each([
    ['Incident', 'motivation "Incident" is not a kind Tend can record'],
    ['incident; urgency=asap', 'urgency "asap" is not one of low, normal, high, critical'],
    ['incident; ttl=soon', 'ttl: "soon" is not a duration'],
    [
      'incident; expires=tomorrow',
      'expires: "tomorrow" is not an ISO time such as 2026-11-24T14:00:00Z',
    ],
    ['incident; owner=alice', '"owner" is not a motivation option: use urgency=, ttl= or expires='],
    [`incident:${'x'.repeat(201)}`, 'longer than 200 characters'],
  ])('%j is refused: %s', (text, message) => {
    const r = parseMotivation(text, AT);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(message);
  });

  it('never throws, and what it reads prints back to the same motivation', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const r = parseMotivation(text, AT);
        if (r.ok) expect(parseMotivation(formatMotivation(r.value), AT)).toEqual(r);
      }),
    );
  });
});

describe('motivationExpired', () => {
  const m = { kind: 'traffic', expiresAt: '2026-11-24T14:00:00.000Z' };
  it.each([
    ['before its expiry', '2026-11-24T13:59:59Z', false],
    ['at its expiry', '2026-11-24T14:00:00Z', true],
    ['after it', '2026-11-24T15:00:00Z', true],
  ])('%s: %s', (_what, now, expired) => {
    expect(motivationExpired(m, new Date(now))).toBe(expired);
  });
  it('a motivation without an expiry, or none, never expires', () => {
    expect(motivationExpired({ kind: 'incident' }, new Date('2100-01-01T00:00:00Z'))).toBe(false);
    expect(motivationExpired(undefined, AT)).toBe(false);
  });
});
