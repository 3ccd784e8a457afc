import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeProvider, zoneDirs } from '../../test/support/zone-checks.js';
import { loadIntent } from './index.js';

// The `dns` check as written in intent: what it reads, its defaults, and every bad input refused
// with its place and a message that says what to write instead.

const zoneWithChecks = zoneDirs('tend-dns-check-');

describe('dns check in intent', () => {
  it('reads every field, with defaults for type (A) and timeoutMs (2000)', async () => {
    const dir = await zoneWithChecks(
      '  - dns: { server: 127.0.0.1:5300, query: www.example.org, expect: [192.0.2.10] }',
      '  - name: mail',
      '    dns:',
      '      server: "${pdns.zones/example.name}"',
      '      query: example.org.',
      '      type: mx',
      '      expect: 10 mail.example.org',
      '      timeoutMs: 500',
      '  - dns: { server: "[::1]:53", query: example.org, type: TXT, expect: [] }',
    );
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics).toEqual([]);
    const file = join(dir, 'main.yaml');
    expect(intent!.resources[0]!.checks).toEqual([
      {
        kind: 'dns',
        name: 'dns-0',
        server: '127.0.0.1:5300',
        query: 'www.example.org',
        type: 'A',
        expect: ['192.0.2.10'],
        timeoutMs: 2000,
        source: { file, line: 6, column: 5 },
      },
      {
        kind: 'dns',
        name: 'mail',
        server: '${pdns.zones/example.name}',
        query: 'example.org.',
        type: 'MX',
        expect: ['10 mail.example.org'],
        timeoutMs: 500,
        source: { file, line: 7, column: 5 },
      },
      {
        kind: 'dns',
        name: 'dns-2',
        server: '[::1]:53',
        query: 'example.org',
        type: 'TXT',
        expect: [],
        timeoutMs: 2000,
        source: { file, line: 14, column: 5 },
      },
    ]);
  });

  const bad: {
    name: string;
    reason: string;
    line: string;
    /** `at`: the text the diagnostic points at (its first occurrence in `line`). */
    want: { code: string; path: string; at: string; message: string; hint?: string }[];
  }[] = [
    {
      name: 'not a mapping',
      reason: 'a dns check has fields; a string is a mistake',
      line: '  - dns: www.example.org',
      want: [
        {
          code: 'field.type',
          path: 'checks[0].dns',
          at: 'www.example.org',
          message: 'a dns check must be a mapping with `server`, `query` and `expect`, got string',
          hint: 'e.g. - dns: { server: 127.0.0.1:53, query: www.example.org, type: A, expect: [192.0.2.10] }',
        },
      ],
    },
    {
      name: 'missing fields',
      reason: 'server, query and expect are required',
      line: '  - dns: { type: A }',
      want: [
        {
          code: 'field.required',
          path: 'checks[0].dns.server',
          at: 'dns',
          message: 'missing required field `checks[0].dns.server`',
        },
        {
          code: 'field.required',
          path: 'checks[0].dns.query',
          at: 'dns',
          message: 'missing required field `checks[0].dns.query`',
        },
        {
          code: 'field.required',
          path: 'checks[0].dns.expect',
          at: 'dns',
          message: 'missing required field `checks[0].dns.expect`',
        },
      ],
    },
    {
      name: 'bad server, query and type',
      reason:
        'a server is host:port with a valid port; a query is a DNS name; types are a known set',
      line: '  - dns: { server: "127.0.0.1:99999", query: "www example", type: AAA, expect: [] }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].dns.server',
          at: '"127.0.0.1:99999"',
          message: '`server` must be host:port (port 53 when left out), got 127.0.0.1:99999',
          hint: 'e.g. server: 127.0.0.1:5300, or [2001:db8::53]:53 for IPv6',
        },
        {
          code: 'field.invalid',
          path: 'checks[0].dns.query',
          at: '"www example"',
          message: '`query` must be a DNS name, got "www example"',
        },
        {
          code: 'field.invalid',
          path: 'checks[0].dns.type',
          at: 'AAA,',
          message:
            'unknown record type `AAA`; use one of A, AAAA, CAA, CNAME, DNAME, DNSKEY, MX, NS, PTR, SOA, SRV, TXT. Did you mean `AAAA`?',
        },
      ],
    },
    {
      name: 'answers that do not fit the type',
      reason: 'an A answer is an IPv4 address; an MX answer has a preference; entries are strings',
      line: '  - dns: { server: 127.0.0.1, query: example.org, type: MX, expect: [mail.example.org, 10 mx.example.org, 7] }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].dns.expect[0]',
          at: 'mail.example.org,',
          message:
            'expected MX answer "mail.example.org" is not <preference> <exchange>, e.g. 10 mail.example.org.',
        },
        {
          code: 'field.type',
          path: 'checks[0].dns.expect[2]',
          at: '7]',
          message: 'an expected answer must be a non-empty string, got integer 7',
          hint: 'quote it: expect: ["10 mail.example.org."]',
        },
      ],
    },
    {
      name: 'an IPv6 answer for an A query',
      reason: 'the type defaults to A, so the answer must be IPv4',
      line: '  - dns: { server: 127.0.0.1:53, query: www.example.org, expect: "2001:db8::1" }',
      want: [
        {
          code: 'field.invalid',
          path: 'checks[0].dns.expect',
          at: '"2001:db8::1"',
          message: 'expected A answer "2001:db8::1" is not an IPv4 address, e.g. 192.0.2.10',
        },
      ],
    },
    {
      name: 'unknown field and bad timeout',
      reason: 'closed like every check; the timeout is a positive integer',
      line: '  - dns: { server: 127.0.0.1, query: a.example, expect: [], timeout: 5, timeoutMs: 0 }',
      want: [
        {
          code: 'field.unknown',
          path: 'checks[0].dns.timeout',
          at: 'timeout:',
          message:
            'unknown field `timeout` in a dns check; allowed fields: server, query, type, expect, timeoutMs. Did you mean `timeoutMs`?',
        },
        {
          code: 'field.type',
          path: 'checks[0].dns.timeoutMs',
          at: '0 }',
          message: '`checks[0].dns.timeoutMs` must be an integer >= 1, got integer 0',
        },
      ],
    },
  ];

  it.each(bad)('refuses $name', async (c) => {
    const dir = await zoneWithChecks(c.line);
    const { intent, diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(intent, c.reason).toBeUndefined();
    expect(
      diagnostics.map((d) => ({
        code: d.code,
        path: d.path,
        column: d.column,
        message: d.message,
      })),
      c.reason,
    ).toEqual(c.want.map(({ hint: _, at, ...w }) => ({ ...w, column: c.line.indexOf(at) + 1 })));
    c.want.forEach((w, i) => {
      if (w.hint !== undefined) expect(diagnostics[i]!.hint).toBe(w.hint);
    });
    for (const d of diagnostics) expect(d.line).toBe(6);
  });

  it('leaves values holding references to be judged when the check runs', async () => {
    const dir = await zoneWithChecks(
      '  - dns: { server: "${pdns.zones/example.name}", query: "www.${pdns.zones/example.name}", expect: ["${pdns.zones/example.name}"] }',
    );
    const { diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics).toEqual([]);
  });

  it('checks that references in a dns check name a declared resource', async () => {
    const dir = await zoneWithChecks(
      '  - dns: { server: 127.0.0.1, query: "${pdns.zones/nope.name}", expect: [] }',
    );
    const { diagnostics } = await loadIntent(dir, { describe: describeProvider });
    expect(diagnostics.map((d) => [d.code, d.path])).toEqual([
      ['ref.dangling', 'checks[0].dns.query'],
    ]);
  });
});
