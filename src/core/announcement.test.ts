import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Address } from './address.js';
import type { Announcement } from './announcement.js';
import {
  ANNOUNCE_AFTER_MS,
  ANNOUNCEMENT_KEYS,
  announcementExpired,
  announcementId,
  announcementInput,
  matchesDrift,
  readAnnouncement,
} from './announcement.js';
import { ACTOR_KINDS, INTENT_WORDS, MOTIVATION_KINDS, URGENCIES } from './attribution.js';
import { forbiddenKeyPaths } from './safe-keys.js';

const NOW = new Date('2026-11-24T12:00:00.000Z');
/** An ISO time `ms` after NOW. */
const at = (ms: number): string => new Date(NOW.getTime() + ms).toISOString();
const H = 3_600_000;
const D = 24 * H;

const base = {
  address: 'sb.services/api' as Address,
  field: 'replicas',
  value: 5,
  actor: 'hpa',
};

describe('readAnnouncement: valid input', () => {
  const cases: {
    name: string;
    reason: string;
    input: Record<string, unknown>;
    want: Omit<Announcement, 'id'>;
  }[] = [
    {
      name: 'minimal',
      reason: 'address, field, value and actor are enough; it lasts an hour',
      input: base,
      want: { ...base, createdAt: at(0), expiresAt: at(H) },
    },
    {
      name: 'spec prefix',
      reason: 'the field is written as in the resource document; the spec. prefix is stripped',
      input: { ...base, field: 'spec.tags.team', value: 'web' },
      want: { ...base, field: 'tags.team', value: 'web', createdAt: at(0), expiresAt: at(H) },
    },
    {
      name: 'everything, motivation as text',
      reason: 'the text form of a motivation is parsed, and expires with the announcement',
      input: {
        ...base,
        actorKind: 'controller',
        intent: 'availability',
        motivation: 'traffic:spike 2026-11-24; urgency=high',
        ttl: '2h',
        note: 'Black Friday\nsee the runbook',
      },
      want: {
        ...base,
        actorKind: 'controller',
        intent: 'availability',
        motivation: {
          kind: 'traffic',
          ref: 'spike 2026-11-24',
          urgency: 'high',
          expiresAt: at(2 * H),
        },
        createdAt: at(0),
        expiresAt: at(2 * H),
        note: 'Black Friday\nsee the runbook',
      },
    },
    {
      name: 'motivation as a mapping with its own expiry',
      reason: 'a reason that ends before (or after) the announcement keeps its own expiry',
      input: {
        ...base,
        motivation: { kind: 'incident', ref: 'INC-42', urgency: 'critical', expires: at(H / 2) },
      },
      want: {
        ...base,
        motivation: { kind: 'incident', ref: 'INC-42', urgency: 'critical', expiresAt: at(H / 2) },
        createdAt: at(0),
        expiresAt: at(H),
      },
    },
    {
      name: 'ref and urgency beside the motivation',
      reason: 'the CLI gives --motivation, --ref and --urgency separately',
      input: { ...base, motivation: 'traffic', ref: 'spike 2026-11-24', urgency: 'high' },
      want: {
        ...base,
        motivation: { kind: 'traffic', ref: 'spike 2026-11-24', urgency: 'high', expiresAt: at(H) },
        createdAt: at(0),
        expiresAt: at(H),
      },
    },
    {
      name: 'the motivation text carries a ttl',
      reason: 'ttl= in the text form counts from now, like the announcement’s',
      input: { ...base, motivation: 'incident:INC-7; ttl=30m' },
      want: {
        ...base,
        motivation: { kind: 'incident', ref: 'INC-7', expiresAt: at(30 * 60_000) },
        createdAt: at(0),
        expiresAt: at(H),
      },
    },
    {
      name: 'expiresAt',
      reason: 'an absolute expiry, normalised to the ISO form Tend writes',
      input: { ...base, expiresAt: '2026-11-25T00:00:00Z' },
      want: { ...base, createdAt: at(0), expiresAt: '2026-11-25T00:00:00.000Z' },
    },
    {
      name: 'the longest ttl',
      reason: '30 days is allowed',
      input: { ...base, ttl: '30d' },
      want: { ...base, createdAt: at(0), expiresAt: at(30 * D) },
    },
    {
      name: 'the shortest ttl',
      reason: 'one second is allowed',
      input: { ...base, ttl: '1s' },
      want: { ...base, createdAt: at(0), expiresAt: at(1000) },
    },
    {
      name: 'a custom intent word and motivation kind',
      reason: 'vocabularies are open: any lower-case word may be recorded',
      input: { ...base, intent: 'carbon', motivation: 'green-hours' },
      want: {
        ...base,
        intent: 'carbon',
        motivation: { kind: 'green-hours', expiresAt: at(H) },
        createdAt: at(0),
        expiresAt: at(H),
      },
    },
    {
      name: 'null and structured values',
      reason: 'any JSON value may be announced, null included; -0 is written 0',
      input: { ...base, value: { team: 'web', sizes: [1, -0, null] } },
      want: {
        ...base,
        value: { team: 'web', sizes: [1, 0, null] },
        createdAt: at(0),
        expiresAt: at(H),
      },
    },
    {
      name: 'null value',
      reason: 'an actor may clear a field',
      input: { ...base, value: null },
      want: { ...base, value: null, createdAt: at(0), expiresAt: at(H) },
    },
    {
      name: 'unicode actor',
      reason: 'names are text, not identifiers',
      input: { ...base, actor: 'Zoë 🤖 (on call)' },
      want: { ...base, actor: 'Zoë 🤖 (on call)', createdAt: at(0), expiresAt: at(H) },
    },
  ];
  it.each(cases)('$name: $reason', ({ input, want }) => {
    const got = readAnnouncement(input, NOW);
    expect(got).toEqual({
      ok: true,
      value: { ...want, id: expect.any(String) as string },
      warnings: [],
    });
    if (got.ok) {
      expect(got.value).toStrictEqual({ ...want, id: announcementId(want) });
      expect(got.value.id).toMatch(/^[0-9a-f]{12}$/);
    }
  });
});

describe('readAnnouncement: bad input', () => {
  const cases: { name: string; reason: string; input: unknown; errors: string[] }[] = [
    {
      name: 'a list',
      reason: 'one announcement is a mapping',
      input: [base],
      errors: [
        'an announcement is a mapping with address, field, value and actor (and optionally actorKind, intent, motivation, ref, urgency, ttl or expiresAt, note); got a list',
      ],
    },
    {
      name: 'nothing',
      reason: 'every missing key is named, with what to write',
      input: {},
      errors: [
        'address: missing; write the resource as provider.type/name, e.g. sb.services/api',
        'field: missing; write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
        'value: missing; write the value the actor sets as JSON, e.g. 5, true, "blue" or {"team": "web"}',
        'actor: missing; write who makes the change, e.g. hpa, alice or deploy-bot',
      ],
    },
    {
      name: 'unknown keys',
      reason: 'a typo is never silently dropped: it is named with the nearest key',
      input: { ...base, actorkind: 'controller', motive: 'traffic', 'actor-kind': 'human' },
      errors: [
        'actorkind: unknown key; did you mean actorKind?',
        'motive: unknown key; the keys are address, field, value, actor, actorKind, intent, motivation, ref, urgency, ttl, expiresAt, note',
        'actor-kind: unknown key; did you mean actorKind?',
      ],
    },
    {
      name: 'keys Tend sets',
      reason: 'an announcement cannot be back-dated or given an id',
      input: { ...base, id: 'abc', createdAt: at(-D) },
      errors: [
        'id: is computed by Tend from the content; remove it',
        'createdAt: is the time Tend stores the announcement; remove it (use ttl or expiresAt for how long it lasts)',
      ],
    },
    {
      name: 'a bad address',
      reason: 'an address is provider.type/name',
      input: { ...base, address: 'services/api' },
      errors: [
        'address: "services/api" is not an address; write the resource as provider.type/name, e.g. sb.services/api (lower-case name of letters, digits, - and _)',
      ],
    },
    {
      name: 'an address that is not text',
      reason: 'the type of a value is named',
      input: { ...base, address: 42 },
      errors: [
        'address: is the number 42; write the resource as provider.type/name, e.g. sb.services/api',
      ],
    },
    {
      name: 'an empty segment',
      reason: 'tags..team names nothing',
      input: { ...base, field: 'tags..team' },
      errors: [
        'field: "tags..team" has an empty segment; write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
      ],
    },
    {
      name: 'the whole spec',
      reason: 'an announcement is about one field',
      input: { ...base, field: 'spec' },
      errors: ['field: "spec" names the whole spec; name one field in it, e.g. spec.replicas'],
    },
    {
      name: 'spec. alone',
      reason: 'the prefix stripped leaves nothing',
      input: { ...base, field: 'spec.' },
      errors: [
        'field: "spec." has an empty segment; write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
      ],
    },
    {
      name: 'a prototype segment',
      reason: 'a field path is used as keys later: __proto__ could reach a prototype',
      input: { ...base, field: 'tags.__proto__' },
      errors: [
        'field: "tags.__proto__" uses the segment __proto__, which Tend refuses (it could reach an object\'s prototype); write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
      ],
    },
    {
      name: 'constructor segment',
      reason: 'constructor and prototype are refused like __proto__',
      input: { ...base, field: 'constructor.prototype' },
      errors: [
        'field: "constructor.prototype" uses the segment constructor, which Tend refuses (it could reach an object\'s prototype); write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
      ],
    },
    {
      name: 'a value that is not JSON',
      reason: 'NaN cannot be stored or compared as JSON',
      input: { ...base, value: { ratio: Number.NaN } },
      errors: [
        'value: holds NaN at $.ratio, which JSON cannot carry; write the value the actor sets as JSON, e.g. 5, true, "blue" or {"team": "web"}',
      ],
    },
    {
      name: 'a value with a prototype key',
      reason: 'parsed JSON may carry __proto__ as an own key',
      input: { ...base, value: JSON.parse('{"a":{"__proto__":{"x":1}}}') as unknown },
      errors: [
        "value: holds the key __proto__ at $.a.__proto__, which Tend refuses (it could reach an object's prototype); rename it",
      ],
    },
    {
      name: 'an empty actor',
      reason: 'someone made the change',
      input: { ...base, actor: '  ' },
      errors: ['actor: is empty; write who makes the change, e.g. hpa, alice or deploy-bot'],
    },
    {
      name: 'a long actor',
      reason: 'at most 100 characters',
      input: { ...base, actor: 'a'.repeat(101) },
      errors: [
        'actor: is longer than 100 characters; write who makes the change, e.g. hpa, alice or deploy-bot',
      ],
    },
    {
      name: 'control characters in the actor',
      reason: 'an actor name is printed on terminals',
      input: { ...base, actor: 'hpa\u001b[31m' },
      errors: [
        'actor: "hpa\\u001b[31m" holds control characters; write who makes the change, e.g. hpa, alice or deploy-bot',
      ],
    },
    {
      name: 'spaces around the actor',
      reason: '" hpa" would not match a rule for hpa',
      input: { ...base, actor: ' hpa' },
      errors: ['actor: " hpa" starts or ends with spaces; write "hpa"'],
    },
    {
      name: 'an unknown actor kind',
      reason: 'actor kinds are a closed list',
      input: { ...base, actorKind: 'robot' },
      errors: [
        'actorKind: "robot" is not an actor kind: use one of human, controller, agent, pipeline, tend',
      ],
    },
    {
      name: 'a capitalised actor kind',
      reason: 'the lower-case spelling is suggested',
      input: { ...base, actorKind: 'Controller' },
      errors: [
        'actorKind: "Controller" is not an actor kind (did you mean controller?): use one of human, controller, agent, pipeline, tend',
      ],
    },
    {
      name: 'a bad intent word',
      reason: 'intent words are lower case',
      input: { ...base, intent: 'Availability' },
      errors: [
        'intent: "Availability" is not an intent word (did you mean availability?): use one of availability, cost, security, compliance, performance, consistency, or a custom word of lower-case letters, digits and dashes (at most 40)',
      ],
    },
    {
      name: 'a bad motivation text',
      reason: 'the text form’s own error is given, with the form',
      input: { ...base, motivation: 'traffic; urgency=urgent' },
      errors: [
        'motivation: urgency "urgent" is not one of low, normal, high, critical (the text form is kind[:ref][; urgency=high][; ttl=2h | expires=<ISO time>], e.g. traffic:spike 2026-11-24; urgency=high)',
      ],
    },
    {
      name: 'a motivation ttl beyond any date',
      reason: 'a huge ttl in the text form is reported, not thrown',
      input: { ...base, motivation: 'incident; ttl=999999999w' },
      errors: [
        'motivation: its ttl is too long to be a time; give a ttl such as 2h (the text form is kind[:ref][; urgency=high][; ttl=2h | expires=<ISO time>], e.g. traffic:spike 2026-11-24; urgency=high)',
      ],
    },
    {
      name: 'a motivation mapping with problems',
      reason: 'every problem of the mapping is named with its path',
      input: { ...base, motivation: { kind: 'Traffic', reff: 'spike', urgency: 'hihg' } },
      errors: [
        'motivation.reff: unknown key; did you mean ref?',
        'motivation.kind: "Traffic" is not a motivation kind (did you mean traffic?): use one of incident, cve, traffic, scheduled, maintenance, stability, budget, experiment, or a custom word of lower-case letters, digits and dashes (at most 40)',
        'motivation.urgency: "hihg" is not an urgency (did you mean high?): write one of low, normal, high, critical',
      ],
    },
    {
      name: 'a motivation without a kind',
      reason: 'the kind is the reason',
      input: { ...base, motivation: { ref: 'INC-1' } },
      errors: [
        'motivation.kind: missing; write why now, one of incident, cve, traffic, scheduled, maintenance, stability, budget, experiment or a custom word',
      ],
    },
    {
      name: 'a ref without a motivation',
      reason: 'a reference belongs to a reason',
      input: { ...base, ref: 'INC-1', urgency: 'high' },
      errors: [
        'ref: belongs to a motivation, and none is given; add motivation with its kind, e.g. incident, cve, traffic, scheduled',
        'urgency: belongs to a motivation, and none is given; add motivation with its kind, e.g. incident, cve, traffic, scheduled',
      ],
    },
    {
      name: 'a ref given twice',
      reason: 'two different references are a contradiction',
      input: { ...base, motivation: 'incident:INC-1', ref: 'INC-2' },
      errors: ['ref: is given twice (also in motivation as "INC-1"); give it once'],
    },
    {
      name: 'an expired motivation',
      reason: 'a reason that already ended explains nothing',
      input: { ...base, motivation: { kind: 'incident', expires: at(-1000) } },
      errors: [
        `motivation: expires at ${at(-1000)}, which is not in the future; an expired reason explains nothing: give a later expiry, or none (it then expires with the announcement)`,
      ],
    },
    {
      name: 'a bad ttl',
      reason: 'a duration has a unit',
      input: { ...base, ttl: '2 hours' },
      errors: [
        'ttl: "2 hours" is not a duration; write a number and a unit between 1s and 30d, e.g. 30m, 2h, 1h30m or 7d',
      ],
    },
    {
      name: 'a ttl as a number',
      reason: 'seconds or milliseconds? the unit is required',
      input: { ...base, ttl: 3600 },
      errors: [
        'ttl: is the number 3600; write a duration with its unit between 1s and 30d, e.g. 30m, 2h or 7d',
      ],
    },
    {
      name: 'a ttl over 30 days',
      reason: 'a standing arrangement belongs in the intent',
      input: { ...base, ttl: '31d' },
      errors: [
        'ttl: "31d" is longer than 30d; announce for at most 30d (announce again if it still holds, or write an Arbitration rule for a standing arrangement)',
      ],
    },
    {
      name: 'a ttl under a second',
      reason: 'an announcement that ends before it is stored is a mistake',
      input: { ...base, ttl: '500ms' },
      errors: ['ttl: "500ms" is shorter than 1s; write a duration between 1s and 30d'],
    },
    {
      name: 'ttl and expiresAt',
      reason: 'two expiries contradict each other',
      input: { ...base, ttl: '2h', expiresAt: at(H) },
      errors: [
        'ttl: is given together with expiresAt; give one of them: ttl counts from now (e.g. 2h), expiresAt is an ISO time',
      ],
    },
    {
      name: 'expiresAt in the past',
      reason: 'an announcement lasts from now',
      input: { ...base, expiresAt: at(-H) },
      errors: [`expiresAt: ${at(-H)} is not in the future; give a later time, or a ttl such as 2h`],
    },
    {
      name: 'expiresAt too far',
      reason: 'at most 30 days ahead',
      input: { ...base, expiresAt: at(31 * D) },
      errors: [
        `expiresAt: ${at(31 * D)} is more than 30d ahead; announce for at most 30d (announce again if it still holds, or write an Arbitration rule for a standing arrangement)`,
      ],
    },
    {
      name: 'expiresAt not a time',
      reason: 'an ISO time is required',
      input: { ...base, expiresAt: 'tomorrow' },
      errors: [
        'expiresAt: "tomorrow" is not an ISO time; write an ISO time such as 2026-11-24T14:00:00Z',
      ],
    },
    {
      name: 'a long note',
      reason: 'a note is a sentence or two',
      input: { ...base, note: 'x'.repeat(1001) },
      errors: [
        'note: is longer than 1000 characters; keep it to a sentence or two and put a link in ref',
      ],
    },
    {
      name: 'everything at once',
      reason: 'every problem is reported in one go',
      input: { address: 'api', field: '', value: 1, actor: 'hpa', actorKind: 'bot', ttl: '0s' },
      errors: [
        'address: "api" is not an address; write the resource as provider.type/name, e.g. sb.services/api (lower-case name of letters, digits, - and _)',
        'field: "" has an empty segment; write the field as in the resource document, e.g. replicas, spec.replicas or tags.team',
        'actorKind: "bot" is not an actor kind: use one of human, controller, agent, pipeline, tend',
        'ttl: "0s" is not a duration; write a number and a unit between 1s and 30d, e.g. 30m, 2h, 1h30m or 7d',
      ],
    },
  ];
  it.each(cases)('$name: $reason', ({ input, errors }) => {
    const got = readAnnouncement(input, NOW);
    expect(got.ok).toBe(false);
    if (!got.ok) {
      expect(got.errors).toEqual(errors);
      expect(got.problems).toHaveLength(errors.length);
    }
  });

  it('names keys as the caller labels them (the CLI names its flags)', () => {
    const got = readAnnouncement({ ...base, actorKind: 'bot', ttl: 'soon' }, NOW, {
      label: (p) => `--${p.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    });
    expect(got.ok ? [] : got.errors.map((e) => e.slice(0, e.indexOf(':')))).toEqual([
      '--actor-kind',
      '--ttl',
    ]);
  });
});

describe('readAnnouncement: warnings', () => {
  it('warns of a custom word one edit from a known one, and stores it as given', () => {
    const got = readAnnouncement({ ...base, intent: 'availabilty', motivation: 'trafic' }, NOW);
    expect(got.ok && got.value.intent).toBe('availabilty');
    expect(got.ok && got.warnings).toEqual([
      'intent: "availabilty" is not an intent Tend knows (did you mean availability?); it is recorded as a custom word, and rules for availability will not match it',
      'motivation: "trafic" is not a motivation kind Tend knows (did you mean traffic?); it is recorded as a custom word, and rules for traffic will not match it',
    ]);
  });

  it('does not warn of a custom word far from every known one', () => {
    const got = readAnnouncement({ ...base, intent: 'carbon', motivation: 'green-hours' }, NOW);
    expect(got.ok && got.warnings).toEqual([]);
  });
});

describe('announcement ids', () => {
  it('is deterministic in the content and the time it was made', () => {
    const a = readAnnouncement(base, NOW);
    const b = readAnnouncement({ ...base }, new Date(NOW));
    const later = readAnnouncement(base, new Date(NOW.getTime() + 1));
    const other = readAnnouncement({ ...base, value: 6 }, NOW);
    expect(a.ok && b.ok && later.ok && other.ok).toBe(true);
    if (a.ok && b.ok && later.ok && other.ok) {
      expect(a.value.id).toBe(b.value.id);
      expect(later.value.id).not.toBe(a.value.id);
      expect(other.value.id).not.toBe(a.value.id);
    }
  });

  it('does not depend on the order keys were written in', () => {
    const a = readAnnouncement({ ...base, value: { a: 1, b: 2 } }, NOW);
    const b = readAnnouncement(
      { actor: 'hpa', value: { b: 2, a: 1 }, field: 'replicas', address: 'sb.services/api' },
      NOW,
    );
    expect(a.ok && b.ok && a.value.id === b.value.id).toBe(true);
  });
});

describe('matchesDrift', () => {
  const made = readAnnouncement({ ...base, field: 'spec.replicas', ttl: '2h' }, NOW);
  if (!made.ok) throw new Error(made.errors.join('\n'));
  const a = made.value;
  const strict = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  const loose = (x: unknown, y: unknown) => String(x) === String(y);
  const cases: {
    name: string;
    reason: string;
    address?: string;
    field?: string;
    value?: unknown;
    at: number;
    same?: (x: unknown, y: unknown) => boolean;
    want: boolean;
  }[] = [
    {
      name: 'exact',
      reason: 'same field and value, inside the window',
      at: 10 * 60_000,
      want: true,
    },
    {
      name: 'spec-prefixed field',
      reason: 'either side may carry the spec. prefix',
      field: 'spec.replicas',
      at: 0,
      want: true,
    },
    {
      name: 'other value',
      reason: 'a different value is not what was announced',
      value: 6,
      at: 0,
      want: false,
    },
    {
      name: 'normalised value',
      reason: 'the caller’s comparison decides equality (a provider normalises)',
      value: '5',
      same: loose,
      at: 0,
      want: true,
    },
    {
      name: 'other field',
      reason: 'one field per announcement',
      field: 'image',
      at: 0,
      want: false,
    },
    {
      name: 'other address',
      reason: 'one resource per announcement',
      address: 'sb.services/web',
      at: 0,
      want: false,
    },
    {
      name: 'just before it was made',
      reason: 'an actor may announce up to ANNOUNCE_AFTER_MS after acting',
      at: -ANNOUNCE_AFTER_MS,
      want: true,
    },
    {
      name: 'too long before',
      reason: 'a change older than the window is not explained',
      at: -ANNOUNCE_AFTER_MS - 1,
      want: false,
    },
    { name: 'at its expiry', reason: 'the expiry itself is still covered', at: 2 * H, want: true },
    {
      name: 'after its expiry',
      reason: 'an expired announcement explains nothing',
      at: 2 * H + 1,
      want: false,
    },
  ];
  it.each(cases)('$name: $reason', (c) => {
    expect(
      matchesDrift(
        a,
        (c.address ?? 'sb.services/api') as Address,
        c.field ?? 'replicas',
        'value' in c ? c.value : 5,
        new Date(NOW.getTime() + c.at),
        c.same ?? strict,
      ),
    ).toBe(c.want);
  });

  it('knows when an announcement has expired', () => {
    expect(announcementExpired(a, new Date(NOW.getTime() + 2 * H - 1))).toBe(false);
    expect(announcementExpired(a, new Date(NOW.getTime() + 2 * H))).toBe(true);
  });
});

describe('properties', () => {
  const keys = fc.constantFrom(...ANNOUNCEMENT_KEYS, 'id', 'createdAt', '__proto__', 'other');

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything(),
          fc.dictionary(keys, fc.anything()),
          fc.record({
            address: fc.oneof(fc.string(), fc.constant('sb.services/api')),
            field: fc.string(),
            value: fc.anything(),
            actor: fc.string(),
            motivation: fc.oneof(fc.string(), fc.dictionary(fc.string(), fc.anything())),
            ttl: fc.oneof(fc.string(), fc.anything()),
          }),
        ),
        fc.date({ noInvalidDate: false }),
        (input, now) => {
          const got = readAnnouncement(input, now);
          if (!got.ok) {
            expect(got.errors.length).toBeGreaterThan(0);
            expect(got.errors).toHaveLength(got.problems.length);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  const name = fc.stringMatching(/^[a-z0-9]([a-z0-9_-]{0,10}[a-z0-9])?$/);
  const valid = fc.record(
    {
      address: fc
        .tuple(name, fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,10}$/), name)
        .map(([p, t, n]) => `${p}.${t}/${n}`),
      field: fc
        .array(fc.stringMatching(/^[a-z_][a-z0-9_-]{0,8}$/), { minLength: 1, maxLength: 3 })
        .filter((s) => !s.some((x) => ['constructor', 'prototype'].includes(x)))
        .map((s) => s.join('.')),
      // Keys that could reach a prototype are refused (tested above); leave them out here.
      value: fc.jsonValue({ maxDepth: 3 }).filter((v) => forbiddenKeyPaths(v, 1).length === 0),
      actor: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .@-]{0,30}[A-Za-z0-9]$/),
      actorKind: fc.constantFrom(...ACTOR_KINDS),
      intent: fc.constantFrom(...INTENT_WORDS),
      motivation: fc.record(
        {
          kind: fc.constantFrom(...MOTIVATION_KINDS),
          ref: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 :-]{0,20}[A-Za-z0-9]$/),
          urgency: fc.constantFrom(...URGENCIES),
        },
        { requiredKeys: ['kind'] },
      ),
      ttl: fc.integer({ min: 1, max: 720 }).map((h) => `${h}h`),
      note: fc
        .string({ maxLength: 50 })
        .filter((s) => [...s].every((c) => c.charCodeAt(0) >= 32 && c.charCodeAt(0) < 127)),
    },
    { requiredKeys: ['address', 'field', 'value', 'actor'] },
  );

  it('a valid announcement round-trips through JSON, and reads back from its input form', () => {
    fc.assert(
      fc.property(valid, (input) => {
        const got = readAnnouncement(input, NOW);
        if (!got.ok) throw new Error(`${JSON.stringify(input)}: ${got.errors.join('; ')}`);
        const a = got.value;
        expect(JSON.parse(JSON.stringify(a))).toStrictEqual(a);
        const again = readAnnouncement(JSON.parse(JSON.stringify(announcementInput(a))), NOW);
        expect(again).toStrictEqual({ ok: true, value: a, warnings: [] });
      }),
      { numRuns: 500 },
    );
  });
});
