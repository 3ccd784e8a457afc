import { describe, expect, it } from 'vitest';
import { deriveTypes } from '../derive-types.js';
import { probeSubject } from './subject.js';

// What the probe reads from a type before it sends anything: the sample it creates, the name field,
// the marker places, the fields it changes, what is missing, the scope it needs.

function thing(properties: Record<string, unknown>, required: string[], example?: unknown) {
  const schema = { type: 'object', required, properties, ...(example ? { example } : {}) };
  const json = (s: unknown) => ({ content: { 'application/json': { schema: s } } });
  const document = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/projects/{project}/things': {
        parameters: [{ name: 'project', in: 'path', required: true, schema: { type: 'string' } }],
        get: { responses: { '200': json({ type: 'array', items: schema }) } },
        post: { requestBody: json(schema), responses: { '201': json(schema) } },
      },
      '/projects/{project}/things/{id}': {
        parameters: [
          { name: 'project', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
        ],
        get: { responses: { '200': json(schema) } },
        patch: { requestBody: json(schema), responses: { '200': json(schema) } },
        delete: { responses: { '204': { description: 'gone' } } },
      },
      '/projects': {
        get: {
          responses: {
            '200': json({
              type: 'array',
              items: { type: 'object', properties: { id: { type: 'string' } } },
            }),
          },
        },
        post: {
          requestBody: json({ type: 'object', properties: { id: { type: 'string' } } }),
          responses: { '201': json({ type: 'object', properties: { id: { type: 'string' } } }) },
        },
      },
      '/projects/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          responses: { '200': json({ type: 'object', properties: { id: { type: 'string' } } }) },
        },
        delete: { responses: { '204': { description: 'gone' } } },
      },
    },
  };
  const t = deriveTypes(document).types.find((x) => x.info.name === 'things');
  if (t === undefined) throw new Error('no things type');
  return probeSubject(t, schema);
}

const props = {
  id: { type: 'string', readOnly: true },
  name: { type: 'string', example: 'web' },
  size: { type: 'string', enum: ['small', 'large'] },
  replicas: { type: 'integer', default: 1 },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  options: { type: 'object', additionalProperties: { type: 'string' } },
  description: { type: 'string' },
  password: { type: 'string', writeOnly: true, format: 'password', example: 'hunter2' },
};

describe('probeSubject', () => {
  it('takes values from property examples, defaults and enums; never a secret; never an output-only field; a marker only in maps named for one', () => {
    const s = thing(props, ['name', 'size']);
    expect(s.sample).toEqual({ name: 'web', size: 'small', replicas: 1 });
    expect(s.nameField).toBe('name');
    expect(s.markerPlaces).toEqual([
      { field: 'labels', kind: 'map' },
      { field: 'description', kind: 'text' },
    ]);
    expect(s.changeable).toEqual(['name', 'size', 'replicas']);
    expect(s.missing).toEqual([]);
    expect(s.scopeParams).toEqual([{ param: 'project', field: 'project' }]);
    expect(s.location).toEqual({
      kind: 'create',
      path: '/projects/{project}/things',
      method: 'POST',
    });
  });
  it("prefers the create schema's example object, as given", () => {
    const s = thing(props, ['name'], { name: 'api', size: 'large' });
    expect(s.sample).toEqual({ name: 'api', size: 'large' });
  });
  it('a required secret is missing: the probe does not send secrets from examples', () => {
    const s = thing(props, ['name', 'password']);
    expect(s.missing).toEqual(['password']);
    expect(s.sample).not.toHaveProperty('password');
  });
  it('a required field with no example, default or enum is missing', () => {
    const s = thing({ ...props, image: { type: 'string' } }, ['name', 'image']);
    expect(s.missing).toEqual(['image']);
  });
});
