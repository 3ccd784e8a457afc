import type { IdentityStrategy } from '../../core/index.js';
import type { AbsentWhen } from './fields/object-annotations.js';
import { TendError, assertNoForbiddenKeys, setKey } from '../../core/index.js';
import type { ImportExclusion, NormalizeOp } from './fields/annotations.js';
import { normalizeOps } from './fields/annotations.js';
import type { DerivedType, UnmappedPath } from './derive-types.js';
import { deriveTypes } from './derive-types.js';
import type { LoadDocumentOptions } from './document/load-document.js';
import { loadOpenApiDocument } from './document/load-document.js';
import type { Pagination } from './shapes/pagination.js';
import { providerParams } from './provider-parameters.js';
import { hasType, isObject, objectView } from './fields/schema-view.js';
import type { TypeNeeds } from './needs.js';
import { createBody, identityNeeds } from './needs.js';
import { paramsOf } from './shapes/path-pairing.js';

/** One operation of a type as inspect reports it. */
export interface InspectedOperation {
  readonly method: string;
  /** The path as the document writes it. */
  readonly path: string;
  /** Set when the operation is off the plain collection or item path: how it was assigned. */
  readonly assigned?: string;
  /** Path parameters filled from fields of the object, not its id (`x-tend-key-fields` on an update). */
  readonly addressedBy?: Readonly<Record<string, string>>;
}

/** One resource type as `tend providers inspect` reports it. */
export interface InspectedType {
  readonly name: string;
  /** Where objects are listed and created (for a sub-collection: the parent's item path). */
  readonly collectionPath: string;
  readonly itemPath: string;
  /** Path parameters that always take one value (`x-tend-parent-values`). */
  readonly fixed: Readonly<Record<string, string>>;
  /** The parent type and the declared field holding the parent's id, for nested types. */
  readonly parent?: { readonly type: string; readonly field: string };
  /** Set for a sub-collection changed through its parent's PATCH (or PUT). */
  readonly embeddedIn?: {
    readonly field: string;
    readonly method: string;
    readonly op?: { readonly field: string; readonly replace: string; readonly delete: string };
  };
  readonly identity: IdentityStrategy | null;
  /** Why the type has no identity (creation is then refused). */
  readonly identityReason?: string;
  /**
   * For a type without an identity: what inspect would need, as one line naming the overlay keys to
   * write (with a target ready to paste) or the probe to run (needs.ts).
   */
  readonly needs?: TypeNeeds;
  /** For natural-key identity: the key fields, parents first. */
  readonly naturalKey?: readonly string[];
  readonly idField: string;
  /**
   * Set when one object is addressed by several item path parameters together
   * (`/buckets/{clusterId}/{bucket}`): each parameter, the field holding it, and how that was found.
   * An object's id is then their values, each URI-encoded, joined by `/`.
   */
  readonly itemKey?: readonly {
    readonly param: string;
    readonly field: string;
    readonly why: string;
  }[];
  readonly idempotencyKey: boolean;
  /** Where Tend's ownership marker goes (a field or dotted path), and in what form. */
  readonly markerField?: string;
  /** What the marker field holds: a string map, a list of strings, or free text. */
  readonly markerKind?: 'map' | 'list' | 'text';
  /** Why the type has its identity, or none (the precedence is in docs/onboard-rest-api.md). */
  readonly identityWhy: string;
  /** Every operation the type uses, off the plain paths included. */
  readonly operations: {
    readonly list: InspectedOperation;
    readonly read: InspectedOperation;
    readonly create: InspectedOperation;
    readonly update: InspectedOperation | null;
    /** Null when the API offers no DELETE for these objects (`noDelete` says why). */
    readonly delete: InspectedOperation | null;
  };
  /**
   * How a change is sent: `merge` (PATCH, or a POST on the item path that updates, with the changed
   * fields), `replace` (PUT with the whole object), `partial` (PUT with the changed fields,
   * `x-tend-partial-update`), `through-parent` (a sub-collection), or `none` (nothing changes in
   * place: every writable field is create-only).
   */
  readonly updateMode: 'merge' | 'replace' | 'partial' | 'through-parent' | 'none';
  /** Why a POST on the item path was taken for the update (absent for PATCH and PUT). */
  readonly updateWhy?: string;
  /**
   * Set when the API offers no DELETE for these objects: where Tend looked. Tend never deletes one:
   * a removed resource's delete is blocked in the plan.
   */
  readonly noDelete?: string;
  /** The properties wrapping answers (`{"server": {…}}`); absent where answers are not wrapped. */
  readonly envelope: { readonly list?: string; readonly read?: string; readonly create?: string };
  /**
   * The properties wrapping the fields Tend sends (`{"group": {…}}`): in the create's body, in the
   * update's, and how each was found; absent where the fields are the body.
   */
  readonly requestEnvelope?: {
    readonly create?: string;
    readonly update?: string;
    readonly why: readonly string[];
  };
  /** A create body of one object property not taken as a wrapper: what to declare if it wraps. */
  readonly requestEnvelopeNote?: string;
  /**
   * What the create sends outside a JSON object body: `query`, each query parameter and the field
   * holding it (`readBack`: compared with the read, else write-only); `bodyField`, the field whose
   * value is an array body; `skipped`, the create's query parameters that are not fields, and why.
   */
  readonly createQuery?: {
    readonly query: readonly {
      readonly param: string;
      readonly field: string;
      readonly readBack: boolean;
      readonly why: string;
    }[];
    readonly bodyField?: string;
    readonly skipped: readonly string[];
    /** The create's path parameters above the collection's, each from the field named like it. */
    readonly pathFields?: readonly { readonly param: string; readonly field: string }[];
  };
  /**
   * The sensitive fields the create sends in its query string, each with its parameter: the value
   * travels in the URL, which the platform's access logs and proxies may keep. Absent when none.
   */
  readonly sensitiveInQuery?: readonly { readonly param: string; readonly field: string }[];
  /** How the list is paged (null: one answer); `paginationNote` says why a paged look is not followed. */
  readonly pagination: Pagination | null;
  readonly paginationNote?: string;
  /**
   * Path parameters whose value comes from the Provider document's `parameters:` (not fixed, not a
   * managed parent): the type is available only once they have one.
   */
  readonly parameters: readonly string[];
  readonly create: { readonly method: string; readonly path: string };
  /** The in-place update; null when nothing changes in place (every writable field is create-only). */
  readonly update: {
    readonly method: string;
    readonly path: string;
    readonly partial: boolean;
  } | null;
  readonly delete: { readonly method: string; readonly path: string } | null;
  readonly createOnly: readonly string[];
  readonly outputOnly: readonly string[];
  readonly serverOwned: readonly string[];
  readonly writeOnly: readonly string[];
  readonly sensitive: readonly string[];
  /** The fields a desired spec may declare (parents included). */
  readonly fields: readonly string[];
  readonly required: readonly string[];
  /** Declared normalisations by field. */
  readonly normalize: Readonly<Record<string, readonly NormalizeOp[]>>;
  readonly lifecycle: 'platform' | 'annotations';
  /** Objects the platform owns, which `tend import` leaves out (`x-tend-import-exclude`). */
  readonly importExclude: readonly ImportExclusion[];
  /** States in which an object counts as gone (`x-tend-absent-when`); absent when none. */
  readonly absentWhen?: readonly AbsentWhen[];
  /** The field of the create answer holding the new id (`x-tend-id-field` on the POST). */
  readonly createIdField?: string;
  /** How parent parameters the create body repeats were kept apart (renamed, or sent in the body). */
  readonly parentNotes?: readonly string[];
}

/** What Tend would manage from a document: `tend providers inspect`. */
export interface InspectReport {
  readonly spec: string;
  readonly overlay?: string;
  readonly title?: string;
  /** The OpenAPI version read (after conversion). */
  readonly version: string;
  readonly convertedFrom?: string;
  readonly types: readonly InspectedType[];
  readonly unmapped: readonly UnmappedPath[];
  readonly lifecycleEndpoint?: string;
  readonly auditFeed?: string;
  /** True when the document says the API's reads see its writes at once (`x-tend-consistent-reads`). */
  readonly consistentReads: boolean;
  readonly warnings: readonly string[];
}

/**
 * Loads a document (with its overlay) and reports what Tend would manage from it. Sends nothing but
 * the document fetch. A document that cannot be used at all is a TendError saying why; anything
 * unexpected inside is turned into one too (`inspect.failed`), never left as a bare exception.
 */
export async function inspectOpenApi(
  spec: string,
  options: LoadDocumentOptions = {},
): Promise<InspectReport> {
  const doc = await loadOpenApiDocument(spec, options);
  assertNoForbiddenKeys(doc.document, `the OpenAPI document ${doc.location}`);
  try {
    const derived = deriveTypes(doc.document);
    const info = doc.document['info'];
    const title = isObject(info) && typeof info['title'] === 'string' ? info['title'] : undefined;
    return {
      spec: doc.location,
      ...(doc.overlay !== undefined ? { overlay: doc.overlay } : {}),
      ...(title !== undefined ? { title } : {}),
      version: doc.version,
      ...(doc.convertedFrom !== undefined ? { convertedFrom: doc.convertedFrom } : {}),
      types: withNeeds(derived.types.map(inspectType), doc),
      unmapped: derived.unmapped,
      ...(derived.lifecycle ? { lifecycleEndpoint: derived.lifecycle.path } : {}),
      ...(derived.audit ? { auditFeed: derived.audit.path } : {}),
      consistentReads: derived.consistentReads,
      warnings: [...doc.warnings, ...derived.warnings],
    };
  } catch (e) {
    // deriveTypes is total by contract; if it ever throws, say so plainly instead of a stack trace.
    throw new TendError(
      'inspect.failed',
      `${doc.location}: cannot derive resource types (${e instanceof Error ? e.message : String(e)}); this is a bug in Tend, please report it with the document`,
      { phase: 'load', cause: e },
    );
  }
}

/** Each type without an identity with what inspect would need to give it one (needs.ts). */
function withNeeds(
  types: readonly InspectedType[],
  doc: {
    readonly document: Record<string, unknown>;
    readonly location: string;
    readonly convertedFrom?: string;
  },
): InspectedType[] {
  const bodies = types.map((t) => createBody(doc.document, t.operations.create));
  return types.map((t) => {
    if (t.identity !== null) return t;
    const scope = paramsOf(t.collectionPath).filter((p) => !Object.hasOwn(t.fixed, p));
    // A parent's field and a scope sent in the create's path are the key's scope, never its field.
    const inPath = (t.createQuery?.pathFields ?? []).map((p) => p.field);
    const own = (f: string) => f !== t.parent?.field && !scope.includes(f) && !inPath.includes(f);
    const needs = identityNeeds({
      name: t.name,
      document: doc.document,
      spec: doc.location,
      ...(doc.convertedFrom !== undefined ? { convertedFrom: doc.convertedFrom } : {}),
      create: t.operations.create,
      fields: t.fields.filter(own),
      required: t.required.filter(own),
      wrapped: t.requestEnvelope?.create !== undefined,
      scope,
      sharedBody: (schema) => bodies.filter((b) => b === schema).length > 1,
    });
    return { ...t, needs };
  });
}

function inspectType(t: DerivedType): InspectedType {
  const i = t.info;
  const fixed: Record<string, string> = {};
  for (const p of t.params) if (p.kind === 'fixed') setKey(fixed, p.param, p.value);
  const view = objectView(i.schema);
  const normalize: Record<string, NormalizeOp[]> = {};
  for (const [field, prop] of Object.entries({
    ...objectView(t.readSchema).properties,
    ...view.properties,
  })) {
    const { ops } = normalizeOps(prop);
    if (ops.length > 0) setKey(normalize, field, ops);
  }
  const op = (o: { method: string; path: string }) => ({ method: o.method, path: o.path });
  const full = (o: {
    method: string;
    path: string;
    assigned?: string;
    addressedBy?: Readonly<Record<string, string>>;
  }): InspectedOperation => ({
    method: o.method,
    path: o.path,
    ...(o.assigned !== undefined ? { assigned: o.assigned } : {}),
    ...(o.addressedBy !== undefined ? { addressedBy: { ...o.addressedBy } } : {}),
  });
  const markerKind =
    i.markerKind ??
    kindOf(i.markerField === undefined ? undefined : view.properties[i.markerField]);
  const envelope = {
    ...(t.listShape.kind === 'wrapped' && !t.embedded ? { list: t.listShape.field } : {}),
    ...(t.envelope?.read !== undefined ? { read: t.envelope.read } : {}),
    ...(t.envelope?.create !== undefined ? { create: t.envelope.create } : {}),
  };
  const inQuery = (t.createQuery?.params ?? [])
    .filter((p) => i.sensitive.includes(p.field))
    .map((p) => ({ param: p.param, field: p.field }));
  const updateMode: InspectedType['updateMode'] = t.embedded
    ? 'through-parent'
    : t.operations.update === undefined
      ? 'none'
      : t.operations.update.method === 'PATCH' || t.operations.update.method === 'POST'
        ? 'merge'
        : t.partialUpdate
          ? 'partial'
          : 'replace';
  return {
    name: i.name,
    collectionPath: t.collectionPath,
    itemPath: t.itemPath,
    fixed,
    ...(i.parent ? { parent: i.parent } : {}),
    ...(t.embedded
      ? {
          embeddedIn: {
            field: t.embedded.field,
            method: t.embedded.method,
            ...(t.embedded.op ? { op: t.embedded.op } : {}),
          },
        }
      : {}),
    identity: i.identity,
    ...(i.identityReason !== undefined ? { identityReason: i.identityReason } : {}),
    ...(t.keyFields.length > 0 ? { naturalKey: t.keyFields } : {}),
    idField: i.idField,
    ...(t.itemKey !== undefined ? { itemKey: t.itemKey } : {}),
    idempotencyKey: i.idempotencyKey,
    ...(i.markerField !== undefined ? { markerField: i.markerField } : {}),
    ...(markerKind !== undefined ? { markerKind } : {}),
    identityWhy:
      t.identityWhy ??
      (i.identity === null ? `none: ${i.identityReason ?? 'unknown'}` : i.identity),
    operations: {
      list: full(t.operations.list),
      read: full(t.operations.read),
      create: full(t.operations.create),
      update: t.operations.update ? full(t.operations.update) : null,
      delete: t.operations.delete ? full(t.operations.delete) : null,
    },
    updateMode,
    ...(t.updateWhy !== undefined ? { updateWhy: t.updateWhy } : {}),
    ...(i.noDelete !== undefined ? { noDelete: i.noDelete } : {}),
    envelope,
    ...(t.requestEnvelope !== undefined
      ? { requestEnvelope: { ...t.requestEnvelope, why: t.requestEnvelopeWhy ?? [] } }
      : {}),
    ...(t.requestEnvelopeNote !== undefined ? { requestEnvelopeNote: t.requestEnvelopeNote } : {}),
    ...(t.createQuery !== undefined
      ? {
          createQuery: {
            query: t.createQuery.params,
            ...(t.createQuery.bodyField !== undefined
              ? { bodyField: t.createQuery.bodyField }
              : {}),
            skipped: t.createQuery.skipped,
            ...(t.createQuery.pathFields !== undefined
              ? { pathFields: t.createQuery.pathFields }
              : {}),
          },
        }
      : {}),
    ...(inQuery.length > 0 ? { sensitiveInQuery: inQuery } : {}),
    pagination: t.pagination ?? null,
    ...(t.paginationNote !== undefined ? { paginationNote: t.paginationNote } : {}),
    parameters: providerParams(t),
    create: op(t.operations.create),
    update: t.operations.update ? { ...op(t.operations.update), partial: t.partialUpdate } : null,
    delete: t.operations.delete ? op(t.operations.delete) : null,
    createOnly: i.createOnly,
    outputOnly: i.outputOnly,
    serverOwned: t.serverOwned,
    writeOnly: t.writeOnly,
    sensitive: i.sensitive,
    fields: Object.keys(view.properties),
    required: view.required,
    normalize,
    lifecycle: i.lifecycle,
    importExclude: t.importExclude,
    ...(t.absentWhen !== undefined && t.absentWhen.length > 0 ? { absentWhen: t.absentWhen } : {}),
    ...(t.createIdField !== undefined ? { createIdField: t.createIdField } : {}),
    ...(t.parentNotes !== undefined ? { parentNotes: t.parentNotes } : {}),
  };
}

/** What a marker field holds, from its schema. */
function kindOf(prop: unknown): 'map' | 'list' | 'text' | undefined {
  if (prop === undefined) return undefined;
  if (hasType(prop, 'array')) return 'list';
  if (hasType(prop, 'string')) return 'text';
  if (hasType(prop, 'object') || (isObject(prop) && prop['additionalProperties'] !== undefined)) {
    return 'map';
  }
  return undefined;
}
