import { describe, expect, it } from 'vitest';
import { expectLinear } from '../../../test/support/scaling.js';
import { deriveTypes } from './derive-types.js';
import { prepareOpenApiDocument } from './document/load-document.js';
import { applyOverlay, parseOverlay } from './document/overlay.js';

// Issue 10, item 7: large documents cost time linear in their size and never overflow the stack;
// documents whose $refs expand (a "$ref bomb") or nest too deep are cut with a warning.

type Obj = Record<string, unknown>;

const op = (schema: unknown): Obj => ({
  requestBody: { content: { 'application/json': { schema } } },
  responses: { '201': { description: 'ok', content: { 'application/json': { schema } } } },
});

/** `collections` resource types (collection + item path each), sharing schema S. */
function document(collections: number, schemas: Obj = {}): Obj {
  const paths: Obj = {};
  const schema = { $ref: '#/components/schemas/S' };
  for (let i = 0; i < collections; i++) {
    paths[`/c${i}`] = { post: op(schema), get: { responses: { '200': { description: 'ok' } } } };
    paths[`/c${i}/{id}`] = {
      get: {
        responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths,
    components: {
      schemas: {
        S: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        ...schemas,
      },
    },
  };
}

const prepared = async (doc: Obj): Promise<Obj> =>
  (await prepareOpenApiDocument(doc, 'inline')).document;

describe('large documents', () => {
  it('derives types in time linear in the number of paths', async () => {
    const docs = new Map<number, Obj>();
    for (const n of [300, 1_200]) docs.set(n, await prepared(document(n)));
    await expectLinear((n) => expect(deriveTypes(docs.get(n)!).types).toHaveLength(n), 300);
  });

  it('reads a `required` list of 200,000 names in linear time (a search per name is hopeless)', async () => {
    const required = ['name'];
    for (let i = 0; i < 200_000; i++) required.push(`p${i}`);
    const doc = await prepared(
      document(1, {
        S: { type: 'object', required, properties: { name: { type: 'string' } } },
      }),
    );
    const started = performance.now();
    const [type] = deriveTypes(doc).types;
    // Linear: well under a second; a search of the list per name: 2·10¹⁰ steps, minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(type!.writableFields).toEqual(['name']);
  });

  it('reports 130,000 unknown x-tend keys without overflowing the stack', async () => {
    const doc = document(1);
    for (let i = 0; i < 130_000; i++) doc[`x-tend-k${i}`] = true;
    const derived = deriveTypes(await prepared(doc));
    expect(derived.types).toHaveLength(1);
    expect(derived.warnings.length).toBeGreaterThanOrEqual(130_000);
  });

  it('loads a document of 130,000 enum values', async () => {
    const values = Array.from({ length: 130_000 }, (_, i) => `v${i}`);
    const doc = document(1, {
      S: { type: 'object', properties: { name: { type: 'string' }, kind: { enum: values } } },
    });
    const [type] = deriveTypes(await prepared(doc)).types;
    expect((type!.info.schema['properties'] as Obj)['kind']).toEqual({ enum: values });
  });

  it('cuts a $ref bomb (ten properties per level, each the next level) with a warning, quickly', async () => {
    const schemas: Obj = { L9: { type: 'string' } };
    for (let level = 8; level >= 0; level--) {
      const properties: Obj = {};
      for (let i = 0; i < 10; i++)
        properties[`p${i}`] = { $ref: `#/components/schemas/L${level + 1}` };
      schemas[`L${level}`] = { type: 'object', properties };
    }
    schemas['S'] = { type: 'object', properties: { bomb: { $ref: '#/components/schemas/L0' } } };
    const doc = await prepared(document(3, schemas));
    const started = performance.now();
    const derived = deriveTypes(doc);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(derived.types).toHaveLength(3);
    expect(derived.warnings.filter((w) => w.includes('too large'))).toHaveLength(6);
    expect(derived.warnings[0]).toMatch(
      /^c0: the create schema is too large once its \$refs are written out \(more than 1,000,000 objects/,
    );
  });

  it('cuts a chain of 200 referenced schemas at the copy depth, with a warning', async () => {
    const schemas: Obj = { C200: { type: 'string' } };
    for (let i = 199; i >= 0; i--) {
      schemas[`C${i}`] = {
        type: 'object',
        properties: { next: { $ref: `#/components/schemas/C${i + 1}` } },
      };
    }
    schemas['S'] = { type: 'object', properties: { chain: { $ref: '#/components/schemas/C0' } } };
    const derived = deriveTypes(await prepared(document(1, schemas)));
    expect(derived.warnings).toEqual([
      expect.stringMatching(
        /^c0: the create schema is nested more than 128 levels deep at #\/properties\/chain/,
      ),
      expect.stringMatching(/^c0: the read schema is nested more than 128 levels deep/),
    ]);
    // What is left is plain, shallow data: it serialises without any trouble.
    expect(JSON.stringify(derived.types[0]!.info.schema).length).toBeGreaterThan(0);
  });

  it('appends a list of 130,000 items with an overlay', () => {
    const doc: Obj = { openapi: '3.0.3', tags: [{ name: 'first' }] };
    const items = Array.from({ length: 130_000 }, (_, i) => ({ name: `t${i}` }));
    const overlay = parseOverlay(
      {
        overlay: '1.0.0',
        info: { title: 'o', version: '1' },
        actions: [{ target: '$', update: { tags: items } }],
      },
      'overlay.yaml',
    );
    expect(applyOverlay(doc, overlay)).toEqual([]);
    expect(doc['tags']).toHaveLength(130_001);
  });
});
