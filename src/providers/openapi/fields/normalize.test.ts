import { describe, expect, it } from 'vitest';
import { canonicalValue, normalizeValue, schemaAt } from './normalize.js';

const DNS_NAME = { type: 'string', 'x-tend-normalize': ['lowercase', 'trailing-dot'] };
const RECORDS = {
  type: 'array',
  'x-tend-normalize': ['sort'],
  items: {
    type: 'object',
    properties: { content: { type: 'string' }, disabled: { type: 'boolean', default: false } },
  },
};

interface Case {
  name: string;
  reason: string;
  schema: unknown;
  value: unknown;
  want: unknown;
}

const cases: Case[] = [
  {
    name: 'DNS name',
    reason: 'case and the trailing dot do not change a DNS name',
    schema: DNS_NAME,
    value: 'WWW.Example.ORG',
    want: 'www.example.org.',
  },
  {
    name: 'already canonical',
    reason: 'normalising is idempotent',
    schema: DNS_NAME,
    value: 'www.example.org.',
    want: 'www.example.org.',
  },
  {
    name: 'no trailing dot',
    reason: 'PowerDNS stores TSIG key names without it',
    schema: { type: 'string', 'x-tend-normalize': ['lowercase', 'no-trailing-dot'] },
    value: 'XFR-Key.',
    want: 'xfr-key',
  },
  {
    name: 'uppercase',
    reason: 'record types and metadata kinds are upper-case',
    schema: { type: 'string', 'x-tend-normalize': 'uppercase' },
    value: 'aaaa',
    want: 'AAAA',
  },
  {
    name: 'set of names',
    reason: 'string steps reach the items of an array; sort makes order irrelevant',
    schema: {
      type: 'array',
      items: { type: 'string' },
      'x-tend-normalize': ['lowercase', 'trailing-dot', 'sort'],
    },
    value: ['NS2.example.org', 'ns1.example.org.'],
    want: ['ns1.example.org.', 'ns2.example.org.'],
  },
  {
    name: 'records with defaults',
    reason: 'a record without disabled is the record with disabled: false; records are a set',
    schema: RECORDS,
    value: [{ content: '192.0.2.2' }, { content: '192.0.2.1', disabled: false }],
    want: [
      { content: '192.0.2.1', disabled: false },
      { content: '192.0.2.2', disabled: false },
    ],
  },
  {
    name: 'no annotation',
    reason: 'without x-tend-normalize a value compares as it is',
    schema: { type: 'string' },
    value: 'MiXeD',
    want: 'MiXeD',
  },
  {
    name: 'no schema',
    reason: 'a value the schema does not describe is left alone',
    schema: undefined,
    value: { a: ['B', 'a'] },
    want: { a: ['B', 'a'] },
  },
];

describe('normalizeValue', () => {
  it.each(cases)('$name: $reason', ({ schema, value, want }) => {
    expect(normalizeValue(schema, value)).toEqual(want);
  });

  it('makes a declared and an observed rrset compare equal', () => {
    const schema = { type: 'object', properties: { records: RECORDS, name: DNS_NAME } };
    const declared = { name: 'www.example.org', records: [{ content: 'b' }, { content: 'a' }] };
    const observed = {
      name: 'www.example.org.',
      records: [
        { content: 'a', disabled: false },
        { content: 'b', disabled: false },
      ],
    };
    expect(normalizeValue(schema, declared)).toEqual(normalizeValue(schema, observed));
    // A disabled record is a different record.
    expect(
      normalizeValue(schema, { ...declared, records: [{ content: 'a', disabled: true }] }),
    ).not.toEqual(normalizeValue(schema, observed));
  });
});

describe('canonicalValue', () => {
  it('sends the canonical spelling, keeps the order and adds no defaults', () => {
    const schema = {
      type: 'object',
      properties: {
        name: DNS_NAME,
        records: RECORDS,
        nameservers: { type: 'array', items: DNS_NAME },
      },
    };
    expect(
      canonicalValue(schema, {
        name: 'Example.ORG',
        records: [{ content: 'b' }, { content: 'a' }],
        nameservers: ['NS1.example.org'],
        other: 'Kept',
      }),
    ).toEqual({
      name: 'example.org.',
      records: [{ content: 'b' }, { content: 'a' }],
      nameservers: ['ns1.example.org.'],
      other: 'Kept',
    });
  });
});

describe('schemaAt', () => {
  const schema = {
    type: 'object',
    properties: {
      tags: {
        type: 'object',
        additionalProperties: { type: 'string', 'x-tend-normalize': 'lowercase' },
      },
    },
    allOf: [{ properties: { name: DNS_NAME } }],
  };
  it.each([
    { path: 'name', want: DNS_NAME },
    { path: 'tags.team', want: { type: 'string', 'x-tend-normalize': 'lowercase' } },
    { path: 'missing', want: undefined },
    { path: 'name.deeper', want: undefined },
  ])('finds $path', ({ path, want }) => {
    expect(schemaAt(schema, path)).toEqual(want);
  });
});
