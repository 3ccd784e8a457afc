import { decode, encode, streamEncode } from 'dns-packet';
import type { Answer, Packet } from 'dns-packet';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsCheckDecl } from '../core/index.js';
import type { CheckContext } from './index.js';
import { runCheck } from './index.js';

const NOW = new Date('2024-05-01T12:00:00.000Z');

// A tiny authoritative server: answers from ZONE over UDP and TCP on one port of 127.0.0.1.
// Special names: `slow.` never answers; `big.` is truncated over UDP (TC) and answered over TCP;
// `refused.` answers REFUSED; names not in ZONE answer NXDOMAIN.
const BIG = Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`);
const ZONE: Record<string, Answer[]> = {
  'www.example.org': [
    { type: 'A', name: 'www.example.org', ttl: 60, data: '192.0.2.10' },
    { type: 'A', name: 'www.example.org', ttl: 60, data: '192.0.2.11' },
    { type: 'AAAA', name: 'www.example.org', ttl: 60, data: '2001:db8::10' },
  ],
  'example.org': [
    {
      type: 'MX',
      name: 'example.org',
      ttl: 60,
      data: { preference: 10, exchange: 'Mail.Example.org' },
    },
    { type: 'TXT', name: 'example.org', ttl: 60, data: ['v=spf1 -all'] },
  ],
  'quotes.example.org': [
    { type: 'TXT', name: 'quotes.example.org', ttl: 60, data: ['say "hi"', 'two\\parts'] },
  ],
  'alias.example.org': [
    { type: 'CNAME', name: 'alias.example.org', ttl: 60, data: 'www.example.org' },
    { type: 'A', name: 'www.example.org', ttl: 60, data: '192.0.2.10' },
  ],
  'big.example.org': BIG.map((data) => ({ type: 'A', name: 'big.example.org', ttl: 60, data })),
};

function answer(query: Packet, tcp: boolean): Buffer | undefined {
  const q = query.questions?.[0];
  if (!q) return undefined;
  const name = q.name.toLowerCase();
  if (name === 'slow.example.org') return undefined;
  const base = { type: 'response' as const, id: query.id ?? 0, questions: query.questions ?? [] };
  if (name === 'refused.example.org') return encode({ ...base, flags: 5 });
  const records = ZONE[name];
  if (!records) return encode({ ...base, flags: 3 }); // NXDOMAIN
  if (name === 'big.example.org' && !tcp) return encode({ ...base, flags: 1 << 9 }); // TC
  return encode({
    ...base,
    answers: records.filter((r) => r.type === q.type || r.type === 'CNAME'),
  });
}

let udp: Socket;
let tcp: Server;
let server: string;
let closedPort: number;
const queries: { name: string; via: string }[] = [];

beforeAll(async () => {
  udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    const query = decode(msg);
    queries.push({ name: query.questions?.[0]?.name ?? '', via: 'udp' });
    const reply = answer(query, false);
    if (reply) udp.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const port = udp.address().port;
  tcp = createServer((conn) => {
    conn.on('data', (chunk: Buffer) => {
      const query = decode(chunk.subarray(2));
      queries.push({ name: query.questions?.[0]?.name ?? '', via: 'tcp' });
      const reply = answer(query, true);
      if (reply) conn.end(streamEncode(decode(reply)));
    });
    conn.on('error', () => {});
  });
  await new Promise<void>((resolve) => tcp.listen(port, '127.0.0.1', resolve));
  server = `127.0.0.1:${port}`;
  // A port nobody listens on (UDP): bind one, then close it.
  const closed = createSocket('udp4');
  await new Promise<void>((resolve) => closed.bind(0, '127.0.0.1', resolve));
  closedPort = closed.address().port;
  await new Promise<void>((resolve) => closed.close(resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => udp.close(() => resolve()));
  await new Promise<void>((resolve) => tcp.close(() => resolve()));
});

function check(partial: Partial<DnsCheckDecl>): DnsCheckDecl {
  return {
    kind: 'dns',
    name: 'dns-0',
    server,
    query: 'www.example.org',
    type: 'A',
    expect: ['192.0.2.10', '192.0.2.11'],
    timeoutMs: 1000,
    source: { file: 'main.yaml', line: 1, column: 1 },
    ...partial,
  };
}

function context(resolve: CheckContext['resolve'] = (t) => t): CheckContext {
  return { observed: {}, desired: {}, resolve, now: () => NOW };
}

describe('dns check', () => {
  const cases: {
    name: string;
    reason: string;
    check: () => Partial<DnsCheckDecl>;
    ok: boolean;
    message: () => string;
  }[] = [
    {
      name: 'A set in another order',
      reason: 'answers compare as a set',
      check: () => ({ expect: ['192.0.2.11', '192.0.2.10'] }),
      ok: true,
      message: () => `A www.example.org @${server} answered 192.0.2.10, 192.0.2.11`,
    },
    {
      name: 'A with one record missing from the answer',
      reason: 'the message names what is missing and what is unexpected',
      check: () => ({ expect: ['192.0.2.10', '192.0.2.12'] }),
      ok: false,
      message: () =>
        `A www.example.org @${server}: expected 192.0.2.10, 192.0.2.12, got 192.0.2.10, 192.0.2.11 (missing 192.0.2.12; unexpected 192.0.2.11)`,
    },
    {
      name: 'AAAA written in a long form',
      reason: 'IPv6 addresses compare in their canonical short form',
      check: () => ({ type: 'AAAA', expect: ['2001:DB8:0:0:0:0:0:10'] }),
      ok: true,
      message: () => `AAAA www.example.org @${server} answered 2001:db8::10`,
    },
    {
      name: 'MX without the trailing dot',
      reason: 'names compare lower-case with a trailing dot',
      check: () => ({ query: 'Example.ORG.', type: 'MX', expect: ['10 mail.example.org'] }),
      ok: true,
      message: () => `MX Example.ORG. @${server} answered 10 mail.example.org.`,
    },
    {
      name: 'MX with another preference',
      reason: 'the preference is part of the answer',
      check: () => ({ query: 'example.org', type: 'MX', expect: ['20 mail.example.org.'] }),
      ok: false,
      message: () =>
        `MX example.org @${server}: expected 20 mail.example.org., got 10 mail.example.org. (missing 20 mail.example.org.; unexpected 10 mail.example.org.)`,
    },
    {
      name: 'TXT as plain text',
      reason: 'plain text is quoted the way PowerDNS shows TXT',
      check: () => ({ query: 'example.org', type: 'TXT', expect: ['v=spf1 -all'] }),
      ok: true,
      message: () => `TXT example.org @${server} answered "v=spf1 -all"`,
    },
    {
      name: 'TXT in quoted strings with escapes',
      reason: 'several strings and escaped quotes and backslashes compare exactly',
      check: () => ({
        query: 'quotes.example.org',
        type: 'TXT',
        expect: ['"say \\"hi\\""   "two\\\\parts"'],
      }),
      ok: true,
      message: () => `TXT quotes.example.org @${server} answered "say \\"hi\\"" "two\\\\parts"`,
    },
    {
      name: 'CNAME',
      reason: 'only records of the asked type count (not the A of the target)',
      check: () => ({ query: 'alias.example.org', type: 'CNAME', expect: ['WWW.example.org'] }),
      ok: true,
      message: () => `CNAME alias.example.org @${server} answered www.example.org.`,
    },
    {
      name: 'NXDOMAIN',
      reason: 'a name that does not exist is named as such',
      check: () => ({ query: 'nope.example.org' }),
      ok: false,
      message: () => `A nope.example.org @${server}: expected 192.0.2.10, 192.0.2.11, got NXDOMAIN`,
    },
    {
      name: 'NXDOMAIN when none is expected',
      reason: 'an empty expect passes when the name does not exist',
      check: () => ({ query: 'nope.example.org', expect: [] }),
      ok: true,
      message: () => `A nope.example.org @${server} answered NXDOMAIN, as expected`,
    },
    {
      name: 'no records of the type when none is expected',
      reason: 'an empty expect passes on NOERROR without answers',
      check: () => ({ query: 'example.org', type: 'AAAA', expect: [] }),
      ok: true,
      message: () => `AAAA example.org @${server} answered no records, as expected`,
    },
    {
      name: 'no records of the type when some are expected',
      reason: 'NOERROR without answers fails with what was expected',
      check: () => ({ query: 'example.org', type: 'AAAA', expect: ['2001:db8::1'] }),
      ok: false,
      message: () => `AAAA example.org @${server}: expected 2001:db8::1, got no records`,
    },
    {
      name: 'records where none are expected',
      reason: 'an empty expect fails when there are records',
      check: () => ({ type: 'AAAA', expect: [] }),
      ok: false,
      message: () => `AAAA www.example.org @${server}: expected no records, got 2001:db8::10`,
    },
    {
      name: 'REFUSED',
      reason: 'other response codes are named',
      check: () => ({ query: 'refused.example.org', expect: [] }),
      ok: false,
      message: () => `A refused.example.org @${server}: expected no records, got REFUSED`,
    },
    {
      name: 'timeout',
      reason: 'a server that never answers fails after timeoutMs',
      check: () => ({ query: 'slow.example.org', timeoutMs: 100 }),
      ok: false,
      message: () => `A slow.example.org @${server}: no answer within 100 ms`,
    },
    {
      name: 'nobody listening',
      reason: 'the network error is named (ICMP port unreachable on a connected socket)',
      check: () => ({ server: `127.0.0.1:${closedPort}` }),
      ok: false,
      message: () =>
        `A www.example.org @127.0.0.1:${closedPort} failed: connection refused (ECONNREFUSED): nothing listens on that port`,
    },
    {
      name: 'bad server after substitution',
      reason: 'a reference may fill in something that is not host:port',
      check: () => ({ server: 'http://x' }),
      ok: false,
      message: () => `A www.example.org @http://x: server must be host:port, got http://x`,
    },
    {
      name: 'bad expected answer after substitution',
      reason: 'a reference may fill in an answer that does not fit the type',
      check: () => ({ expect: ['not-an-ip'] }),
      ok: false,
      message: () =>
        `A www.example.org @${server}: expected answer "not-an-ip" is not an IPv4 address, e.g. 192.0.2.10`,
    },
  ];

  it.each(cases)('$name', async (c) => {
    const result = await runCheck(check(c.check()), context());
    expect(result, c.reason).toEqual({
      name: 'dns-0',
      kind: 'dns',
      ok: c.ok,
      message: c.message(),
      at: NOW.toISOString(),
    });
  });

  it('asks again over TCP when the UDP answer is truncated', async () => {
    queries.length = 0;
    const result = await runCheck(check({ query: 'big.example.org', expect: BIG }), context());
    expect(result.ok).toBe(true);
    expect(queries).toEqual([
      { name: 'big.example.org', via: 'udp' },
      { name: 'big.example.org', via: 'tcp' },
    ]);
  });

  it('substitutes references in server, query and expected answers', async () => {
    const values: Record<string, string> = {
      '${pdns.x/y.server}': server,
      '${pdns.x/y.name}': 'www.example.org.',
      '${pdns.x/y.ip}': '192.0.2.10',
    };
    const resolve = (text: string) => text.replace(/\$\{[^}]*\}/g, (ref) => values[ref] ?? ref);
    const result = await runCheck(
      check({
        server: '${pdns.x/y.server}',
        query: '${pdns.x/y.name}',
        expect: ['${pdns.x/y.ip}', '192.0.2.11'],
      }),
      context(resolve),
    );
    expect(result).toMatchObject({
      ok: true,
      message: `A www.example.org. @${server} answered 192.0.2.10, 192.0.2.11`,
    });
  });

  it('fails without asking when a reference cannot be resolved yet', async () => {
    queries.length = 0;
    const result = await runCheck(
      check({ query: 'www.${pdns.zones/z.name}' }),
      context((t) => (t.includes('${') ? undefined : t)),
    );
    expect(queries).toEqual([]);
    expect(result).toMatchObject({
      ok: false,
      message: `references in the check cannot be resolved yet (A www.\${pdns.zones/z.name} @${server})`,
    });
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const running = runCheck(check({ query: 'slow.example.org', timeoutMs: 10_000 }), {
      ...context(),
      signal: controller.signal,
    });
    controller.abort();
    expect(await running).toMatchObject({
      ok: false,
      message: `A slow.example.org @${server}: check aborted`,
    });
  });
});
