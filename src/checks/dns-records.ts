// DNS record data in one presentation format, so that what intent expects and what a server answers
// compare as text: names lower-case with a trailing dot, IPv6 in its canonical short form, TXT as
// quoted strings the way PowerDNS returns them (`"v=spf1 -all"`), numbers in decimal, DNSKEY keys in
// one base64 word.
import type { Answer } from 'dns-packet';
import { isIPv4, isIPv6 } from 'node:net';

/** The record types a `dns` check can ask for and compare. */
export const DNS_TYPES = [
  'A',
  'AAAA',
  'CAA',
  'CNAME',
  'DNAME',
  'DNSKEY',
  'MX',
  'NS',
  'PTR',
  'SOA',
  'SRV',
  'TXT',
] as const;

/** One of DNS_TYPES. */
export type DnsType = (typeof DNS_TYPES)[number];

/** True when `type` is one of DNS_TYPES (already upper-case). */
export function isDnsType(type: string): type is DnsType {
  return (DNS_TYPES as readonly string[]).includes(type);
}

/** What a record's data looks like when written, for messages. */
export const DNS_TYPE_SYNTAX: Readonly<Record<DnsType, string>> = {
  A: 'an IPv4 address, e.g. 192.0.2.10',
  AAAA: 'an IPv6 address, e.g. 2001:db8::10',
  CAA: '<flags> <tag> <value>, e.g. 0 issue "letsencrypt.org"',
  CNAME: 'a DNS name, e.g. web.example.org.',
  DNAME: 'a DNS name, e.g. example.net.',
  DNSKEY: '<flags> <protocol> <algorithm> <base64 public key>, e.g. 257 3 13 mdsswUyr…GQ==',
  MX: '<preference> <exchange>, e.g. 10 mail.example.org.',
  NS: 'a DNS name, e.g. ns1.example.org.',
  PTR: 'a DNS name, e.g. host.example.org.',
  SOA: '<mname> <rname> <serial> <refresh> <retry> <expire> <minimum>',
  SRV: '<priority> <weight> <port> <target>, e.g. 10 5 5060 sip.example.org.',
  TXT: 'text, or quoted strings as PowerDNS shows them, e.g. "v=spf1 -all"',
};

/** The result of reading an expected answer: its normalised text, or why it is malformed. */
export type Normalized = { readonly value: string } | { readonly error: string };

const LABEL = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?|\*)$/;

/**
 * A DNS name in the compared form: lower-case with a trailing dot (`.` is the root). Undefined when
 * it is not a name (spaces, empty labels, labels over 63 characters, more than 253 characters).
 */
export function normalizeName(text: string): string | undefined {
  const lower = text.trim().toLowerCase();
  if (lower === '.' || lower === '') return lower === '.' ? '.' : undefined;
  const bare = lower.endsWith('.') ? lower.slice(0, -1) : lower;
  if (bare.length > 253) return undefined;
  if (!bare.split('.').every((label) => LABEL.test(label))) return undefined;
  return `${bare}.`;
}

function u16(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 65535 ? n : undefined;
}

function u8(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,3}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 255 ? n : undefined;
}

/** Standard base64 with its padding, nothing else (what DNSKEY presentation uses). */
function isBase64(text: string): boolean {
  return text.length > 0 && text.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(text);
}

function u32(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 4294967295 ? n : undefined;
}

/** Escapes one character-string the way PowerDNS prints TXT data. */
function quote(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b > 0x7e) out += `\\${String(b).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

/** Reads `"a" "b\"c"` into its strings; undefined when the quoting is broken. */
function unquote(text: string): Uint8Array[] | undefined {
  const strings: Uint8Array[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ' || text[i] === '\t') {
      i++;
      continue;
    }
    if (text[i] !== '"') return undefined;
    i++;
    const bytes: number[] = [];
    let closed = false;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        closed = true;
        i++;
        break;
      }
      if (c === '\\') {
        const digits = /^\d{3}/.exec(text.slice(i + 1, i + 4));
        if (digits) {
          const n = Number(digits[0]);
          if (n > 255) return undefined;
          bytes.push(n);
          i += 4;
          continue;
        }
        const next = text[i + 1];
        if (next === undefined) return undefined;
        for (const b of Buffer.from(next)) bytes.push(b);
        i += 2;
        continue;
      }
      for (const b of Buffer.from(c)) bytes.push(b);
      i++;
    }
    if (!closed) return undefined;
    strings.push(Uint8Array.from(bytes));
  }
  return strings.length > 0 ? strings : undefined;
}

/** Text as TXT strings: one string, cut into the 255-byte pieces DNS carries. */
function chunks(text: string): Uint8Array[] {
  const bytes = Buffer.from(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255));
  return out.length > 0 ? out : [new Uint8Array()];
}

/**
 * Normalises an expected answer as written in intent to the compared form, or says why it is not a
 * valid answer of that type. TXT may be plain text (quoted for you) or PowerDNS's quoted strings.
 */
export function normalizeExpected(type: DnsType, text: string): Normalized {
  const bad = (): Normalized => ({
    error: `${JSON.stringify(text)} is not ${DNS_TYPE_SYNTAX[type]}`,
  });
  const trimmed = text.trim();
  const words = trimmed.split(/\s+/);
  switch (type) {
    case 'A':
      return isIPv4(trimmed) ? { value: trimmed } : bad();
    case 'AAAA':
      return isIPv6(trimmed) ? { value: canonicalIPv6(trimmed) } : bad();
    case 'CNAME':
    case 'DNAME':
    case 'NS':
    case 'PTR': {
      const name = words.length === 1 ? normalizeName(trimmed) : undefined;
      return name === undefined ? bad() : { value: name };
    }
    case 'MX': {
      const [pref, exchange, ...rest] = words;
      const p = u16(pref);
      const name = exchange === undefined ? undefined : normalizeName(exchange);
      return p === undefined || name === undefined || rest.length > 0
        ? bad()
        : { value: `${p} ${name}` };
    }
    case 'SRV': {
      const [prio, weight, port, target, ...rest] = words;
      const nums = [u16(prio), u16(weight), u16(port)];
      const name = target === undefined ? undefined : normalizeName(target);
      return nums.includes(undefined) || name === undefined || rest.length > 0
        ? bad()
        : { value: `${nums.join(' ')} ${name}` };
    }
    case 'SOA': {
      const [mname, rname, ...numbers] = words;
      const m = mname === undefined ? undefined : normalizeName(mname);
      const r = rname === undefined ? undefined : normalizeName(rname);
      const n = numbers.map(u32);
      return m === undefined || r === undefined || n.length !== 5 || n.includes(undefined)
        ? bad()
        : { value: `${m} ${r} ${n.join(' ')}` };
    }
    case 'DNSKEY': {
      // The key may be split into several base64 words (zone files wrap it); it compares as one.
      const [flags, protocol, algorithm, ...key] = words;
      const n = [u16(flags), u8(protocol), u8(algorithm)];
      const b64 = key.join('');
      return n.includes(undefined) || !isBase64(b64)
        ? bad()
        : { value: `${n.join(' ')} ${Buffer.from(b64, 'base64').toString('base64')}` };
    }
    case 'CAA': {
      const match = /^(\d{1,3})\s+([A-Za-z0-9]+)\s+(.+)$/.exec(trimmed);
      const flags = match ? Number(match[1]) : 256;
      if (!match || flags > 255) return bad();
      const raw = match[3]!;
      const value = raw.startsWith('"') ? unquote(raw) : [Buffer.from(raw)];
      if (value?.length !== 1) return bad();
      return { value: `${flags} ${match[2]!.toLowerCase()} ${quote(value[0]!)}` };
    }
    case 'TXT': {
      const strings = trimmed.startsWith('"') ? unquote(trimmed) : chunks(text);
      return strings === undefined ? bad() : { value: strings.map(quote).join(' ') };
    }
  }
}

/** An IPv6 address in its canonical short form (RFC 5952): what URL serialisation produces. */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/**
 * The data of an answer record in the compared form; undefined for types DNS_TYPES does not list.
 */
export function presentAnswer(answer: Answer): string | undefined {
  const name = (n: string) =>
    n === '' || n === '.' ? '.' : `${n.toLowerCase().replace(/\.$/, '')}.`;
  switch (answer.type) {
    case 'A':
      return answer.data;
    case 'AAAA':
      return canonicalIPv6(answer.data);
    case 'CNAME':
    case 'DNAME':
    case 'NS':
    case 'PTR':
      return name(answer.data);
    case 'MX':
      return `${answer.data.preference ?? 0} ${name(answer.data.exchange)}`;
    case 'SRV':
      return `${answer.data.priority ?? 0} ${answer.data.weight ?? 0} ${answer.data.port} ${name(answer.data.target)}`;
    case 'SOA': {
      const d = answer.data;
      const n = [d.serial, d.refresh, d.retry, d.expire, d.minimum].map((x) => x ?? 0);
      return `${name(d.mname)} ${name(d.rname)} ${n.join(' ')}`;
    }
    case 'DNSKEY': {
      const d = answer.data;
      // dns-packet refuses any protocol but 3 when decoding, so a decoded key always has 3.
      return `${d.flags} 3 ${d.algorithm} ${Buffer.from(d.key).toString('base64')}`;
    }
    case 'CAA':
      return `${answer.data.flags ?? 0} ${answer.data.tag.toLowerCase()} ${quote(Buffer.from(answer.data.value))}`;
    case 'TXT': {
      const data = answer.data;
      const list = Array.isArray(data) ? data : [data];
      return list.map((s) => quote(typeof s === 'string' ? Buffer.from(s) : s)).join(' ');
    }
    default:
      return undefined;
  }
}
