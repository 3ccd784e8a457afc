import { SocketAddress, isIPv4, isIPv6 } from 'node:net';

/**
 * Canonical spellings of network values, so that two spellings of one value compare equal: IP
 * addresses (node's own parser, `net`), DNS names, and DNS record data in presentation format
 * (RFC 1035 §5.1) for the record types whose data has more than one spelling. Pure and total: a
 * value that does not parse is returned as it is (the platform then judges it).
 */

/**
 * The canonical text of an IP address: IPv4 as node accepts it (dotted decimal, no leading zeros),
 * IPv6 compressed and lower-case as `inet_ntop` prints it (RFC 5952: `2001:DB8:0:0::1` is
 * `2001:db8::1`). Anything else, a scoped address (`fe80::1%eth0`) included, is returned unchanged.
 */
export function canonicalIp(value: string): string {
  if (isIPv4(value)) return value;
  if (!isIPv6(value) || value.includes('%')) return value;
  try {
    return new SocketAddress({ address: value, family: 'ipv6' }).address;
  } catch {
    return value;
  }
}

/**
 * A DNS name as a fully qualified name compares: lower-case (names are case-insensitive) with the
 * final dot. The empty string stays empty.
 */
export function canonicalDnsName(value: string): string {
  if (value === '') return value;
  const lower = value.toLowerCase();
  return lower.endsWith('.') ? lower : `${lower}.`;
}

/** What each field of a record type's data is, in order; types not listed are compared as written. */
type FieldKind = 'int' | 'name' | 'hex' | 'ip';

const RDATA_FIELDS: Readonly<Record<string, readonly FieldKind[]>> = {
  A: ['ip'],
  AAAA: ['ip'],
  CNAME: ['name'],
  NS: ['name'],
  PTR: ['name'],
  DNAME: ['name'],
  ALIAS: ['name'],
  MX: ['int', 'name'],
  SRV: ['int', 'int', 'int', 'name'],
  DS: ['int', 'int', 'int', 'hex'],
  CDS: ['int', 'int', 'int', 'hex'],
  SSHFP: ['int', 'int', 'hex'],
  TLSA: ['int', 'int', 'int', 'hex'],
};

/** The record types whose data `canonicalRdata` rewrites (for docs and `providers inspect`). */
export const RDATA_TYPES: readonly string[] = Object.keys(RDATA_FIELDS);

const INT = /^\d{1,10}$/;
const HEX = /^[0-9a-fA-F]+$/;

function canonicalField(kind: FieldKind, text: string): string | undefined {
  if (kind === 'int') return INT.test(text) ? String(Number(text)) : undefined;
  if (kind === 'hex') return HEX.test(text) ? text.toLowerCase() : undefined;
  if (kind === 'ip') return canonicalIp(text);
  return canonicalDnsName(text);
}

/**
 * The canonical presentation of a record's data for its type (`AAAA`, `mx`, …): addresses in their
 * canonical text, target names lower-case with the final dot (`10 Mail.example.org` is
 * `10 mail.example.org.`), numbers without leading zeros, hex digests lower-case, one space between
 * fields. Data of other types (TXT, CAA, SOA, …), and data that does not have the type's shape, is
 * returned unchanged.
 */
export function canonicalRdata(type: string, content: string): string {
  const kinds = RDATA_FIELDS[type.toUpperCase()];
  if (kinds === undefined || !Object.hasOwn(RDATA_FIELDS, type.toUpperCase())) return content;
  const parts = content.trim().split(/\s+/);
  // A hex digest may be written in several chunks (`… ABCD EF01`): they are one field.
  const last = kinds[kinds.length - 1];
  if (last === 'hex' && parts.length > kinds.length) {
    parts.splice(kinds.length - 1, parts.length, parts.slice(kinds.length - 1).join(''));
  }
  if (parts.length !== kinds.length || parts[0] === '') return content;
  const out: string[] = [];
  for (let i = 0; i < kinds.length; i++) {
    const v = canonicalField(kinds[i]!, parts[i]!);
    if (v === undefined) return content;
    out.push(v);
  }
  return out.join(' ');
}
