import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { dereference as readmeDereference } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { loadDereferencer } from './dereference.js';
import { loadOpenApiDocument } from './load-document.js';
import { dropUnusedIds } from './unused-ids.js';

// Decision 0035: the loader dereferences with json-schema-ref-parser directly, after dropping the
// `$id`s nothing needs, as @readme/openapi-parser's dereference did. Two guards keep it so:
// - test/dereference/*.yaml are read by the loader and compared with what the loader gave before
//   the change (test/dereference/expected/, written by it: circular refs, OpenAPI 3.1 `$ref` with
//   siblings, `$id`s, a converted Swagger 2.0 document, external refs confined to the spec dir);
// - dropUnusedIds is specified case by case below, and each case is also dereferenced both ways
//   (while @readme/openapi-parser is a devDependency: src/sandbox/openapi.test.ts validates with it).

const DIR = resolve(import.meta.dirname, '..', '..', '..', '..', 'test', 'dereference');
const EXPECTED = join(DIR, 'expected');

/**
 * A dereferenced document as JSON, cycles and sharing included: an object met again (by identity)
 * is written `{"$same": "<pointer of its first place>"}`, keys in document order.
 */
function graphJson(value: unknown): unknown {
  const first = new Map<object, string>();
  const walk = (v: unknown, at: string): unknown => {
    if (v === null || typeof v !== 'object') return v;
    const seen = first.get(v);
    if (seen !== undefined) return { $same: seen };
    first.set(v, at);
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${at}/${i}`));
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) {
      Object.defineProperty(out, k, {
        value: walk(child, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return walk(value, '#');
}

describe('dereferenced documents are what the loader gave before decision 0035', () => {
  const documents = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));

  it('there are documents to compare', () => {
    expect(documents.length).toBeGreaterThanOrEqual(4);
  });

  // To regenerate after an intended change (say why in the commit):
  //   TEND_WRITE_DEREFERENCE=1 npx vitest run src/providers/openapi/document/dereference.test.ts
  it.each(documents)('%s', async (file) => {
    const loaded = await loadOpenApiDocument(join(DIR, file));
    const got = {
      version: loaded.version,
      ...(loaded.convertedFrom !== undefined ? { convertedFrom: loaded.convertedFrom } : {}),
      warnings: loaded.warnings.map((w) => w.split(DIR).join('<dir>')),
      document: graphJson(loaded.document),
    };
    const expectedFile = join(EXPECTED, file.replace(/\.yaml$/, '.json'));
    if (process.env['TEND_WRITE_DEREFERENCE'] === '1') {
      mkdirSync(EXPECTED, { recursive: true });
      writeFileSync(expectedFile, `${JSON.stringify(got, null, 2)}\n`);
    }
    const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as unknown;
    expect(got).toEqual(expected);
  });
});

/** A schema document around `schemas` (OpenAPI 3.1, where `$id` changes how `$ref`s resolve). */
const doc = (schemas: Record<string, unknown>): Record<string, unknown> => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {},
  components: { schemas },
});

const cases: {
  name: string;
  schemas: Record<string, unknown>;
  want: Record<string, unknown>;
}[] = [
  {
    name: 'an absolute $id nothing names is dropped',
    schemas: { A: { $id: 'https://example.com/a.json', type: 'object' } },
    want: { A: { type: 'object' } },
  },
  {
    name: 'an $id a $ref (not a pointer into the document) contains is kept',
    schemas: {
      A: { $id: 'https://example.com/a.json', type: 'object' },
      B: { $ref: 'https://example.com/a.json#/properties/x' },
    },
    want: {
      A: { $id: 'https://example.com/a.json', type: 'object' },
      B: { $ref: 'https://example.com/a.json#/properties/x' },
    },
  },
  {
    name: 'a pointer into the document never keeps an $id, even one it contains',
    schemas: { A: { $id: 'A' }, B: { $ref: '#/components/schemas/A' } },
    want: { A: {}, B: { $ref: '#/components/schemas/A' } },
  },
  {
    name: 'an $id below which a relative $ref resolves is kept',
    schemas: {
      A: { $id: 'https://example.com/a.json', properties: { b: { $ref: 'b.json' } } },
    },
    want: { A: { $id: 'https://example.com/a.json', properties: { b: { $ref: 'b.json' } } } },
  },
  {
    name: 'an $id whose schema holds what a pointer below it names is kept',
    schemas: {
      A: { $id: 'a.json', properties: { x: { $ref: '#/properties/y' }, y: { type: 'string' } } },
    },
    want: {
      A: { $id: 'a.json', properties: { x: { $ref: '#/properties/y' }, y: { type: 'string' } } },
    },
  },
  {
    name: 'an $id whose schema does not hold what the pointer names is dropped',
    schemas: { A: { $id: 'a.json', properties: { x: { $ref: '#/components/schemas/B' } } } },
    want: { A: { properties: { x: { $ref: '#/components/schemas/B' } } } },
  },
  {
    name: 'pointers are percent- and ~-decoded before they are looked up',
    schemas: {
      A: { $id: 'a.json', properties: { x: { $ref: '#/properties/a%20b~1c' }, 'a b/c': {} } },
    },
    want: {
      A: { $id: 'a.json', properties: { x: { $ref: '#/properties/a%20b~1c' }, 'a b/c': {} } },
    },
  },
  {
    name: '`#` and `#/` always exist',
    schemas: { A: { $id: 'u:a', items: { $ref: '#' } }, B: { $id: 'u:b', items: { $ref: '#/' } } },
    want: { A: { $id: 'u:a', items: { $ref: '#' } }, B: { $id: 'u:b', items: { $ref: '#/' } } },
  },
  {
    name: 'a badly encoded $ref is read as it is written',
    schemas: { A: { $id: 'u:a', items: { $ref: '#/%E0%A4%A' } }, B: { $ref: 'x%E0%A4%A' } },
    want: { A: { items: { $ref: '#/%E0%A4%A' } }, B: { $ref: 'x%E0%A4%A' } },
  },
  {
    name: 'a nested relative $id is decided first: dropped, it no longer keeps its parent’s',
    schemas: {
      A: {
        $id: 'https://example.com/a.json',
        properties: { b: { $id: 'b.json', type: 'string' } },
      },
    },
    want: { A: { properties: { b: { type: 'string' } } } },
  },
  {
    name: 'a nested relative $id that is kept keeps its parent’s; the search stops below it',
    schemas: {
      A: {
        $id: 'https://example.com/a.json',
        properties: { b: { $id: 'b.json', items: { $ref: 'c.json' } } },
      },
      C: { $id: 'u:c', properties: { d: { $id: 'u:d', items: { $ref: 'e.json' } } } },
    },
    want: {
      A: {
        $id: 'https://example.com/a.json',
        properties: { b: { $id: 'b.json', items: { $ref: 'c.json' } } },
      },
      C: { properties: { d: { $id: 'u:d', items: { $ref: 'e.json' } } } },
    },
  },
  {
    name: 'under example, examples, default, const and enum nothing is read or changed',
    schemas: {
      A: {
        example: { $id: 'u:x' },
        examples: [{ $id: 'u:x' }],
        default: { $id: 'u:x', $ref: 'u:y' },
        const: { $id: 'u:x' },
        enum: [{ $id: 'u:x' }],
      },
      Y: { $id: 'u:y' },
    },
    want: {
      A: {
        example: { $id: 'u:x' },
        examples: [{ $id: 'u:x' }],
        default: { $id: 'u:x', $ref: 'u:y' },
        const: { $id: 'u:x' },
        enum: [{ $id: 'u:x' }],
      },
      Y: {},
    },
  },
  {
    name: 'schemas in arrays are decided too',
    schemas: { A: { allOf: [{ $id: 'u:a' }, { $id: 'u:b', items: { $ref: 'rel' } }] } },
    want: { A: { allOf: [{}, { $id: 'u:b', items: { $ref: 'rel' } }] } },
  },
];

describe('dropUnusedIds', () => {
  it.each(cases)('$name', ({ schemas, want }) => {
    const document = doc(structuredClone(schemas));
    dropUnusedIds(document);
    expect(document).toEqual(doc(want));
  });

  it("keeps the root's $id", () => {
    const document = { ...doc({}), $id: 'https://example.com/api.json' };
    dropUnusedIds(document);
    expect(document['$id']).toBe('https://example.com/api.json');
  });

  it('visits a shared schema once and survives a cycle', () => {
    const shared: Record<string, unknown> = { $id: 'u:s', type: 'object' };
    const looped: Record<string, unknown> = { $id: 'u:l' };
    looped['properties'] = { self: looped, other: shared };
    const document = doc({ A: shared, B: shared, L: looped });
    dropUnusedIds(document);
    expect(shared).toEqual({ type: 'object' });
    expect(Object.keys(looped)).toEqual(['properties']);
  });

  // The same cases dereferenced the old way (@readme/openapi-parser) and the new way: the same
  // graph, or the same error (a pointer to nothing; the loader repairs those first).
  it.each(cases)('dereferences as @readme/openapi-parser did: $name', async ({ schemas }) => {
    const outcome = async (run: () => Promise<unknown>): Promise<unknown> => {
      try {
        return graphJson(await run());
      } catch (e) {
        return { error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
      }
    };
    const dereference = await loadDereferencer();
    const old = await outcome(() =>
      readmeDereference(doc(structuredClone(schemas)) as never, {
        resolve: { external: false, file: false },
      }),
    );
    const now = await outcome(() => dereference(doc(structuredClone(schemas))));
    expect(now).toEqual(old);
  });
});
