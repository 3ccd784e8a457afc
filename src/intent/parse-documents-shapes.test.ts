import { describe, expect, it } from 'vitest';
import { parseDocuments } from './parse-documents.js';

const yaml = (...lines: string[]) => lines.join('\n') + '\n';

describe('intent YAML that would make walkers loop or overflow', () => {
  it.each([
    {
      name: 'an alias inside its own anchor',
      text: yaml('kind: Resource', 'spec: &s', '  self: *s'),
      want: { code: 'yaml.limit' },
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
        'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
        'e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
        'f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]',
        'g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]',
      ),
      want: { code: 'yaml.limit' },
    },
    {
      name: 'an alias before its anchor',
      text: yaml('kind: Resource', 'spec: *nowhere'),
      want: { code: 'yaml.limit', line: 2, column: 7 },
    },
  ])('$name is a diagnostic, and the document is left out', ({ text, want }) => {
    const parsed = parseDocuments('main.yaml', text);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toMatchObject([{ severity: 'error', file: 'main.yaml', ...want }]);
  });
});

// Keys written twice: parse-documents.test.ts (found by checkYamlDocument, in linear time).

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
