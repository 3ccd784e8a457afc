import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { checkYamlDocument } from './yaml-limits.js';

const check = (text: string, limits = { maxDepth: 8, maxAliasNodes: 20, maxAliasExpansion: 100 }) =>
  checkYamlDocument(parseDocument(text, { uniqueKeys: false, merge: true }), limits).map((p) => ({
    kind: p.kind,
    at: text.slice(p.offset, p.offset + 6),
  }));

/** "Billion laughs": each level is ten aliases of the one before. */
function bomb(levels: number): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < levels; i++) {
    lines.push(
      `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  }
  return lines.join('\n');
}

describe('checkYamlDocument', () => {
  it('accepts ordinary documents, anchors and merge keys included', () => {
    expect(check('a: 1\nb: [1, 2, {c: d}]\n')).toEqual([]);
    expect(check('base: &b {x: 1}\none: {<<: *b, y: 2}\ntwo: *b\n')).toEqual([]);
  });

  it('finds every duplicate key, where the second one is', () => {
    expect(check('a: 1\nb: 2\na: 3\nm: {x: 1, x: 2}\n')).toEqual([
      { kind: 'duplicate-key', at: 'a: 3\nm' },
      { kind: 'duplicate-key', at: 'x: 2}\n' },
    ]);
    // Keys of different types are different keys, as the yaml package compares them.
    expect(check('1: a\n"1": b\n')).toEqual([]);
  });

  it('bounds depth, aliases, alias expansion, and refuses recursive and unknown aliases', () => {
    expect(check('a: [[[[[[[[[x]]]]]]]]]')).toEqual([{ kind: 'too-deep', at: '[[x]]]' }]);
    expect(check(bomb(3))).toEqual([{ kind: 'alias-expansion', at: '*a1, *' }]);
    expect(check(bomb(2))).toEqual([]);
    const many = Array.from({ length: 21 }, (_, i) => `k${i}: &x${i} v`).join('\n');
    expect(check(many)).toEqual([{ kind: 'too-many-aliases', at: 'v' }]);
    expect(check('a: &s {b: *s}')).toEqual([{ kind: 'alias-loop', at: '*s}' }]);
    expect(check('a: *nope')).toEqual([{ kind: 'alias-unknown', at: '*nope' }]);
  });

  it('stops a billion laughs with the default limits, quickly', () => {
    const started = performance.now();
    const problems = checkYamlDocument(parseDocument(bomb(10)));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(problems.map((p) => p.kind)).toEqual(['alias-expansion']);
  });
});
