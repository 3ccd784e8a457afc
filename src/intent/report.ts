import type { Diagnostic, SourceLocation } from '../core/index.js';
import type { ParsedDocument } from './parse-documents.js';
import { formatPath, positionOf } from './positions.js';
import type { PathSegment } from './positions.js';

/** Options of a diagnostic about one field of one document. */
export interface ReportOptions {
  /** The field; omitted for the document as a whole. */
  readonly path?: readonly PathSegment[];
  /** Point at the field's key instead of its value. */
  readonly target?: 'key' | 'value';
  readonly hint?: string;
  readonly address?: string;
  readonly severity?: 'error' | 'warning';
}

/** A diagnostic located at a field of a document: file, line, column and the field path. */
export function reportAt(
  doc: ParsedDocument,
  code: string,
  message: string,
  options: ReportOptions = {},
): Diagnostic {
  const path = options.path ?? [];
  const pos = positionOf(doc, path, options.target ?? 'value');
  return {
    code,
    severity: options.severity ?? 'error',
    message,
    ...(options.hint !== undefined && { hint: options.hint }),
    file: doc.file,
    line: pos.line,
    column: pos.column,
    ...(path.length > 0 && { path: formatPath(path) }),
    ...(options.address !== undefined && { address: options.address }),
  };
}

/** Where a document (or one of its fields) starts, as stored in declarations. */
export function sourceOf(doc: ParsedDocument, path: readonly PathSegment[] = []): SourceLocation {
  const pos = positionOf(doc, path, 'value');
  return { file: doc.file, line: pos.line, column: pos.column };
}
