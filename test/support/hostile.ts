import fc from 'fast-check';
import { stringify } from 'yaml';

// Generators of hostile input for the property-based fuzz tests (`*.fuzz.test.ts`): what a pull
// request, an overlay author or a platform could hand Tend. Shapes, not just noise: keys that reach
// a prototype, deep nesting, huge strings, odd scalars, YAML anchors, aliases, tags and directives.

/** `npm run fuzz` (TEND_FUZZ=long): 50× the cases, and the large shapes at full size. */
const LONG = process.env['TEND_FUZZ'] === 'long';

/** A size: `small` in `npm test` (a few seconds for every property), `large` in the long run. */
function size(small: number, large: number): number {
  return LONG ? large : small;
}

/**
 * fast-check parameters: `runs` cases in `npm test`, 50× that in `npm run fuzz` (TEND_FUZZ_RUNS
 * sets the number); TEND_FUZZ_SEED (printed with any failure) replays a run. The long run stops at
 * the first failure without shrinking it: shrinking inputs of megabytes takes longer than the run.
 */
export function fuzzParameters<T>(runs: number): fc.Parameters<T> {
  const wanted = Number(process.env['TEND_FUZZ_RUNS']);
  const seed = process.env['TEND_FUZZ_SEED'];
  return {
    numRuns: Number.isInteger(wanted) && wanted > 0 ? wanted : size(runs, runs * 50),
    ...(seed !== undefined && Number.isInteger(Number(seed)) ? { seed: Number(seed) } : {}),
    ...(LONG ? { endOnFailure: true } : {}),
  };
}

/**
 * How long one case may take before it counts as a hang: generous, as the machine is shared, and
 * more so for the long run's inputs of megabytes. What is linear stays far below it.
 */
export const CASE_BUDGET_MS = size(5_000, 20_000);

/** Object.prototype's own names, to compare before and after a case. */
export function prototypeNames(): string[] {
  return Object.getOwnPropertyNames(Object.prototype).sort();
}

export const FORBIDDEN = ['__proto__', 'constructor', 'prototype'] as const;

/** Keys: the ones Tend reads, the ones that reach a prototype (`forbidden` weight), YAML punctuation, noise. */
function keys(forbidden: number): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'kind',
        'name',
        'type',
        'spec',
        'provider',
        'checks',
        'tags',
        'size',
        'id',
        'endpoint',
        'auth',
        'overlay',
        'fromEnv',
        'fromFile',
        'header',
        'moved',
        'from',
        'lifecycle',
        'stateful',
        'http',
        'url',
        'expect',
        'dns',
        'cel',
        'actions',
        'target',
        'update',
        'remove',
        'paths',
        'components',
        'schemas',
        'definitions',
        '$ref',
        'properties',
        'items',
        'allOf',
        'oneOf',
        'required',
        'additionalProperties',
        'x-tend-immutable',
        'x-tend-identity',
        'x-tend-embedded',
        'x-tend-parent-values',
        'get',
        'post',
        'put',
        'patch',
        'delete',
        'responses',
        '200',
        'content',
        'application/json',
        'schema',
        'parameters',
        'in',
        'openapi',
        'swagger',
        'info',
        'title',
        'version',
      ),
    },
    ...(forbidden > 0 ? [{ weight: forbidden, arbitrary: fc.constantFrom(...FORBIDDEN) }] : []),
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '<<',
        '?',
        '-',
        ':',
        '#',
        '&a',
        '*a',
        '!t',
        '%',
        '@',
        '{',
        '[',
        '\t',
        '\n',
        'hasOwnProperty',
        'toString',
        'valueOf',
        '__defineSetter__',
        '0',
        '-1',
        'null',
        'true',
        '~',
        '/a/{id}',
      ),
    },
    { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  );
}

/** Keys, with `__proto__`, `constructor` and `prototype` among them. */
export const hostileKey: fc.Arbitrary<string> = keys(3);

/** Keys without the ones that reach a prototype: input that gets past the first check. */
export const plainKey: fc.Arbitrary<string> = keys(0);

/** Scalars: odd numbers, references, paths, control characters, and a few huge strings. */
export const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      0,
      -0,
      1,
      -1,
      1e308,
      -1e308,
      Number.MAX_SAFE_INTEGER + 2,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      0.1,
      '',
      ' ',
      'Provider',
      'Resource',
      'Workspace',
      'openapi',
      'sb',
      'sb.things',
      'sb.things/a',
      '${sb.things/a.id}',
      '${sb.things/b.name}-x',
      '${',
      '${}',
      '$${x}',
      '1.0.0',
      '3.0.3',
      '2.0',
      'http://127.0.0.1:9/',
      'file:///etc/passwd',
      '#/components/schemas/A',
      '#/definitions/A',
      '../../secret.txt',
      '\u0000',
      '\ufeff',
      '\ud800',
      '\u2028',
      '💥',
      'a\r\nb',
      '~',
      'yes',
      '0x1F',
      '.nan',
      '1e999',
      '*a',
      '&a',
      '!!binary',
    ),
  },
  { weight: 3, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'x'.repeat(size(5_000, 200_000)),
      '${sb.things/a.id}'.repeat(size(200, 5_000)),
      '\n'.repeat(size(1_000, 50_000)),
    ),
  },
);

/** Trees of `key`s and hostile scalars, shallow and small. */
function treeOf(key: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  return fc.letrec<{ value: unknown; list: unknown[]; map: Record<string, unknown> }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth: 6 }, hostileScalar, tie('list'), tie('map')),
    list: fc.array(tie('value'), { maxLength: 5 }),
    map: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
  })).value;
}

/** Trees that often hold a key reaching a prototype somewhere. */
export const hostileValue: fc.Arbitrary<unknown> = treeOf(hostileKey);

/** Trees of odd scalars without such keys: what gets past the first check and into the rest. */
export const plainValue: fc.Arbitrary<unknown> = treeOf(plainKey);

/** Mostly plain trees, now and then a hostile one. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: plainValue },
  { weight: 1, arbitrary: hostileValue },
);

/** A mapping of hostile values. */
export const hostileMap: fc.Arbitrary<Record<string, unknown>> = fc.dictionary(
  hostileKey,
  hostileValue,
  { maxKeys: 6, noNullPrototype: true },
);

/**
 * A value nested `depth` levels deep (lists and mappings alternating), for stack overflows. At most
 * 1,500: fast-check's report of a failing case recurses too, and deeper values would hide a failure
 * behind the report's own overflow. Deeper input comes as text (the YAML fragments below).
 */
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.integer({ min: 50, max: size(300, 1_500) }),
    hostileScalar,
    fc.constantFrom(...FORBIDDEN, 'a'),
  )
  .map(([depth, leaf, key]) => {
    // The deepest mapping may hold a key that reaches a prototype, below any depth limit.
    let v: unknown = { [key]: leaf };
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
    return v;
  });

/** Now and then adds hostile members to a mapping (own properties, `__proto__` included). */
export function withExtras(
  base: fc.Arbitrary<Record<string, unknown>>,
): fc.Arbitrary<Record<string, unknown>> {
  const extras = fc.oneof(
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: hostileMap },
  );
  return fc.tuple(base, extras).map(([b, extra]) => {
    if (extra === null) return b;
    const out = { ...b };
    for (const [k, v] of Object.entries(extra)) {
      Object.defineProperty(out, k, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  });
}

/** YAML fragments that attack the parser or what consumes its output. */
function snippets(bombs: boolean): fc.Arbitrary<string> {
  const safe = fc.oneof(
    fc.constantFrom(
      'a: &x [*x]\n',
      'a: &x {b: *x}\n',
      'spec: &s\n  self: *s\n',
      'a: *nowhere\n',
      'base: &b {size: 1}\nspec:\n  <<: *b\n',
      '<<: {__proto__: {polluted: true}}\n',
      'k: &k __proto__\nspec:\n  *k : {polluted: true}\n',
      '&k constructor: {prototype: {polluted: true}}\n',
      '"__proto__": {polluted: true}\n',
      "'constructor':\n  prototype: {polluted: true}\n",
      '? __proto__\n: {polluted: true}\n',
      '!!str __proto__: {polluted: true}\n',
      '? [__proto__, constructor]\n: 1\n',
      '? {__proto__: 1}\n: 2\n',
      'list: [__proto__: {polluted: true}]\n',
      'a: !!binary aGVsbG8=\n',
      'a: !!set {x, y}\n',
      'a: !!omap [{a: 1}, {b: 2}]\n',
      'a: !!timestamp 2001-12-14t21:59:43.10-05:00\n',
      'a: !!js/function "function(){}"\n',
      'a: !foo 1\n',
      '%YAML 1.1\n---\na: yes\n',
      '%YAML 9.9\n---\na: 1\n',
      '%TAG ! tag:example.com,2000:\n---\na: !x 1\n',
      'a: 1\na: 2\n',
      '\ufeffkind: Resource\n',
      'kind: Resource\r\nname: a\r\n',
      'kind:\tResource\n',
      '\tkind: Resource\n',
      'a: "\\u0000\\x00\\ud800"\n',
      '---\n...\n---\n',
      '--- !!map\n? a\n: b\n',
      'a: |\n  x\n b\n',
      'a: >-\n\n\n',
      '[a, b]: c\n',
      '- - - - -\n',
      '? ? ? a\n',
      '{{{\n',
      'a: [1, 2\n',
      '"unterminated\n',
      '&a &b c\n',
      '*a: *b\n',
    ),
    fc
      .integer({ min: 50, max: size(300, 3_000) })
      .map((n) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`),
    fc
      .integer({ min: 50, max: size(150, 1_500) })
      .map((n) => `a: ${'{b: '.repeat(n)}1${'}'.repeat(n)}\n`),
    fc
      .integer({ min: 50, max: size(100, 1_000) })
      .map(
        (n) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n',
      ),
    fc.integer({ min: 50, max: size(300, 5_000) }).map((n) => `a: ${'- '.repeat(n)}x\n`),
    fc
      .integer({ min: 100, max: size(500, 20_000) })
      .map((n) => Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join('\n') + '\n'),
    fc
      .integer({ min: 20, max: size(200, 5_000) })
      .map((n) => `a: &a x\nb: [${Array<string>(n).fill('*a').join(', ')}]\n`),
  );
  if (!bombs) return safe;
  // Each level repeats the previous one ten times: 10^levels nodes if aliases were expanded naively.
  const bomb = fc.integer({ min: 3, max: 9 }).map((levels) => {
    const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < levels; i++) {
      lines.push(
        `l${i}: &l${i} [${Array<string>(10)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    }
    return `${lines.join('\n')}\n`;
  });
  return fc.oneof({ weight: 5, arbitrary: safe }, { weight: 1, arbitrary: bomb });
}

/** YAML for a value; JSON (which is YAML) where block style would nest too deep or grow too big. */
function toYaml(value: unknown): string {
  try {
    const text = stringify(value, { aliasDuplicateObjects: false, lineWidth: 0 });
    if (text.length < 100_000) return text;
  } catch {
    // Too deep for the serialiser: JSON below.
  }
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Up to `max` documents serialised as one YAML text, `---` between them. */
export function yamlDocuments(documents: fc.Arbitrary<unknown>, max = 3): fc.Arbitrary<string> {
  return fc
    .array(documents, { minLength: 1, maxLength: max })
    .map((ds) => ds.map(toYaml).join('---\n'));
}

/**
 * YAML texts: documents serialised from `documents`, some spliced with hostile fragments or cut
 * short, hostile fragments alone, and noise. `bombs: false` leaves alias bombs out (for a parser
 * known to expand aliases without a bound); `maxDocuments` bounds the `---` separated documents.
 */
export function hostileYamlText(
  documents: fc.Arbitrary<unknown>,
  options: { bombs: boolean; maxDocuments?: number },
): fc.Arbitrary<string> {
  const docs = yamlDocuments(documents, options.maxDocuments);
  const fragment = snippets(options.bombs);
  return fc.oneof(
    { weight: 4, arbitrary: docs },
    {
      weight: 3,
      arbitrary: fc.tuple(docs, fragment, fc.nat()).map(([text, frag, at]) => {
        const lines = text.split('\n');
        const i = at % (lines.length + 1);
        return [...lines.slice(0, i), frag.trimEnd(), ...lines.slice(i)].join('\n');
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(docs, fc.nat(), fc.string({ unit: 'binary', maxLength: 5 }))
        .map(([text, at, noise]) => {
          const i = at % (text.length + 1);
          return text.slice(0, i) + noise + text.slice(i);
        }),
    },
    { weight: 2, arbitrary: fragment },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  );
}
