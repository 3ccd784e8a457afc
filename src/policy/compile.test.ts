import { describe, expect, it } from 'vitest';
import { compileExpression } from './compile.js';

// What a rule reads decides whether it is undecidable (docs/policies.md): a read the walk misses
// would let a rule on a value not known yet pass or fail instead. One case per kind of access.

describe('compileExpression: what an expression reads', () => {
  const cases: [string, string, string[], string[]][] = [
    ['a field', 'object.a', ['a'], []],
    ['a field by index', 'object["a"]', ['a'], []],
    ['a field below a field: the top-level one', 'object.a.b', ['a'], []],
    ["a map's key below a field", "object.tags['team'] == 'a'", ['tags'], []],
    ['has() reads the field it tests', 'has(object.a)', ['a'], []],
    ['the object whole', 'object', ['*'], []],
    ['the object whole, in a call', 'size(object)', ['*'], []],
    ['the object whole, in a macro', 'object.exists(k, k == "a")', ['*'], []],
    ['an index not a string: the whole object', 'object[1]', ['*'], []],
    [
      'an index by a variable: the whole object and the variable',
      'object[variables.k]',
      ['*'],
      ['k'],
    ],
    ['an index by a field: the whole object and that field', 'object[object.k]', ['*', 'k'], []],
    ['inside a list literal and a macro', '[object.a, object.b].all(x, x > 0)', ['a', 'b'], []],
    ['inside a map literal', "{'k': object.a}.k", ['a'], []],
    ['in every branch of a conditional', 'object.a > 1 ? object.b : object.c', ['a', 'b', 'c'], []],
    ['in a call', 'foo(object.a)', ['a'], []],
    ["in a macro's body", 'object.a.exists(x, x == object.b)', ['a', 'b'], []],
    ['a variable', 'variables.v', [], ['v']],
    ['a variable by index', 'variables["v"]', [], ['v']],
    ['a field of a variable: the variable', 'variables.v.object', [], ['v']],
    ['the variables whole', 'variables', [], ['*']],
    ['declared and observed are not the object', 'declared.a == observed.b', [], []],
    ['a field named object of something else', 'other.object', [], []],
    ['an index by an identifier: the whole object', 'object[k]', ['*'], []],
    ["a field of the text 'object' is not a read", "'object'.a == 1", [], []],
    ["an index of the text 'object' is not a read", "'object'['a'] == 1", [], []],
    ['nothing', 'true', [], []],
  ];
  it.each(cases)('%s: %s', (_what, text, reads, variables) => {
    const c = compileExpression(text);
    if ('error' in c) throw new Error(c.error);
    expect([...c.reads].sort()).toEqual(reads);
    expect([...c.variables].sort()).toEqual(variables);
  });

  it('says why an expression does not parse, never throwing', () => {
    expect(compileExpression('object.x ==')).toEqual({
      error: expect.stringMatching(/\(at column \d+\)$/) as unknown,
    });
  });
});

describe('compileExpression: the cache', () => {
  it('keeps the 10,000 expressions compiled last: the oldest is compiled again', () => {
    const first = compileExpression('1 == 1 && "the first"');
    const next = compileExpression('2 == 2 && "the next"');
    for (let i = 0; i < 9_999; i++) compileExpression(`${i} == ${i}`);
    // 10,000 compiled after the first: it has left the cache, the next has not.
    expect(compileExpression('2 == 2 && "the next"')).toBe(next);
    const again = compileExpression('1 == 1 && "the first"');
    expect(again).not.toBe(first);
    expect(again).toMatchObject({ text: '1 == 1 && "the first"', reads: new Set() });
  });
});
