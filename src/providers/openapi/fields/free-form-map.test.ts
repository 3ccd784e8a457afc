import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';
import { freeFormMap } from './marker-location.js';

// Free-form maps of strings a schema shows only by their name and an example (marker-location.ts,
// freeFormMap): `labels: {type: object, properties: {labelkey: {type: string}}}` is a place for
// Tend's marker as much as `additionalProperties: {type: string}`. Each case is a create body of
// our own; a structure that only looks like a map (several fields, a required one, values of any
// type) is no place: a marker there would be refused or lost.

type Obj = Record<string, unknown>;

const STRING = { type: 'string' };
const example = (name: string): Obj => ({
  type: 'object',
  description: 'User-defined key-value pairs',
  properties: { [name]: { type: 'string', example: 'value' } },
});

function docWith(properties: Obj): Obj {
  const body = { type: 'object', required: ['size'], properties: { size: STRING, ...properties } };
  const read = { type: 'object', properties: { id: { type: 'string' }, ...body.properties } };
  const json = (schema: Obj) => ({ content: { 'application/json': { schema } } });
  const ok = (schema: Obj) => ({ '200': { description: 'ok', ...json(schema) } });
  return {
    openapi: '3.0.3',
    info: { title: 'gadgets', version: '1' },
    paths: {
      '/gadgets': {
        get: { responses: ok({ type: 'array', items: read }) },
        post: {
          requestBody: json(body),
          responses: { '201': { description: 'ok', ...json(read) } },
        },
      },
      '/gadgets/{gadgetId}': {
        get: { responses: ok(read) },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

interface Case {
  name: string;
  properties: Obj;
  /** The marker's place and kind, or null for none (and then no identity). */
  marker: [string, string] | null;
}

const cases: Case[] = [
  {
    name: 'labels with one example property (Hetzner-like)',
    properties: { labels: example('labelkey') },
    marker: ['labels', 'map'],
  },
  {
    name: 'attributes with one example property',
    properties: { attributes: example('team') },
    marker: ['attributes', 'map'],
  },
  {
    name: 'annotations with additionalProperties of strings',
    properties: { annotations: { type: 'object', additionalProperties: STRING } },
    marker: ['annotations', 'map'],
  },
  {
    name: 'properties with an example and additionalProperties of strings (LXD-like)',
    properties: {
      properties: {
        type: 'object',
        additionalProperties: STRING,
        example: { os: 'Ubuntu', release: 'jammy' },
      },
    },
    marker: ['properties', 'map'],
  },
  {
    name: 'metadata with one example property, the name spelled Metadata',
    properties: { Metadata: example('owner') },
    marker: ['Metadata', 'map'],
  },
  {
    name: 'a tags list the schema types wins over labels shown by an example',
    properties: { labels: example('env'), tags: { type: 'array', items: STRING } },
    marker: ['tags', 'list'],
  },
  {
    name: 'labels shown by an example win over a description (the free text is the last resort)',
    properties: { description: STRING, labels: example('env') },
    marker: ['labels', 'map'],
  },
  // No place.
  {
    name: 'a structure of several fields named metadata is no map',
    properties: { metadata: { type: 'object', properties: { owner: STRING, team: STRING } } },
    marker: null,
  },
  {
    name: 'attributes whose values may be anything (additionalProperties: true) are no string map',
    properties: { attributes: { type: 'object', additionalProperties: true } },
    marker: null,
  },
  {
    name: 'labels with a required property are a structure',
    properties: { labels: { ...example('env'), required: ['env'] } },
    marker: null,
  },
  {
    name: 'labels whose example property is a number are no string map',
    properties: { labels: { type: 'object', properties: { weight: { type: 'integer' } } } },
    marker: null,
  },
  {
    name: 'metadata listing one field with no example and no word of pairs is a structure',
    properties: { metadata: { type: 'object', properties: { owner: STRING } } },
    marker: null,
  },
  {
    name: 'metadata listing a name, even with an example, is a structure (Kubernetes-like)',
    properties: {
      metadata: { type: 'object', properties: { name: { type: 'string', example: 'web' } } },
    },
    marker: null,
  },
  {
    name: 'tags listing one property with an example value is a map',
    properties: {
      tags: { type: 'object', properties: { env: { type: 'string', example: 'prod' } } },
    },
    marker: ['tags', 'map'],
  },
  {
    name: 'another name with one example property is no map (settings)',
    properties: { settings: example('mode') },
    marker: null,
  },
  {
    name: 'read-only labels take no marker',
    properties: { labels: { ...example('env'), readOnly: true } },
    marker: null,
  },
];

describe('marker places shown by their name and an example', () => {
  it.each(cases)('$name', ({ properties, marker }) => {
    const derived = deriveTypes(docWith(properties));
    expect(derived.types).toHaveLength(1);
    const { info } = derived.types[0]!;
    if (marker === null) {
      expect(info.markerField).toBeUndefined();
      expect(info.identity).toBeNull();
    } else {
      expect([info.markerField, info.markerKind]).toEqual(marker);
      expect(info.identity).toBe('marker');
    }
  });
});

describe('freeFormMap', () => {
  it('takes a nested place by its last segment, not any object', () => {
    expect(freeFormMap('spec.labels', example('env'))).toBe(true);
    expect(freeFormMap('spec', example('env'))).toBe(false);
    expect(freeFormMap('labels', { type: 'string' })).toBe(false);
    expect(freeFormMap('labels', { properties: {} })).toBe(true);
    expect(freeFormMap('attributes', { type: 'object' })).toBe(false);
    expect(freeFormMap('attributes', { type: 'object', description: 'Custom pairs' })).toBe(true);
    expect(
      freeFormMap('labels', { description: 'Arbitrary pairs', properties: { a: STRING } }),
    ).toBe(true);
    expect(freeFormMap('labels', { properties: { a: STRING, b: STRING } })).toBe(false);
  });
});
