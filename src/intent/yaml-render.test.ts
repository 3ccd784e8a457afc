import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { plainOk, renderBlock, renderFlow, renderScalarLike } from './yaml-render.js';

interface Case {
  readonly original: string;
  readonly value: unknown;
  readonly want: string;
  readonly reason: string;
  readonly flow?: boolean;
}

const cases: Case[] = [
  { original: '2', value: 5, want: '5', reason: 'a number stays a plain number' },
  { original: '2', value: 1.5, want: '1.5', reason: 'fractions are plain' },
  { original: '2', value: Infinity, want: '.inf', reason: 'YAML spells infinity .inf' },
  { original: "'2'", value: 5, want: '5', reason: 'a string becoming a number is plain' },
  { original: '"x"', value: true, want: 'true', reason: 'booleans are plain' },
  { original: 'x', value: null, want: 'null', reason: 'null is plain' },
  { original: '~', value: null, want: '~', reason: 'the tilde spelling is kept' },
  { original: 'api', value: 'web', want: 'web', reason: 'plain stays plain' },
  { original: 'api', value: '5', want: "'5'", reason: 'plain 5 would be a number' },
  { original: 'api', value: 'null', want: "'null'", reason: 'plain null would be null' },
  { original: 'api', value: '', want: "''", reason: 'the empty string needs quotes' },
  { original: 'api', value: ' x', want: "' x'", reason: 'leading space would be lost' },
  { original: 'api', value: 'a #b', want: "'a #b'", reason: '` #` starts a comment' },
  { original: 'api', value: "it's: x", want: '"it\'s: x"', reason: 'a quote inside: double' },
  { original: 'api', value: '-x', want: '-x', reason: 'a dash followed by text is plain' },
  { original: 'api', value: '- x', want: "'- x'", reason: '`- ` would start a list' },
  { original: 'api', value: '*x', want: "'*x'", reason: '`*` would be an alias' },
  { original: 'api', value: 'a,b', want: 'a,b', reason: 'a comma is fine in block context' },
  {
    original: 'api',
    value: 'a,b',
    want: "'a,b'",
    flow: true,
    reason: 'a comma ends a plain scalar in a flow collection',
  },
  { original: "'a'", value: 'b', want: "'b'", reason: 'single quotes are kept' },
  { original: "'a'", value: "b'c", want: "'b''c'", reason: 'a quote is doubled' },
  { original: "'a'", value: 'b\nc', want: '"b\\nc"', reason: 'a line break needs an escape' },
  { original: '"a"', value: 'b', want: '"b"', reason: 'double quotes are kept' },
  { original: '"a"', value: 'é\u0007', want: '"é\\u0007"', reason: 'control characters escaped' },
  { original: '"a"', value: '\u2028', want: '"\\u2028"', reason: 'a line separator is escaped' },
  { original: '"a"', value: '😀', want: '"😀"', reason: 'astral characters stay as they are' },
  {
    original: '|\n    a\n',
    value: 'b\nc\n',
    want: '|\n    b\n    c\n',
    reason: 'literal: same header, same indentation',
  },
  {
    original: '|-\n  a\n',
    value: 'b\n\n',
    want: '|+\n  b\n\n',
    reason: 'keep chomping for several final line breaks',
  },
  {
    original: '| # script\n  a\n',
    value: 'b',
    want: '|- # script\n  b\n',
    reason: 'the header comment stays',
  },
  {
    original: '>\n  a b\n',
    value: 'x\ny\n',
    want: '|\n  x\n  y\n',
    reason: 'folding would join the lines: literal instead',
  },
  {
    original: '|\n  a\n',
    value: '  indented',
    want: "'  indented'\n",
    reason: 'a first line starting with a space needs an indicator: quoted instead',
  },
  { original: '|\n  a\n', value: 7, want: '7\n', reason: 'a number ends the block' },
  { original: '[a, b]', value: ['a'], want: '[a]', reason: 'flow sequence padding kept' },
  { original: '[ a ]', value: ['a', 'b'], want: '[ a, b ]', reason: 'padding kept' },
  { original: '{a: 1}', value: { a: 2 }, want: '{a: 2}', reason: 'flow mapping padding kept' },
  { original: '{}', value: { a: 2 }, want: '{ a: 2 }', reason: 'an empty one: default padding' },
  {
    original: 'x',
    value: { 'a b': [1, 'x,y'], c: {} },
    want: "{ a b: [1, 'x,y'], c: {} }",
    reason: 'a collection replacing a scalar is flow',
  },
];

describe('renderScalarLike', () => {
  it.each(cases)('$original → $want: $reason', (c) => {
    expect(renderScalarLike(c.original, c.value, { flow: c.flow ?? false })).toBe(c.want);
  });

  it('uses the newline it is given', () => {
    expect(renderScalarLike('|\r\n  a\r\n', 'b\nc\n', { newline: '\r\n' })).toBe(
      '|\r\n  b\r\n  c\r\n',
    );
  });

  it('indents a block scalar without content like the context says', () => {
    expect(renderScalarLike('|\n', 'b\n', { indent: 6 })).toBe('|\n      b\n');
  });

  it('reads back as the value, in every style and context', () => {
    const styles = ['x', "'x'", '"x"', '|\n  x\n', '>\n  x\n', '5', '[x]', '{ x: 1 }'];
    fc.assert(
      fc.property(
        fc.constantFrom(...styles),
        fc.jsonValue({ maxDepth: 2, stringUnit: 'binary' }),
        fc.boolean(),
        (original, value, flow) => {
          const rendered = renderScalarLike(original, value, { flow });
          const block = rendered.startsWith('|') || rendered.startsWith('>');
          const text = flow && !block ? `[${rendered}]` : `k: ${rendered}`;
          const read = (parse(text) as Record<string, unknown> | unknown[]) ?? {};
          const got = Array.isArray(read) ? read[0] : read['k'];
          expect(got).toEqual(value);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('plainOk', () => {
  it.each([
    ['abc', true],
    ['nginx:1.27', true],
    ['10.0.0.0/16', true],
    ['a b', true],
    ['yes', true],
    ['true', false],
    ['~', false],
    ['0x1F', false],
    ['1e3', false],
    ['.inf', false],
    ['a: b', false],
    ['a:', false],
    ['#a', false],
    ['<<', false],
    ['', false],
  ])('%s: %s', (s, ok) => {
    expect(plainOk(s)).toBe(ok);
  });
});

describe('renderFlow and renderBlock', () => {
  it('flow on one line', () => {
    expect(renderFlow({ a: [1, { b: null }], 'k:': 'v' })).toBe("{ a: [1, { b: null }], 'k:': v }");
  });

  it('block at a column, nested one unit deeper', () => {
    expect(renderBlock({ a: 1, b: { c: [1, 2] }, d: [] }, 4, { unit: 2 })).toBe(
      'a: 1\n    b:\n      c:\n        - 1\n        - 2\n    d: []',
    );
    expect(renderBlock([{ a: 1, b: 2 }, [3]], 0, { seqIndent: 0 })).toBe('- a: 1\n  b: 2\n- - 3');
  });
});
