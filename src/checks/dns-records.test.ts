import type { Answer } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import type { DnsType } from './index.js';
import { normalizeExpected, normalizeName, parseServer, presentAnswer } from './index.js';

describe('normalizeExpected', () => {
  const cases: { name: string; reason: string; type: DnsType; text: string; want: string }[] = [
    { name: 'A', reason: 'kept as written', type: 'A', text: ' 192.0.2.1 ', want: '192.0.2.1' },
    {
      name: 'AAAA long form',
      reason: 'canonical short, lower-case form',
      type: 'AAAA',
      text: '2001:0DB8:0000:0000:0000:0000:0000:0001',
      want: '2001:db8::1',
    },
    {
      name: 'CNAME',
      reason: 'lower-case with a trailing dot',
      type: 'CNAME',
      text: 'Web.Example.ORG',
      want: 'web.example.org.',
    },
    { name: 'root NS', reason: 'the root stays a dot', type: 'NS', text: '.', want: '.' },
    {
      name: 'MX',
      reason: 'preference in decimal, exchange normalised, spacing collapsed',
      type: 'MX',
      text: '10   Mail.example.org',
      want: '10 mail.example.org.',
    },
    {
      name: 'SRV',
      reason: 'three numbers and a target',
      type: 'SRV',
      text: '10 5 5060 sip.example.org.',
      want: '10 5 5060 sip.example.org.',
    },
    {
      name: 'SOA',
      reason: 'two names and five numbers',
      type: 'SOA',
      text: 'NS1.example.org hostmaster.example.org 2024050101 10800 3600 604800 3600',
      want: 'ns1.example.org. hostmaster.example.org. 2024050101 10800 3600 604800 3600',
    },
    {
      name: 'CAA unquoted value',
      reason: 'the value is quoted as PowerDNS shows it; the tag is lower-case',
      type: 'CAA',
      text: '0 Issue letsencrypt.org',
      want: '0 issue "letsencrypt.org"',
    },
    {
      name: 'TXT plain',
      reason: 'plain text becomes one quoted string',
      type: 'TXT',
      text: 'v=spf1 include:_spf.example.org -all',
      want: '"v=spf1 include:_spf.example.org -all"',
    },
    {
      name: 'TXT plain with a quote',
      reason: 'quotes and backslashes inside are escaped',
      type: 'TXT',
      text: 'say "hi" \\o/',
      want: '"say \\"hi\\" \\\\o/"',
    },
    {
      name: 'TXT quoted strings',
      reason: 'several strings keep their boundaries; spacing between them is one space',
      type: 'TXT',
      text: '"a b"   "c"',
      want: '"a b" "c"',
    },
    {
      name: 'TXT decimal escape',
      reason: '\\DDD is a byte; printable ones are shown as themselves, others as \\DDD',
      type: 'TXT',
      text: '"\\065\\010"',
      want: '"A\\010"',
    },
    {
      name: 'DNSKEY',
      reason: 'flags, protocol and algorithm in decimal, the key as written',
      type: 'DNSKEY',
      text: '257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
      want: '257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
    },
    {
      name: 'DNSKEY key in several words',
      reason: 'zone files wrap long keys; the words are one base64 key',
      type: 'DNSKEY',
      text: '256  3 8 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopK l+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
      want: '256 3 8 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
    },
    {
      name: 'TXT longer than 255 bytes',
      reason: 'plain text is cut into the 255-byte strings DNS carries',
      type: 'TXT',
      text: 'x'.repeat(300),
      want: `"${'x'.repeat(255)}" "${'x'.repeat(45)}"`,
    },
  ];
  it.each(cases)('$name', (c) => {
    expect(normalizeExpected(c.type, c.text), c.reason).toEqual({ value: c.want });
  });

  const bad: { name: string; type: DnsType; text: string; error: string }[] = [
    {
      name: 'A not IPv4',
      type: 'A',
      text: '192.0.2',
      error: '"192.0.2" is not an IPv4 address, e.g. 192.0.2.10',
    },
    {
      name: 'AAAA not IPv6',
      type: 'AAAA',
      text: '192.0.2.1',
      error: '"192.0.2.1" is not an IPv6 address, e.g. 2001:db8::10',
    },
    {
      name: 'CNAME with a space',
      type: 'CNAME',
      text: 'a b',
      error: '"a b" is not a DNS name, e.g. web.example.org.',
    },
    {
      name: 'MX without preference',
      type: 'MX',
      text: 'mail.example.org',
      error: '"mail.example.org" is not <preference> <exchange>, e.g. 10 mail.example.org.',
    },
    {
      name: 'MX preference too large',
      type: 'MX',
      text: '70000 mail.example.org',
      error: '"70000 mail.example.org" is not <preference> <exchange>, e.g. 10 mail.example.org.',
    },
    {
      name: 'SRV missing port',
      type: 'SRV',
      text: '10 5 sip.example.org',
      error:
        '"10 5 sip.example.org" is not <priority> <weight> <port> <target>, e.g. 10 5 5060 sip.example.org.',
    },
    {
      name: 'SOA too short',
      type: 'SOA',
      text: 'ns1.example.org. hostmaster.example.org. 1',
      error:
        '"ns1.example.org. hostmaster.example.org. 1" is not <mname> <rname> <serial> <refresh> <retry> <expire> <minimum>',
    },
    {
      name: 'DNSKEY without a key',
      type: 'DNSKEY',
      text: '257 3 13',
      error:
        '"257 3 13" is not <flags> <protocol> <algorithm> <base64 public key>, e.g. 257 3 13 mdsswUyr…GQ==',
    },
    {
      name: 'DNSKEY algorithm by name',
      type: 'DNSKEY',
      text: '257 3 ECDSAP256SHA256 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
      error: `"257 3 ECDSAP256SHA256 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==" is not <flags> <protocol> <algorithm> <base64 public key>, e.g. 257 3 13 mdsswUyr…GQ==`,
    },
    {
      name: 'DNSKEY key not base64',
      type: 'DNSKEY',
      text: '257 3 13 not-base64!',
      error:
        '"257 3 13 not-base64!" is not <flags> <protocol> <algorithm> <base64 public key>, e.g. 257 3 13 mdsswUyr…GQ==',
    },
    {
      name: 'DNSKEY key cut short',
      type: 'DNSKEY',
      text: '257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKG',
      error: `"257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKG" is not <flags> <protocol> <algorithm> <base64 public key>, e.g. 257 3 13 mdsswUyr…GQ==`,
    },
    {
      name: 'CAA flags too large',
      type: 'CAA',
      text: '256 issue ca.example',
      error: '"256 issue ca.example" is not <flags> <tag> <value>, e.g. 0 issue "letsencrypt.org"',
    },
    {
      name: 'TXT unterminated quote',
      type: 'TXT',
      text: '"v=spf1',
      error:
        '"\\"v=spf1" is not text, or quoted strings as PowerDNS shows them, e.g. "v=spf1 -all"',
    },
    {
      name: 'TXT text between quoted strings',
      type: 'TXT',
      text: '"a" b',
      error:
        '"\\"a\\" b" is not text, or quoted strings as PowerDNS shows them, e.g. "v=spf1 -all"',
    },
  ];
  it.each(bad)('refuses $name', (c) => {
    expect(normalizeExpected(c.type, c.text)).toEqual({ error: c.error });
  });
});

describe('normalizeName', () => {
  it.each([
    { text: 'WWW.Example.org', want: 'www.example.org.' },
    { text: 'www.example.org.', want: 'www.example.org.' },
    { text: '*.example.org', want: '*.example.org.' },
    { text: '_sip._tcp.example.org', want: '_sip._tcp.example.org.' },
    { text: '.', want: '.' },
    { text: '', want: undefined },
    { text: 'a..b', want: undefined },
    { text: '-a.example', want: undefined },
    { text: `${'a'.repeat(64)}.example`, want: undefined },
    { text: 'a*.example', want: undefined },
  ])('$text', ({ text, want }) => {
    expect(normalizeName(text)).toBe(want);
  });
});

describe('parseServer', () => {
  it.each([
    { text: '127.0.0.1:5300', want: { host: '127.0.0.1', port: 5300 } },
    { text: '127.0.0.1', want: { host: '127.0.0.1', port: 53 } },
    { text: 'ns1.example.org:53', want: { host: 'ns1.example.org', port: 53 } },
    { text: '[::1]:5300', want: { host: '::1', port: 5300 } },
    { text: '::1', want: { host: '::1', port: 53 } },
    { text: '127.0.0.1:0', want: undefined },
    { text: '127.0.0.1:65536', want: undefined },
    { text: 'http://127.0.0.1', want: undefined },
    { text: '[not-v6]:53', want: undefined },
    { text: 'a b:53', want: undefined },
  ])('$text', ({ text, want }) => {
    expect(parseServer(text)).toEqual(want);
  });
});

describe('presentAnswer', () => {
  const a = (answer: unknown) => presentAnswer(answer as Answer);
  it.each([
    { name: 'A', answer: { type: 'A', name: 'x', data: '192.0.2.1' }, want: '192.0.2.1' },
    {
      name: 'NS',
      answer: { type: 'NS', name: 'x', data: 'NS1.Example.org' },
      want: 'ns1.example.org.',
    },
    {
      name: 'SRV',
      answer: {
        type: 'SRV',
        name: 'x',
        data: { priority: 1, weight: 2, port: 3, target: 'T.example' },
      },
      want: '1 2 3 t.example.',
    },
    {
      name: 'SOA',
      answer: {
        type: 'SOA',
        name: 'x',
        data: {
          mname: 'a.example',
          rname: 'b.example',
          serial: 1,
          refresh: 2,
          retry: 3,
          expire: 4,
          minimum: 5,
        },
      },
      want: 'a.example. b.example. 1 2 3 4 5',
    },
    {
      name: 'CAA',
      answer: { type: 'CAA', name: 'x', data: { flags: 0, tag: 'issue', value: 'ca.example' } },
      want: '0 issue "ca.example"',
    },
    {
      name: 'DNSKEY',
      answer: {
        type: 'DNSKEY',
        name: 'x',
        data: {
          flags: 257,
          algorithm: 13,
          key: Buffer.from(
            'mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
            'base64',
          ),
        },
      },
      want: '257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==',
    },
    {
      name: 'TXT with a non-printable byte',
      answer: { type: 'TXT', name: 'x', data: [Buffer.from([0x41, 0x0a])] },
      want: '"A\\010"',
    },
    { name: 'unsupported type', answer: { type: 'HINFO', name: 'x', data: {} }, want: undefined },
  ])('$name', ({ answer, want }) => {
    expect(a(answer)).toBe(want);
  });
});
