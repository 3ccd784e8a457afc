import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFast } from './fast-yaml.js';
import { parseDocuments, parseWithPositions } from './parse-documents.js';
import { positionOf } from './positions.js';

/**
 * The fast reading must give exactly what the position-keeping `yaml` path gives (values, and where
 * each document starts), or give up on the file. Returns which path the file took.
 */
function agreement(text: string): 'fast' | 'slow' {
  const fast = readFast(text);
  if (fast === undefined) return 'slow';
  const slow = parseWithPositions('f.yaml', text);
  expect(
    slow.diagnostics,
    `the yaml path finds problems the fast one accepted in ${JSON.stringify(text)}`,
  ).toEqual([]);
  expect(
    fast.map((d) => d.value),
    JSON.stringify(text),
  ).toEqual(slow.documents.map((d) => d.value));
  const fastStarts = fast.map((d) => ({ line: d.line, column: d.column }));
  const slowStarts = slow.documents.map((d) => positionOf(d, []));
  expect(fastStarts, JSON.stringify(text)).toEqual(slowStarts);
  // The tree built on demand for a fast document is its own document's tree.
  const lazy = parseDocuments('f.yaml', text).documents;
  lazy.forEach((doc, i) => {
    expect(doc.node.toJS({ maxAliasCount: -1 }), JSON.stringify(text)).toEqual(
      slow.documents[i]!.value,
    );
    const range = doc.node.contents?.range;
    expect(range && doc.lineCounter.linePos(range[0])).toEqual({
      line: fastStarts[i]!.line,
      col: fastStarts[i]!.column,
    });
  });
  return 'fast';
}

// Each case: the text, and the path it must take (the fast one only where both parsers agree).
const CASES: [string, 'fast' | 'slow'][] = [
  ['a: yes\nb: no\nc: on\nd: off\ne: y', 'fast'],
  ['a: 0o17\nb: 0x1F\nc: 0b11\nd: 017\ne: -0\nf: +12\ng: 1_000', 'fast'],
  [
    'a: .inf\nb: -.Inf\nc: +.INF\nd: .NaN\ne: .nan\nf: 1e3\ng: -1.5E-3\nh: 1.\ni: .5\nj: 1.e2',
    'fast',
  ],
  ['a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: nULL', 'fast'],
  ['a: true\nb: True\nc: TRUE\nd: false\ne: tRUE', 'fast'],
  ['a: 2001-12-14\nb: 2001-12-14T21:59:43.10-05:00\nc: 12:30:45', 'fast'],
  ['a: 12345678901234567890\nb: 0x7FFFFFFFFFFFFFFFFF', 'fast'],
  ['"1": a\n0x1F: b\n1.50: c\ntrue: d\n.inf: e\n-0: f', 'fast'],
  ['<<: {a: 1}\nb: 2', 'fast'],
  ["a: \"\\/\\u00e9\\x41\\N\\_\\L\\P\\t\\\"\\\\\"\nb: 'it''s'", 'fast'],
  ['a: |\n  x\n  y\n\nb: >-\n  x\n  y\n\n\nc: |+\n  k\n\n', 'fast'],
  ['a: "x\n  y\n\n  z"\nb: plain\n  continued\n  lines', 'slow'],
  ['- a\n- b: c\n  d: e\n- [1, {f: g}]\n- {}\n- []', 'fast'],
  ['# comment\n---\n# another\nkind: Resource # trailing\n...\n---\n\n  a: 1\n', 'fast'],
  ['---\n---\n~\n---\na: 1\n---\n', 'fast'],
  ['--- hello\n--- [1, 2]\n--- {a: b}', 'fast'],
  ['a: b\r\nc:\r\n  - d\r\n', 'fast'],
  ['? a\n: b\n? c', 'slow'],
  ["[[' ', ? {}]]", 'slow'],
  ['name:\n  - a\n  -\n- b\n', 'slow'],
  ['k:\n  - -\n- x', 'slow'],
  ["a: '  \n\"  ' # note", 'slow'],
  ['a:\n  - {\n}\n  - x', 'slow'],
  ["a: 'x'# note", 'slow'],
  ['---{}\n', 'slow'],
  ["\t''\n", 'slow'],
  ['a: b#c\nd: e #f\ng: "#h"', 'fast'],
  ['café: ünïcödé 🙂\n"🙂": x', 'fast'],
  ['', 'fast'],
  // Where the two could differ, the yaml path reads the file.
  ['%YAML 1.1\n---\na: yes', 'slow'],
  ['a: b\rc: d', 'slow'],
  ['base: &b {x: 1}\nc:\n  <<: *b\n  y: 2', 'slow'],
  ['a: &x 1\nb: 2', 'slow'],
  ['a: !!str 12', 'slow'],
  ['a: !!int "12"', 'slow'],
  ['a: !foo x', 'slow'],
  ['a: ! 12', 'slow'],
  ['!!map\na: 1', 'slow'],
  ['~: 1', 'slow'],
  ['null: 1', 'slow'],
  ['{: 1}', 'slow'],
  ['a:\n  "null": 1', 'slow'],
  ['? [a, b]\n: c', 'slow'],
  ['[a, b]: c', 'slow'],
  ['{a: 1}: c', 'slow'],
  ['? - a\n  - b\n: c', 'slow'],
  ['x: {[a]: b}', 'slow'],
  ['__proto__: 1', 'slow'],
  ['a:\n  constructor: 1', 'slow'],
  ['a: 1\na: 2', 'slow'],
  ['a: 1\n"a": 2', 'slow'],
  ['a:\n\tb: 1', 'slow'],
  ['a: [1, 2', 'slow'],
  ['key: value: x', 'slow'],
  ['a: @x', 'slow'],
  ['a: "\u0001"', 'slow'],
  [`${'['.repeat(100)}${']'.repeat(100)}`, 'slow'],
  [`${Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')} 1`, 'slow'],
];

describe('the fast reading agrees with the yaml path', () => {
  it.each(CASES)('%j reads the %s way', (text, path) => {
    expect(agreement(text)).toBe(path);
  });

  it('on every YAML file of the examples and the test corpus expectations', () => {
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (name !== 'documents' && name !== 'node_modules') walk(path);
        } else if (/\.ya?ml$/.test(name)) files.push(path);
      }
    };
    walk('examples');
    walk('test');
    expect(files.length).toBeGreaterThan(10);
    const paths = files.map((f) => agreement(readFileSync(f, 'utf8')));
    // Most real files take the fast path; a test that could not fail would not show that.
    expect(paths.filter((p) => p === 'fast').length).toBeGreaterThan(files.length / 2);
  });
});

// Generated YAML: odd scalars in every style, nested block and flow collections, comments,
// several documents, and now and then something only the yaml path reads (anchors, tags).
const ODD_SCALARS = [
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  '0o17',
  '0o8',
  '0x1F',
  '0xg',
  '0b11',
  '017',
  '-0',
  '+0',
  '+12',
  '1_000',
  '.inf',
  '-.Inf',
  '+.INF',
  '.NaN',
  '.nan',
  'nan',
  'inf',
  '~',
  'null',
  'Null',
  'NULL',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  '1e3',
  '1E+3',
  '-1.5e-3',
  '1.',
  '.5',
  '.',
  '-.5e1',
  '2001-12-14',
  '2001-12-14T21:59:43.10-05:00',
  '12:30:45',
  '12345678901234567890',
  '=',
  '<<',
  'a b',
  'a:b',
  'http://x.example/y?a=1&b=2',
  '-a',
  '--',
  'foo#bar',
  'x!',
  'a,b',
  "it's",
  '1,000',
  '0.',
  '00',
  '0x',
  '1e',
  'e3',
  '+',
  '-',
  '.e3',
];
const KEY_WORDS = [
  'kind',
  'name',
  'spec',
  'a',
  'b',
  'tags',
  '1',
  '0x10',
  'true',
  'on',
  '.inf',
  '-1.5',
  'x y',
  'k-1',
  '1e3',
];

const text = fc.string({ maxLength: 12 });
const plainScalar = fc.oneof(
  fc.constantFrom(...ODD_SCALARS),
  fc.stringMatching(/^[a-z][a-z0-9 ._/-]{0,10}[a-z0-9]$/),
);
const scalar = fc.oneof(
  { weight: 4, arbitrary: plainScalar },
  { weight: 2, arbitrary: text.map((s) => JSON.stringify(s)) },
  {
    weight: 1,
    arbitrary: text
      // Printable text only: a single-quoted scalar has no escapes.
      .filter((s) => [...s].every((c) => c >= ' ' && c !== '\u007f' && c < '\u0080'))
      .map((s) => `'${s.replace(/'/g, "''")}'`),
  },
  { weight: 1, arbitrary: fc.constantFrom('&a x', '*a', '!!str 3', '!x y', '! 4') },
);
const key = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KEY_WORDS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('~', 'null', '"null"', '__proto__', '"a"', '? k', '[a]'),
  },
);

type Tree = { s: string } | { seq: Tree[] } | { map: [string, Tree][] };
const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar.map((s) => ({ s })),
    fc.array(tie('t'), { maxLength: 3 }).map((seq) => ({ seq })),
    fc.array(fc.tuple(key, tie('t')), { maxLength: 3 }).map((map) => ({ map })),
  ),
})).t;

function flow(t: Tree): string {
  if ('s' in t) return t.s;
  if ('seq' in t) return `[${t.seq.map(flow).join(', ')}]`;
  return `{${t.map.map(([k, v]) => `${k}: ${flow(v)}`).join(', ')}}`;
}

/** Block style where it can be (a collection that is empty, or inside flow, is written as flow). */
function block(t: Tree, indent: string, comment: boolean): string[] {
  const note = comment ? ' # note' : '';
  if ('seq' in t && t.seq.length > 0) {
    return t.seq.flatMap((item) => {
      if ('s' in item) return [`${indent}- ${item.s}${note}`];
      const inner = block(item, `${indent}  `, comment);
      return [`${indent}-`, ...inner];
    });
  }
  if ('map' in t && t.map.length > 0) {
    return t.map.flatMap(([k, v]) => {
      if ('s' in v) return [`${indent}${k}: ${v.s}${note}`];
      if (('seq' in v && v.seq.length === 0) || ('map' in v && v.map.length === 0)) {
        return [`${indent}${k}: ${flow(v)}`];
      }
      return [`${indent}${k}:`, ...block(v, `${indent}  `, comment)];
    });
  }
  return [`${indent}${flow(t)}`];
}

const documentText = fc
  .tuple(tree, fc.boolean(), fc.boolean(), fc.constantFrom('', '# head\n', '\n\n'))
  .map(
    ([t, asFlow, comment, head]) =>
      `${head}${asFlow ? flow(t) : block(t, '', comment).join('\n')}\n`,
  );
const yamlText = fc
  .tuple(fc.array(documentText, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([docs, explicit]) =>
    explicit ? docs.map((d) => `---\n${d}`).join('') : docs.join('---\n'),
  );

/** The text with one character inserted, deleted or replaced by one that matters to YAML. */
const mutated = fc
  .tuple(yamlText, fc.nat(), fc.constantFrom(...' \t\n:-?[]{},#&*!|>\'"%@`~.0xe\r'), fc.nat(2))
  .map(([t, at, c, how]) => {
    const i = at % (t.length + 1);
    if (how === 0) return t.slice(0, i) + c + t.slice(i);
    if (how === 1) return t.slice(0, i) + t.slice(i + 1);
    return t.slice(0, i) + c + t.slice(i + 1);
  });

describe('generated YAML', () => {
  it('reads the same both ways whenever the fast way reads it', () => {
    let fast = 0;
    fc.assert(
      fc.property(yamlText, (t) => {
        if (agreement(t) === 'fast') fast++;
      }),
      { numRuns: Number(process.env.RUNS ?? 400) },
    );
    // The generator mostly writes what both read: the property is not checked on nothing.
    expect(fast).toBeGreaterThan(100);
  });

  it('reads the same both ways after a one-character change', () => {
    fc.assert(
      fc.property(mutated, (t) => {
        agreement(t);
      }),
      { numRuns: Number(process.env.RUNS ?? 600) },
    );
  });
});
