import { getPath, keyPathSegments } from '../../../core/index.js';
import type { ObjectView } from './schema-view.js';
import { isObject, viewHasKeyPath } from './schema-view.js';

/**
 * Two facts about a type's objects an overlay may state on its schemas: in which states an object
 * counts as gone (`x-tend-absent-when`), and which field holds its id when that is not `id` or the
 * item path parameter (`x-tend-id-field`).
 */

/** A scalar an `x-tend-absent-when` rule compares a field with. */
export type AbsentValue = string | number | boolean | null;

/**
 * `x-tend-absent-when: {field, in: [values]}`: an object whose field (a dotted path) holds one of the
 * values is treated as absent — listed by no one, read as not found. For platforms that keep
 * objects after deleting them (Alertmanager's expired silences, `status.state: expired`).
 */
export interface AbsentWhen {
  readonly field: string;
  readonly in: readonly AbsentValue[];
}

const DOTTED = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

/**
 * The `x-tend-absent-when` rules of a type (one rule or a list, from the first of `places` that has
 * the key), each on a field whose first segment the read schema has; anything else is a warning.
 */
export function readAbsentWhen(
  typeName: string,
  places: readonly unknown[],
  read: ObjectView,
  warnings: string[],
): AbsentWhen[] {
  const value = places
    .map((p) => (isObject(p) ? p['x-tend-absent-when'] : undefined))
    .find((v) => v !== undefined);
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  const out: AbsentWhen[] = [];
  list.forEach((rule: unknown, i) => {
    const where =
      list.length > 1 || Array.isArray(value)
        ? `${typeName}: x-tend-absent-when[${i}]`
        : `${typeName}: x-tend-absent-when`;
    if (!isObject(rule) || typeof rule['field'] !== 'string' || !DOTTED.test(rule['field'])) {
      warnings.push(`${where} must be {field: <name or dotted path>, in: [values]}; ignored`);
      return;
    }
    const values = rule['in'];
    if (!Array.isArray(values) || values.length === 0 || !values.every(isAbsentValue)) {
      warnings.push(
        `${where}: in must be a non-empty list of strings, numbers or booleans; ignored`,
      );
      return;
    }
    const top = rule['field'].split('.')[0]!;
    if (!(top in read.properties)) {
      warnings.push(
        `${where} names ${rule['field']}, but the read schema has no field ${top}; ignored`,
      );
      return;
    }
    out.push({ field: rule['field'], in: values });
  });
  return out;
}

function isAbsentValue(v: unknown): v is AbsentValue {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** True when an object's fields put it in a state its type's rules call absent. */
export function isAbsent(rules: readonly AbsentWhen[] | undefined, fields: unknown): boolean {
  if (rules === undefined || rules.length === 0) return false;
  return rules.some((r) => {
    const v = getPath(fields, r.field);
    return v !== undefined && r.in.some((x) => x === v);
  });
}

/**
 * The `x-tend-id-field` of the first of `places` that states one: a field name, or a key path to a
 * nested one (`user.login`, core/key-path.ts). A value that is neither, or (when `view` is given)
 * names a field the schema lacks, is a warning.
 */
export function readIdField(
  typeName: string,
  places: readonly unknown[],
  view: ObjectView | undefined,
  where: string,
  warnings: string[],
): string | undefined {
  const value = places
    .map((p) => (isObject(p) ? p['x-tend-id-field'] : undefined))
    .find((v) => v !== undefined);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '' || keyPathSegments(value).includes('')) {
    warnings.push(
      `${typeName}: x-tend-id-field on ${where} must be a field name or a dotted path to one (user.login), not ${JSON.stringify(value)}; ignored`,
    );
    return undefined;
  }
  if (view !== undefined && !viewHasKeyPath(view, value)) {
    warnings.push(
      `${typeName}: x-tend-id-field on ${where} names ${value}, which is not a field of it; ignored`,
    );
    return undefined;
  }
  return value;
}
