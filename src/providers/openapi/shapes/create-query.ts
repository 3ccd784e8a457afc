// Creates whose fields travel in the query string (`POST /plugins/pull?remote=…&name=…`), and
// creates whose body is an array rather than an object: both become fields of the type's desired
// spec, and object access (access/collection.ts) splits them back out when it sends the create.
// See decision 0030.
import { setKey } from '../../../core/index.js';
import type { JsonSchema } from '../../../core/index.js';
import { SENSITIVE_ANNOTATIONS } from '../fields/annotations.js';
import { isObject, objectView } from '../fields/schema-view.js';

/** One query parameter of a create, and the field of the desired spec holding its value. */
export interface QueryField {
  /** The parameter's name in the query string, as the document writes it. */
  readonly param: string;
  /** The field of the spec (the read's property when the read shows it, e.g. `Name` for `name`). */
  readonly field: string;
  /** Whether the read answers the field, so it is compared; otherwise it is write-only. */
  readonly readBack: boolean;
  /** How the pairing was found, for inspect. */
  readonly why: string;
}

/** What a create sends outside a JSON object body. */
export interface CreateQuery {
  /** The query parameters sent with the create, each from its field; empty when none. */
  readonly params: readonly QueryField[];
  /** The field whose value is the whole body, when the create's body is an array. */
  readonly bodyField?: string;
  /** Query parameters of the create that are not fields, and why (for inspect). */
  readonly skipped: readonly string[];
  /** True when the create takes no body at all: its fields all travel in the query. */
  readonly noBody?: boolean;
  /**
   * Parameters of the create's path above the collection's own (`{team}` of `POST
   * /teams/{team}/widgets` for objects listed at `/widgets`, scoped-create.ts), each filled from the
   * field of the object named like it; absent when none.
   */
  readonly pathFields?: readonly { readonly param: string; readonly field: string }[];
}

/** The query parameters of an operation, its path item's first (an operation's own win). */
function queryParams(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const list of [pathItem['parameters'], op['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (isObject(p) && p['in'] === 'query' && typeof p['name'] === 'string')
        out.set(p['name'], p);
    }
  }
  return out;
}

/**
 * True when a create without a request body still has fields: a required query parameter, or a
 * declared `x-tend-query-fields`.
 */
export function queryOnlyCreate(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
): boolean {
  if (isObject(op['x-tend-query-fields'])) return true;
  return [...queryParams(pathItem, op).values()].some((p) => p['required'] === true);
}

/** The one read property named like `param` but for case, or undefined when none or several. */
function readPropertyLike(param: string, readFields: readonly string[]): string | undefined {
  const lower = param.toLowerCase();
  const like = readFields.filter((f) => f !== param && f.toLowerCase() === lower);
  return like.length === 1 ? like[0] : undefined;
}

/**
 * The fields of a create that are not properties of a JSON object body: its query parameters that
 * are required or that the read answers as a property of exactly the same name (a property named
 * alike but for case, `name` and `Name`, is only noted: the read may show another value), or the ones `x-tend-query-fields` names (`{param: field}`; a declaration replaces the
 * inference); and an array body, held by the field `x-tend-body-field` names (else the name the
 * document gave the body, `x-codegen-request-body-name`, else `body`). A parameter the body already
 * has as a field is never taken. A query field's schema is its parameter's, with the parameter's own
 * secret annotations (`x-tend-sensitive` beside `in: query`): a secret there is a secret field, whose
 * value the URL carries (inspect says so, decision 0032). Pure: odd declarations become warnings and
 * are ignored.
 */
export function createQueryOf(args: {
  readonly typeName: string;
  /** The create as inspect names it (`POST /plugins/pull`). */
  readonly where: string;
  readonly pathItem: Record<string, unknown>;
  readonly op: Record<string, unknown>;
  /** The create's body schema (undefined when it takes none). */
  readonly body: JsonSchema | undefined;
  /** The read's top-level properties. */
  readonly readFields: readonly string[];
  /**
   * The create's path parameters the collection path lacks (`{team}` of a create in a scope), each a
   * field when the read answers a property of exactly its name, sent in the path.
   */
  readonly scopeParams?: readonly string[];
  readonly warnings: string[];
}): { readonly query?: CreateQuery; readonly schema: JsonSchema | undefined } {
  const { typeName, where, op, warnings } = args;
  const isArray = isObject(args.body) && args.body['type'] === 'array';
  const declaredBody = op['x-tend-body-field'];
  let bodyField: string | undefined;
  if (declaredBody !== undefined) {
    if (typeof declaredBody !== 'string' || declaredBody === '') {
      warnings.push(
        `${typeName}: ${where}: x-tend-body-field must be a field name (the field holding the array body); ignored`,
      );
    } else if (!isArray) {
      warnings.push(
        `${typeName}: ${where}: x-tend-body-field names ${declaredBody}, but the body is not an array (its fields are the type's fields already); ignored`,
      );
    } else {
      bodyField = declaredBody;
    }
  }
  if (isArray && bodyField === undefined) {
    const named = op['x-codegen-request-body-name'];
    bodyField = typeof named === 'string' && named !== '' ? named : 'body';
  }
  const bodyFields =
    args.body !== undefined && !isArray ? Object.keys(objectView(args.body).properties) : [];
  const taken = new Set<string>([...bodyFields, ...(bodyField !== undefined ? [bodyField] : [])]);

  const params = queryParams(args.pathItem, op);
  const fields: QueryField[] = [];
  const skipped: string[] = [];
  const declared = op['x-tend-query-fields'];
  const take = (param: string, field: string, why: string): void => {
    if (taken.has(field)) {
      skipped.push(`${param}: the body has a field ${field} already`);
      return;
    }
    taken.add(field);
    fields.push({ param, field, readBack: args.readFields.includes(field), why });
  };
  if (declared !== undefined && !isObject(declared)) {
    warnings.push(
      `${typeName}: ${where}: x-tend-query-fields must map each query parameter to the field holding it ({name: Name}); ignored`,
    );
  }
  if (isObject(declared)) {
    for (const [param, field] of Object.entries(declared)) {
      if (!params.has(param)) {
        warnings.push(
          `${typeName}: ${where}: x-tend-query-fields names ${param}, which is not a query parameter of the create (it has ${params.size > 0 ? [...params.keys()].join(', ') : 'none'}); ignored`,
        );
      } else if (typeof field !== 'string' || field === '') {
        warnings.push(
          `${typeName}: ${where}: x-tend-query-fields: ${param} must name the field holding its value; ignored`,
        );
      } else {
        take(param, field, 'x-tend-query-fields');
      }
    }
    for (const param of params.keys()) {
      if (!(param in declared)) skipped.push(`${param}: not in x-tend-query-fields`);
    }
  } else {
    for (const [param, p] of params) {
      const like = readPropertyLike(param, args.readFields);
      if (taken.has(param)) {
        skipped.push(`${param}: the body has a field ${param} already`);
      } else if (args.readFields.includes(param)) {
        take(param, param, `the read answers it as ${param}`);
      } else if (p['required'] === true) {
        take(param, param, 'required');
      } else if (like !== undefined) {
        // Named alike is no proof of the same value (Docker answers a container's name as /name).
        skipped.push(
          `${param}: optional; the read has ${like}: if it holds this value, declare x-tend-query-fields: {${param}: ${like}}`,
        );
      } else {
        skipped.push(
          `${param}: optional, and the read has no field of that name; if it is one, declare x-tend-query-fields`,
        );
      }
    }
  }
  const pathFields = (args.scopeParams ?? [])
    .filter((p) => args.readFields.includes(p) && !bodyFields.includes(p))
    .map((p) => ({ param: p, field: p }));
  if (fields.length === 0 && bodyField === undefined && pathFields.length === 0) {
    return { ...(skipped.length > 0 ? { query: { params: [], skipped } } : {}), schema: args.body };
  }

  // The fields as the desired spec declares them: the body's (or the array as one field), then the
  // query's, each with its parameter's schema and description; one not read back is write-only.
  const base: Record<string, unknown> =
    args.body !== undefined && !isArray ? { ...args.body } : { type: 'object' };
  const properties: Record<string, unknown> = isObject(base['properties'])
    ? { ...base['properties'] }
    : {};
  const required = Array.isArray(base['required']) ? [...(base['required'] as unknown[])] : [];
  const define = (
    field: string,
    schema: unknown,
    description: unknown,
    readBack: boolean,
    annotations?: Record<string, unknown>,
  ) => {
    const s: Record<string, unknown> = isObject(schema) ? { ...schema } : { type: 'string' };
    if (typeof description === 'string' && s['description'] === undefined) {
      s['description'] = description;
    }
    if (!readBack) s['writeOnly'] = true;
    // A parameter marked secret as a whole (`x-tend-sensitive` beside `in: query`) is a secret field.
    for (const a of SENSITIVE_ANNOTATIONS) {
      if (annotations?.[a] !== undefined && s[a] === undefined) s[a] = annotations[a];
    }
    Object.defineProperty(properties, field, { value: s, enumerable: true, writable: true });
  };
  if (bodyField !== undefined) {
    define(
      bodyField,
      args.body,
      `The request body of ${where}`,
      args.readFields.includes(bodyField),
    );
  }
  for (const f of fields) {
    const p = params.get(f.param)!;
    define(f.field, p['schema'], p['description'], f.readBack, p);
    if (p['required'] === true && !required.includes(f.field)) required.push(f.field);
  }
  // A scope parameter is always needed: the create's path cannot be sent without it.
  for (const f of pathFields) {
    define(f.field, pathParamSchema(args.pathItem, op, f.param), `{${f.param}} of ${where}`, true);
    if (!required.includes(f.field)) required.push(f.field);
  }
  const schema: Record<string, unknown> = { ...base, type: 'object', properties };
  if (required.length > 0) schema['required'] = required;
  else delete schema['required'];
  return {
    query: {
      params: fields,
      ...(bodyField !== undefined ? { bodyField } : {}),
      skipped,
      ...(args.body === undefined ? { noBody: true } : {}),
      ...(pathFields.length > 0 ? { pathFields } : {}),
    },
    schema,
  };
}

/** The schema of a path parameter as the operation (or its path item) declares it; else a string. */
function pathParamSchema(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
  name: string,
): unknown {
  for (const list of [op['parameters'], pathItem['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (isObject(p) && p['in'] === 'path' && p['name'] === name && isObject(p['schema'])) {
        return p['schema'];
      }
    }
  }
  return { type: 'string' };
}

/**
 * Splits a create's fields into what is sent where: the query parameters (scalars as text; a field
 * without a value is not sent) and the body (the array field's value, or the other fields).
 */
export function splitCreate(
  query: CreateQuery | undefined,
  fields: Record<string, unknown>,
): { readonly query?: Record<string, string>; readonly body: unknown } {
  if (query === undefined) return { body: fields };
  const sent: Record<string, string> = {};
  const inQuery = new Set(query.params.map((p) => p.field));
  for (const p of query.params) {
    const v = fields[p.field];
    if (v === undefined || v === null) continue;
    setKey(sent, p.param, typeof v === 'string' ? v : JSON.stringify(v));
  }
  for (const p of query.pathFields ?? []) inQuery.add(p.field);
  let body: unknown;
  if (query.noBody === true) {
    body = undefined;
  } else if (query.bodyField !== undefined) {
    body = fields[query.bodyField];
  } else {
    const rest: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) {
      if (!inQuery.has(k)) Object.defineProperty(rest, k, { value: v, enumerable: true });
    }
    body = rest;
  }
  return { ...(Object.keys(sent).length > 0 ? { query: sent } : {}), body };
}
