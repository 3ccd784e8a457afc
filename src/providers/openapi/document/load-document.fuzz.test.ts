import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TendError } from '../../../core/index.js';
import {
  CASE_BUDGET_MS,
  anyValue,
  deepValue,
  fuzzParameters,
  hostileValue,
  hostileYamlText,
  plainValue,
  prototypeNames,
  withExtras,
} from '../../../../test/support/hostile.js';
import { loadOpenApiDocument, prepareOpenApiDocument } from './load-document.js';
import { createOpenApiProvider } from '../openapi-provider.js';

// Property: whatever a platform's document holds, the OpenAPI loader either returns a document (and
// the provider derived from it describes its types) or throws a TendError. Never another exception,
// never a stack overflow or a hang, never a write into Object.prototype. `npm run fuzz` runs it long.

const INTERNAL_REFS = [
  '#/components/schemas/A',
  '#/components/schemas/B',
  '#/components/schemas/Missing',
  '#/components/schemas/A/properties/self',
  '#/definitions/A',
  '#/paths/~1things',
  '#',
  '#/',
  '#/components/schemas/%41',
  '#/components/schemas/A~',
  '#/components/schemas/__proto__',
  '%',
];
// Never resolved for a parsed value (no file to resolve from): counted, warned about, not read.
const EXTERNAL_REFS = [
  'other.yaml#/A',
  '../../secret.txt',
  'file:///etc/passwd',
  'http://127.0.0.1:9/x.json',
];

const schemaOf = (refs: readonly string[]) =>
  fc.letrec<{ schema: unknown; object: Record<string, unknown> }>((tie) => ({
    schema: fc.oneof(
      { depthSize: 'small', maxDepth: 5 },
      {
        weight: 3,
        arbitrary: fc.record(
          {
            type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'object', 'array', [
              'string',
              'null',
            ]),
            format: fc.constantFrom('password', 'date-time', 'uuid', 'weird'),
            enum: fc.array(plainValue, { maxLength: 3 }),
            nullable: fc.boolean(),
            readOnly: fc.boolean(),
            writeOnly: fc.boolean(),
            default: plainValue,
            'x-tend-immutable': fc.boolean(),
            'x-tend-normalize': fc.constantFrom('lowercase', ['sort', 'trailing-dot'], 'bogus'),
          },
          { requiredKeys: [] },
        ),
      },
      { weight: 2, arbitrary: fc.record({ $ref: fc.constantFrom(...refs) }) },
      { weight: 3, arbitrary: tie('object') },
      { weight: 1, arbitrary: fc.record({ allOf: fc.array(tie('schema'), { maxLength: 3 }) }) },
      { weight: 1, arbitrary: fc.record({ oneOf: fc.array(tie('schema'), { maxLength: 3 }) }) },
      { weight: 1, arbitrary: fc.record({ type: fc.constant('array'), items: tie('schema') }) },
      { weight: 1, arbitrary: anyValue },
    ),
    object: fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(
          fc.constantFrom('id', 'name', 'size', 'tags', 'self', 'parent_id', 'etag', 'x'),
          tie('schema'),
          { maxKeys: 5 },
        ),
        required: fc.array(fc.constantFrom('id', 'name', 'size', 'nope'), { maxLength: 3 }),
        additionalProperties: fc.oneof(fc.boolean(), tie('schema')),
      },
      { requiredKeys: ['type', 'properties'] },
    ),
  })).schema;

const documentOf = (refs: readonly string[]) => {
  const schema = schemaOf(refs);
  const body = fc.record({ content: fc.record({ 'application/json': fc.record({ schema }) }) });
  const operation = withExtras(
    fc.record(
      {
        operationId: fc.constantFrom('listThings', 'createThing', ''),
        parameters: fc.array(
          fc.record({
            name: fc.constantFrom('id', 'part', 'limit'),
            in: fc.constantFrom('path', 'query', 'header'),
            required: fc.boolean(),
            schema,
          }),
          { maxLength: 2 },
        ),
        requestBody: body,
        responses: fc.dictionary(fc.constantFrom('200', '201', '204', '2XX', 'default'), body, {
          maxKeys: 2,
        }),
      },
      { requiredKeys: ['responses'] },
    ),
  );
  const pathItem = fc.dictionary(
    fc.constantFrom('get', 'post', 'put', 'patch', 'delete', 'parameters', 'x-tend-type'),
    fc.oneof({ weight: 5, arbitrary: operation }, { weight: 1, arbitrary: anyValue }),
    { maxKeys: 4 },
  );
  const paths = fc.dictionary(
    fc.constantFrom(
      '/things',
      '/things/{id}',
      '/things/{id}/parts',
      '/things/{id}/parts/{part}',
      '/x/{a}/{b}',
      '/',
      '',
      'no-slash',
      '/{id}',
      '/things/{id}/{id}',
    ),
    pathItem,
    { maxKeys: 5 },
  );
  const schemas = fc.dictionary(fc.constantFrom('A', 'B', 'C'), schema, { maxKeys: 3 });
  const openapi = withExtras(
    fc.record(
      {
        openapi: fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom('3.0.3', '3.1.0') },
          { weight: 1, arbitrary: fc.constantFrom('3.2.0', '3', '4.0.0', '2.0') },
          { weight: 1, arbitrary: anyValue },
        ),
        info: fc.record({ title: fc.string(), version: fc.string() }),
        paths: fc.oneof({ weight: 8, arbitrary: paths }, { weight: 1, arbitrary: anyValue }),
        components: fc.record({ schemas }),
        'x-tend-parent-values': plainValue,
        'x-tend-lifecycle': fc.constantFrom('/things/{id}/lifecycle', 42),
      },
      { requiredKeys: ['openapi', 'info', 'paths'] },
    ),
  );
  const swagger = withExtras(
    fc.record(
      {
        swagger: fc.oneof(
          { weight: 6, arbitrary: fc.constant('2.0') },
          { weight: 1, arbitrary: fc.constantFrom('1.2', 2, '3.0') },
        ),
        info: fc.record({ title: fc.string(), version: fc.string() }),
        basePath: fc.constantFrom('/api', '', 'x'),
        paths,
        definitions: schemas,
      },
      { requiredKeys: ['swagger', 'paths'] },
    ),
  );
  return fc.oneof(
    { weight: 6, arbitrary: openapi },
    { weight: 2, arbitrary: swagger },
    { weight: 1, arbitrary: hostileValue },
    { weight: 1, arbitrary: deepValue },
  );
};

/** A loader outcome: the document, or the TendError; anything else thrown fails the property. */
async function loaded<T>(load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load();
  } catch (e) {
    if (e instanceof TendError) return undefined;
    throw e;
  }
}

describe('the OpenAPI loader on hostile documents (property-based)', () => {
  // swagger2openapi prints what it cannot convert (console.warn) before it fails; the failure is
  // what the property looks at.
  beforeAll(() => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  it('prepareOpenApiDocument loads or throws a TendError, and the provider over it describes', async () => {
    const before = prototypeNames();
    const parameters = fuzzParameters<[unknown]>(80);
    let described = 0;
    await fc.assert(
      fc.asyncProperty(documentOf([...INTERNAL_REFS, ...EXTERNAL_REFS]), async (raw) => {
        const started = performance.now();
        const doc = await loaded(() => prepareOpenApiDocument(raw, 'fuzz.json'));
        if (doc !== undefined) {
          expect(typeof doc.version).toBe('string');
          expect(doc.warnings.every((w) => typeof w === 'string')).toBe(true);
          const provider = await loaded(() =>
            Promise.resolve(
              createOpenApiProvider({
                name: 'fz',
                document: doc,
                endpoint: 'http://127.0.0.1:9/',
                workspace: 'ws',
              }),
            ),
          );
          if (provider !== undefined) {
            expect(Array.isArray(provider.describe().types)).toBe(true);
            described++;
          }
        }
        expect(performance.now() - started).toBeLessThan(CASE_BUDGET_MS);
        expect(prototypeNames()).toEqual(before);
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      }),
      parameters,
    );
    // The generators reach type derivation, not only the checks in front of it.
    expect(described).toBeGreaterThan((parameters.numRuns ?? 100) / 10);
  });

  describe('from text', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tend-fuzz-openapi-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    // Alias bombs are left out: the loader parses YAML with alias expansion unbounded (issue 10,
    // item 2), and one would hang this test rather than fail it. External $refs are left out too:
    // from a file they are resolved, and what may be read is item 2's to confine.
    it('loadOpenApiDocument reads JSON or YAML text or throws a TendError', async () => {
      const before = prototypeNames();
      const file = join(dir, 'spec.yaml');
      await fc.assert(
        fc.asyncProperty(
          hostileYamlText(documentOf(INTERNAL_REFS), { bombs: false, maxDocuments: 1 }),
          async (text) => {
            await writeFile(file, text);
            const started = performance.now();
            const doc = await loaded(() => loadOpenApiDocument(file));
            if (doc !== undefined) expect(typeof doc.version).toBe('string');
            expect(performance.now() - started).toBeLessThan(CASE_BUDGET_MS);
            expect(prototypeNames()).toEqual(before);
          },
        ),
        fuzzParameters(30),
      );
    });
  });
});
