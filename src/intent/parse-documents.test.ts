import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { expectLinear } from '../../test/support/scaling.js';
import { checkYamlDocument } from '../core/index.js';
import { parseDocuments } from './parse-documents.js';

// Hostile YAML in an intent file (issue 10, items 2 and 7): every bound is a diagnostic at
// file:line:column, reached quickly; nothing throws and nothing hangs.

const FILE = 'infra/main.yaml';

function bomb(): string {
  const lines = ['kind: Resource', 'type: sb.networks', 'name: n', 'spec:', '  name: x', '  tags:'];
  lines.push('    a0: &a0 [x, x, x, x, x, x, x, x, x, x]');
  for (let i = 1; i < 10; i++) {
    lines.push(
      `    a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('parseDocuments', () => {
  it('refuses a YAML alias bomb within a second, at the alias that crosses the bound', () => {
    const started = performance.now();
    const { documents, diagnostics } = parseDocuments(FILE, bomb());
    expect(performance.now() - started).toBeLessThan(1000);
    expect(documents).toEqual([]);
    expect(diagnostics).toEqual([
      {
        code: 'yaml.limit',
        severity: 'error',
        message:
          'YAML document refused: its aliases expand it by more than 1,000,000 values (an alias bomb?)',
        hint: 'write the values out instead of aliasing aliases; nothing else in this document was checked',
        file: FILE,
        line: 12,
        column: expect.any(Number) as number,
      },
    ]);
  });

  it('reads many aliases of a large anchor quickly (the yaml package bounds them in quadratic time)', () => {
    const lines = ['kind: Resource', 'a: &a []', `b: &b [${Array(200).fill('*a').join(', ')}]`];
    lines.push(`c: [${Array(200).fill('*b').join(', ')}]`, 'pad:');
    for (let i = 0; i < 4_000; i++) lines.push(`  - ${i}`);
    const started = performance.now();
    const { documents, diagnostics } = parseDocuments(FILE, lines.join('\n'));
    expect(performance.now() - started).toBeLessThan(3000);
    expect(diagnostics).toEqual([]);
    expect(documents).toHaveLength(1);
  });

  it.each([
    [
      'a recursive alias',
      'kind: Resource\nspec: &s { again: *s }\n',
      2,
      'alias *s is inside the value it names',
    ],
    ['an unknown alias', 'kind: Resource\nspec: *nowhere\n', 2, 'alias *nowhere has no anchor'],
    [
      'deep nesting',
      `kind: Resource\nspec: ${'['.repeat(300)}${']'.repeat(300)}\n`,
      2,
      'nested more than 256 levels deep',
    ],
  ])('refuses %s with a diagnostic, without throwing', (_name, text, line, message) => {
    const { documents, diagnostics } = parseDocuments(FILE, text);
    expect(documents).toEqual([]);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'yaml.limit', file: FILE, line });
    expect(diagnostics[0]!.message).toContain(message);
  });

  it('says "nested too deeply" when the parser itself cannot go deeper', () => {
    const n = 20_000;
    const { diagnostics } = parseDocuments(
      FILE,
      `kind: Resource\nspec: ${'['.repeat(n)}${']'.repeat(n)}\n`,
    );
    expect(diagnostics.length).toBeGreaterThan(0);
    expect(diagnostics[0]).toMatchObject({ code: 'yaml.syntax', file: FILE, line: 2 });
    expect(diagnostics[0]!.message).toBe('YAML syntax error: nested too deeply to read');
  });

  it('names a duplicate key itself (the yaml package takes time quadratic in a mapping)', () => {
    const { diagnostics } = parseDocuments(FILE, 'kind: Resource\ntype: a\ntype: b\n');
    expect(diagnostics).toEqual([
      expect.objectContaining({
        code: 'yaml.syntax',
        message:
          'YAML syntax error: Map keys must be unique: `type` is already a key of this mapping',
        line: 3,
        column: 1,
      }),
    ]);
  });

  it('reads a mapping of 30,000 keys (a wide document) in one piece', () => {
    const keys = Array.from({ length: 30_000 }, (_, i) => `    k${i}: v${i}`);
    const text = `kind: Resource\nspec:\n  tags:\n${keys.join('\n')}\n`;
    const { documents, diagnostics } = parseDocuments(FILE, text);
    expect(diagnostics).toEqual([]);
    const tags = (documents[0]!.value as { spec: { tags: Record<string, string> } }).spec.tags;
    expect(Object.keys(tags)).toHaveLength(30_000);
  });

  it('checks a document in time linear in the size of a mapping', async () => {
    const docs = new Map<number, ReturnType<typeof checkYamlDocument>>();
    const parsed = [5_000, 20_000].map((n) => {
      const text = Array.from({ length: n }, (_, i) => `k${i}: v`).join('\n');
      return { n, doc: parseDocument(`${text}\nk1: again\n`, { uniqueKeys: false }) };
    });
    await expectLinear((n) => {
      const problems = checkYamlDocument(parsed.find((p) => p.n === n)!.doc);
      docs.set(n, problems);
    }, 5_000);
    expect(docs.get(20_000)!.map((p) => p.kind)).toEqual(['duplicate-key']);
  });
});
