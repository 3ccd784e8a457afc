import { describe, expect, it } from 'vitest';
import type { ObservedObject, ResourceDecl, ResourceTypeInfo } from '../core/index.js';
import { TendError } from '../core/index.js';
import { createSpecValidator } from '../intent/index.js';
import { underScope } from './import.js';
import { buildImport, globMatcher, matchTexts } from './import-intent.js';

// The scope of `tend import`: --match globs, --under a declared parent.

function info(name: string, extra: Partial<ResourceTypeInfo> = {}): ResourceTypeInfo {
  return {
    name,
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        zone_id: { type: 'string' },
        name: { type: 'string' },
        type: { type: 'string' },
        kind: { type: 'string' },
      },
    },
    identity: 'natural-key',
    idField: 'id',
    createOnly: [],
    outputOnly: ['id'],
    sensitive: [],
    lifecycle: 'annotations',
    idempotencyKey: false,
    ...extra,
  };
}

const ZONES = info('zones', { naturalKey: 'name' });
const RRSETS = info('rrsets', {
  naturalKeyFields: ['zone_id', 'name', 'type'],
  parent: { type: 'zones', field: 'zone_id' },
});
const METADATA = info('metadata', {
  naturalKeyFields: ['zone_id', 'kind'],
  parent: { type: 'zones', field: 'zone_id' },
});
/** A grandchild type: lives under rrsets, carries zone_id too. */
const COMMENTS = info('comments', { parent: { type: 'rrsets', field: 'rrset_id' } });
const TSIGKEYS = info('tsigkeys', { naturalKey: 'name' });
const TYPES = [ZONES, RRSETS, METADATA, COMMENTS, TSIGKEYS];

describe('globMatcher', () => {
  it.each([
    ['*.example.org.', 'www.example.org.', true],
    ['*.example.org.', 'example.org.', false],
    ['*example.org.*', 'example.org./www.example.org./A', true],
    ['example.org.', 'exampleXorg.', false], // a dot is a dot
    ['www?', 'www1', true],
    ['www?', 'www', false],
    ['pdns.rrsets/www_*', 'pdns.rrsets/www_example_org_a', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['(a|b)[c]', '(a|b)[c]', true],
    ['**', '', true],
    ['WWW*', 'www.example.org.', false], // case-sensitive
  ])('%j on %j is %j', (pattern, text, want) => {
    expect(globMatcher(pattern)(text)).toBe(want);
  });

  it('a long run of stars does not take exponential time', () => {
    const started = performance.now();
    expect(globMatcher(`${'*a'.repeat(30)}*b`)('a'.repeat(40))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('matchTexts', () => {
  it('is the id, then the natural key and name values (not the parent field)', () => {
    const o: ObservedObject = {
      type: 'rrsets',
      id: 'example.org./www.example.org./A',
      fields: { zone_id: 'example.org.', name: 'www.example.org.', type: 'A', ttl: 300 },
    };
    expect(matchTexts(RRSETS, o)).toEqual([
      'example.org./www.example.org./A',
      'www.example.org.',
      'A',
    ]);
  });
});

describe('matchTexts of a nested natural key', () => {
  it('is the id, then the value at the key path (spec.name), then a top-level name', () => {
    const apps = info('apps', { naturalKey: 'spec.name', naturalKeyFields: ['spec.name'] });
    const o: ObservedObject = {
      type: 'apps',
      id: 'a-1',
      fields: { id: 'a-1', spec: { name: 'web', region: 'ams' } },
    };
    expect(matchTexts(apps, o)).toEqual(['a-1', 'web']);
  });
});

describe('buildImport keep', () => {
  const zone = (name: string): ObservedObject => ({
    type: 'zones',
    id: name,
    fields: { id: name, name, kind: 'Native' },
  });
  const rrset = (zoneId: string, name: string): ObservedObject => ({
    type: 'rrsets',
    id: `${zoneId}/${name}/A`,
    fields: { zone_id: zoneId, name, type: 'A' },
  });
  const types = [
    { type: 'pdns.zones', info: ZONES, objects: [zone('a.org.'), zone('b.org.')] },
    {
      type: 'pdns.rrsets',
      info: RRSETS,
      objects: [rrset('a.org.', 'www.a.org.'), rrset('b.org.', 'www.b.org.')],
    },
  ];

  it('names as a whole import would, writes only what is kept, references only what is written', () => {
    const all = buildImport({
      types,
      taken: new Set(),
      known: [],
      validator: createSpecValidator(),
    });
    const some = buildImport({
      types,
      taken: new Set(),
      known: [],
      validator: createSpecValidator(),
      keep: (c) => c.object.id.startsWith('b.org.') || c.address === 'pdns.rrsets/www_a_org_a',
    });
    const names = (r: typeof all) => r.resources.map((x) => x.address);
    expect(names(some)).toEqual([
      'pdns.zones/b_org',
      'pdns.rrsets/www_a_org_a',
      'pdns.rrsets/www_b_org_a',
    ]);
    for (const a of names(some)) expect(names(all)).toContain(a);
    const spec = (address: string) => some.resources.find((r) => r.address === address)!.spec;
    // The zone of www.a.org. is not written: its id stays a value, not a reference to nothing.
    expect(spec('pdns.rrsets/www_a_org_a')['zone_id']).toBe('a.org.');
    expect(spec('pdns.rrsets/www_b_org_a')['zone_id']).toBe('${pdns.zones/b_org.id}');
  });
});

describe('underScope', () => {
  const declared = [
    { address: 'pdns.zones/example', type: 'pdns.zones' },
    { address: 'pdns.zones/other', type: 'pdns.zones' },
    { address: 'pdns.tsigkeys/xfr', type: 'pdns.tsigkeys' },
  ] as unknown as ResourceDecl[];

  it('finds the children of the parent type and theirs, with the field naming the parent', () => {
    const s = underScope('pdns.zones/example', 'pdns', TYPES, declared, '/intent');
    expect(s.address).toBe('pdns.zones/example');
    expect([...s.fields]).toEqual([
      ['rrsets', 'zone_id'],
      ['metadata', 'zone_id'],
      ['comments', 'zone_id'],
    ]);
  });

  const bad: [string, string, string][] = [
    [
      'zones',
      '--under takes the address of a declared resource, <provider>.<type>/<name>, not "zones"',
      'e.g. --under pdns.zones/example',
    ],
    [
      'dns.zones/example',
      '--under dns.zones/example is a resource of provider dns, but --provider is pdns',
      'import from dns with --provider dns, or name a pdns resource',
    ],
    [
      'pdns.domains/example',
      '--under pdns.domains/example: provider pdns has no resource type domains; its types: zones, rrsets, metadata, comments, tsigkeys',
      '',
    ],
    [
      'pdns.tsigkeys/xfr',
      '--under pdns.tsigkeys/xfr: nothing of pdns lives under a tsigkeys object; types with a parent: rrsets (under zones), metadata (under zones), comments (under rrsets)',
      'import it with --type and --match instead',
    ],
    [
      'pdns.zones/nope',
      '--under pdns.zones/nope: no such resource is declared in /intent; declared pdns.zones resources: pdns.zones/example, pdns.zones/other',
      'import the parent first (tend import --provider pdns --type zones --match <its name>), then what lives under it',
    ],
  ];
  it.each(bad)('refuses --under %s', (under, message, hint) => {
    let err: unknown;
    try {
      underScope(under, 'pdns', TYPES, declared, '/intent');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('import.bad_scope');
    expect((err as TendError).message).toBe(message);
    expect((err as TendError).hint ?? '').toBe(hint);
  });
});
