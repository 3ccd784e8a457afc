import { describe, expect, it } from 'vitest';
import type { ObservedObject, ResourceTypeInfo } from '../core/index.js';
import { createSpecValidator } from '../intent/index.js';
import type { ImportType } from './import-intent.js';
import {
  buildImport,
  importExclusion,
  objectKey,
  renderImport,
  sanitizeName,
} from './import-intent.js';

function info(
  name: string,
  schema: Record<string, unknown>,
  extra: Partial<ResourceTypeInfo> = {},
) {
  return {
    name,
    schema: { type: 'object', additionalProperties: false, ...schema },
    identity: 'marker',
    idField: 'id',
    createOnly: [],
    outputOnly: ['id'],
    sensitive: [],
    lifecycle: 'annotations',
    idempotencyKey: false,
    ...extra,
  } satisfies ResourceTypeInfo;
}

const tags = { type: 'object', additionalProperties: { type: 'string' } };

const ZONES = info(
  'zones',
  {
    properties: {
      name: { type: 'string' },
      kind: { type: 'string' },
      serial: { type: 'integer', 'x-tend-server-owned': true },
      edited_serial: { type: 'integer' },
      master_tsig_key_ids: { type: 'array', items: { type: 'string' } },
      url: { type: 'string', readOnly: true },
      soa: {
        type: 'object',
        additionalProperties: false,
        properties: { ttl: { type: 'integer' } },
      },
    },
    required: ['name'],
  },
  { identity: 'natural-key', naturalKey: 'name', idField: 'id', serverOwned: ['edited_serial'] },
);

const RRSETS = info(
  'rrsets',
  {
    properties: {
      zone_id: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string' },
      records: { type: 'array', items: { type: 'string' } },
    },
    required: ['zone_id', 'name', 'type'],
  },
  {
    identity: 'natural-key',
    naturalKey: 'name',
    naturalKeyFields: ['zone_id', 'name', 'type'],
    parent: { type: 'zones', field: 'zone_id' },
  },
);

const KEYS = info(
  'keys',
  {
    properties: {
      name: { type: 'string' },
      secret: { type: 'string', writeOnly: true },
      labels: tags,
      status: { type: 'string' },
    },
    required: ['name', 'secret'],
  },
  { sensitive: ['secret'], markerField: 'labels', outputOnly: ['id', 'status'] },
);

function obj(type: string, id: string, fields: Record<string, unknown>): ObservedObject {
  return { type, id, fields: { id, ...fields } };
}

function build(types: ImportType[], extra: Partial<Parameters<typeof buildImport>[0]> = {}) {
  return buildImport({
    types,
    taken: new Set(),
    known: [],
    validator: createSpecValidator(),
    ...extra,
  });
}

describe('sanitizeName', () => {
  it.each([
    { text: 'example.org.', want: 'example_org', reason: 'dots become _, the trailing one goes' },
    { text: 'Main Net', want: 'main_net', reason: 'lower-case, spaces become _' },
    { text: '_sip._tcp', want: 'sip_tcp', reason: 'no leading _' },
    { text: 'a--b', want: 'a--b', reason: '- is allowed' },
    { text: '***', want: '', reason: 'nothing usable is empty (the caller falls back)' },
  ])('$text', ({ text, want, reason }) => {
    expect(sanitizeName(text), reason).toBe(want);
  });
});

describe('importExclusion', () => {
  const rules = (value: unknown) =>
    ({ ...RRSETS, schema: { ...RRSETS.schema, 'x-tend-import-exclude': value } }) as typeof RRSETS;
  const SOA = obj('rrsets', 'example.org./example.org./SOA', {
    zone_id: 'example.org.',
    name: 'example.org.',
    type: 'SOA',
    ttl: 3600,
  });
  const cases: {
    name: string;
    reason: string;
    rules: unknown;
    object?: ObservedObject;
    want: string | undefined;
  }[] = [
    {
      name: 'no rules',
      reason: 'a type without x-tend-import-exclude imports everything',
      rules: undefined,
      want: undefined,
    },
    {
      name: 'matching value, with a reason',
      reason: 'the field holds one of the values: left out, saying which rule and why',
      rules: [{ field: 'type', values: ['NS', 'SOA'], reason: 'the server owns it' }],
      want: 'type = SOA: the server owns it',
    },
    {
      name: 'matching value, no reason',
      reason: 'the rule alone says why',
      rules: [{ field: 'type', values: ['SOA'] }],
      want: 'type = SOA',
    },
    {
      name: 'numbers compare as numbers',
      reason: 'a value is compared as the platform reports it, type included',
      rules: [
        { field: 'ttl', values: ['3600'] },
        { field: 'ttl', values: [3600] },
      ],
      want: 'ttl = 3600',
    },
    {
      name: 'case matters',
      reason: 'values are compared as the platform reports them, not normalised',
      rules: [{ field: 'type', values: ['soa'] }],
      want: undefined,
    },
    {
      name: 'another type of record',
      reason: 'only the objects a rule names are left out',
      rules: [{ field: 'type', values: ['SOA'] }],
      object: obj('rrsets', 'example.org./www.example.org./A', { type: 'A' }),
      want: undefined,
    },
    {
      name: 'field missing or not a scalar',
      reason: 'an object without the field, or with a structured value there, matches no rule',
      rules: [
        { field: 'absent', values: ['x'] },
        { field: 'zone_id', values: [] },
      ],
      object: obj('rrsets', 'x', { type: 'A', zone_id: { nested: true } }),
      want: undefined,
    },
    {
      name: 'malformed rules',
      reason: 'what the provider did not validate is ignored, never a crash',
      rules: { field: 'type', values: ['SOA'] },
      want: undefined,
    },
  ];
  it.each(cases)('$name: $reason', (c) => {
    expect(importExclusion(rules(c.rules), c.object ?? SOA)).toBe(c.want);
  });
});

describe('buildImport', () => {
  it('declares writable fields only: no output-only, read-only, server-owned or nested unknown ones', () => {
    const zone = obj('pdns.zones', 'example.org.', {
      name: 'example.org.',
      kind: 'Native',
      serial: 2024050101,
      edited_serial: 2024050102,
      url: '/zones/example.org.',
      soa: { ttl: 3600, serial: 7 },
      extra: 'not in the schema',
      nothing: null,
    });
    const { resources, problems } = build([{ type: 'pdns.zones', info: ZONES, objects: [zone] }]);
    expect(problems).toEqual([]);
    expect(resources).toMatchObject([
      {
        address: 'pdns.zones/example_org',
        objectId: 'example.org.',
        spec: { name: 'example.org.', kind: 'Native', soa: { ttl: 3600 } },
        dependsOn: [],
        secrets: [],
      },
    ]);
  });

  it('references a parent by its id where a field named like an id holds it', () => {
    const zone = obj('pdns.zones', 'example.org.', { name: 'example.org.' });
    const rrset = obj('pdns.rrsets', 'example.org./www/A', {
      zone_id: 'example.org.',
      name: 'example.org.',
      type: 'A',
      records: ['192.0.2.1'],
    });
    const { resources } = build([
      { type: 'pdns.zones', info: ZONES, objects: [zone] },
      { type: 'pdns.rrsets', info: RRSETS, objects: [rrset] },
    ]);
    expect(resources[1]).toMatchObject({
      address: 'pdns.rrsets/example_org_a',
      spec: {
        zone_id: '${pdns.zones/example_org.id}',
        name: 'example.org.', // equal to the zone's id, but not an id field: stays a value
        type: 'A',
      },
      dependsOn: ['pdns.zones/example_org'],
    });
  });

  it('names rrsets by their own key fields and references the parent type only', () => {
    const zone = obj('pdns.zones', 'example.org.', {
      name: 'example.org.',
      master_tsig_key_ids: ['xfr.', 'unknown.'],
    });
    const key = obj('pdns.tsigkeys', 'xfr.', { name: 'xfr' });
    // A key whose id equals the zone's: not the rrset's parent type, so not a candidate.
    const clash = obj('pdns.tsigkeys', 'example.org.', { name: 'clash' });
    const rrsets = ['A', 'AAAA'].map((type) =>
      obj('pdns.rrsets', `example.org./www.example.org./${type}`, {
        zone_id: 'example.org.',
        name: 'www.example.org.',
        type,
      }),
    );
    const KEYS_INFO = info('tsigkeys', { properties: { name: { type: 'string' } } });
    const { resources } = build([
      { type: 'pdns.zones', info: ZONES, objects: [zone] },
      { type: 'pdns.tsigkeys', info: KEYS_INFO, objects: [key, clash] },
      { type: 'pdns.rrsets', info: RRSETS, objects: rrsets },
    ]);
    expect(resources.map((r) => [r.address, r.spec['zone_id'], r.dependsOn])).toEqual([
      ['pdns.zones/example_org', undefined, ['pdns.tsigkeys/xfr']],
      ['pdns.tsigkeys/clash', undefined, []],
      ['pdns.tsigkeys/xfr', undefined, []],
      ['pdns.rrsets/www_example_org_a', '${pdns.zones/example_org.id}', ['pdns.zones/example_org']],
      [
        'pdns.rrsets/www_example_org_aaaa',
        '${pdns.zones/example_org.id}',
        ['pdns.zones/example_org'],
      ],
    ]);
    expect(resources[0]!.spec['master_tsig_key_ids']).toEqual([
      '${pdns.tsigkeys/xfr.id}',
      'unknown.',
    ]);
  });

  it('references declared objects too, and never an ambiguous id', () => {
    const rrsets = [
      obj('pdns.rrsets', 'r1', { zone_id: 'z1', name: 'a.', type: 'A' }),
      obj('pdns.rrsets', 'r2', { zone_id: 'z2', name: 'b.', type: 'A' }),
    ];
    const { resources } = build([{ type: 'pdns.rrsets', info: RRSETS, objects: rrsets }], {
      known: [
        { address: 'pdns.zones/one', info: ZONES, object: obj('pdns.zones', 'z1', {}) },
        { address: 'pdns.zones/two', info: ZONES, object: obj('pdns.zones', 'z2', {}) },
        { address: 'pdns.zones/two-again', info: ZONES, object: obj('pdns.zones', 'z2', {}) },
      ],
    });
    expect(resources.map((r) => r.spec['zone_id'])).toEqual(['${pdns.zones/one.id}', 'z2']);
  });

  it('strips the marker from tags, keeps other tags, and declares a required secret as fromEnv', () => {
    const key = obj('prov.keys', 'k-1', {
      name: 'deploy',
      status: 'active',
      labels: { team: 'ops', 'tend.workspace': 'default', 'tend.address': 'prov.keys/deploy' },
    });
    const bare = obj('prov.keys', 'k-2', {
      name: 'other',
      labels: { 'tend.workspace': 'default', 'tend.address': 'prov.keys/other' },
    });
    const { resources } = build([{ type: 'prov.keys', info: KEYS, objects: [key, bare] }]);
    expect(resources.map((r) => [r.address, r.spec, r.secrets])).toEqual([
      [
        'prov.keys/deploy',
        { name: 'deploy', secret: { fromEnv: 'PROV_KEYS_DEPLOY_SECRET' }, labels: { team: 'ops' } },
        ['PROV_KEYS_DEPLOY_SECRET'],
      ],
      [
        'prov.keys/other',
        { name: 'other', secret: { fromEnv: 'PROV_KEYS_OTHER_SECRET' } },
        ['PROV_KEYS_OTHER_SECRET'],
      ],
    ]);
  });

  it('names: natural key, else the id on a clash, else a number; taken and preferred names respected', () => {
    const zones = [
      obj('pdns.zones', 'b.example.', { name: 'example' }),
      obj('pdns.zones', 'a.example.', { name: 'example' }),
      obj('pdns.zones', 'taken.', { name: 'taken' }),
      obj('pdns.zones', 'old.', { name: 'renamed' }),
      obj('pdns.zones', '***', { name: '...' }),
    ];
    const { resources } = build([{ type: 'pdns.zones', info: ZONES, objects: zones }], {
      taken: new Set(['pdns.zones/taken']),
      names: new Map([[objectKey('pdns.zones', 'old.'), 'kept']]),
    });
    expect(resources.map((r) => [r.objectId, r.name])).toEqual([
      ['***', 'zone'],
      ['a.example.', 'example'],
      ['b.example.', 'b_example'],
      ['old.', 'kept'],
      ['taken.', 'taken-2'],
    ]);
  });

  it('reports what still does not fit the schema', () => {
    const rrset = obj('pdns.rrsets', 'r', { zone_id: 'z', name: 'a.', type: 7 });
    const { problems } = build([{ type: 'pdns.rrsets', info: RRSETS, objects: [rrset] }]);
    expect(problems).toEqual([
      { address: 'pdns.rrsets/a_7', message: '`spec.type` must be string, got integer 7' },
    ]);
  });
});

describe('renderImport', () => {
  it('writes one Resource document per object after the header comment', () => {
    const { resources } = build([
      {
        type: 'pdns.zones',
        info: ZONES,
        objects: [obj('pdns.zones', 'example.org.', { name: 'example.org.', kind: 'Native' })],
      },
      {
        type: 'pdns.rrsets',
        info: RRSETS,
        objects: [
          obj('pdns.rrsets', 'txt', {
            zone_id: 'example.org.',
            name: 'example.org.',
            type: 'TXT',
            records: ['"v=spf1 -all"'],
          }),
        ],
      },
    ]);
    expect(renderImport(resources, 'Imported.\n\nSecond paragraph.')).toBe(
      [
        '# Imported.',
        '#',
        '# Second paragraph.',
        'kind: Resource',
        'type: pdns.zones',
        'name: example_org',
        'spec:',
        '  name: example.org.',
        '  kind: Native',
        '---',
        'kind: Resource',
        'type: pdns.rrsets',
        'name: example_org_txt',
        'spec:',
        '  zone_id: ${pdns.zones/example_org.id}',
        '  name: example.org.',
        '  type: TXT',
        '  records:',
        `    - '"v=spf1 -all"'`,
        '',
      ].join('\n'),
    );
  });
});
