// Reading a declared spec in the PostgreSQL provider's type modules: typed fields, the name of a
// named object, and the error for a spec the provider cannot act on.
import { canonicalJson, TendError } from '../../core/index.js';

/** A spec the provider cannot act on (`postgres.invalid_spec`), with what to declare instead. */
export function bad(message: string, hint: string): TendError {
  return new TendError('postgres.invalid_spec', message, { hint });
}

/** A string field, or undefined when it is absent or not a string. */
export function str(spec: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const v = spec[key];
  return typeof v === 'string' ? v : undefined;
}

/** A number field, or undefined when it is absent or not a number. */
export function num(spec: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const v = spec[key];
  return typeof v === 'number' ? v : undefined;
}

/** A list of names (each made a string); empty when the value is not a list. */
export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** The `name` a named object is declared with; a clear error when it is missing. */
export function nameOf(type: string, desired: Readonly<Record<string, unknown>>): string {
  const name = str(desired, 'name');
  if (name === undefined) throw bad(`a ${type} needs a name`, 'declare spec.name');
  return name;
}

/** How a field's value compares (a type's `normalize`). */
export type Normalize = (
  path: string,
  value: unknown,
  object?: Readonly<Record<string, unknown>>,
) => unknown;

/**
 * True when `field` is declared and its value, compared as `normalize` says (default: as it is), is
 * not the one the current object has: what an update must change.
 */
export function differs(
  field: string,
  desired: Readonly<Record<string, unknown>>,
  current: Readonly<Record<string, unknown>>,
  normalize: Normalize = (_path, value) => value,
): boolean {
  return (
    desired[field] !== undefined &&
    canonicalJson(normalize(field, desired[field], desired)) !==
      canonicalJson(normalize(field, current[field], current))
  );
}
