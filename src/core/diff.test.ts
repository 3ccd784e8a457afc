import { describe, expect, it } from 'vitest';
import { diffDeclared, updateBody, type DiffOptions, type FieldChange } from './diff.js';

describe('diffDeclared normalisation', () => {
  const lowerCase = (calls: string[]) => (path: string, v: unknown) => {
    calls.push(path);
    return typeof v === 'string' ? v.toLowerCase() : v;
  };
  it('compares values as the normaliser sees them', () => {
    const calls: string[] = [];
    const desired = { zone: 'Example.ORG.', ttl: 300 };
    const observed = { zone: 'example.org.', ttl: 600 };
    expect(diffDeclared(desired, observed, { normalize: lowerCase(calls) })).toEqual([
      { path: 'ttl', before: 600, after: 300 },
    ]);
    expect(calls).toEqual(['zone', 'zone', 'ttl', 'ttl']);
  });
  it('does not ask the normaliser about identical values (a pass with no drift never calls it)', () => {
    const calls: string[] = [];
    const desired = { zone: 'example.org.', ttl: 300, tags: { team: 'dns' } };
    const observed = { zone: 'example.org.', ttl: 300, tags: { team: 'dns', owner: 'x' } };
    expect(diffDeclared(desired, observed, { normalize: lowerCase(calls) })).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('diffDeclared', () => {
  const cases: {
    name: string;
    reason: string;
    desired: Record<string, unknown>;
    observed: Record<string, unknown>;
    options?: DiffOptions;
    want: FieldChange[];
  }[] = [
    {
      name: 'equal',
      reason: 'no drift when declared values match',
      desired: { size: 10 },
      observed: { size: 10, id: 'v' },
      want: [],
    },
    {
      name: 'changed',
      reason: 'a declared field that differs is drift',
      desired: { size: 10 },
      observed: { size: 20 },
      want: [{ path: 'size', before: 20, after: 10 }],
    },
    {
      name: 'undeclared',
      reason: 'fields the intent does not declare are never drift',
      desired: { name: 'a' },
      observed: { name: 'a', replicas: 5 },
      want: [],
    },
    {
      name: 'object keys',
      reason: 'only declared keys of an object are compared (marker tags are not drift)',
      desired: { tags: { team: 'web' } },
      observed: { tags: { team: 'db', 'tend.address': 'x/y' } },
      want: [{ path: 'tags.team', before: 'db', after: 'web' }],
    },
    {
      name: 'missing',
      reason: 'a declared field absent from the object is drift',
      desired: { versioning: true },
      observed: {},
      want: [{ path: 'versioning', before: undefined, after: true }],
    },
    {
      name: 'number vs numeric string',
      reason: 'a value of another type differs even when it looks the same',
      desired: { size: 10 },
      observed: { size: '10' },
      want: [{ path: 'size', before: '10', after: 10 }],
    },
    {
      name: 'zero and minus zero',
      reason: 'values are compared as JSON writes them, and -0 is written 0',
      desired: { offset: 0 },
      observed: { offset: -0 },
      want: [],
    },
    {
      name: 'non-finite number',
      reason: 'values are compared as JSON writes them, and NaN is written null',
      desired: { ratio: Number.NaN },
      observed: { ratio: null },
      want: [],
    },
    {
      name: 'booleans',
      reason: 'a flipped flag is drift',
      desired: { versioning: true },
      observed: { versioning: false },
      want: [{ path: 'versioning', before: false, after: true }],
    },
    {
      name: 'null vs absent',
      reason: 'null and absent are the same',
      desired: { note: null },
      observed: {},
      want: [],
    },
    {
      name: 'arrays',
      reason: 'arrays compare whole, order matters by default',
      desired: { ns: ['a', 'b'] },
      observed: { ns: ['b', 'a'] },
      want: [{ path: 'ns', before: ['b', 'a'], after: ['a', 'b'] }],
    },
    {
      name: 'normalised',
      reason: 'values are compared after provider normalisation',
      desired: { zone: 'Example.org' },
      observed: { zone: 'example.org.' },
      options: {
        normalize: (_p, v) => (typeof v === 'string' ? v.toLowerCase().replace(/\.?$/, '.') : v),
      },
      want: [],
    },
    {
      name: 'ignored',
      reason: 'secrets cannot be read back and are not compared',
      desired: { admin_password: 'x' },
      observed: {},
      options: { ignore: new Set(['admin_password']) },
      want: [],
    },
    {
      name: 'unknown',
      reason: 'a value known only after apply is always a change',
      desired: { network_id: { $unknown: '${sb.networks/n.id}' } },
      observed: { network_id: 'net-1' },
      want: [{ path: 'network_id', before: 'net-1', after: { $unknown: '${sb.networks/n.id}' } }],
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(diffDeclared(c.desired, c.observed, c.options)).toEqual(c.want);
    });
  }
});

describe('updateBody', () => {
  const cases: {
    name: string;
    reason: string;
    desired: Record<string, unknown>;
    observed: Record<string, unknown>;
    want: Record<string, unknown>;
  }[] = [
    {
      name: 'changed fields only',
      reason: 'unchanged declared fields and undeclared fields are not sent',
      desired: { replicas: 2, image: 'nginx' },
      observed: { replicas: 5, image: 'nginx', tags: { hotfix: 'x' } },
      want: { replicas: 2 },
    },
    {
      name: 'objects merge',
      reason: 'undeclared keys of a declared object survive (marker tags, a hotfix tag)',
      desired: { tags: { team: 'web' } },
      observed: { tags: { team: 'db', hotfix: 'INC-1', 'tend.address': 'sb.x/y' } },
      want: { tags: { team: 'web', hotfix: 'INC-1', 'tend.address': 'sb.x/y' } },
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason}`, () => {
      expect(updateBody(c.desired, c.observed, diffDeclared(c.desired, c.observed))).toEqual(
        c.want,
      );
    });
  }
});
