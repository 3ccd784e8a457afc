import type { IdentityStrategy, JsonSchema, ResourceTypeInfo } from '../../core/index.js';
import type { ObjectView } from './schema-view.js';
import {
  acyclicCopy,
  hasFlag,
  hasType,
  isObject,
  jsonMedia,
  objectView,
  successSchema,
  withoutProperties,
} from './schema-view.js';

/** The HTTP methods a resource type uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One operation of a resource type: what to send where. */
export interface OperationRef {
  readonly method: HttpMethod;
  /** The path template as written in the document, e.g. `/volumes/{id}`. */
  readonly path: string;
  readonly operationId?: string;
  /** The media type of the request body, for operations that take one. */
  readonly contentType?: string;
}

/** How a list response carries its objects: a bare array, or an array inside an object. */
export type ListShape =
  | { readonly kind: 'array' }
  | { readonly kind: 'wrapped'; readonly field: string }
  | { readonly kind: 'unknown' };

/** A resource type found in a document, with everything needed to call it. */
export interface DerivedType {
  readonly info: ResourceTypeInfo;
  /** The collection path, e.g. `/volumes`. */
  readonly collectionPath: string;
  /** The item path, e.g. `/volumes/{id}`. */
  readonly itemPath: string;
  /** The item path parameter that takes an object's id. */
  readonly idParam: string;
  readonly operations: {
    readonly list: OperationRef;
    readonly read: OperationRef;
    readonly create: OperationRef;
    /** PATCH when offered, else PUT; absent when the API cannot change an object in place. */
    readonly update?: OperationRef;
    readonly delete: OperationRef;
  };
  readonly listShape: ListShape;
  /** The idempotency header exactly as the create operation names it, when it takes one. */
  readonly idempotencyHeader?: string;
  /** Top-level fields a client may write (the create body without read-only fields). */
  readonly writableFields: readonly string[];
}

/** A path that did not become (part of) a resource type, and why. */
export interface UnmappedPath {
  readonly path: string;
  readonly reason: string;
}

/** Everything `deriveTypes` learned from a document. */
export interface DerivedTypes {
  readonly types: readonly DerivedType[];
  readonly unmapped: readonly UnmappedPath[];
  /** The platform's lifecycle endpoint (`x-tend-lifecycle`), when declared. */
  readonly lifecycle?: { readonly path: string };
  /** The platform's attributed audit feed (`x-tend-audit`), when declared. */
  readonly audit?: { readonly path: string };
  readonly warnings: readonly string[];
}

/** Annotations meaning "changing this field requires a new object". */
export const CREATE_ONLY_ANNOTATIONS = [
  'x-tend-immutable',
  'x-immutable',
  'x-terraform-force-new',
] as const;

/** Annotations marking a field as secret (besides `writeOnly` with `format: password`). */
export const SENSITIVE_ANNOTATIONS = ['x-tend-sensitive', 'x-sensitive'] as const;

/** Field names that can carry Tend's marker, in order of preference. */
export const MARKER_FIELDS = ['tags', 'labels'] as const;

const TYPE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const NESTED = 'nested collections need an overlay (not supported yet)';

/**
 * Finds the resource types of an OpenAPI 3.x document (dereferenced): a collection `/x` with POST and
 * GET paired with an item `/x/{param}` with GET and DELETE. Pure and total: every path it cannot map
 * is listed in `unmapped` with a reason, and odd documents give warnings, never exceptions.
 */
export function deriveTypes(document: Record<string, unknown>): DerivedTypes {
  const warnings: string[] = [];
  const unmapped: UnmappedPath[] = [];
  const types: DerivedType[] = [];

  const lifecycle = extensionPath(document, 'x-tend-lifecycle', warnings);
  const audit = extensionPath(document, 'x-tend-audit', warnings);

  const pathsValue = document['paths'];
  const paths: Record<string, Record<string, unknown>> = {};
  if (isObject(pathsValue)) {
    for (const [p, item] of Object.entries(pathsValue)) {
      if (isObject(item)) paths[p] = item;
      else warnings.push(`path ${p} is not an object; ignored`);
    }
  } else if (pathsValue !== undefined) {
    warnings.push('`paths` is not an object; the document offers no resource types');
  }

  const handled = new Set<string>();
  if (lifecycle) handled.add(lifecycle.path);
  if (audit) handled.add(audit.path);
  const byName = new Map<string, string>();

  for (const collectionPath of Object.keys(paths)) {
    const segments = splitPath(collectionPath);
    const last = segments[segments.length - 1];
    if (last === undefined || isParam(last) || handled.has(collectionPath)) continue;
    const collection = paths[collectionPath]!;
    const itemPaths = Object.keys(paths).filter((p) => isItemPathOf(p, collectionPath));
    if (!operation(collection, 'POST') && itemPaths.length === 0) continue; // not a collection

    const claim = (reason: string): void => {
      for (const p of [collectionPath, ...itemPaths]) {
        handled.add(p);
        unmapped.push({ path: p, reason });
      }
    };

    if (segments.some(isParam)) {
      claim(NESTED);
      continue;
    }
    if (!TYPE_NAME.test(last)) {
      claim(`"${last}" cannot be a resource type name (letters, digits, - and _ only)`);
      continue;
    }
    if (!operation(collection, 'POST')) {
      claim(`no POST on ${collectionPath}: Tend cannot create these objects`);
      continue;
    }
    if (!operation(collection, 'GET')) {
      claim(`no GET on ${collectionPath}: Tend cannot list these objects`);
      continue;
    }
    if (itemPaths.length === 0) {
      claim(`no item path ${collectionPath}/{id}: Tend cannot read or delete one object`);
      continue;
    }
    // Several item paths for one collection are rare; the first complete one wins.
    const itemPath =
      itemPaths.find((p) => operation(paths[p]!, 'GET') && operation(paths[p]!, 'DELETE')) ??
      itemPaths[0]!;
    const item = paths[itemPath]!;
    const missing = (['GET', 'DELETE'] as const).filter((m) => !operation(item, m));
    if (missing.length > 0) {
      const what = missing.includes('GET') ? 'read one object' : 'delete these objects';
      claim(`no ${missing.join(' or ')} on ${itemPath}: Tend cannot ${what}`);
      continue;
    }
    const owner = byName.get(last);
    if (owner !== undefined) {
      claim(`type name "${last}" is already taken by ${owner}`);
      continue;
    }
    const built = buildType(last, collectionPath, collection, itemPath, item, {
      lifecycle: lifecycle !== undefined,
      warnings,
    });
    if (typeof built === 'string') {
      claim(built);
      continue;
    }
    for (const p of [collectionPath, ...itemPaths]) handled.add(p);
    for (const p of itemPaths.filter((p) => p !== itemPath)) {
      unmapped.push({ path: p, reason: `${itemPath} is already the item path of "${last}"` });
    }
    byName.set(last, collectionPath);
    types.push(built);
  }

  for (const p of Object.keys(paths)) {
    if (handled.has(p)) continue;
    const segments = splitPath(p);
    const last = segments[segments.length - 1];
    const parent = '/' + segments.slice(0, -1).join('/');
    let reason =
      'not a resource collection (expected POST and GET on /x, GET and DELETE on /x/{id})';
    if (last !== undefined && isParam(last)) {
      reason = segments.slice(0, -1).some(isParam)
        ? NESTED
        : `no collection path ${parent} with POST for this item path`;
    }
    unmapped.push({ path: p, reason });
  }

  return {
    types,
    unmapped,
    ...(lifecycle ? { lifecycle } : {}),
    ...(audit ? { audit } : {}),
    warnings,
  };
}

interface BuildContext {
  readonly lifecycle: boolean;
  readonly warnings: string[];
}

/** Builds one type from a complete path pair; a string is the reason it cannot be mapped. */
function buildType(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  itemPath: string,
  item: Record<string, unknown>,
  ctx: BuildContext,
): DerivedType | string {
  const post = operation(collection, 'POST')!;
  const body = isObject(post['requestBody'])
    ? jsonMedia(post['requestBody']['content'])
    : undefined;
  if (body === undefined || !isObject(body.schema)) {
    return `POST ${collectionPath} has no JSON request body schema: Tend cannot tell what to send`;
  }
  const cut = (where: string) => (path: string) =>
    ctx.warnings.push(
      `${name}: the ${where} schema is recursive at ${path}; it is not checked below that point`,
    );
  const createSchema = acyclicCopy(body.schema, cut('create')) as JsonSchema;
  const readSchema = acyclicCopy(successSchema(operation(item, 'GET')), cut('read'));
  const create = objectView(createSchema);
  const read = objectView(readSchema);

  const idParam = splitPath(itemPath).at(-1)!.slice(1, -1);
  const readOnlyCreate = names(create, (p) => hasFlag(p, 'readOnly'));
  const outputOnly = unique([...names(read, (p) => hasFlag(p, 'readOnly')), ...readOnlyCreate]);
  const writableFields = Object.keys(create.properties).filter((n) => !readOnlyCreate.includes(n));

  const isSensitive = (p: Record<string, unknown>): boolean =>
    (hasFlag(p, 'writeOnly') && p['format'] === 'password') ||
    SENSITIVE_ANNOTATIONS.some((a) => hasFlag(p, a));
  const sensitive = unique([...names(create, isSensitive), ...names(read, isSensitive)]);

  const isCreateOnly = (p: Record<string, unknown>): boolean =>
    CREATE_ONLY_ANNOTATIONS.some((a) => hasFlag(p, a));
  const annotated = unique([...names(create, isCreateOnly), ...names(read, isCreateOnly)]);

  const patch = operation(item, 'PATCH');
  const put = operation(item, 'PUT');
  const updateOp = patch ?? put;
  const updateMethod: HttpMethod = patch ? 'PATCH' : 'PUT';
  // Without PATCH or PUT nothing changes in place: every writable field is create-only.
  const createOnly = updateOp ? annotated : unique([...annotated, ...writableFields]);

  const idField = idParam in read.properties ? idParam : 'id' in read.properties ? 'id' : idParam;

  const markerField = MARKER_FIELDS.find((f) => {
    const prop = create.properties[f];
    return prop !== undefined && isTagsLike(prop) && !hasFlag(prop, 'readOnly');
  });
  const idempotencyHeader = headerParameter(collection, post, 'idempotency-key');
  const identity = inferIdentity({
    name,
    collectionPath,
    idParam,
    create,
    writableFields,
    markerField,
    idempotencyHeader,
    explicit: [createSchema, readSchema, post],
    warnings: ctx.warnings,
  });

  const description = [createSchema['description'], post['summary'], post['description']].find(
    (d): d is string => typeof d === 'string' && d.trim() !== '',
  );

  const info: ResourceTypeInfo = {
    name,
    ...(description !== undefined ? { description } : {}),
    schema: withoutProperties(createSchema, create, readOnlyCreate),
    identity: identity.identity,
    ...(identity.reason !== undefined ? { identityReason: identity.reason } : {}),
    idField,
    ...(identity.naturalKey !== undefined ? { naturalKey: identity.naturalKey } : {}),
    createOnly,
    outputOnly,
    sensitive,
    ...(markerField !== undefined ? { markerField } : {}),
    lifecycle: ctx.lifecycle ? 'platform' : 'annotations',
    idempotencyKey: identity.idempotencyKey,
  };

  const ref = (method: HttpMethod, path: string, op: Record<string, unknown>): OperationRef => {
    const media = isObject(op['requestBody']) ? jsonMedia(op['requestBody']['content']) : undefined;
    return {
      method,
      path,
      ...(typeof op['operationId'] === 'string' ? { operationId: op['operationId'] } : {}),
      ...(media ? { contentType: media.contentType } : {}),
    };
  };

  return {
    info,
    collectionPath,
    itemPath,
    idParam,
    operations: {
      list: ref('GET', collectionPath, operation(collection, 'GET')!),
      read: ref('GET', itemPath, operation(item, 'GET')!),
      create: ref('POST', collectionPath, post),
      ...(updateOp ? { update: ref(updateMethod, itemPath, updateOp) } : {}),
      delete: ref('DELETE', itemPath, operation(item, 'DELETE')!),
    },
    listShape: listShape(successSchema(operation(collection, 'GET')), name),
    ...(identity.idempotencyKey
      ? { idempotencyHeader: idempotencyHeader ?? 'Idempotency-Key' }
      : {}),
    writableFields,
  };
}

interface IdentityInput {
  readonly name: string;
  readonly collectionPath: string;
  readonly idParam: string;
  readonly create: ObjectView;
  readonly writableFields: readonly string[];
  readonly markerField: string | undefined;
  readonly idempotencyHeader: string | undefined;
  /** Where `x-tend-identity` may be written, in order: create schema, read schema, POST. */
  readonly explicit: readonly unknown[];
  readonly warnings: string[];
}

interface Identity {
  readonly identity: IdentityStrategy | null;
  readonly reason?: string;
  readonly naturalKey?: string;
  readonly idempotencyKey: boolean;
}

const STRATEGIES: readonly IdentityStrategy[] = ['natural-key', 'marker', 'server-id'];

/**
 * How objects of a type are told apart so that a create is never sent twice: an explicit
 * `x-tend-identity`, else the first of natural key, marker, idempotency key that the API offers.
 */
function inferIdentity(input: IdentityInput): Identity {
  const { create, idParam, markerField, idempotencyHeader } = input;
  const hasIdempotency = idempotencyHeader !== undefined;
  const naturalKeyField =
    input.writableFields.includes(idParam) && create.required.includes(idParam)
      ? idParam
      : undefined;

  const explicitValue = input.explicit
    .map((s) => (isObject(s) ? s['x-tend-identity'] : undefined))
    .find((v) => v !== undefined);
  if (explicitValue !== undefined) {
    const strategy = STRATEGIES.find((s) => s === explicitValue);
    if (strategy === undefined) {
      input.warnings.push(
        `${input.name}: x-tend-identity must be one of ${STRATEGIES.join(', ')}, not ${JSON.stringify(explicitValue)}; inferring the identity instead`,
      );
    } else if (strategy === 'natural-key') {
      const named = input.explicit
        .map((s) => (isObject(s) ? s['x-tend-natural-key'] : undefined))
        .find((v): v is string => typeof v === 'string');
      const key = named ?? (idParam in create.properties ? idParam : undefined);
      if (key === undefined || !(key in create.properties)) {
        return {
          identity: null,
          reason: `x-tend-identity is natural-key, but {${idParam}} is not a field of the create body; name the key field with x-tend-natural-key`,
          idempotencyKey: hasIdempotency,
        };
      }
      return { identity: 'natural-key', naturalKey: key, idempotencyKey: hasIdempotency };
    } else if (strategy === 'marker') {
      if (markerField === undefined) {
        return {
          identity: null,
          reason:
            'x-tend-identity is marker, but the create body has no tags or labels field (an object of strings) to carry the marker',
          idempotencyKey: hasIdempotency,
        };
      }
      return { identity: 'marker', idempotencyKey: hasIdempotency };
    } else {
      // The annotation asserts that the platform honours an idempotency key even if undeclared.
      return { identity: 'server-id', idempotencyKey: true };
    }
  }

  if (naturalKeyField !== undefined) {
    return { identity: 'natural-key', naturalKey: naturalKeyField, idempotencyKey: hasIdempotency };
  }
  // A marker is preferred over an idempotency key: a marked object can be looked up after a crash.
  if (markerField !== undefined) return { identity: 'marker', idempotencyKey: hasIdempotency };
  if (hasIdempotency) return { identity: 'server-id', idempotencyKey: true };
  return {
    identity: null,
    reason: `no natural key ({${idParam}} is not a required writable field of the create body), no tags or labels field to carry a marker, and no Idempotency-Key header on POST ${input.collectionPath}; declare x-tend-identity in an overlay`,
    idempotencyKey: false,
  };
}

/** True for a map of strings: `type: object` with `additionalProperties` of `type: string`. */
function isTagsLike(prop: Record<string, unknown>): boolean {
  const extra = prop['additionalProperties'];
  return hasType(prop, 'object') && isObject(extra) && hasType(extra, 'string');
}

function listShape(schema: unknown, typeName: string): ListShape {
  if (hasType(schema, 'array') || (isObject(schema) && isObject(schema['items']))) {
    return { kind: 'array' };
  }
  const view = objectView(schema);
  const arrays = Object.keys(view.properties).filter((n) => hasType(view.properties[n], 'array'));
  if (arrays.length === 1) return { kind: 'wrapped', field: arrays[0]! };
  const known = ['items', 'data', 'results', typeName].find((n) => arrays.includes(n));
  return known !== undefined ? { kind: 'wrapped', field: known } : { kind: 'unknown' };
}

/** The name of a header parameter (matched case-insensitively) of an operation or its path. */
function headerParameter(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
  lowerName: string,
): string | undefined {
  for (const list of [op['parameters'], pathItem['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (
        isObject(p) &&
        p['in'] === 'header' &&
        typeof p['name'] === 'string' &&
        p['name'].toLowerCase() === lowerName
      ) {
        return p['name'];
      }
    }
  }
  return undefined;
}

function extensionPath(
  document: Record<string, unknown>,
  key: string,
  warnings: string[],
): { path: string } | undefined {
  const value = document[key];
  if (value === undefined) return undefined;
  if (isObject(value) && typeof value['path'] === 'string' && value['path'].startsWith('/')) {
    return { path: value['path'] };
  }
  warnings.push(`${key} must be an object with a path starting with /; ignored`);
  return undefined;
}

function operation(
  item: Record<string, unknown>,
  method: HttpMethod,
): Record<string, unknown> | undefined {
  const op = item[method.toLowerCase()];
  return isObject(op) ? op : undefined;
}

function names(view: ObjectView, test: (p: Record<string, unknown>) => boolean): string[] {
  return Object.entries(view.properties)
    .filter(([, p]) => test(p))
    .map(([n]) => n);
}

function unique(list: readonly string[]): string[] {
  return [...new Set(list)];
}

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function isParam(segment: string): boolean {
  return /^\{[^{}]+\}$/.test(segment);
}

function isItemPathOf(path: string, collectionPath: string): boolean {
  const segments = splitPath(path);
  const parent = splitPath(collectionPath);
  return (
    segments.length === parent.length + 1 &&
    parent.every((s, i) => segments[i] === s) &&
    isParam(segments[segments.length - 1]!)
  );
}
