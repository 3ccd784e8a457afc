import { describe, expect, it } from 'vitest';
import {
  changedValue,
  compareSentRead,
  expandIpv6,
  fieldOutcome,
  identityFromDuplicate,
  markerFact,
  markerKept,
  isProbeName,
  normalisationOf,
  probeName,
  probeSpelling,
  quoteAnswer,
} from './facts.js';
import type { DuplicateAnswered, ProbeAnswer } from './facts.js';

describe('identityFromDuplicate: what a second create with the same name says', () => {
  const cases: {
    reason: string;
    answer: ProbeAnswer;
    answered?: DuplicateAnswered;
    want: { unique: boolean; evidence?: string } | undefined;
  }[] = [
    {
      reason: 'a 409 is a refused duplicate, whatever it says',
      answer: { request: 'POST /zones', status: 409, message: 'Conflict' },
      want: { unique: true, evidence: 'second POST /zones with the same name → 409 "Conflict"' },
    },
    {
      reason: "a 500 whose words say the object exists is one too (Podman's networks)",
      answer: { request: 'POST /networks/create', status: 500, message: 'network already exists' },
      want: { unique: true },
    },
    {
      reason: 'a 422 "has already been taken" is one too',
      answer: { request: 'POST /users', status: 422, message: 'name has already been taken' },
      want: { unique: true },
    },
    {
      reason: 'an accepted copy means the name is not unique',
      answer: { request: 'POST /networks', status: 201 },
      want: { unique: false },
    },
    {
      reason: 'an accepted copy with another id made a second object: not unique',
      answer: { request: 'POST /networks', status: 201 },
      answered: { sameId: false, listed: 2 },
      want: { unique: false },
    },
    {
      reason:
        "a create answered with the object that exists, one in the list: the identity, the create idempotent (Podman's volumes)",
      answer: { request: 'POST /volumes/create', status: 201 },
      answered: { sameId: true, listed: 1 },
      want: {
        unique: true,
        evidence:
          'second POST /volumes/create with the same name → 201 with the object that exists, and the list still shows one: name is the identity, the create idempotent (no second object was made)',
      },
    },
    {
      reason: 'the same id answered but two objects listed: a second object was made all the same',
      answer: { request: 'POST /things', status: 200 },
      answered: { sameId: true, listed: 2 },
      want: {
        unique: false,
        evidence:
          "second POST /things with the same name → 200 with the first object's id, but the list shows 2 objects with that name: accepted, so name is not unique (the copy was removed)",
      },
    },
    {
      reason: 'a refusal decides as before whatever was seen of an earlier answer',
      answer: { request: 'POST /zones', status: 409, message: 'Conflict' },
      answered: { sameId: true, listed: 1 },
      want: { unique: true, evidence: 'second POST /zones with the same name → 409 "Conflict"' },
    },
    {
      reason: 'a 400 for another reason decides nothing',
      answer: { request: 'POST /x', status: 400, message: 'size must be positive' },
      want: undefined,
    },
    {
      reason: 'a bare 500 decides nothing',
      answer: { request: 'POST /x', status: 500 },
      want: undefined,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = identityFromDuplicate('t', 'name', c.answer, c.answered);
      if (c.want === undefined) expect(got).toBeUndefined();
      else expect(got).toMatchObject({ kind: 'identity', field: 'name', ...c.want });
    });
  }
});

describe('normalisationOf: the steps from what was sent to what was read', () => {
  const cases: [string, string, string, string[] | undefined][] = [
    ['unchanged', 'abc', 'abc', []],
    ['lower-cased', 'Tend-Probe.example.org.', 'tend-probe.example.org.', ['lowercase']],
    ['upper-cased', 'aaaa', 'AAAA', ['uppercase']],
    ['a final dot added', 'www.example.org', 'www.example.org.', ['trailing-dot']],
    ['a final dot removed', 'key.', 'key', ['no-trailing-dot']],
    [
      'lower-cased and dotted',
      'Www.Example.org',
      'www.example.org.',
      ['lowercase', 'trailing-dot'],
    ],
    ['an IPv6 address in its canonical text', '2001:DB8:0:0:0:0:0:1', '2001:db8::1', ['ip']],
    ['changed some other way', 'abc', 'xyz', undefined],
  ];
  for (const [reason, sent, read, want] of cases) {
    it(reason, () => expect(normalisationOf(sent, read)).toEqual(want));
  }
});

describe('fieldOutcome: a change of one field in place', () => {
  const cases = [
    { reason: 'read back as sent', before: 1, sent: 2, after: 2, want: 'updatable' },
    {
      reason: 'read back in a normalised spelling',
      before: 'a',
      sent: 'B.x',
      after: 'b.x',
      want: 'updatable',
    },
    {
      reason: 'read back unchanged: silently ignored',
      before: 'a.',
      sent: 'b.',
      after: 'a.',
      want: 'ignored',
    },
    {
      reason: 'read back as something else',
      before: 'a',
      sent: 'b',
      after: 'c',
      want: 'changed-otherwise',
    },
    {
      reason: 'refused',
      before: 'a',
      sent: 'b',
      after: 'a',
      refusal: { request: 'PATCH /b', status: 409, message: 'name cannot change after create' },
      want: 'refused',
    },
    {
      reason: 'refused because the new value is invalid: decides nothing',
      before: 'hmac-sha256',
      sent: 'hmac-sha256-b',
      after: 'hmac-sha256',
      refusal: { request: 'PUT /k', status: 422, message: 'Unknown TSIG algorithm: hmac-sha256-b' },
      want: 'invalid',
    },
    {
      reason: 'the platform failed (500): decides nothing',
      before: 'a',
      sent: 'b',
      after: 'a',
      refusal: { request: 'PUT /x', status: 500, message: 'internal error' },
      want: 'invalid',
    },
    {
      reason:
        'refused in words that say the field cannot change, even in a "validation failed" answer',
      before: 'a',
      sent: 'b',
      after: 'a',
      refusal: {
        request: 'PUT /f',
        status: 400,
        message:
          'Request validation failed: your request body or params contain invalid data: Cannot change name of feature flag',
      },
      want: 'refused',
    },
  ];
  for (const c of cases) it(c.reason, () => expect(fieldOutcome(c)).toBe(c.want));
});

describe('compareSentRead', () => {
  it('reports changed strings, fields not read back, and defaults filled in below arrays', () => {
    const got = compareSentRead(
      {
        name: 'Tend.example.org.',
        nameservers: ['ns1.example.org.'],
        records: [{ content: '2001:DB8:0:0:0:0:0:1' }],
        ttl: 300,
      },
      {
        name: 'tend.example.org.',
        records: [{ content: '2001:db8::1', disabled: false }],
        ttl: 300,
        serial: 7,
      },
    );
    expect(got).toEqual([
      { kind: 'changed', path: 'name', sent: 'Tend.example.org.', read: 'tend.example.org.' },
      { kind: 'missing', path: 'nameservers', sent: ['ns1.example.org.'] },
      {
        kind: 'changed',
        path: 'records[].content',
        sent: '2001:DB8:0:0:0:0:0:1',
        read: '2001:db8::1',
      },
      { kind: 'filled', path: 'records[].disabled', read: false },
    ]);
  });
  it('a field read back as null counts as not read back', () => {
    expect(compareSentRead({ Labels: { a: 'b' } }, { Labels: null })).toEqual([
      { kind: 'missing', path: 'Labels', sent: { a: 'b' } },
    ]);
  });
});

describe('the spellings and values the probe sends', () => {
  it.each([
    [
      'a dotted name: mixed case, final dot dropped',
      'tend-probe-1.example.org.',
      true,
      false,
      'Tend-probe-1.example.org',
    ],
    [
      'a dotted name, keeping its dot',
      'tend-probe-1.example.org.',
      true,
      true,
      'Tend-probe-1.example.org.',
    ],
    ['a plain name: mixed case', 'tend-probe-1', true, false, 'Tend-probe-1'],
    [
      'an IPv6 address: written out in upper case',
      '2001:db8::1',
      false,
      false,
      '2001:DB8:0:0:0:0:0:1',
    ],
    ['another string: none', 'nginx:1', false, false, undefined],
  ])('%s', (_reason, value, isName, keepDot, want) => {
    expect(probeSpelling(value, isName, keepDot)).toBe(want);
  });
  it.each([
    ['2001:db8::1', '2001:db8:0:0:0:0:0:1'],
    ['::1', '0:0:0:0:0:0:0:1'],
    ['fe80::', 'fe80:0:0:0:0:0:0:0'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:6'],
  ])('expandIpv6(%s)', (a, want) => expect(expandIpv6(a)).toBe(want));
  it.each([
    ['another enum value', 'Native', { enum: ['Native', 'Master'] }, 'Master'],
    ['a one-value enum: none', 'x', { enum: ['x'] }, undefined],
    ['a boolean flipped', false, {}, true],
    ['a number one higher', 300, {}, 301],
    ['a number one lower at the maximum', 100, { maximum: 100 }, 99],
    [
      'a dotted name changed before its first dot',
      'tend-probe-1.example.org.',
      {},
      'tend-probe-1-b.example.org.',
    ],
    ['a string', 'nginx', {}, 'nginx-b'],
    ['another IPv4 block of the same size', '10.0.0.0/16', {}, '10.1.0.0/16'],
    ['another IPv4 address', '192.0.2.1', {}, '192.0.2.2'],
    ['an IPv6 address: none', '2001:db8::1', {}, undefined],
    ['a list: none', ['a'], {}, undefined],
  ])('changedValue: %s', (_reason, value, schema, want) => {
    expect(changedValue(value, schema)).toEqual(want);
  });
  it.each([
    ['no example', undefined, 'tend-probe-ab12'],
    ['a plain example', 'web', 'tend-probe-ab12'],
    ['a two-label domain: the label goes in front', 'example.org.', 'tend-probe-ab12.example.org.'],
    [
      'a longer name: its first label replaced',
      'www.scratch.example.',
      'tend-probe-ab12.scratch.example.',
    ],
  ])('probeName: %s', (_reason, example, want) => {
    expect(probeName('ab12', example)).toBe(want);
    expect(isProbeName(want.toUpperCase())).toBe(true);
  });
  it('quotes a hostile message on one line, cut short', () => {
    const q = quoteAnswer({
      status: 409,
      message: `line one\nline two "quoted"\u2028${'x'.repeat(300)}`,
    });
    expect(q).not.toMatch(/[\n\u2028]/);
    expect(q.length).toBeLessThan(200);
    expect(q.startsWith('409 "line one line two \\"quoted\\"')).toBe(true);
  });
});

describe('markerFact: a marker is kept only where Tend finds its objects', () => {
  const base = {
    type: 'secrets',
    field: 'Labels',
    kind: 'map' as const,
    run: 'r1',
    wrote: { 'tend.probe': 'r1' },
  };
  const mark = { 'tend.probe': 'r1' };
  const cases: {
    reason: string;
    read: unknown;
    listed?: unknown;
    kept: boolean;
    evidence: string;
  }[] = [
    {
      reason: 'read back and listed: kept',
      read: mark,
      listed: mark,
      kept: true,
      evidence: 'Labels written {"tend.probe":"r1"} on create, read back unchanged and listed',
    },
    {
      reason: 'read back, the list not looked at (a scoped type): kept',
      read: mark,
      kept: true,
      evidence: 'Labels written {"tend.probe":"r1"} on create, read back unchanged',
    },
    {
      reason: "read back but listed as null (Podman's secrets): not kept",
      read: mark,
      listed: null,
      kept: false,
      evidence:
        'Labels written {"tend.probe":"r1"} on create, read back unchanged by GET /secrets/{id}, but GET /secrets listed null: not where Tend finds its objects',
    },
    {
      reason: 'dropped by the read: not kept, whatever the list says',
      read: {},
      listed: mark,
      kept: false,
      evidence: 'Labels written {"tend.probe":"r1"} on create, GET /secrets/{id} answered {}',
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = markerFact({
        ...base,
        read: { at: 'GET /secrets/{id}', value: c.read },
        ...('listed' in c ? { listed: { at: 'GET /secrets', value: c.listed } } : {}),
      });
      expect(got).toEqual({
        kind: 'marker',
        type: 'secrets',
        field: 'Labels',
        markerKind: 'map',
        kept: c.kept,
        evidence: c.evidence,
      });
    });
  }
});

describe("markerKept: the run's marker in a place of each kind", () => {
  const cases: [string, 'map' | 'list' | 'text', unknown, boolean][] = [
    ['a map holding it', 'map', { 'tend.probe': 'r1', other: 'x' }, true],
    ['a map of another run', 'map', { 'tend.probe': 'r2' }, false],
    ['null for a map', 'map', null, false],
    ['a list for a map', 'map', ['tend.probe'], false],
    ['a list holding it', 'list', ['a', 'tend:probe=r1'], true],
    ['a list without it', 'list', ['a'], false],
    ['a text holding it', 'text', 'made by tend probe r1', true],
    ['a text without it', 'text', 'made by hand', false],
  ];
  for (const [reason, kind, got, want] of cases) {
    it(reason, () => expect(markerKept(kind, got, 'r1')).toBe(want));
  }
});
