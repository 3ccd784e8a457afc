import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalDnsName, canonicalIp, canonicalRdata } from './dns-values.js';

interface Case {
  name: string;
  type: string;
  content: string;
  want: string;
}

// What PowerDNS 4.7 stores (or, for names without the final dot, what it refuses to store unless
// written so): the canonical spelling of each record type's data.
const cases: Case[] = [
  {
    name: 'AAAA upper-case, zeros written',
    type: 'AAAA',
    content: '2001:DB8:0:0::1',
    want: '2001:db8::1',
  },
  {
    name: 'AAAA fully written',
    type: 'AAAA',
    content: '2001:0db8:0000:0000:0000:0000:0000:0001',
    want: '2001:db8::1',
  },
  {
    name: 'AAAA longest zero run compressed',
    type: 'AAAA',
    content: '2001:db8:0:0:1:0:0:1',
    want: '2001:db8::1:0:0:1',
  },
  { name: 'AAAA already canonical', type: 'AAAA', content: '2001:db8::10', want: '2001:db8::10' },
  {
    name: 'AAAA with a zone index is not an address of a record',
    type: 'AAAA',
    content: 'fe80::1%eth0',
    want: 'fe80::1%eth0',
  },
  {
    name: 'AAAA that is not an address is left to the platform',
    type: 'AAAA',
    content: 'not-an-address',
    want: 'not-an-address',
  },
  { name: 'A canonical', type: 'A', content: '192.0.2.1', want: '192.0.2.1' },
  {
    name: 'A with leading zeros is not rewritten (octal or decimal is ambiguous)',
    type: 'A',
    content: '192.000.002.001',
    want: '192.000.002.001',
  },
  {
    name: 'CNAME without the final dot, mixed case',
    type: 'CNAME',
    content: 'Target.Example.org',
    want: 'target.example.org.',
  },
  {
    name: 'CNAME canonical',
    type: 'CNAME',
    content: 'target.example.org.',
    want: 'target.example.org.',
  },
  { name: 'NS', type: 'NS', content: 'NS2.example.org', want: 'ns2.example.org.' },
  {
    name: 'PTR, type written lower-case',
    type: 'ptr',
    content: 'x.example.org',
    want: 'x.example.org.',
  },
  { name: 'MX', type: 'MX', content: '10 Mail.example.org', want: '10 mail.example.org.' },
  {
    name: 'MX with extra spaces and a leading zero',
    type: 'MX',
    content: ' 010   mail.example.org. ',
    want: '10 mail.example.org.',
  },
  {
    name: 'MX without a preference is left alone',
    type: 'MX',
    content: 'mail.example.org',
    want: 'mail.example.org',
  },
  {
    name: 'MX with a word for a number is left alone',
    type: 'MX',
    content: 'ten mail.example.org',
    want: 'ten mail.example.org',
  },
  {
    name: 'SRV',
    type: 'SRV',
    content: '0 5 5060 Sip.example.org',
    want: '0 5 5060 sip.example.org.',
  },
  {
    name: 'DS digest lower-case, chunks joined',
    type: 'DS',
    content: '12345 8 2 ABCDEF01 23456789',
    want: '12345 8 2 abcdef0123456789',
  },
  { name: 'SSHFP', type: 'SSHFP', content: '1 1 ABCDEF0123', want: '1 1 abcdef0123' },
  { name: 'TLSA', type: 'TLSA', content: '3 1 1 ABCD', want: '3 1 1 abcd' },
  {
    name: 'DS with a digest that is not hex is left alone',
    type: 'DS',
    content: '1 8 2 xyz',
    want: '1 8 2 xyz',
  },
  {
    name: 'TXT is compared as written (quotes and case are data)',
    type: 'TXT',
    content: '"Hello  World"',
    want: '"Hello  World"',
  },
  {
    name: 'CAA is compared as written',
    type: 'CAA',
    content: '0 issue "letsencrypt.org"',
    want: '0 issue "letsencrypt.org"',
  },
  {
    name: 'an unknown type is compared as written',
    type: 'TYPE65534',
    content: '\\# 1 ab',
    want: '\\# 1 ab',
  },
  {
    name: 'a type named like an Object property is not a record type',
    type: 'constructor',
    content: 'x',
    want: 'x',
  },
  { name: 'empty data', type: 'CNAME', content: '', want: '' },
];

describe('canonicalRdata', () => {
  it.each(cases)('$name', ({ type, content, want }) => {
    expect(canonicalRdata(type, content)).toBe(want);
  });
});

describe('canonicalIp and canonicalDnsName', () => {
  it.each([
    ['::', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::FFFF:192.0.2.1', '::ffff:192.0.2.1'],
    ['10.0.0.1', '10.0.0.1'],
    ['example.org', 'example.org'],
    ['', ''],
  ])('canonicalIp(%j) is %j', (value, want) => {
    expect(canonicalIp(value)).toBe(want);
  });
  it.each([
    ['Example.ORG', 'example.org.'],
    ['example.org.', 'example.org.'],
    ['.', '.'],
    ['', ''],
  ])('canonicalDnsName(%j) is %j', (value, want) => {
    expect(canonicalDnsName(value)).toBe(want);
  });
});

/** An IPv6 address as eight 16-bit groups. */
const groups = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });

/** Every group written in full, in random case. */
function longForm(g: number[], upper: boolean[]): string {
  return g
    .map((n, i) => {
      const h = n.toString(16).padStart(4, '0');
      return upper[i] ? h.toUpperCase() : h;
    })
    .join(':');
}

/** Groups without leading zeros, and one run of zero groups (the first, not the longest) as `::`. */
function shortForm(g: number[]): string {
  const parts = g.map((n) => n.toString(16));
  const start = g.findIndex((n) => n === 0);
  if (start < 0) return parts.join(':');
  let end = start;
  while (end < 8 && g[end] === 0) end++;
  return `${parts.slice(0, start).join(':')}::${parts.slice(end).join(':')}`;
}

describe('properties', () => {
  it('equal IPv6 addresses normalise equal, however they are written', () => {
    fc.assert(
      fc.property(groups, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (g, upper) => {
        const a = canonicalRdata('AAAA', longForm(g, upper));
        const b = canonicalRdata('AAAA', shortForm(g));
        expect(a).toBe(b);
      }),
    );
  });

  it('different IPv6 addresses stay different', () => {
    fc.assert(
      fc.property(groups, groups, (g, h) => {
        fc.pre(g.some((n, i) => n !== h[i]));
        expect(canonicalIp(shortForm(g))).not.toBe(canonicalIp(shortForm(h)));
      }),
    );
  });

  const types = fc.constantFrom('A', 'AAAA', 'CNAME', 'MX', 'SRV', 'DS', 'SSHFP', 'TXT', 'NS', 'x');
  const contents = fc.oneof(
    fc.string(),
    groups.map((g) => shortForm(g)),
    fc.tuple(fc.nat(65535), fc.domain()).map(([p, d]) => `${p} ${d.toUpperCase()}`),
    fc.tuple(fc.nat(9), fc.nat(9), fc.nat(99999), fc.domain()).map((t) => t.join(' ')),
    fc.stringMatching(/^\d{1,5} \d \d [0-9a-fA-F ]{1,20}$/),
  );

  it('normalising is idempotent and total', () => {
    fc.assert(
      fc.property(types, contents, (type, content) => {
        const once = canonicalRdata(type, content);
        expect(canonicalRdata(type, once)).toBe(once);
      }),
    );
  });

  it('names normalise equal whatever their case and final dot', () => {
    fc.assert(
      fc.property(fc.domain(), fc.boolean(), (d, dot) => {
        const written = dot ? `${d.toUpperCase()}.` : d;
        expect(canonicalRdata('CNAME', written)).toBe(canonicalRdata('CNAME', `${d}.`));
      }),
    );
  });
});
