import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';

// Where a type's objects carry Tend's ownership marker: inferred from the create body (a map of
// strings, else a list of strings, else a free-text field as the last resort), or stated with
// `x-tend-marker: {field, kind}`. The choice decides the identity: a type with a place for the
// marker is a marker type.

type Obj = Record<string, unknown>;

const MAP = { type: 'object', additionalProperties: { type: 'string' } };
const LIST = { type: 'array', items: { type: 'string' } };
const TEXT = { type: 'string' };

/** A document with one complete type `things` whose create body has these properties. */
function docWith(properties: Obj, extra: Obj = {}): Obj {
  const body = { type: 'object', properties, ...extra };
  const read = { type: 'object', properties: { id: { type: 'string' }, ...properties } };
  const json = (schema: Obj) => ({ content: { 'application/json': { schema } } });
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        get: {
          responses: { '200': { description: 'ok', ...json({ type: 'array', items: read }) } },
        },
        post: {
          requestBody: json(body),
          responses: { '201': { description: 'ok', ...json(read) } },
        },
      },
      '/things/{id}': {
        get: { responses: { '200': { description: 'ok', ...json(read) } } },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
}

interface Case {
  name: string;
  reason: string;
  properties: Obj;
  extra?: Obj;
  want: { markerField?: string; markerKind?: string; identity: string | null };
  warnings?: string[];
}

const cases: Case[] = [
  {
    name: 'metadata map',
    reason: 'a top-level metadata map of strings (Stripe) is a map like tags, after them',
    properties: { description: TEXT, metadata: MAP },
    want: { markerField: 'metadata', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'metadata map or empty string',
    reason: 'a choice of a map or "" (how Stripe clears it) is a map',
    properties: { description: TEXT, metadata: { anyOf: [MAP, { type: 'string', enum: [''] }] } },
    want: { markerField: 'metadata', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'metadata that is a map or something else',
    reason: 'a choice with another real member is not known to be a map: the text field is used',
    properties: { description: TEXT, metadata: { oneOf: [MAP, TEXT] } },
    want: { markerField: 'description', markerKind: 'text', identity: 'marker' },
  },
  {
    name: 'metadata object',
    reason:
      'an object of named fields (Kubernetes metadata) is not a map: only its labels would be',
    properties: { metadata: { type: 'object', properties: { name: TEXT } } },
    want: { identity: null },
  },
  {
    name: 'tags map',
    reason: 'a map of strings is the best place: keys of their own',
    properties: { name: TEXT, tags: MAP, description: TEXT },
    want: { markerField: 'tags', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'labels map',
    reason: 'labels are tags by another name',
    properties: { labels: MAP },
    want: { markerField: 'labels', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'metadata.labels',
    reason: 'a nested map (Kubernetes-style metadata) is found by its dotted path',
    properties: { metadata: { type: 'object', properties: { labels: MAP, name: TEXT } } },
    want: { markerField: 'metadata.labels', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'map beats list',
    reason: 'a map anywhere is preferred over a list of strings',
    properties: { tags: LIST, labels: MAP },
    want: { markerField: 'labels', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'tags list',
    reason: 'a list of strings takes marker entries next to the user entries',
    properties: { tags: LIST, description: TEXT },
    want: { markerField: 'tags', markerKind: 'list', identity: 'marker' },
  },
  {
    name: 'description text',
    reason: 'free text is the last resort, description before comment',
    properties: { comment: TEXT, description: TEXT },
    want: { markerField: 'description', markerKind: 'text', identity: 'marker' },
  },
  {
    name: 'comment text',
    reason: 'a comment is free text too (Alertmanager silences)',
    properties: { comment: TEXT, createdBy: TEXT },
    want: { markerField: 'comment', markerKind: 'text', identity: 'marker' },
  },
  {
    name: 'text where a natural key identifies',
    reason:
      "inferred free text is the last resort: no token in a person's text where a key already identifies the object",
    properties: { id: TEXT, description: TEXT },
    extra: { required: ['id'] },
    want: { identity: 'natural-key' },
  },
  {
    name: 'a map where a natural key identifies',
    reason:
      'a map of its own keys is no noise: it still carries the marker (ownership after a store loss)',
    properties: { id: TEXT, tags: MAP, description: TEXT },
    extra: { required: ['id'] },
    want: { markerField: 'tags', markerKind: 'map', identity: 'natural-key' },
  },
  {
    name: 'stated text where a natural key identifies',
    reason: 'x-tend-marker is used as stated',
    properties: { id: TEXT, description: TEXT },
    extra: { required: ['id'], 'x-tend-marker': { field: 'description', kind: 'text' } },
    want: { markerField: 'description', markerKind: 'text', identity: 'natural-key' },
  },
  {
    name: 'capitalised Labels',
    reason: 'a candidate is matched without regard to case (Docker Engine writes Labels)',
    properties: { Name: TEXT, Labels: MAP },
    want: { markerField: 'Labels', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'read-only candidates',
    reason: 'a field the client cannot write cannot carry the marker',
    properties: { tags: { ...MAP, readOnly: true }, description: { ...TEXT, readOnly: true } },
    want: { identity: null },
  },
  {
    name: 'strings that are not free text',
    reason: 'an enum or a formatted string would refuse the token',
    properties: {
      description: { type: 'string', enum: ['a', 'b'] },
      comment: { type: 'string', format: 'uuid' },
    },
    want: { identity: null },
  },
  {
    name: 'a list of objects',
    reason: 'only a list of strings takes entries',
    properties: { tags: { type: 'array', items: { type: 'object' } } },
    want: { identity: null },
  },
  {
    name: 'stated text field',
    reason: 'x-tend-marker names a field inference would not pick',
    properties: { tags: LIST, note: TEXT },
    extra: { 'x-tend-marker': { field: 'note', kind: 'text' } },
    want: { markerField: 'note', markerKind: 'text', identity: 'marker' },
  },
  {
    name: 'stated field, kind from its schema',
    reason: 'the kind may be left out when the schema says it',
    properties: { meta: { type: 'object', properties: { labels: MAP } } },
    extra: { 'x-tend-marker': { field: 'meta.labels' } },
    want: { markerField: 'meta.labels', markerKind: 'map', identity: 'marker' },
  },
  {
    name: 'stated false',
    reason: 'x-tend-marker: false says the objects have no place for a marker',
    properties: { tags: MAP },
    extra: { 'x-tend-marker': false },
    want: { identity: null },
  },
  {
    name: 'stated field missing',
    reason: 'a field the create body lacks is a warning; inference decides',
    properties: { tags: MAP },
    extra: { 'x-tend-marker': { field: 'labels', kind: 'map' } },
    want: { markerField: 'tags', markerKind: 'map', identity: 'marker' },
    warnings: [
      'things: x-tend-marker names labels, which the create body does not have; inferring where the marker goes instead',
    ],
  },
  {
    name: 'stated kind wrong',
    reason: 'a kind the schema contradicts is a warning',
    properties: { comment: TEXT },
    extra: { 'x-tend-marker': { field: 'comment', kind: 'map' } },
    want: { markerField: 'comment', markerKind: 'text', identity: 'marker' },
    warnings: [
      'things: x-tend-marker says comment is a map, but the create body says it is a string; inferring where the marker goes instead',
    ],
  },
  {
    name: 'stated kind unknown',
    reason: 'only map, list and text are kinds',
    properties: { comment: TEXT },
    extra: { 'x-tend-marker': { field: 'comment', kind: 'json' } },
    want: { markerField: 'comment', markerKind: 'text', identity: 'marker' },
    warnings: [
      'things: x-tend-marker kind must be one of map, list, text, not "json"; inferring where the marker goes instead',
    ],
  },
  {
    name: 'stated malformed',
    reason: 'a bare string is not a location',
    properties: { comment: TEXT },
    extra: { 'x-tend-marker': 'comment' },
    want: { markerField: 'comment', markerKind: 'text', identity: 'marker' },
    warnings: [
      'things: x-tend-marker must be {field: <name or dotted path>, kind: map|list|text} (or false); inferring where the marker goes instead',
    ],
  },
  {
    name: 'stated text that is an enum',
    reason: 'an enum refuses the token',
    properties: { kind: { type: 'string', enum: ['a'] } },
    extra: { 'x-tend-marker': { field: 'kind', kind: 'text' } },
    want: { identity: null },
    warnings: [
      'things: x-tend-marker says kind is a text, but the create body says it is a string with a format or an enum; inferring where the marker goes instead',
    ],
  },
  {
    name: 'stated read-only',
    reason: 'a read-only field cannot carry the marker',
    properties: { comment: { ...TEXT, readOnly: true }, description: TEXT },
    extra: { 'x-tend-marker': { field: 'comment', kind: 'text' } },
    want: { markerField: 'description', markerKind: 'text', identity: 'marker' },
    warnings: [
      'things: x-tend-marker names comment, which is read-only; inferring where the marker goes instead',
    ],
  },
];

describe('where the marker goes', () => {
  it.each(cases)('$name: $reason', ({ properties, extra, want, warnings }) => {
    const got = deriveTypes(docWith(properties, extra));
    const info = got.types[0]!.info;
    expect({
      ...(info.markerField !== undefined ? { markerField: info.markerField } : {}),
      ...(info.markerKind !== undefined ? { markerKind: info.markerKind } : {}),
      identity: info.identity,
    }).toEqual(want);
    expect(got.warnings).toEqual(warnings ?? []);
  });
});
