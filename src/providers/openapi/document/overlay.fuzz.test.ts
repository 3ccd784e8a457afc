import fc from 'fast-check';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { TendError } from '../../../core/index.js';
import {
  CASE_BUDGET_MS,
  deepValue,
  fuzzParameters,
  anyValue,
  hostileMap,
  hostileValue,
  plainValue,
  hostileYamlText,
  prototypeNames,
  withExtras,
} from '../../../../test/support/hostile.js';
import { applyOverlay, parseOverlay } from './overlay.js';

// Property: whatever an overlay and the document it applies to hold, parseOverlay either accepts the
// overlay or throws a TendError, and applyOverlay either applies it (returning warnings) or throws a
// TendError. Never another exception, never a stack overflow or a hang, never a write into
// Object.prototype. `npm run fuzz` runs it long.

const jsonPath = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '$',
      '$.paths',
      '$.paths.*',
      '$.paths.*.get',
      '$..*',
      '$.*',
      "$['paths']",
      "$.paths['/a/{id}']",
      '$.a[0]',
      '$[*]',
      '$..a',
      '$..properties',
      '$.components.schemas.*.properties.*',
      '$[-1]',
      '$[0:2]',
      "$..[?(@.type=='string')]",
      '$..[?(@.x)]',
      '$.__proto__',
      '$.constructor.prototype',
      "$..['__proto__']",
      '$[',
      '$..',
      '$.a.b.c.d',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `$${s}`) },
);
const target = fc.oneof({ weight: 6, arbitrary: jsonPath }, { weight: 1, arbitrary: anyValue });

const action = withExtras(
  fc.record(
    {
      target,
      description: fc.oneof(fc.string({ maxLength: 10 }), anyValue),
      update: fc.oneof(
        { weight: 8, arbitrary: plainValue },
        { weight: 1, arbitrary: hostileValue },
        { weight: 1, arbitrary: deepValue },
      ),
      remove: fc.oneof(fc.constant(true), fc.constant(false), anyValue),
    },
    { requiredKeys: ['target'] },
  ),
);

const structured = withExtras(
  fc.record(
    {
      overlay: fc.oneof(
        { weight: 6, arbitrary: fc.constant('1.0.0') },
        { weight: 1, arbitrary: fc.constantFrom('1.0.99', '2.0.0', '1.0') },
        { weight: 1, arbitrary: anyValue },
      ),
      info: fc.oneof(fc.record({ title: fc.string(), version: fc.string() }), anyValue),
      actions: fc.oneof(
        { weight: 6, arbitrary: fc.array(action, { minLength: 1, maxLength: 4 }) },
        { weight: 1, arbitrary: anyValue },
      ),
    },
    { requiredKeys: ['overlay', 'actions'] },
  ),
);

/** An overlay that passes parseOverlay, so that applyOverlay meets every kind of update. */
const validOverlay = fc.record({
  overlay: fc.constant('1.0.0'),
  info: fc.record({ title: fc.string(), version: fc.string() }),
  actions: fc.array(
    fc.oneof(
      { weight: 4, arbitrary: fc.record({ target: jsonPath, update: plainValue }) },
      { weight: 1, arbitrary: fc.record({ target: jsonPath, remove: fc.constant(true) }) },
    ),
    { minLength: 1, maxLength: 3 },
  ),
});

/** A value parsed from hostile YAML text the way an overlay file is (merge keys on). */
function parsed(text: string): unknown {
  try {
    return parse(text, { merge: true, logLevel: 'error' }) as unknown;
  } catch {
    return undefined;
  }
}

const rawOverlay = fc.oneof(
  { weight: 6, arbitrary: validOverlay },
  { weight: 4, arbitrary: structured },
  {
    weight: 2,
    arbitrary: hostileYamlText(structured, { bombs: false, maxDocuments: 1 }).map(parsed),
  },
  { weight: 1, arbitrary: hostileValue },
);

const document = fc.oneof(
  withExtras(
    fc.record({
      openapi: fc.constant('3.0.3'),
      paths: fc.dictionary(fc.constantFrom('/a', '/a/{id}', '/b'), plainValue, { maxKeys: 3 }),
      components: fc.record({ schemas: fc.dictionary(fc.constantFrom('A', 'B'), plainValue) }),
    }),
  ),
  hostileMap,
);

describe('parseOverlay and applyOverlay on hostile input (property-based)', () => {
  it('accept, warn or throw a TendError: nothing else, and no pollution', () => {
    const before = prototypeNames();
    const parameters = fuzzParameters<[unknown, Record<string, unknown>]>(150);
    let applied = 0;
    fc.assert(
      fc.property(rawOverlay, document, (raw, doc) => {
        const started = performance.now();
        try {
          const overlay = parseOverlay(raw, 'fuzz.yaml');
          const warnings = applyOverlay(structuredClone(doc), overlay);
          expect(warnings.every((w) => typeof w === 'string')).toBe(true);
          applied++;
        } catch (e) {
          if (!(e instanceof TendError)) throw e;
          expect(e.code).toMatch(/^(overlay|input)\./);
        }
        expect(performance.now() - started).toBeLessThan(CASE_BUDGET_MS);
        expect(prototypeNames()).toEqual(before);
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      }),
      parameters,
    );
    // The generators reach the applier, not only the checks in front of it.
    expect(applied).toBeGreaterThan((parameters.numRuns ?? 100) / 10);
  });
});
