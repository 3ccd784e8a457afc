import { describe, expect, it } from 'vitest';
import { parseDocuments } from './parse-documents.js';
import { formatPath, positionOf } from './positions.js';
import type { PathSegment } from './positions.js';

const TEXT = [
  'kind: Resource', // 1
  'spec:', // 2
  '  name: web', // 3
  '  tags: { team: a }', // 4
  '  ports:', // 5
  '    - 80', // 6
  '    - { port: 443 }', // 7
  'lifecycle:', // 8
  'checks: []', // 9
].join('\n');

describe('positionOf', () => {
  it('finds every key of a 20,000-key mapping in linear time (each key an unknown field)', () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: ${i}`);
    const big = parseDocuments('f.yaml', ['spec:', ...keys].join('\n')).documents[0]!;
    const started = performance.now();
    for (let i = 0; i < 20_000; i += 1) positionOf(big, ['spec', `k${i}`], 'key');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(positionOf(big, ['spec', 'k19999'], 'key')).toEqual({ line: 20_001, column: 3 });
  });

  const doc = parseDocuments('f.yaml', TEXT).documents[0]!;
  const cases: {
    name: string;
    path: PathSegment[];
    target: 'key' | 'value';
    want: [number, number];
  }[] = [
    { name: 'document start', path: [], target: 'value', want: [1, 1] },
    { name: 'top-level value', path: ['kind'], target: 'value', want: [1, 7] },
    { name: 'top-level key', path: ['spec'], target: 'key', want: [2, 1] },
    { name: 'nested value', path: ['spec', 'name'], target: 'value', want: [3, 9] },
    { name: 'key inside a flow map', path: ['spec', 'tags', 'team'], target: 'key', want: [4, 11] },
    { name: 'list item by index', path: ['spec', 'ports', 0], target: 'value', want: [6, 7] },
    {
      name: 'index as a string (JSON pointer)',
      path: ['spec', 'ports', '1', 'port'],
      target: 'value',
      want: [7, 15],
    },
    {
      name: 'missing field: the key of the deepest existing ancestor',
      path: ['spec', 'image'],
      target: 'key',
      want: [2, 1],
    },
    {
      name: 'missing nested field under a list item',
      path: ['spec', 'ports', 1, 'proto'],
      target: 'key',
      want: [7, 7],
    },
    {
      name: 'empty value falls back to its key',
      path: ['lifecycle'],
      target: 'value',
      want: [8, 1],
    },
    { name: 'absent top-level field: document start', path: ['name'], target: 'key', want: [1, 1] },
  ];
  it.each(cases)('$name', ({ path, target, want }) => {
    const pos = positionOf(doc, path, target);
    expect([pos.line, pos.column]).toEqual(want);
  });

  it('counts lines across documents of one file', () => {
    const docs = parseDocuments('f.yaml', 'kind: A\n---\nkind: B\nname: x\n').documents;
    expect(positionOf(docs[1]!, ['name'], 'value')).toEqual({ line: 4, column: 7 });
  });
});

describe('formatPath', () => {
  it.each([
    { path: [], want: '' },
    { path: ['spec', 'size'], want: 'spec.size' },
    { path: ['checks', 0, 'http', 'url'], want: 'checks[0].http.url' },
  ])('$want', ({ path, want }) => {
    expect(formatPath(path)).toBe(want);
  });
});

describe('parseDocuments', () => {
  it('skips empty documents and keeps the index of the others', () => {
    const { documents, diagnostics } = parseDocuments(
      'f.yaml',
      '---\n# only a comment\n---\nkind: A\n',
    );
    expect(diagnostics).toEqual([]);
    expect(documents.map((d) => [d.index, d.value])).toEqual([[1, { kind: 'A' }]]);
  });

  it('keeps checking the documents after a broken one', () => {
    const { documents, diagnostics } = parseDocuments('f.yaml', 'kind: [\n---\nkind: B\n');
    expect(diagnostics.map((d) => d.code)).toEqual(['yaml.syntax']);
    expect(documents.map((d) => d.value)).toEqual([{ kind: 'B' }]);
  });
});
