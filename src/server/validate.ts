import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ADDRESS_PATTERN, NOT_AN_ADDRESS } from '../core/index.js';
import type { Schema } from './routes.js';

/** Validators compiled once per schema (the route table's). */
const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false });
const compiled = new WeakMap<Schema, ValidateFunction>();

function validator(schema: Schema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile(schema)));
  return v;
}

/** One problem as a sentence: `body.address: must match pattern …`. */
function describe(where: string, e: ErrorObject): string {
  const path = `${where}${e.instancePath.replace(/\//g, '.')}`;
  if (e.keyword === 'additionalProperties') {
    const p = (e.params as { additionalProperty: string }).additionalProperty;
    return `${path}: unknown property ${p}`;
  }
  if (e.keyword === 'required') {
    const p = (e.params as { missingProperty: string }).missingProperty;
    return `${path}.${p}: is required`;
  }
  if (e.keyword === 'pattern' && (e.params as { pattern: string }).pattern === ADDRESS_PATTERN) {
    // The same sentence the MCP tools give (core/address.ts).
    return `${path}: ${NOT_AN_ADDRESS}`;
  }
  return `${path}: ${e.message ?? 'is invalid'}`;
}

/** Validates `value` (defaults filled in); the problems, none when valid. */
export function check(schema: Schema, value: unknown, where: string): string[] {
  const v = validator(schema);
  if (v(value)) return [];
  return (v.errors ?? []).map((e) => describe(where, e));
}

/**
 * A query string as JSON: a key given twice is a list, `true`/`false` are booleans and digits are
 * numbers when the schema says so (a query carries only strings).
 */
export function queryValues(url: URL, schema: Schema | undefined): Record<string, unknown> {
  const props = (schema?.['properties'] ?? {}) as Record<string, Schema>;
  const out = new Map<string, unknown>();
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    const type = props[key]?.['type'];
    const convert = (s: string): unknown =>
      type === 'boolean'
        ? s === 'true'
          ? true
          : s === 'false'
            ? false
            : s
        : type === 'integer' && /^-?\d+$/.test(s)
          ? Number(s)
          : s;
    out.set(key, all.length > 1 ? all.map(convert) : convert(all[0]!));
  }
  return Object.fromEntries(out);
}
