/**
 * A problem found in user input (intent files, flags), reported with where it is and what to do.
 * Diagnostics are collected, never thrown one at a time: a user sees every problem at once.
 */
export interface Diagnostic {
  /** Stable, machine-readable code, e.g. `schema.required`, `ref.cycle`. */
  readonly code: string;
  readonly severity: 'error' | 'warning';
  readonly message: string;
  /** What the user can do about it. */
  readonly hint?: string;
  readonly file?: string;
  /** 1-based line and column. */
  readonly line?: number;
  readonly column?: number;
  /** The field path inside the document, e.g. `spec.size` or `spec.tags.team`. */
  readonly path?: string;
  /** The resource the problem belongs to, when there is one. */
  readonly address?: string;
}

/** Formats a diagnostic as `file:line:column: error[code]: message (at path)` plus its hint. */
export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file ? `${d.file}:${d.line ?? 1}:${d.column ?? 1}: ` : '';
  const at = d.path ? ` (at ${d.path})` : '';
  const hint = d.hint ? `\n  hint: ${d.hint}` : '';
  return `${where}${d.severity}[${d.code}]: ${d.message}${at}${hint}`;
}

/** True when any diagnostic is an error. */
export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/** Orders diagnostics by file, line, column, so output is deterministic. */
export function sortDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  return [...ds].sort(
    (a, b) =>
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      a.code.localeCompare(b.code),
  );
}
