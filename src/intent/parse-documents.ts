import { LineCounter, isScalar, parseAllDocuments } from 'yaml';
import type { Document } from 'yaml';
import { checkYamlDocument } from '../core/index.js';
import type { Diagnostic, YamlProblem } from '../core/index.js';

/** One non-empty YAML document of an intent file, with what is needed to point back into it. */
export interface ParsedDocument {
  /** The file path, joined from the intent directory. */
  readonly file: string;
  /** 0-based position of the document in its file. */
  readonly index: number;
  readonly node: Document.Parsed;
  /** Maps offsets of the whole file to lines and columns. */
  readonly lineCounter: LineCounter;
  /** The document as plain data. */
  readonly value: unknown;
}

/** The first line of a yaml error message, without the " at line L, column C" the diagnostic carries anyway. */
function summary(message: string): string {
  const first = message.split('\n')[0] ?? message;
  const text = first.replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '');
  // The parser reports its own stack overflow on deeply nested flow collections as a syntax error.
  return /call stack/i.test(text) ? 'nested too deeply to read' : text;
}

const LIMIT_HINTS: Record<YamlProblem['kind'], string> = {
  'duplicate-key': 'fix the YAML syntax',
  'too-deep': 'flatten the value',
  'too-many-aliases': 'write the values out instead of using so many anchors and aliases',
  'alias-expansion': 'write the values out instead of aliasing aliases',
  'alias-loop': 'an alias cannot stand for a value that contains it',
  'alias-unknown': 'set the anchor (&name) before the alias (*name) that uses it',
};

/**
 * Splits a file into its YAML documents. Syntax errors become `yaml.syntax` diagnostics with the
 * parser's position, and the broken document is left out (checking it further would only add noise).
 * Empty documents (`---` alone, comments only) are skipped silently.
 */
export function parseDocuments(
  file: string,
  text: string,
): { documents: ParsedDocument[]; diagnostics: Diagnostic[] } {
  const lineCounter = new LineCounter();
  // uniqueKeys: the parser's duplicate-key check is quadratic in a mapping's size;
  // checkYamlDocument finds duplicates in linear time, and bounds depth and aliases.
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: true, uniqueKeys: false });
  const documents: ParsedDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  // parseAllDocuments returns an EmptyStream (an empty array) for a file without documents.
  docs.forEach((node, index) => {
    if (node.errors.length > 0) {
      for (const e of node.errors) {
        const pos = e.linePos?.[0] ?? lineCounter.linePos(e.pos[0]);
        diagnostics.push({
          code: 'yaml.syntax',
          severity: 'error',
          message: `YAML syntax error: ${summary(e.message)}`,
          hint: 'fix the YAML syntax; nothing else in this document was checked',
          file,
          line: pos.line,
          column: pos.col,
        });
      }
      return;
    }
    const contents = node.contents;
    if (contents === null || (isScalar(contents) && contents.value === null)) return;
    const problems = checkYamlDocument(node);
    for (const p of problems) {
      const pos = lineCounter.linePos(p.offset);
      diagnostics.push({
        code: p.kind === 'duplicate-key' ? 'yaml.syntax' : 'yaml.limit',
        severity: 'error',
        message:
          p.kind === 'duplicate-key'
            ? `YAML syntax error: ${p.message}`
            : `YAML document refused: ${p.message}`,
        hint: `${LIMIT_HINTS[p.kind]}; nothing else in this document was checked`,
        file,
        line: pos.line,
        column: pos.col,
      });
    }
    if (problems.length > 0) return;
    // The aliases are bounded above; the package's own bound (maxAliasCount) is quadratic.
    const value = node.toJS({ maxAliasCount: -1 }) as unknown;
    documents.push({ file, index, node, lineCounter, value });
  });
  return { documents, diagnostics };
}
