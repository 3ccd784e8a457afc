import type { Diagnostic } from '../core/index.js';
import type { ParsedDocument } from './parse-documents.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { reportAt } from './report.js';
import { didYouMean, listOf } from './suggest.js';

/** True for a plain mapping (not a list, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Names a value's type for messages: `string`, `number`, `list`, `mapping`, `null`. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'mapping';
  if (typeof v === 'number' && Number.isInteger(v)) return 'integer';
  return typeof v;
}

/**
 * Reads the fields of one mapping of a document and reports, at their place, the problems every
 * structural field shares: unknown keys (`field.unknown`), missing required ones (`field.required`)
 * and values of the wrong type (`field.type`).
 */
export class FieldReader {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly doc: ParsedDocument,
    private readonly address?: string,
  ) {}

  /** A diagnostic at a field, carrying this reader's address. */
  report(
    code: string,
    message: string,
    path: readonly PathSegment[],
    options: { target?: 'key' | 'value'; hint?: string; severity?: 'error' | 'warning' } = {},
  ): void {
    this.diagnostics.push(
      reportAt(this.doc, code, message, {
        path,
        ...options,
        ...(this.address !== undefined && { address: this.address }),
      }),
    );
  }

  /** Reports every key of `obj` not in `allowed` (except those `skip` says are handled elsewhere). */
  unknownFields(
    obj: Record<string, unknown>,
    allowed: readonly string[],
    at: readonly PathSegment[],
    what: string,
    skip: (key: string) => boolean = () => false,
  ): void {
    for (const key of Object.keys(obj)) {
      if (allowed.includes(key) || skip(key)) continue;
      this.report(
        'field.unknown',
        `unknown field \`${key}\` in ${what}; allowed fields: ${listOf(allowed)}.${didYouMean(key, allowed)}`,
        [...at, key],
        { target: 'key', hint: 'remove the field or fix its name' },
      );
    }
  }

  /** The value at `key` if it is a non-empty string; reports it missing or of the wrong type. */
  string(
    obj: Record<string, unknown>,
    key: string,
    at: readonly PathSegment[],
    required: boolean,
  ): string | undefined {
    const v = obj[key];
    const path = [...at, key];
    if (v === undefined || v === null) {
      if (required) this.missing(path, at);
      return undefined;
    }
    if (typeof v !== 'string' || v === '') {
      this.report(
        'field.type',
        `\`${formatPath(path)}\` must be a non-empty string, got ${typeName(v)}`,
        path,
      );
      return undefined;
    }
    return v;
  }

  /** The value at `key` if it is a number within bounds; `fallback` when absent. */
  number(
    obj: Record<string, unknown>,
    key: string,
    at: readonly PathSegment[],
    rule: { integer: boolean; min: number; fallback: number },
  ): number {
    const v = obj[key];
    const path = [...at, key];
    if (v === undefined || v === null) return rule.fallback;
    const kind = rule.integer ? 'an integer' : 'a number';
    if (typeof v !== 'number' || (rule.integer && !Number.isInteger(v)) || v < rule.min) {
      this.report(
        'field.type',
        `\`${formatPath(path)}\` must be ${kind} >= ${rule.min}, got ${typeName(v)} ${JSON.stringify(v)}`,
        path,
      );
      return rule.fallback;
    }
    return v;
  }

  /** The mapping at `key`; reports a value of another type. Undefined when absent or wrong. */
  mapping(
    obj: Record<string, unknown>,
    key: string,
    at: readonly PathSegment[],
  ): Record<string, unknown> | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!isRecord(v)) {
      const path = [...at, key];
      this.report(
        'field.type',
        `\`${formatPath(path)}\` must be a mapping, got ${typeName(v)}`,
        path,
      );
      return undefined;
    }
    return v;
  }

  /** Reports a required field as missing, at the mapping that should hold it. */
  missing(path: readonly PathSegment[], parent: readonly PathSegment[]): void {
    this.report('field.required', `missing required field \`${formatPath(path)}\``, path, {
      target: parent.length === 0 ? 'value' : 'key',
    });
  }
}
