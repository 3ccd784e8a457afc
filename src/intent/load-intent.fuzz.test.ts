import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic, ProviderDecl, ProviderDescription } from '../core/index.js';
import { hasErrors } from '../core/index.js';
import {
  CASE_BUDGET_MS,
  anyValue,
  deepValue,
  fuzzParameters,
  plainKey,
  hostileMap,
  hostileScalar,
  hostileValue,
  hostileYamlText,
  yamlDocuments,
  prototypeNames,
  withExtras,
} from '../../test/support/hostile.js';
import { loadIntent } from './index.js';

// Property: whatever the files of an intent directory hold, loadIntent answers with diagnostics
// (and an intent only when none is an error). It never throws, never overflows the stack, never
// hangs, and never writes into Object.prototype. `npm run fuzz` runs it long (TEND_FUZZ_RUNS).

const DESCRIPTION: ProviderDescription = {
  auditFeed: false,
  warnings: [],
  types: [
    {
      name: 'things',
      schema: {
        type: 'object',
        properties: {
          name: { type: 'string', maxLength: 64 },
          size: { type: 'integer', minimum: 1 },
          ref: { type: 'string' },
          password: { type: 'string', format: 'password' },
          tags: { type: 'object', additionalProperties: { type: 'string' } },
          nested: {
            type: 'object',
            properties: { list: { type: 'array', items: { type: 'string' } } },
          },
          any: {},
        },
        required: ['name'],
      },
      identity: 'marker',
      idField: 'id',
      createOnly: ['size'],
      outputOnly: ['id'],
      sensitive: ['password'],
      lifecycle: 'platform',
      idempotencyKey: true,
    },
    {
      name: 'parts',
      schema: {
        allOf: [
          { type: 'object', properties: { thing_id: { type: 'string' } }, required: ['thing_id'] },
          { type: 'object', properties: { label: { type: 'string', enum: ['a', 'b'] } } },
        ],
      },
      identity: 'natural-key',
      naturalKey: 'label',
      idField: 'label',
      createOnly: [],
      outputOnly: [],
      sensitive: [],
      lifecycle: 'platform',
      idempotencyKey: false,
      parent: { type: 'things', field: 'thing_id' },
    },
  ],
};

const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'c') },
  { weight: 1, arbitrary: fc.constantFrom('sb', 'x-1', '', 'A B', '${sb.things/a.id}') },
);
const provider = withExtras(
  fc.record(
    {
      kind: fc.constant('Provider'),
      name: fc.constantFrom('sb', 'other', 'SB', ''),
      type: fc.constantFrom('openapi', 'grpc'),
      spec: fc.constantFrom('./spec.json', 'missing.json', 'http://127.0.0.1:9/openapi.json'),
      overlay: fc.constantFrom('./f0.yaml', 'missing.yaml', 'http://127.0.0.1:9/o.yaml'),
      endpoint: fc.constantFrom('http://127.0.0.1:9/', 'ftp://x', ''),
      auth: fc.oneof(
        fc.record({ header: fc.constant('X-API-Key'), fromEnv: fc.constantFrom('KEY', '1x') }),
        anyValue,
      ),
      concurrency: hostileScalar,
    },
    { requiredKeys: ['kind'] },
  ),
);
const spec = fc.oneof(
  fc.record(
    {
      name: fc.oneof(name, hostileScalar),
      size: fc.oneof(fc.integer({ min: -1, max: 5 }), hostileScalar),
      ref: fc.constantFrom('${sb.things/a.id}', '${sb.things/a.nope}', '${sb.parts/x.id}', 'x'),
      password: fc.oneof(fc.record({ fromEnv: fc.constant('PW') }), anyValue),
      tags: fc.dictionary(plainKey, fc.oneof(fc.string({ maxLength: 8 }), anyValue), {
        maxKeys: 4,
      }),
      nested: anyValue,
      any: fc.oneof(anyValue, deepValue),
      thing_id: fc.constantFrom('${sb.things/a.id}', '${sb.things/b.id}'),
      label: fc.constantFrom('a', 'b', 'c'),
    },
    { requiredKeys: [] },
  ),
  anyValue,
);
const resource = withExtras(
  fc.record(
    {
      kind: fc.constant('Resource'),
      type: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom('sb.things', 'sb.parts') },
        { weight: 1, arbitrary: fc.constantFrom('sb.nope', 'other.things', 'things', '') },
      ),
      name,
      spec,
      checks: fc.oneof(
        fc.array(
          fc.record({
            name: fc.constantFrom('up', ''),
            http: fc.record({ url: fc.constantFrom('http://127.0.0.1:9/', '${sb.things/a.url}') }),
          }),
          { maxLength: 2 },
        ),
        anyValue,
      ),
      moved: fc.oneof(fc.record({ from: fc.constantFrom('sb.things/z', 'x') }), anyValue),
      lifecycle: fc.oneof(fc.record({ stateful: fc.boolean() }), anyValue),
    },
    { requiredKeys: ['kind'] },
  ),
);
const workspace = withExtras(
  fc.record({ kind: fc.constant('Workspace'), name: fc.oneof(name, hostileScalar) }),
);
const document = fc.oneof(
  { weight: 2, arbitrary: provider },
  { weight: 4, arbitrary: resource },
  { weight: 1, arbitrary: workspace },
  { weight: 1, arbitrary: hostileMap },
  { weight: 1, arbitrary: hostileValue },
  { weight: 1, arbitrary: deepValue },
);
/** One intent file: documents as YAML, hostile YAML text, or now and then bytes that are not UTF-8. */
const file: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  { weight: 4, arbitrary: yamlDocuments(document) },
  { weight: 5, arbitrary: hostileYamlText(document, { bombs: true }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
);

const PROVIDER = [
  'kind: Provider',
  'name: sb',
  'type: openapi',
  'spec: ./spec.json',
  'endpoint: http://127.0.0.1:9/',
  '',
].join('\n');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tend-fuzz-intent-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A describe that answers like a provider would: a description, a diagnostic, or a throw. */
function describeBy(mode: 'ok' | 'diagnostic' | 'throw') {
  return (decl: ProviderDecl): Promise<ProviderDescription | Diagnostic> => {
    if (mode === 'throw') throw new Error(`cannot load ${decl.name}`);
    if (mode === 'diagnostic') {
      return Promise.resolve({ code: 'provider.x', severity: 'error', message: 'down' });
    }
    return Promise.resolve(DESCRIPTION);
  };
}

describe('loadIntent on hostile files (property-based)', () => {
  it('always answers with diagnostics: no throw, no overflow, no hang, no pollution', async () => {
    const before = prototypeNames();
    let reachedSchemas = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { minLength: 1, maxLength: 3 }),
        fc.constantFrom<'ok' | 'diagnostic' | 'throw'>('ok', 'ok', 'diagnostic', 'throw'),
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(true) },
          { weight: 1, arbitrary: fc.constant(false) },
        ),
        async (files, mode, withProvider) => {
          for (const f of await readdir(dir)) await rm(join(dir, f), { force: true });
          await writeFile(join(dir, 'spec.json'), '{}');
          // Most cases declare the provider properly, so resources get as far as their schemas.
          if (withProvider) await writeFile(join(dir, 'providers.yaml'), PROVIDER);
          await Promise.all(files.map((text, i) => writeFile(join(dir, `f${i}.yaml`), text)));
          const started = performance.now();
          const result = await loadIntent(dir, {
            describe: describeBy(mode),
            env: { KEY: 'k', PW: 'p' },
          });
          expect(performance.now() - started).toBeLessThan(CASE_BUDGET_MS);
          for (const d of result.diagnostics) {
            expect(typeof d.code).toBe('string');
            expect(['error', 'warning']).toContain(d.severity);
            expect(typeof d.message).toBe('string');
          }
          const deep = result.diagnostics.some((d) => /^(schema|ref)\./.test(d.code));
          if (deep || result.intent !== undefined) reachedSchemas++;
          if (result.intent !== undefined) expect(hasErrors(result.diagnostics)).toBe(false);
          else expect(hasErrors(result.diagnostics)).toBe(true);
          expect(prototypeNames()).toEqual(before);
          expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
        },
      ),
      fuzzParameters(60),
    );
    // The generators get past the YAML checks to schema validation and references (about one case
    // in six does; none in 60 would mean the generators broke).
    expect(reachedSchemas).toBeGreaterThan(0);
  });
});
