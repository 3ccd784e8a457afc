import { LineCounter, isScalar, parseAllDocuments } from 'yaml';
import type { Document } from 'yaml';
import type { Diagnostic } from '../core/index.js';

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
  return first.replace(/ at line \d+, column \d+:?$/, '').replace(/:$/, '');
}

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
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: true });
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
    documents.push({ file, index, node, lineCounter, value: node.toJS() as unknown });
  });
  return { documents, diagnostics };
}
