import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi.js';
import { ROUTES } from './routes.js';

/**
 * Where a schema says too little for a client to rely on (the MCP inspector's strict check and
 * code generators reject these): a schema with no validation keyword (`{}`, `true`), an object that
 * names no property and gives no schema for its values, a list without `items`, a `type` list.
 */
export function vagueSchemas(schema: unknown, at: string): string[] {
  if (schema === true) return [`${at}: true accepts anything`];
  if (schema === null || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  // A value declared to be any JSON value, type by type (app/view-schemas.ts `jsonValue`): a
  // deliberate contract, not a forgotten one.
  if (isAnyJsonValue(s)) return [];
  const out: string[] = [];
  const keywords = Object.keys(s).filter((k) => k !== 'description' && k !== 'default');
  if (keywords.length === 0) out.push(`${at}: {} accepts anything`);
  if (Array.isArray(s['type'])) out.push(`${at}: type is a list (${s['type'].join(', ')})`);
  const values = s['additionalProperties'];
  const describesValues = values !== undefined && values !== true && values !== false;
  if (s['type'] === 'object' && s['properties'] === undefined && !describesValues) {
    out.push(`${at}: an object that names no property and no schema for its values`);
  }
  if (s['type'] === 'array' && s['items'] === undefined) {
    out.push(`${at}: a list without items`);
  }
  for (const [k, v] of Object.entries((s['properties'] ?? {}) as Record<string, unknown>)) {
    out.push(...vagueSchemas(v, `${at}.properties.${k}`));
  }
  if (describesValues) out.push(...vagueSchemas(values, `${at}.additionalProperties`));
  for (const key of ['items', 'propertyNames', 'not']) {
    if (s[key] !== undefined) out.push(...vagueSchemas(s[key], `${at}.${key}`));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    (s[key] as unknown[] | undefined)?.forEach((v, i) =>
      out.push(...vagueSchemas(v, `${at}.${key}[${i}]`)),
    );
  }
  return out;
}

const JSON_TYPES = ['string', 'number', 'boolean', 'null', 'array', 'object'];

function isAnyJsonValue(s: Record<string, unknown>): boolean {
  const branches = s['anyOf'] as { type?: unknown }[] | undefined;
  return (
    branches !== undefined &&
    branches.length === JSON_TYPES.length &&
    branches.every((b, i) => b.type === JSON_TYPES[i] && Object.keys(b).length <= 2)
  );
}

describe('/openapi.json', () => {
  const doc = openApiDocument(ROUTES, '0.0.0-test');
  const paths = doc['paths'] as Record<string, Record<string, Record<string, unknown>>>;

  it('every answer schema is specific: no bare object, no {} value, no type list', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item)) {
        const responses = op['responses'] as Record<string, { content?: Record<string, unknown> }>;
        for (const [status, r] of Object.entries(responses)) {
          for (const [type, media] of Object.entries(r.content ?? {})) {
            const schema = (media as { schema: unknown }).schema;
            problems.push(...vagueSchemas(schema, `${method} ${path} ${status} ${type}`));
          }
        }
        const body = op['requestBody'] as
          { content: Record<string, { schema: unknown }> } | undefined;
        for (const [type, media] of Object.entries(body?.content ?? {})) {
          problems.push(...vagueSchemas(media.schema, `${method} ${path} body ${type}`));
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it.each([
    { schema: { type: 'object' }, reason: 'a bare object' },
    { schema: {}, reason: 'a schema with no keyword' },
    { schema: { type: ['string', 'null'] }, reason: 'a type list' },
    { schema: { type: 'object', properties: { a: {} } }, reason: 'a property of any value' },
    { schema: { type: 'array' }, reason: 'a list of anything' },
    { schema: { type: 'object', additionalProperties: true }, reason: 'values of any kind' },
    {
      schema: { anyOf: [{ type: 'string' }, { type: 'object' }] },
      reason: 'an object branch that is not part of a declared any-value',
    },
  ])('the walk finds $reason (a test that can fail)', ({ schema }) => {
    expect(vagueSchemas(schema, 'x')).not.toEqual([]);
  });
});
