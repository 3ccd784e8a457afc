import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { applyOverlay, parseOverlay } from '../document/overlay.js';
import type { ProbeFact } from './facts.js';
import { probeActions, probeOverlay } from './overlay-writer.js';
import type { SchemaLocation } from './targets.js';

// A Swagger 2.0 document as written: zones by $ref, their record sets embedded in the zone's GET
// through two $refs; and an OpenAPI 3 path with an inline create schema.
const raw = {
  swagger: '2.0',
  paths: {
    '/servers/{server_id}/zones': {
      post: {
        parameters: [
          { in: 'path', name: 'server_id' },
          { in: 'body', name: 'z', schema: { $ref: '#/definitions/Zone' } },
        ],
      },
    },
    '/servers/{server_id}/zones/{zone_id}': {
      get: { responses: { '200': { schema: { $ref: '#/definitions/Zone' } } } },
    },
    '/things': {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { name: { type: 'string' }, labels: { type: 'object' } },
              },
            },
          },
        },
      },
    },
  },
  definitions: {
    Zone: {
      properties: {
        name: { type: 'string' },
        nameservers: { type: 'array' },
        rrsets: { type: 'array', items: { $ref: '#/definitions/RRSet' } },
      },
    },
    RRSet: {
      properties: {
        name: { type: 'string' },
        records: { type: 'array', items: { $ref: '#/definitions/Record' } },
      },
    },
    Record: { properties: { content: { type: 'string' }, disabled: { type: 'boolean' } } },
  },
};

const locations = new Map<string, SchemaLocation>([
  ['zones', { kind: 'create', path: '/servers/{server_id}/zones', method: 'POST' }],
  [
    'rrsets',
    { kind: 'embedded', parentItemPath: '/servers/{server_id}/zones/{zone_id}', field: 'rrsets' },
  ],
  ['things', { kind: 'create', path: '/things', method: 'POST' }],
  ['ghosts', { kind: 'create', path: '/ghosts', method: 'POST' }],
]);

const input = (facts: ProbeFact[]) => ({
  title: 'T',
  date: '2026-12-07',
  endpoint: 'http://127.0.0.1:8081',
  raw,
  locations,
  facts,
});

describe('probeActions: the overlay actions facts come to', () => {
  const cases: {
    reason: string;
    facts: ProbeFact[];
    want: { target: string; update: unknown }[];
    notes?: number;
  }[] = [
    {
      reason: 'a refused duplicate: a natural key on the schema the create $refs',
      facts: [{ kind: 'identity', type: 'zones', field: 'name', unique: true, evidence: 'e' }],
      want: [
        {
          target: '$.definitions.Zone',
          update: { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': 'name' },
        },
      ],
    },
    {
      reason: 'normalisations of one field are merged; a change ignored is create-only',
      facts: [
        { kind: 'normalize', type: 'zones', path: 'name', ops: ['trailing-dot'], evidence: 'e1' },
        { kind: 'normalize', type: 'zones', path: 'name', ops: ['lowercase'], evidence: 'e2' },
        { kind: 'field', type: 'zones', field: 'name', outcome: 'ignored', evidence: 'e3' },
      ],
      want: [
        {
          target: '$.definitions.Zone.properties.name',
          update: { 'x-tend-normalize': ['trailing-dot', 'lowercase'], 'x-tend-immutable': true },
        },
      ],
    },
    {
      reason: 'an embedded type: through the parent GET, the array items and their $refs',
      facts: [
        {
          kind: 'normalize',
          type: 'rrsets',
          path: 'records[].content',
          ops: ['ip'],
          evidence: 'e',
        },
        {
          kind: 'default',
          type: 'rrsets',
          path: 'records[].disabled',
          value: false,
          evidence: 'e',
        },
      ],
      want: [
        {
          target: '$.definitions.RRSet.properties.records',
          update: { 'x-tend-normalize': ['ip'] },
        },
        { target: '$.definitions.Record.properties.disabled', update: { default: false } },
      ],
    },
    {
      reason:
        'an inline create schema is targeted where it is written; a name not unique with a kept marker is a marker identity',
      facts: [
        { kind: 'identity', type: 'things', field: 'name', unique: false, evidence: 'e' },
        {
          kind: 'marker',
          type: 'things',
          field: 'labels',
          markerKind: 'map',
          kept: true,
          evidence: 'e',
        },
      ],
      want: [
        {
          target: "$.paths['/things'].post.requestBody.content['application/json'].schema",
          update: {
            'x-tend-identity': 'marker',
            'x-tend-marker': { field: 'labels', kind: 'map' },
          },
        },
      ],
      notes: 1,
    },
    {
      reason: 'no name to try a duplicate with, and a place that kept the marker: that place',
      facts: [
        {
          kind: 'marker',
          type: 'things',
          field: 'labels',
          markerKind: 'map',
          kept: true,
          evidence: 'e',
        },
      ],
      want: [
        {
          target: "$.paths['/things'].post.requestBody.content['application/json'].schema",
          update: { 'x-tend-marker': { field: 'labels', kind: 'map' } },
        },
      ],
    },
    {
      reason: 'no kept marker and no unique name: no marker place',
      facts: [
        { kind: 'identity', type: 'things', field: 'name', unique: false, evidence: 'e' },
        {
          kind: 'marker',
          type: 'things',
          field: 'labels',
          markerKind: 'map',
          kept: false,
          evidence: 'e',
        },
      ],
      want: [
        {
          target: "$.paths['/things'].post.requestBody.content['application/json'].schema",
          update: { 'x-tend-marker': false },
        },
      ],
      notes: 1,
    },
    {
      reason:
        "a unique name and no place that kept the marker where Tend looks: the natural key and no marker (Podman's secrets)",
      facts: [
        { kind: 'identity', type: 'things', field: 'name', unique: true, evidence: 'e1' },
        {
          kind: 'marker',
          type: 'things',
          field: 'labels',
          markerKind: 'map',
          kept: false,
          evidence: 'e2',
        },
      ],
      want: [
        {
          target: "$.paths['/things'].post.requestBody.content['application/json'].schema",
          update: {
            'x-tend-identity': 'natural-key',
            'x-tend-natural-key': 'name',
            'x-tend-marker': false,
          },
        },
      ],
    },
    {
      reason: 'a unique name and a place that kept the marker: the natural key; the marker a note',
      facts: [
        { kind: 'identity', type: 'things', field: 'name', unique: true, evidence: 'e1' },
        {
          kind: 'marker',
          type: 'things',
          field: 'labels',
          markerKind: 'map',
          kept: true,
          evidence: 'e2',
        },
      ],
      want: [
        {
          target: "$.paths['/things'].post.requestBody.content['application/json'].schema",
          update: { 'x-tend-identity': 'natural-key', 'x-tend-natural-key': 'name' },
        },
      ],
      notes: 1,
    },
    {
      reason: 'write-only, and updatable fields only as notes',
      facts: [
        { kind: 'write-only', type: 'zones', field: 'nameservers', evidence: 'e' },
        { kind: 'field', type: 'zones', field: 'kind', outcome: 'updatable', evidence: 'e' },
        { kind: 'field', type: 'zones', field: 'account', outcome: 'invalid', evidence: 'e' },
      ],
      want: [{ target: '$.definitions.Zone.properties.nameservers', update: { writeOnly: true } }],
      notes: 2,
    },
    {
      reason: 'reads consistent only when every type was listed at once',
      facts: [
        { kind: 'consistent-reads', type: 'zones', listedAtOnce: true, evidence: 'e' },
        { kind: 'consistent-reads', type: 'things', listedAtOnce: false, evidence: 'e' },
      ],
      want: [],
      notes: 2,
    },
    {
      reason: 'every type listed at once: on the root',
      facts: [{ kind: 'consistent-reads', type: 'zones', listedAtOnce: true, evidence: 'e' }],
      want: [{ target: '$', update: { 'x-tend-consistent-reads': true } }],
    },
    {
      reason: 'a fact with no place in the document becomes a note',
      facts: [{ kind: 'identity', type: 'ghosts', field: 'name', unique: true, evidence: 'e' }],
      want: [],
      notes: 1,
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const got = probeActions(input(c.facts));
      expect(got.actions.map((a) => ({ target: a.target, update: a.update }))).toEqual(c.want);
      expect(got.notes).toHaveLength(c.notes ?? 0);
    });
  }
});

describe('probeOverlay: the YAML', () => {
  it('is an OpenAPI Overlay that applies to the document, each action with its evidence, hostile text on one line', () => {
    const text = probeOverlay(
      input([
        {
          kind: 'identity',
          type: 'zones',
          field: 'name',
          unique: true,
          evidence:
            'second POST /servers/{server_id}/zones with the same name → 409 "Conflict:\n# not a comment"',
        },
        {
          kind: 'field',
          type: 'zones',
          field: 'name',
          outcome: 'refused',
          evidence: 'PUT → 422 "no"',
        },
      ]),
    );
    expect(text).toContain(
      '  # probed 2026-12-07 against http://127.0.0.1:8081: second POST /servers/{server_id}/zones with the same name → 409 "Conflict: # not a comment"',
    );
    expect(text.split('\n').filter((l) => l.startsWith('# not'))).toEqual([]);
    const overlay = parseOverlay(parse(text), 'probe.yaml');
    const doc = structuredClone(raw) as Record<string, unknown>;
    expect(applyOverlay(doc, overlay)).toEqual([]);
    const zone = (doc['definitions'] as Record<string, Record<string, unknown>>)['Zone']!;
    expect(zone['x-tend-natural-key']).toBe('name');
    expect(
      (zone['properties'] as Record<string, Record<string, unknown>>)['name']!['x-tend-immutable'],
    ).toBe(true);
    expect(overlay.actions[0]!.description).toMatch(
      /^probed 2026-12-07 against http:\/\/127\.0\.0\.1:8081: second POST/,
    );
  });
  it('with nothing learned, a valid overlay that changes nothing', () => {
    const overlay = parseOverlay(parse(probeOverlay(input([]))), 'probe.yaml');
    const doc = structuredClone(raw) as Record<string, unknown>;
    expect(applyOverlay(doc, overlay)).toEqual([]);
    expect(doc).toEqual(raw);
  });
});
