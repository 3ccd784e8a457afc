import { describe, expect, it } from 'vitest';
import { getPath } from '../../core/index.js';
import { deriveTypes } from './derive-types.js';

// A nested type's parent field tells the user how to write the reference to the parent: with the
// field that holds the parent's id, which is not always `id` (Unleash flags are found by `name`).

type Obj = Record<string, unknown>;
const json = (schema: Obj) => ({ content: { 'application/json': { schema } } });

function collection(item: Obj, create: Obj): Obj {
  return {
    get: { responses: { '200': { description: 'ok', ...json({ type: 'array', items: item }) } } },
    post: { requestBody: json(create), responses: { '201': { description: 'ok', ...json(item) } } },
  };
}
function member(item: Obj): Obj {
  return {
    get: { responses: { '200': { description: 'ok', ...json(item) } } },
    delete: { responses: { '204': { description: 'gone' } } },
  };
}

describe('the reference hint of a parent field', () => {
  it.each([
    { param: 'name', parentKey: 'name', want: '${<provider>.flags/<name>.name}' },
    { param: 'flagId', parentKey: 'id', want: '${<provider>.flags/<name>.id}' },
  ])('names the parent’s id field ($parentKey)', ({ param, parentKey, want }) => {
    const flag = {
      type: 'object',
      required: [parentKey],
      properties: { [parentKey]: { type: 'string' }, note: { type: 'string' } },
    };
    const part = {
      type: 'object',
      properties: { id: { type: 'string' }, size: { type: 'integer' } },
    };
    const doc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/flags': collection(flag, flag),
        [`/flags/{${param}}`]: member(flag),
        [`/flags/{${param}}/parts`]: collection(part, part),
        [`/flags/{${param}}/parts/{id}`]: member(part),
      },
    };
    const parts = deriveTypes(doc).types.find((t) => t.info.name === 'parts');
    expect(parts?.info.parent?.type).toBe('flags');
    const description = getPath(parts!.info.schema, `properties.${param}.description`);
    expect(description).toContain(want);
  });
});
