import { describe, expect, it } from 'vitest';
import { parseDocuments } from './parse-documents.js';

const yaml = (...lines: string[]) => lines.join('\n') + '\n';

describe('intent YAML that would make walkers loop or overflow', () => {
  it.each([
    {
      name: 'an alias inside its own anchor',
      text: yaml('kind: Resource', 'spec: &s', '  self: *s'),
      want: { code: 'yaml.cycle', line: 3, path: 'spec.self' },
    },
    {
      name: 'values nested 70 levels deep',
      text: yaml('kind: Resource', `spec: ${'['.repeat(70)}${']'.repeat(70)}`),
      want: { code: 'yaml.too_deep', line: 2, path: `spec${'[0]'.repeat(63)}` },
    },
    {
      name: 'an alias bomb',
      text: yaml(
        'kind: Resource',
        'a: &a [x, x, x, x, x, x, x, x, x, x]',
        'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
        'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
        'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      ),
      want: {
        code: 'yaml.alias',
        line: 1,
        message:
          'the document cannot be read: Excessive alias count indicates a resource exhaustion attack',
      },
    },
    {
      name: 'an alias before its anchor',
      text: yaml('kind: Resource', 'spec: *nowhere'),
      want: { code: 'yaml.alias', line: 1 },
    },
  ])('$name is a diagnostic, and the document is left out', ({ text, want }) => {
    const parsed = parseDocuments('main.yaml', text);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toMatchObject([{ severity: 'error', file: 'main.yaml', ...want }]);
  });
});

describe('keys written twice', () => {
  it.each([
    {
      name: 'a block mapping',
      reason: 'the second key is the error',
      text: yaml('kind: Resource', 'name: a', 'name: b'),
      want: [{ line: 3, column: 1 }],
    },
    {
      name: 'a flow mapping, one key quoted',
      reason: '`a` and "a" are the same key',
      text: yaml('spec: {a: 1, "a": 2}'),
      want: [{ line: 1, column: 14 }],
    },
    {
      name: '1 and "1"',
      reason: 'a number and a string are different keys, as the parser has it',
      text: yaml('spec: {1: a, "1": b}'),
      want: [],
    },
    {
      name: 'the same key in two mappings',
      reason: 'uniqueness is per mapping',
      text: yaml('a: {x: 1}', 'b: {x: 2}'),
      want: [],
    },
  ])('$name: $reason', ({ text, want }) => {
    const parsed = parseDocuments('main.yaml', text);
    expect(parsed.diagnostics).toEqual(
      want.map((w) => ({
        code: 'yaml.syntax',
        severity: 'error',
        message: 'YAML syntax error: Map keys must be unique',
        hint: 'fix the YAML syntax; nothing else in this document was checked',
        file: 'main.yaml',
        ...w,
      })),
    );
    expect(parsed.documents).toHaveLength(want.length === 0 ? 1 : 0);
  });

  it('are found in linear time: a mapping of 40,000 keys (the parser alone took a minute)', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `  k${i}: ${i}`);
    const started = performance.now();
    const parsed = parseDocuments('main.yaml', yaml('tags:', ...keys, '  k7: again'));
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(parsed.diagnostics).toMatchObject([{ code: 'yaml.syntax', line: 40_002, column: 3 }]);
  });
});

describe('a file that is broken everywhere', () => {
  it('shows its first 20 syntax errors and says more follow', () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `k${i}: ${i}`);
    const parsed = parseDocuments('main.yaml', yaml('- - - a', ...lines));
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toHaveLength(21);
    expect(parsed.diagnostics.every((d) => d.code === 'yaml.syntax')).toBe(true);
    expect(parsed.diagnostics[20]).toMatchObject({
      message: 'more YAML syntax errors from here on are not shown (the first 20 are)',
    });
  });
});
