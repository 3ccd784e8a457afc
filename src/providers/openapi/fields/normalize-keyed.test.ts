import { describe, expect, it } from 'vitest';
import { keyedNormalizers, normalizeOps } from './annotations.js';
import { canonicalValue, normalizeValue } from './normalize.js';

// Keyed normalisations: `x-tend-normalize` entries that choose how to normalise a value by the value
// of a sibling field (an rrset's records by its type), and the `ip` step.

const RRSET = {
  type: 'object',
  properties: {
    name: { type: 'string', 'x-tend-normalize': ['lowercase', 'trailing-dot'] },
    type: { type: 'string', 'x-tend-normalize': ['uppercase'] },
    records: {
      type: 'array',
      'x-tend-normalize': ['sort', { by: 'type', at: 'content', format: 'dns-rdata' }],
      items: {
        type: 'object',
        properties: { content: { type: 'string' }, disabled: { type: 'boolean', default: false } },
      },
    },
  },
};

interface Case {
  name: string;
  declared: Record<string, unknown>;
  observed: Record<string, unknown>;
  equal: boolean;
}

const rrset = (type: string, ...contents: string[]) => ({
  name: 'www.example.org.',
  type,
  records: contents.map((content) => ({ content, disabled: false })),
});

const cases: Case[] = [
  {
    name: 'a non-canonical AAAA is the address PowerDNS stores',
    declared: rrset('AAAA', '2001:DB8:0:0::1'),
    observed: rrset('AAAA', '2001:db8::1'),
    equal: true,
  },
  {
    name: 'a CNAME target without the final dot',
    declared: rrset('CNAME', 'Target.Example.org'),
    observed: rrset('CNAME', 'target.example.org.'),
    equal: true,
  },
  {
    name: 'MX records in another order and spelling (sorted after normalising)',
    declared: rrset('MX', '20 B.example.org', '10 a.example.org'),
    observed: rrset('MX', '10 a.example.org.', '20 b.example.org.'),
    equal: true,
  },
  {
    name: 'the type written lower-case still selects the format',
    declared: rrset('aaaa', '2001:DB8::1'),
    observed: rrset('AAAA', '2001:db8::1'),
    equal: true,
  },
  {
    name: 'another address is another record',
    declared: rrset('AAAA', '2001:db8::2'),
    observed: rrset('AAAA', '2001:db8::1'),
    equal: false,
  },
  {
    name: 'TXT data is case-sensitive',
    declared: rrset('TXT', '"Hello"'),
    observed: rrset('TXT', '"hello"'),
    equal: false,
  },
];

describe('keyed normalisation by a sibling field', () => {
  it.each(cases)('$name', ({ declared, observed, equal }) => {
    const a = normalizeValue(RRSET, declared);
    const b = normalizeValue(RRSET, observed);
    if (equal) expect(a).toEqual(b);
    else expect(a).not.toEqual(b);
  });

  it('normalises a field alone when given the object it is in (the provider path)', () => {
    const declared = rrset('AAAA', '2001:DB8:0:0::1');
    expect(normalizeValue(RRSET.properties.records, declared.records, [], 0, declared)).toEqual([
      { content: '2001:db8::1', disabled: false },
    ]);
    // Without the object, the key is unknown: the value is compared as written.
    expect(normalizeValue(RRSET.properties.records, declared.records)).toEqual([
      { content: '2001:DB8:0:0::1', disabled: false },
    ]);
  });

  it('sends the canonical spelling (PowerDNS refuses a target without its final dot)', () => {
    expect(canonicalValue(RRSET, rrset('MX', '10 Mail.example.org'))).toEqual(
      rrset('MX', '10 mail.example.org.'),
    );
  });

  it('cases map key values to string steps; values not listed are left alone', () => {
    const schema = {
      type: 'object',
      properties: {
        kind: { type: 'string' },
        value: {
          type: 'string',
          'x-tend-normalize': [{ by: 'kind', cases: { address: ['ip'], host: ['lowercase'] } }],
        },
      },
    };
    expect(normalizeValue(schema, { kind: 'address', value: '2001:DB8::0:1' })).toEqual({
      kind: 'address',
      value: '2001:db8::1',
    });
    expect(normalizeValue(schema, { kind: 'host', value: 'A.B' })).toEqual({
      kind: 'host',
      value: 'a.b',
    });
    expect(normalizeValue(schema, { kind: 'other', value: 'A.B' })).toEqual({
      kind: 'other',
      value: 'A.B',
    });
  });

  it('the ip step canonicalises addresses and leaves other strings alone', () => {
    const schema = { type: 'array', items: { type: 'string' }, 'x-tend-normalize': ['ip', 'sort'] };
    expect(normalizeValue(schema, ['2001:DB8::1', '192.0.2.1', 'host'])).toEqual([
      '192.0.2.1',
      '2001:db8::1',
      'host',
    ]);
  });
});

describe('keyedNormalizers: every malformed entry is reported, with what to write', () => {
  const shape =
    'write {by: <sibling field>, at?: <dotted path>, format: dns-rdata} or {by, at?, cases: {<value>: [steps]}}';
  it.each([
    [{ at: 'content', format: 'dns-rdata' }, `by must name a field; ${shape}`],
    [{ by: 'type', format: 'dns' }, `format must be one of dns-rdata; ${shape}`],
    [{ by: 'type' }, `give format or cases, one of them; ${shape}`],
    [{ by: 'type', format: 'dns-rdata', cases: {} }, `give format or cases, one of them; ${shape}`],
    [{ by: 'type', at: 3, format: 'dns-rdata' }, `at must be a dotted path; ${shape}`],
    [{ by: 'type', cases: [] }, `cases must map values to lists of steps; ${shape}`],
    [
      { by: 'type', cases: { A: ['sort'] } },
      `cases.A must list string steps (lowercase, uppercase, trailing-dot, no-trailing-dot, ip); ${shape}`,
    ],
    [
      { by: 'type', cases: { A: [] } },
      `cases.A must list string steps (lowercase, uppercase, trailing-dot, no-trailing-dot, ip); ${shape}`,
    ],
  ])('%j', (entry, why) => {
    const schema = { 'x-tend-normalize': ['sort', entry] };
    expect(keyedNormalizers(schema)).toEqual({
      entries: [],
      problems: [`${JSON.stringify(entry)} (${why})`],
    });
    // The provider's warning comes from normalizeOps' unknown list.
    expect(normalizeOps(schema)).toEqual({
      ops: ['sort'],
      unknown: [`${JSON.stringify(entry)} (${why})`],
    });
  });

  it('a number is not an entry', () => {
    expect(keyedNormalizers({ 'x-tend-normalize': [7] }).problems).toEqual([
      '7 (an entry is a step name or {by: <sibling field>, at?: <dotted path>, format: dns-rdata} or {by, at?, cases: {<value>: [steps]}})',
    ]);
  });

  it('reads a well-formed entry', () => {
    const { entries, problems } = keyedNormalizers({
      'x-tend-normalize': { by: 'type', at: 'a.b', format: 'dns-rdata' },
    });
    expect(problems).toEqual([]);
    expect(entries).toEqual([{ by: 'type', at: ['a', 'b'], format: 'dns-rdata' }]);
  });
});
