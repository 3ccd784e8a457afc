import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/checks/index.js';
import type { DnsCheckDecl } from '../../src/core/index.js';
import { PDNS, startPdns, type PdnsHandle } from '../support/pdns.js';

// The `dns` check against a real PowerDNS Authoritative server started by the test harness: what
// the API accepted is what DNS serves, in the presentation the check compares.

describe.skipIf(PDNS.skip)(`dns check against a real pdns_server${PDNS.note}`, () => {
  let pdns: PdnsHandle;

  beforeAll(async () => {
    pdns = await startPdns();
    const rrset = (name: string, type: string, ...contents: string[]) => ({
      name,
      type,
      ttl: 300,
      records: contents.map((content) => ({ content, disabled: false })),
    });
    const created = await pdns.api('POST', '/servers/localhost/zones', {
      name: 'example.org.',
      kind: 'Native',
      nameservers: ['ns1.example.org.'],
      rrsets: [
        rrset('www.example.org.', 'A', '192.0.2.10', '192.0.2.11'),
        rrset('www.example.org.', 'AAAA', '2001:db8::10'),
        rrset('alias.example.org.', 'CNAME', 'www.example.org.'),
        rrset('example.org.', 'MX', '10 mail.example.org.'),
        rrset('example.org.', 'TXT', '"v=spf1 -all"', '"two" "strings"'),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
  afterAll(async () => {
    await pdns?.stop();
  });

  function check(partial: Partial<DnsCheckDecl>): DnsCheckDecl {
    return {
      kind: 'dns',
      name: 'dns-0',
      server: pdns.dnsAddress,
      query: 'www.example.org',
      type: 'A',
      expect: [],
      timeoutMs: 2000,
      source: { file: 'main.yaml', line: 1, column: 1 },
      ...partial,
    };
  }
  const ctx = { observed: {}, desired: {}, resolve: (t: string) => t, now: () => new Date() };

  it.each([
    { type: 'A', query: 'www.example.org', expect: ['192.0.2.11', '192.0.2.10'] },
    { type: 'AAAA', query: 'www.example.org.', expect: ['2001:DB8::10'] },
    { type: 'CNAME', query: 'alias.example.org', expect: ['www.example.org'] },
    { type: 'MX', query: 'Example.org', expect: ['10 mail.example.org'] },
    { type: 'TXT', query: 'example.org', expect: ['v=spf1 -all', '"two" "strings"'] },
    { type: 'NS', query: 'example.org', expect: ['ns1.example.org'] },
    { type: 'A', query: 'nope.example.org', expect: [] },
  ])('$type $query answers $expect', async (c) => {
    const result = await runCheck(check(c), ctx);
    expect(result.ok, result.message).toBe(true);
  });

  it('says what PowerDNS served when it differs', async () => {
    const result = await runCheck(check({ expect: ['192.0.2.10'] }), ctx);
    expect(result).toMatchObject({
      ok: false,
      message: `A www.example.org @${pdns.dnsAddress}: expected 192.0.2.10, got 192.0.2.10, 192.0.2.11 (unexpected 192.0.2.11)`,
    });
  });

  it('sees a change made with pdnsutil at once (the harness turns caches off)', async () => {
    const r = await pdns.pdnsutil([
      'replace-rrset',
      'example.org',
      'www',
      'A',
      '60',
      '198.51.100.7',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const result = await runCheck(check({ expect: ['198.51.100.7'] }), ctx);
    expect(result.ok, result.message).toBe(true);
  });

  it('the harness: the API needs the key; stop() removes the server and its directory', async () => {
    const anonymous = await fetch(`${pdns.apiUrl}/servers/localhost`);
    expect(anonymous.status).toBe(401);
    const other = await startPdns();
    expect(other.dnsPort).not.toBe(pdns.dnsPort);
    expect(other.apiKey).not.toBe(pdns.apiKey);
    const zones = await other.api('GET', '/servers/localhost/zones');
    expect(zones).toEqual({ status: 200, body: [] });
    await other.stop();
    expect(existsSync(other.configDir)).toBe(false);
    await expect(fetch(`${other.apiUrl}/servers/localhost`)).rejects.toThrow();
  });
});
