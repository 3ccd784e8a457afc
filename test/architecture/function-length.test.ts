// A newcomer reads a pass as the loop only if no function is longer than a screenful or two (issue 25):
// no function in src/engine or src/app longer than 150 lines, none in src/providers longer than 200.
// A factory closure counts whole, with every function nested in it. An exception is listed below
// with its reason, and in docs/architecture.md ("Long functions"), so that the two never disagree.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The longest function allowed, per folder. */
const LIMITS: Readonly<Record<string, number>> = {
  'src/engine': 150,
  'src/app': 150,
  'src/providers': 200,
};

/** `file:name` → why it may be longer. Empty today; docs/architecture.md lists the same names. */
const EXCEPTIONS: Readonly<Record<string, string>> = {};

/** A function found in a source file, with its length in lines (first to last line, both counted). */
interface FunctionSpan {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly lines: number;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/\.ts$/.test(entry.name) && !/\.test\.ts$|\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** The name a function is known by: its own, or the variable, property or method it is bound to. */
function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
    ts.isIdentifier(parent.name)
  ) {
    return parent.name.text;
  }
  return '(anonymous)';
}

/** Every function-like node with a body in one file's text. */
function functionSpans(file: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const spans: FunctionSpan[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({ file, line: first + 1, name: nameOf(node), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

describe('function length (issue 25)', () => {
  it('measures a function from its first line to its last, nested functions included', () => {
    const text = [
      'export function outer() {', // 1
      '  const inner = () => {', // 2
      '    return 1;', // 3
      '  };', // 4
      '  return inner();', // 5
      '}', // 6
      'class C { m() { return 2; } }', // 7
    ].join('\n');
    const spans = functionSpans('x.ts', text).map((s) => [s.name, s.line, s.lines]);
    expect(spans).toEqual([
      ['outer', 1, 6],
      ['inner', 2, 3],
      ['m', 7, 1],
    ]);
  });

  it('finds no function longer than its folder allows, but for the listed exceptions', () => {
    const tooLong: string[] = [];
    for (const [dir, limit] of Object.entries(LIMITS)) {
      for (const path of sourceFiles(join(ROOT, dir))) {
        const file = relative(ROOT, path);
        for (const span of functionSpans(file, readFileSync(path, 'utf8'))) {
          if (span.lines <= limit || EXCEPTIONS[`${file}:${span.name}`] !== undefined) continue;
          tooLong.push(`${file}:${span.line} ${span.name}: ${span.lines} lines (limit ${limit})`);
        }
      }
    }
    expect(tooLong).toEqual([]);
  });

  it('lists every exception in docs/architecture.md', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const missing = Object.keys(EXCEPTIONS).filter((key) => !doc.includes(key));
    expect(missing).toEqual([]);
  });
});
