import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type * as AjvModule from 'ajv/dist/2020.js';
import type formatsModule from 'ajv-formats';
import { findReferences, valueAt } from '../core/index.js';
import type { JsonSchema, ResourceTypeInfo } from '../core/index.js';
import { allowedProperties, closeSchema } from './close-schema.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { didYouMean, listOf } from './suggest.js';

/** One schema violation in a resource's spec. */
export interface SpecProblem {
  /** `schema.unknown_field`, `schema.type`, `schema.enum`, `schema.required` or `schema.invalid`. */
  readonly code: string;
  readonly message: string;
  /** Below `spec`: the offending field (for `schema.required`, the missing one). */
  readonly path: readonly PathSegment[];
  /** Whether the problem is the field's key (unknown, missing) or its value. */
  readonly target: 'key' | 'value';
}

/** Validates specs against resource type schemas; compiled schemas are cached per schema object. */
export interface SpecValidator {
  /**
   * The schema violations of `spec`, or `{ unavailable }` when the type's schema itself cannot be
   * compiled (a provider problem, not the user's). Nothing is reported at or below the `exempt`
   * paths (fields another rule judges, such as secret references).
   */
  validate(
    info: ResourceTypeInfo,
    spec: Readonly<Record<string, unknown>>,
    exempt?: readonly (readonly PathSegment[])[],
  ): SpecProblem[] | { unavailable: string };
}

/** OpenAPI formats with no JSON Schema meaning: accepted as they are (types still apply). */
const OPENAPI_FORMATS = ['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'];

function pointerSegments(pointer: string, spec: unknown): PathSegment[] {
  if (pointer === '') return [];
  const out: PathSegment[] = [];
  let cur: unknown = spec;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      out.push(Number(seg));
      cur = cur[Number(seg)];
    } else {
      out.push(seg);
      cur =
        cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
    }
  }
  return out;
}

function startsWith(path: readonly PathSegment[], prefix: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => String(p) === String(path[i]));
}

function same(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  return a.length === b.length && startsWith(a, b);
}

/** A value for a message, shortened: validation never prints long blobs. */
function show(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function given(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return `${Number.isInteger(v) ? 'integer' : 'number'} ${show(v)}`;
  if (typeof v === 'object') return 'object';
  return `${typeof v} ${show(v)}`;
}

/** Paths where schema errors are not the user's problem (see `validate`). */
function exemptions(info: ResourceTypeInfo, spec: Readonly<Record<string, unknown>>) {
  const opaque: PathSegment[][] = [];
  const textWithRefs: PathSegment[][] = [];
  for (const ref of findReferences(spec).refs) {
    if (valueAt(spec, ref.at) === ref.raw) opaque.push([...ref.at]);
    else textWithRefs.push([...ref.at]);
  }
  for (const field of [...info.sensitive, ...info.outputOnly]) {
    const path = field.split('.');
    if (valueAt(spec, path) !== undefined) opaque.push(path);
  }
  return { opaque, textWithRefs };
}

function toProblem(
  e: ErrorObject,
  spec: Readonly<Record<string, unknown>>,
  root: JsonSchema,
): SpecProblem {
  const at = pointerSegments(e.instancePath, spec);
  const field = (path: readonly PathSegment[]) => `\`${formatPath(['spec', ...path])}\``;
  const value = valueAt(spec, at);
  switch (e.keyword) {
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const params = e.params as { additionalProperty?: string; unevaluatedProperty?: string };
      const name = params.additionalProperty ?? params.unevaluatedProperty ?? '';
      const allowed = allowedProperties(e.parentSchema, root).sort();
      const where = at.length === 0 ? 'spec' : field(at);
      return {
        code: 'schema.unknown_field',
        message: `unknown field \`${name}\` in ${where}; allowed fields: ${listOf(allowed)}.${didYouMean(name, allowed)}`,
        path: [...at, name],
        target: 'key',
      };
    }
    case 'required': {
      const name = (e.params as { missingProperty: string }).missingProperty;
      return {
        code: 'schema.required',
        message: `missing required field ${field([...at, name])}`,
        path: [...at, name],
        target: 'key',
      };
    }
    case 'type': {
      const t = (e.params as { type: string | string[] }).type;
      const expected = (Array.isArray(t) ? t : String(t).split(',')).join(' or ');
      return {
        code: 'schema.type',
        message: `${field(at)} must be ${expected}, got ${given(value)}`,
        path: at,
        target: 'value',
      };
    }
    case 'enum':
    case 'const': {
      const allowed =
        e.keyword === 'enum'
          ? (e.params as { allowedValues: unknown[] }).allowedValues
          : [(e.params as { allowedValue: unknown }).allowedValue];
      const names = allowed.map((a) => (typeof a === 'string' ? a : show(a)));
      const suggestion = typeof value === 'string' ? didYouMean(value, names) : '';
      return {
        code: 'schema.enum',
        message: `${field(at)} must be one of ${listOf(names)}; got ${show(value)}.${suggestion}`,
        path: at,
        target: 'value',
      };
    }
    default:
      return {
        code: 'schema.invalid',
        message: `${field(at)} ${e.message ?? `fails ${e.keyword}`}`,
        path: at,
        target: 'value',
      };
  }
}

/**
 * Creates a validator (Ajv, JSON Schema 2020-12, which is also what OpenAPI 3.1 uses) that checks a
 * spec against its type's closed schema (see closeSchema) and reports problems at the field they
 * concern. Errors are dropped where the schema cannot judge yet or another check owns the field:
 * - at or below a value that is a whole `${…}` reference (its type is known only once the target
 *   exists), and for every keyword but `type` on text with embedded references;
 * - at or below sensitive fields (secret references are checked by the secret rules) and output-only
 *   fields (reported as `schema.output_only`), when they are written, and at or below the paths the
 *   caller exempts.
 */
export function createSpecValidator(): SpecValidator {
  // Made on the first spec to check: a load whose files all validated before (decision 0029)
  // neither loads Ajv nor compiles its meta-schema.
  let made: Ajv2020 | undefined;
  const ajvOf = (): Ajv2020 => {
    if (made) return made;
    const require = createRequire(import.meta.url);
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof AjvModule;
    const formats = require('ajv-formats') as typeof formatsModule;
    const ajv = new Ajv({ strict: false, allErrors: true, verbose: true, logger: false });
    formats.default(ajv);
    for (const f of OPENAPI_FORMATS) ajv.addFormat(f, true);
    return (made = ajv);
  };
  const cache = new WeakMap<
    JsonSchema,
    { fn: ValidateFunction; root: JsonSchema } | { unavailable: string }
  >();

  const compiled = (schema: JsonSchema) => {
    let entry = cache.get(schema);
    if (!entry) {
      const root = closeSchema(schema);
      try {
        entry = { fn: ajvOf().compile(root), root };
      } catch (e) {
        entry = { unavailable: e instanceof Error ? e.message : String(e) };
      }
      cache.set(schema, entry);
    }
    return entry;
  };

  return {
    validate(info, spec, exempt = []) {
      const entry = compiled(info.schema);
      if ('unavailable' in entry) return { unavailable: entry.unavailable };
      if (entry.fn(spec)) return [];
      const { opaque, textWithRefs } = exemptions(info, spec);
      for (const p of exempt) opaque.push([...p]);
      const problems: SpecProblem[] = [];
      const seen = new Set<string>();
      for (const e of entry.fn.errors ?? []) {
        const p = toProblem(e, spec, entry.root);
        if (opaque.some((o) => startsWith(p.path, o))) continue;
        if (p.code !== 'schema.type' && textWithRefs.some((t) => same(p.path, t))) continue;
        const key = `${p.code} ${formatPath(p.path)} ${p.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        problems.push(p);
      }
      return problems;
    },
  };
}
