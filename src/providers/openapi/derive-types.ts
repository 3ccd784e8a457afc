import type { JsonSchema, ResourceTypeInfo } from '../../core/index.js';
import { keyPathSegments, setKey } from '../../core/index.js';
import type { AuditFeed } from './audit-feed.js';
import { auditTypeWarnings, readAuditFeed } from './audit-feed.js';
import type { ImportExclusion } from './fields/annotations.js';
import {
  importExclusions,
  isCreateOnly,
  isOutputOnly,
  isSensitive,
  isServerOwned,
  isWriteOnly,
  unknownTendExtensions,
} from './fields/annotations.js';
import type { FieldRoles } from './fields/field-roles.js';
import { createOnlyFields, fieldRoles, names } from './fields/field-roles.js';
import type { Identity } from './fields/identity.js';
import {
  NAME_LIKE,
  idFieldOf,
  inferIdentity,
  lookupParams,
  withBranchFields,
} from './fields/identity.js';
import type { MarkerLocation } from './fields/marker-location.js';
import { markerInUse, markerLocation } from './fields/marker-location.js';
import type { HttpMethod } from './transport/http-client.js';
import { sendableMedia } from './transport/request-media.js';
import type { AbsentWhen } from './fields/object-annotations.js';
import { readAbsentWhen, readIdField } from './fields/object-annotations.js';
import {
  inferListEnvelope,
  inferObjectEnvelope,
  readEnvelope,
  schemaAtPath,
} from './shapes/envelope.js';
import type { AssembledPaths, RealOperation } from './shapes/irregular-ops.js';
import { assembleOperations } from './shapes/irregular-ops.js';
import { longerName, noItemPathReason, paramsOf } from './shapes/path-pairing.js';
import type {
  CollectionIndex,
  CollectionLayout,
  Creation,
  ItemAccess,
  PathOrigins,
} from './shapes/collection-layout.js';
import {
  collectionIndex,
  collectionLayout,
  creationOf,
  itemAccess,
} from './shapes/collection-layout.js';
import type { ItemKeyPart } from './shapes/item-key.js';
import { itemKeyParts } from './shapes/item-key.js';
import type { ListedFields } from './shapes/list-candidates.js';
import { listCandidates, listCandidatesHint, listedFieldsOf } from './shapes/list-candidates.js';
import type { ItemCreate, PathParam, SettledParents, Singleton } from './shapes/item-create.js';
import {
  itemCreateIdentity,
  keyFieldInRead,
  lastParam,
  settleParentClash,
} from './shapes/item-create.js';
import type { Pagination } from './shapes/pagination.js';
import { inferPagination, readPagination } from './shapes/pagination.js';
import type { CreateQuery } from './shapes/create-query.js';
import { createQueryOf } from './shapes/create-query.js';
import type { CreateRequest, UpdateRequest } from './shapes/write-requests.js';
import { createRequest, updateRequest } from './shapes/write-requests.js';
import type { CutReason, ObjectView } from './fields/schema-view.js';
import {
  SCHEMA_COPY_DEPTH,
  SCHEMA_COPY_NODES,
  acyclicCopy,
  hasType,
  isObject,
  jsonMedia,
  objectView,
  successSchema,
  viewHasKeyPath,
  withoutProperties,
} from './fields/schema-view.js';

export { CREATE_ONLY_ANNOTATIONS, SENSITIVE_ANNOTATIONS } from './fields/annotations.js';

/** One operation of a resource type: what to send where. */
export interface OperationRef {
  readonly method: HttpMethod;
  /** The path template as written in the document, e.g. `/volumes/{id}`. */
  readonly path: string;
  readonly operationId?: string;
  /** The media type of the request body, for operations that take one. */
  readonly contentType?: string;
  /**
   * Set when the operation is not on the type's plain collection or item path (`POST
   * /containers/create`): how it was assigned (`x-tend-op create`, or the generic rule inferred).
   */
  readonly assigned?: string;
  /**
   * Path parameters filled from fields of the object as last observed, not from its id
   * (`x-tend-key-fields` on a declared update: Discourse's `PUT /u/{username}.json`), by parameter.
   */
  readonly addressedBy?: Readonly<Record<string, string>>;
}

/**
 * How a list response carries its objects: a bare array, or an array inside an object (`field` is a
 * property name or a dotted path; `declared` when `x-tend-envelope` said so).
 */
export type ListShape =
  | { readonly kind: 'array' }
  | { readonly kind: 'wrapped'; readonly field: string; readonly declared?: boolean }
  | { readonly kind: 'unknown' };

/**
 * How the objects of a sub-collection embedded in a parent object are read and changed: they are the
 * items of an array field of the parent's GET, and they change through the parent's PATCH (or PUT)
 * carrying only the items to change, each with an operation marker (PowerDNS rrsets:
 * `{rrsets: [{name, type, …, changetype: REPLACE}]}`).
 */
export interface EmbeddedAccess {
  /** The parent type's name. */
  readonly parentType: string;
  /** The array field of the parent holding the items (in its GET body and in the change body). */
  readonly field: string;
  /** The item fields that tell items of one parent apart, e.g. `[name, type]`. */
  readonly key: readonly string[];
  /** The method on the parent's item path that changes items. */
  readonly method: 'PATCH' | 'PUT';
  /** The per-item operation marker: its field and the values meaning replace and delete. */
  readonly op?: { readonly field: string; readonly replace: string; readonly delete: string };
}

/** A resource type found in a document, with everything needed to call it. */
export interface DerivedType {
  readonly info: ResourceTypeInfo;
  /** The collection path, e.g. `/volumes` (for an embedded type: the parent's item path). */
  readonly collectionPath: string;
  /** The item path, e.g. `/volumes/{id}` (for an embedded type: the parent's item path). */
  readonly itemPath: string;
  /** The item path parameter that takes an object's id. */
  readonly idParam: string;
  readonly operations: {
    readonly list: OperationRef;
    readonly read: OperationRef;
    readonly create: OperationRef;
    /**
     * PATCH when offered, else PUT, else a POST on the item path that updates (update-by-post.ts);
     * absent when the API cannot change an object in place.
     */
    readonly update?: OperationRef;
    /** Absent when the API offers no DELETE for these objects (`noDelete` says where Tend looked). */
    readonly delete?: OperationRef;
  };
  /**
   * The fields the update takes, when it takes only some of the create's (an update by POST): only
   * these are sent on an update; the create's others are create-only.
   */
  readonly updateFields?: readonly string[];
  /** Why the update is what it is, when it was inferred from a POST (for inspect). */
  readonly updateWhy?: string;
  readonly listShape: ListShape;
  /** The idempotency header exactly as the create operation names it, when it takes one. */
  readonly idempotencyHeader?: string;
  /** Top-level fields a client may write (the create body without output-only fields). */
  readonly writableFields: readonly string[];
  /** The path parameters of the collection path, in path order. */
  readonly params: readonly PathParam[];
  /**
   * Declared fields standing for `parent` path parameters, outermost first. An object's id is these
   * values and its own id, each URI-encoded, joined by `/` (`example.org./www.example.org./A`).
   */
  readonly parentFields: readonly string[];
  /** For natural-key identity: the fields whose values together identify an object (parents first). */
  readonly keyFields: readonly string[];
  /** Fields sent on create and never read back: never compared. */
  readonly writeOnly: readonly string[];
  /** Fields the platform changes on its own: never compared, never sent. */
  readonly serverOwned: readonly string[];
  /** Array fields holding an embedded sub-collection (another type's objects): not this type's data. */
  readonly embeddedFields: readonly string[];
  /** The read (GET item) schema as plain data, for normalisation and for spotting spec bugs. */
  readonly readSchema: JsonSchema;
  /** Fields whose empty value means "does not exist" (`x-tend-absent-when-empty`). */
  readonly absentWhenEmpty: readonly string[];
  /** States in which an object counts as gone (`x-tend-absent-when`): never listed, read as absent. */
  readonly absentWhen?: readonly AbsentWhen[];
  /** The field of the create answer holding the new object's id, when it is not the read's id field. */
  readonly createIdField?: string;
  /**
   * Where a listed object holds its id when the list answers another shape than the read (GitHub
   * lists an organisation's members as users, `login`, and reads a membership as `{user: {login}}`):
   * `x-tend-id-field` on the list GET. A listed object without the read's id field is known by it.
   */
  readonly listIdField?: string;
  /**
   * True when the update is a PUT that takes only the fields to change (`x-tend-partial-update`),
   * not the whole object; a PATCH always takes only the changes.
   */
  readonly partialUpdate: boolean;
  /** Set for a sub-collection changed through its parent. */
  readonly embedded?: EmbeddedAccess;
  /**
   * The field of a read object holding the platform's version of it (`x-tend-version-field`, a
   * dotted path such as `metadata.resourceVersion`); absent when the document declares none.
   */
  readonly versionField?: string;
  /**
   * Objects the platform owns, which `tend import` leaves out (`x-tend-import-exclude`). The same
   * rules are on `info.schema` under that key, well-formed, for the import to read.
   */
  readonly importExclude: readonly ImportExclusion[];
  /**
   * The property wrapping the object in the answers of the item GET (`read`) and of the create
   * (`create`), e.g. `server` for `{"server": {…}}`; absent when the answer is the object itself.
   * The list's wrapper is `listShape`.
   */
  readonly envelope?: { readonly read?: string; readonly create?: string };
  /**
   * The property wrapping the fields in the request bodies of the create and of the update
   * (`group` for `{"group": {…}}`, request-envelope.ts); absent when the fields are the body.
   */
  readonly requestEnvelope?: { readonly create?: string; readonly update?: string };
  /** How each request envelope was found, for inspect. */
  readonly requestEnvelopeWhy?: readonly string[];
  /** A create body of one object property not taken as a wrapper: what to declare if it is one. */
  readonly requestEnvelopeNote?: string;
  /**
   * What the create sends outside a JSON object body: fields in its query string, an array body
   * held by one field, and the query parameters that are not fields (create-query.ts).
   */
  readonly createQuery?: CreateQuery;
  /** How the list is paged (declared or inferred); absent when it is one answer. */
  readonly pagination?: Pagination;
  /** Why a list that looks paged is not followed (what to declare); shown by inspect. */
  readonly paginationNote?: string;
  /** Why the type has the identity it has (or has none), in words; shown by inspect. */
  readonly identityWhy?: string;
  /** Set when objects are created at their own item path (`PUT /x/{name}`); see item-create.ts. */
  readonly createAtItem?: ItemCreate;
  /** Set for one object per owner at a fixed path (`/branches/{branch}/protection`). */
  readonly singleton?: Singleton;
  /** Parent fields renamed apart from a create-body field of the same name: field → path parameter. */
  readonly paramAliases?: Readonly<Record<string, string>>;
  /** Parent fields the create body carries too (`site_id`), sent with the parent's value. */
  readonly parentFieldsInBody?: readonly string[];
  /** How parent parameters clashing with create-body fields were settled, for inspect. */
  readonly parentNotes?: readonly string[];
  /**
   * Set when the item path has no GET: one object is read by listing the collection and picking the
   * entry with its id (read-by-list.ts); says why, for inspect.
   */
  readonly readByList?: string;
  /**
   * Set when the objects are addressed by several parameters of the item path together
   * (`/buckets/{clusterId}/{bucket}`): each parameter and the field holding it. The object's own id
   * is their values, each URI-encoded, joined by `/` (item-key.ts).
   */
  readonly itemKey?: readonly ItemKeyPart[];
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
  /** The platform's attributed audit feed (`x-tend-audit`), when declared and usable. */
  readonly audit?: AuditFeed;
  /** True when the document says the API's reads see its writes at once (`x-tend-consistent-reads`). */
  readonly consistentReads: boolean;
  readonly warnings: readonly string[];
}

const TYPE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * Finds the resource types of an OpenAPI 3.x document (dereferenced): a collection `/x` with POST and
 * GET paired with an item `/x/{param}` with GET and DELETE, at any depth when each path parameter
 * above the item has a value (a fixed one, or the id of a parent type); and the sub-collections an
 * overlay declares with `x-tend-embedded`. Pure and total: every path it cannot map is listed in
 * `unmapped` with a reason, and odd documents give warnings, never exceptions. The document holds no
 * `__proto__`, `constructor` or `prototype` key (its callers refuse such a document first).
 *
 * The inference, in order: the root's declarations; the document's paths; irregular operations
 * moved onto the plain collection and item paths (irregular-ops.ts); the collections and the item
 * paths below each (collection-layout.ts); then, shallow paths first so that a parent type exists
 * before its children, each collection made a type (`deriveCollection`) or set aside with a reason;
 * last, every path no type uses explained.
 */
export function deriveTypes(document: Record<string, unknown>): DerivedTypes {
  const warnings: string[] = [];
  const root = readRootDeclarations(document, warnings);
  const documentPaths = collectPaths(document, warnings);
  // Operations off the plain collection and item paths, moved onto them (see irregular-ops).
  const assembled = assembleOperations(documentPaths, warnings);
  const d = startDerivation(documentPaths, assembled, root, warnings);
  for (const collectionPath of d.index.collections) deriveCollection(collectionPath, d);
  explainUnused(d, root);
  if (root.audit) for (const w of auditTypeWarnings(root.audit, d.byName)) warnings.push(w);
  return {
    types: d.types,
    unmapped: d.unmapped,
    ...(root.lifecycle ? { lifecycle: root.lifecycle } : {}),
    ...(root.audit ? { audit: root.audit } : {}),
    consistentReads: root.consistentReads,
    warnings,
  };
}

/** What the document's root declares for the whole API. */
interface RootDeclarations {
  /** The platform's lifecycle endpoint (`x-tend-lifecycle`). */
  readonly lifecycle?: { readonly path: string };
  /** The platform's attributed audit feed (`x-tend-audit`). */
  readonly audit?: AuditFeed;
  /** `x-tend-consistent-reads`. */
  readonly consistentReads: boolean;
  /** `x-tend-parent-values`: path parameters that always take the same value. */
  readonly fixedValues: ReadonlyMap<string, string>;
}

/** The root's declarations; malformed ones and unknown `x-tend-` extensions are warnings. */
function readRootDeclarations(
  document: Record<string, unknown>,
  warnings: string[],
): RootDeclarations {
  const lifecycle = extensionPath(document, 'x-tend-lifecycle', warnings);
  const audit = readAuditFeed(document, warnings);
  const consistentReads = readConsistentReads(document, warnings);
  const fixedValues = parentValues(document, warnings);
  for (const w of unknownTendExtensions(document)) warnings.push(w);
  return {
    ...(lifecycle ? { lifecycle } : {}),
    ...(audit ? { audit } : {}),
    consistentReads,
    fixedValues,
  };
}

/** The document's path items by path; anything else under `paths` is a warning. */
function collectPaths(
  document: Record<string, unknown>,
  warnings: string[],
): Record<string, Record<string, unknown>> {
  const pathsValue = document['paths'];
  const documentPaths: Record<string, Record<string, unknown>> = {};
  if (isObject(pathsValue)) {
    for (const [p, item] of Object.entries(pathsValue)) {
      if (isObject(item)) setKey(documentPaths, p, item);
      else warnings.push(`path ${p} is not an object; ignored`);
    }
  } else if (pathsValue !== undefined) {
    warnings.push('`paths` is not an object; the document offers no resource types');
  }
  return documentPaths;
}

/** What `deriveTypes` has found so far, shared by its phases. */
interface Derivation {
  readonly warnings: string[];
  readonly unmapped: UnmappedPath[];
  readonly types: DerivedType[];
  /** Paths a type uses or that were set aside already: not looked at again. */
  readonly handled: Set<string>;
  readonly byName: Map<string, DerivedType>;
  /** Types by the shape of their item path (`/servers/{}/zones/{}`), to find parents. */
  readonly byItemShape: Map<string, DerivedType>;
  readonly fixedValues: ReadonlyMap<string, string>;
  readonly lifecycle: boolean;
  readonly documentPaths: Readonly<Record<string, Record<string, unknown>>>;
  /** The working paths, irregular operations moved in (irregular-ops.ts). */
  readonly assembled: AssembledPaths;
  readonly origins: PathOrigins;
  readonly index: CollectionIndex;
  readonly listedFields: ListedFields;
  /** Objects the schema copies of the document have made so far. */
  readonly copied: { nodes: number };
  /** The id field of the type whose item path has the shape of `itemPath`, when one is derived. */
  readonly idFieldAt: (itemPath: string) => string | undefined;
}

function startDerivation(
  documentPaths: Readonly<Record<string, Record<string, unknown>>>,
  assembled: AssembledPaths,
  root: RootDeclarations,
  warnings: string[],
): Derivation {
  const moved = (p: string): readonly string[] => assembled.movedFrom.get(p) ?? [];
  const handled = new Set<string>();
  if (root.lifecycle) handled.add(root.lifecycle.path);
  if (root.audit) handled.add(root.audit.path);
  const byItemShape = new Map<string, DerivedType>();
  return {
    warnings,
    unmapped: [],
    types: [],
    handled,
    byName: new Map(),
    byItemShape,
    fixedValues: root.fixedValues,
    lifecycle: root.lifecycle !== undefined,
    documentPaths,
    assembled,
    origins: {
      documentPaths,
      realOf: assembled.realOf,
      moved,
      /** A working path as the document writes it (the paths it stands for, when a rule made it). */
      shown: (p) =>
        Object.hasOwn(documentPaths, p) || moved(p).length === 0 ? p : moved(p).join(' and '),
    },
    listedFields: listedFieldsOf(documentPaths),
    index: collectionIndex(assembled.paths),
    copied: { nodes: 0 },
    idFieldAt: (itemPath) => byItemShape.get(shapeOf(itemPath))?.info.idField,
  };
}

/**
 * One collection path: made a type (with the sub-collections its item path embeds), or set aside
 * with the reason, its item paths and the document paths they stand for with it.
 */
function deriveCollection(collectionPath: string, d: Derivation): void {
  if (d.handled.has(collectionPath)) return;
  const layout = collectionLayout(collectionPath, d.index, d.assembled.paths, d.idFieldAt);
  if (layout === undefined) return;
  if (typeof layout === 'string') {
    // A singleton whose owners cannot be listed: its path alone is explained.
    d.handled.add(collectionPath);
    d.unmapped.push({ path: collectionPath, reason: layout });
    return;
  }
  const related = unique([
    collectionPath,
    ...layout.itemPaths,
    ...(layout.composite ? [layout.composite.path] : []),
    ...[collectionPath, ...layout.itemPaths].flatMap(d.origins.moved),
  ]);
  const setAside = (reason: string): void => {
    for (const p of related) {
      if (d.handled.has(p)) continue;
      d.handled.add(p);
      if (Object.hasOwn(d.documentPaths, p)) d.unmapped.push({ path: p, reason });
    }
  };
  const plan = planType(collectionPath, layout, d);
  if (typeof plan === 'string') return setAside(plan);
  const { itemPath, item } = plan.access;
  const embeddedDecls = readEmbedded(item['x-tend-embedded'], itemPath, d.warnings);
  const single = layout.single;
  const built = buildType(
    plan.name,
    collectionPath,
    plan.creation.creatable,
    itemPath,
    plan.access.readable,
    plan.params,
    {
      realOf: d.assembled.realOf,
      addressedUpdates: d.assembled.addressedUpdates,
      copied: d.copied,
      lifecycle: d.lifecycle,
      warnings: d.warnings,
      parentFieldsOf: (typeName) => d.byName.get(typeName)?.parentFields ?? [],
      idFieldOf: (typeName) => d.byName.get(typeName)?.info.idField ?? 'id',
      embeddedFields: embeddedDecls.map((e) => e.field),
      embeddedMethods: embeddedDecls.map((e) => e.method),
      paths: d.assembled.paths,
      ...(single
        ? { singleton: { ownerKey: single.ownerKey, ownersPath: single.ownersPath } }
        : {}),
      ...(plan.access.deletes.kind === 'none' ? { noDelete: plan.access.deletes.reason } : {}),
      ...(plan.access.readByList !== undefined ? { readByList: plan.access.readByList } : {}),
      ...(layout.composite ? { itemKey: layout.composite.params } : {}),
    },
  );
  if (typeof built === 'string') return setAside(built);
  for (const p of related) d.handled.add(p);
  addType(built, layout, collectionPath, d);
  addEmbeddedTypes(embeddedDecls, built, item, d);
}

/** A collection that can become a type: its name, path parameters, create and item path. */
interface TypePlan {
  readonly name: string;
  readonly params: readonly PathParam[];
  readonly creation: Creation;
  readonly access: ItemAccess;
}

/**
 * What a collection's type would be, before it is built; a string says why it cannot be one, the
 * first reason found in this order: ignored, no create, no list, no item path, no name, no read or
 * delete at the item path, a name taken.
 */
function planType(
  collectionPath: string,
  layout: CollectionLayout,
  d: Derivation,
): TypePlan | string {
  const paths = d.assembled.paths;
  const collection = paths[collectionPath]!;
  const ignore = collection['x-tend-ignore'];
  if (ignore !== undefined && ignore !== false) {
    return typeof ignore === 'string' && ignore.trim() !== ''
      ? `ignored by x-tend-ignore: ${ignore}`
      : 'ignored by x-tend-ignore';
  }
  // Without a POST, objects may be created at their own item path (item-create.ts).
  const creation = creationOf(collectionPath, collection, layout, paths, d.assembled.realOf);
  if (typeof creation === 'string') return creation;
  if (!operation(collection, 'GET')) return noListReason(collectionPath, collection, layout, d);
  if (layout.itemPaths.length === 0 && !layout.composite) {
    return noItemPathReason(collectionPath, paths, d.origins.shown);
  }
  const params = resolveParams(
    layout.single ? splitPath(layout.single.ownersPath) : layout.segments,
    d.fixedValues,
    d.byItemShape,
  );
  const name = typeNameOf(collectionPath, collection, layout, params, d);
  if (!TYPE_NAME.test(name)) {
    return `"${name}" cannot be a resource type name (letters, digits, - and _ only); name it with x-tend-type`;
  }
  const access = itemAccess(
    name,
    collectionPath,
    collection,
    layout,
    creation,
    d.index,
    paths,
    d.origins,
  );
  if (typeof access === 'string') return access;
  const owner = d.byName.get(name);
  if (owner !== undefined) {
    return `type name "${name}" is already taken by ${owner.collectionPath}; name one of them with x-tend-type`;
  }
  return { name, params, creation, access };
}

/** Why a collection without a list GET is not a type, and where a person would look next. */
function noListReason(
  collectionPath: string,
  collection: Record<string, unknown>,
  layout: CollectionLayout,
  d: Derivation,
): string {
  const shown = d.origins.shown(collectionPath);
  // Where a person would look next: GETs elsewhere that list objects with the create's fields.
  const hint = listCandidatesHint(
    typeof collection['x-tend-type'] === 'string' ? collection['x-tend-type'] : layout.last,
    listCandidates(
      shown,
      operation(collection, 'POST'),
      Object.keys(d.documentPaths),
      d.listedFields,
    ),
  );
  return `no GET on ${shown}: Tend cannot list these objects${hint}`;
}

/**
 * A type's name: `x-tend-type`, else the collection's last segment, qualified by its parent type or
 * the nearest other name in the path when another type has it, else by more of the path.
 */
function typeNameOf(
  collectionPath: string,
  collection: Record<string, unknown>,
  layout: CollectionLayout,
  params: readonly PathParam[],
  d: Derivation,
): string {
  const { last, segments } = layout;
  const explicitName = collection['x-tend-type'];
  const parentType = [...params].reverse().find((p) => p.kind === 'parent');
  let name = last;
  if (explicitName !== undefined) {
    if (typeof explicitName === 'string' && TYPE_NAME.test(explicitName)) name = explicitName;
    else
      d.warnings.push(
        `${collectionPath}: x-tend-type must be a name of letters, digits, - and _; ignored`,
      );
  } else if (d.byName.has(last) && parentType?.kind === 'parent') {
    name = `${parentType.type}-${last}`;
  } else if (d.byName.has(last)) {
    // A clash without a parent type: qualified by the nearest other name in the path
    // (`/repos/{owner}/{repo}/keys` → repos-keys next to /user/keys).
    // A version segment (`/v2/volumes`) is the same resource again, not another: not qualified.
    const qualifier = [...segments.slice(0, -1)].reverse().find((seg) => !isParam(seg));
    if (qualifier !== undefined && !/^v\d+/i.test(qualifier)) name = `${qualifier}-${last}`;
  }
  if (explicitName === undefined && d.byName.has(name)) {
    // Taken: qualified by more of the path, deterministically (path-pairing.ts).
    name = longerName(collectionPath, (n) => d.byName.has(n)) ?? name;
  }
  return name;
}

/** Records a built type; the collection's other item paths are explained as the document writes them. */
function addType(
  built: DerivedType,
  layout: CollectionLayout,
  collectionPath: string,
  d: Derivation,
): void {
  const { name } = built.info;
  const { itemPath } = built;
  const { shown, moved } = d.origins;
  for (const p of layout.itemPaths.filter((p) => p !== itemPath)) {
    // A path a rule made (`/x/{id}.json` read as `/x/{id}`) is listed as the document writes it.
    for (const q of [p, ...moved(p)].filter((q) => Object.hasOwn(d.documentPaths, q))) {
      d.unmapped.push({
        path: q,
        reason: layout.composite
          ? `a list of the "${name}" objects that share {${lastParam(p) ?? ''}}; "${name}" lists them all at ${shown(collectionPath)} and addresses one at ${shown(itemPath)}`
          : `${shown(itemPath)} is already the item path of "${name}"`,
      });
    }
  }
  d.byName.set(name, built);
  // A type addressed by several parameters is no parent: its children's paths name its key
  // parts one parameter each, which the parents' single-id scopes do not fill.
  if (!layout.composite) d.byItemShape.set(shapeOf(itemPath), built);
  d.types.push(built);
}

/** The sub-collections a type's item path declares with `x-tend-embedded`, as types of their own. */
function addEmbeddedTypes(
  decls: readonly EmbeddedDecl[],
  parent: DerivedType,
  item: Record<string, unknown>,
  d: Derivation,
): void {
  for (const decl of decls) {
    const embedded = buildEmbedded(
      decl,
      parent,
      item,
      d.warnings,
      (typeName) => d.byName.get(typeName)?.info.idField ?? 'id',
    );
    if (typeof embedded === 'string') {
      d.warnings.push(`${parent.itemPath}: x-tend-embedded ${decl.type}: ${embedded}`);
      continue;
    }
    if (d.byName.has(embedded.info.name)) {
      d.warnings.push(
        `${parent.itemPath}: x-tend-embedded ${decl.type}: type name "${embedded.info.name}" is already taken`,
      );
      continue;
    }
    d.byName.set(embedded.info.name, embedded);
    d.types.push(embedded);
  }
}

/**
 * Every document path no type uses, explained: one no collection took (why, as a rule or the
 * generic reasons say), and one a rule merged into another (`/x/{id}.json` read as `/x/{id}`) that
 * no type ended up calling, so that every path of the document is either used or explained.
 */
function explainUnused(d: Derivation, root: RootDeclarations): void {
  const { assembled, documentPaths, handled, unmapped } = d;
  for (const p of Object.keys(documentPaths)) {
    if (handled.has(p)) continue;
    unmapped.push({
      path: p,
      reason:
        assembled.notes.get(p) ??
        d.index.keyedReasons.get(p) ??
        unmappedReason(
          assembled.readAs.get(p) ?? p,
          documentPaths[p]!,
          d.byItemShape,
          d.fixedValues,
        ),
    });
  }
  const used = new Set<string>();
  for (const t of d.types) {
    used.add(t.collectionPath).add(t.itemPath);
    for (const o of Object.values(t.operations)) {
      if (!o) continue;
      used.add(o.path);
      const valued = assembled.valuedFrom.get(o.path);
      if (valued !== undefined) used.add(valued);
    }
  }
  const listed = new Set(unmapped.map((u) => u.path));
  for (const p of Object.keys(documentPaths)) {
    if (!handled.has(p) || listed.has(p) || used.has(p)) continue;
    if (p === root.lifecycle?.path || p === root.audit?.path) continue; // the provider's own endpoints
    const methods = Object.keys(documentPaths[p]!)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => m.toUpperCase());
    unmapped.push({
      path: p,
      reason: `${methods.join(', ') || 'no operation'} on ${p}: read as ${assembled.readAs.get(p) ?? 'part of a type'}, but not an operation Tend uses for it (the plain path's own operation wins)`,
    });
  }
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Why a path that is not part of any type is not managed. */
function unmappedReason(
  path: string,
  item: Record<string, unknown>,
  byItemShape: ReadonlyMap<string, DerivedType>,
  fixedValues: ReadonlyMap<string, string>,
): string {
  const segments = splitPath(path);
  const last = segments[segments.length - 1];
  const parentPath = '/' + segments.slice(0, -1).join('/');
  const methods = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) =>
    operation(item, m),
  );
  const owner = byItemShape.get(shapeOf(parentPath));
  if (owner !== undefined && last !== undefined && !isParam(last)) {
    return `${methods.join(', ') || 'no operations'}: an action or view of ${owner.info.name} objects, not a resource collection; Tend does not call it`;
  }
  if (last !== undefined && isParam(last)) {
    const unresolved = segments
      .slice(0, -1)
      .filter(isParam)
      .map((s) => s.slice(1, -1))
      .filter((p) => !fixedValues.has(p));
    if (methods.length > 0 && !methods.includes('DELETE') && !methods.includes('POST')) {
      return `${methods.join(', ')} only: read-only, nothing for Tend to manage${methods.length === 1 ? filterHint(item, last.slice(1, -1)) : ''}`;
    }
    if (unresolved.length > 0 && segments.slice(0, -1).some(isParam)) {
      return `no collection path ${parentPath} with POST for this item path (path parameter {${unresolved[0]}} above it has no value)`;
    }
    return `no collection path ${parentPath} with POST for this item path`;
  }
  if (methods.length > 0 && methods.every((m) => m === 'GET')) {
    return 'GET only: read-only, nothing for Tend to manage';
  }
  return 'not a resource collection (expected POST and GET on /x, GET and DELETE on /x/{id})';
}

/**
 * For a GET whose last path parameter takes one of a few values (`/admin/users/list/{flag}`, flag
 * one of active, new, staff, …): a filter, not an object's id. One of the values may list every
 * object of a type; what to declare then.
 */
function filterHint(item: Record<string, unknown>, param: string): string {
  const get = operation(item, 'GET');
  const declared = [
    ...(Array.isArray(get?.['parameters']) ? (get['parameters'] as unknown[]) : []),
    ...(Array.isArray(item['parameters']) ? (item['parameters'] as unknown[]) : []),
  ].find((p) => isObject(p) && p['name'] === param && p['in'] === 'path');
  const schema = isObject(declared) ? (declared['schema'] ?? declared) : undefined;
  const values = isObject(schema) && Array.isArray(schema['enum']) ? schema['enum'] : [];
  if (values.length < 2 || !values.every((v) => typeof v === 'string')) return '';
  const shown = values.length > 6 ? [...values.slice(0, 6), '…'] : values;
  return `; {${param}} is one of ${shown.join(', ')}: if one of them lists every object of a type, declare x-tend-type: <type>, x-tend-op: list and x-tend-path-values: {${param}: <value>} on this GET`;
}

/** Resolves the path parameters of a collection path, or says which one has no value. */
function resolveParams(
  segments: readonly string[],
  fixedValues: ReadonlyMap<string, string>,
  byItemShape: ReadonlyMap<string, DerivedType>,
): PathParam[] {
  const out: PathParam[] = [];
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (!isParam(s)) continue;
    const param = s.slice(1, -1);
    const fixed = fixedValues.get(param);
    if (fixed !== undefined) {
      out.push({ kind: 'fixed', param, value: fixed });
      continue;
    }
    const prefix = '/' + segments.slice(0, i + 1).join('/');
    const parent = byItemShape.get(shapeOf(prefix));
    if (parent !== undefined) {
      out.push({ kind: 'parent', param, type: parent.info.name });
      continue;
    }
    // Not a manageable parent: the value is the provider instance's (Provider `parameters:`).
    out.push({ kind: 'provider', param });
  }
  return out;
}

/**
 * Objects all the schema copies of one document may make together (see acyclicCopy). Real schemas
 * are small (the largest of the corpus documents' copies take under 3,000 objects) except where
 * every expandable field writes out whole objects again (Stripe: 150,000 and more per read schema),
 * which is copying time and memory spent on nothing Tend reads.
 */
const DOCUMENT_COPY_NODES = 1_000_000;

/**
 * The share of what is left of the document's budget one schema copy may take: a few huge schemas
 * (Stripe's read schemas, every expandable field written out) must not leave nothing for the types
 * after them, whose request bodies are small but would otherwise be copied as `{}`.
 */
const COPY_SHARE = 16;

/** A plain-data copy of one schema, within its own budget and its share of the document's. */
function copySchema(
  schema: unknown,
  onCut: (path: string, reason: CutReason) => void,
  copied: { nodes: number },
): unknown {
  const budget = {
    maxDepth: SCHEMA_COPY_DEPTH,
    nodes: Math.min(
      SCHEMA_COPY_NODES,
      Math.ceil((DOCUMENT_COPY_NODES - copied.nodes) / COPY_SHARE),
    ),
  };
  const start = budget.nodes;
  // A recursive schema is cut at every place it refers back (thousands in Stripe's expandable
  // objects): told once, with how many more places there are.
  let recursive = 0;
  let first = '';
  const out = acyclicCopy(
    schema,
    (path, reason) => {
      if (reason !== 'recursive') onCut(path, reason);
      else if (recursive++ === 0) first = path;
    },
    budget,
  );
  if (recursive > 0) {
    onCut(recursive === 1 ? first : `${first} (and ${recursive - 1} more places)`, 'recursive');
  }
  copied.nodes += start - budget.nodes;
  return out;
}

interface BuildContext {
  /** Where operations moved onto the collection or item path really are. */
  readonly realOf: WeakMap<object, RealOperation>;
  readonly addressedUpdates: WeakSet<object>;
  /** Objects the schema copies of the document have made so far. */
  readonly copied: { nodes: number };
  readonly lifecycle: boolean;
  readonly warnings: string[];
  readonly parentFieldsOf: (typeName: string) => readonly string[];
  /** The field holding a type's id, for the reference a child writes to its parent. */
  readonly idFieldOf: (typeName: string) => string;
  readonly embeddedFields: readonly string[];
  readonly embeddedMethods: readonly string[];
  /** The document's paths (operations assembled), for the lookups identity reads. */
  readonly paths: Readonly<Record<string, Record<string, unknown>>>;
  /** Set for one object per owner at a fixed path (item-create.ts singletonChoice). */
  readonly singleton?: Singleton;
  /** Set when the item path has no DELETE: where Tend looked (no-delete.ts). */
  readonly noDelete?: string;
  /** Set when the item path has no GET: one object is read from the list (read-by-list.ts). */
  readonly readByList?: string;
  /** The item path's own parameters when several name one object together (item-key.ts). */
  readonly itemKey?: readonly string[];
}

/**
 * Builds one type from a complete path pair; a string is the reason it cannot be mapped. In order:
 * what the create sends and the read answers, the parents, the fields' roles, the update, the item
 * key, the identity and the marker, the type's schema, the list, and the type assembled from them.
 */
function buildType(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  itemPath: string,
  item: Record<string, unknown>,
  documentParams: readonly PathParam[],
  ctx: BuildContext,
): DerivedType | string {
  const bodies = bodiesOf(name, collectionPath, collection, itemPath, item, ctx);
  if (typeof bodies === 'string') return bodies;
  const { create, createView, read, createQuery } = bodies;
  // A parent parameter the create body has as a field too is renamed or filled (item-create.ts).
  const fields = Object.keys(createView.properties);
  const settled = settleParentClash(collectionPath, documentParams, fields);
  if (typeof settled === 'string') return settled;
  const parentFields = parentFieldNames(settled.params);
  const roles = fieldRoles(name, createView, read, ctx.embeddedFields, ctx.warnings);
  const { writableFields } = roles;
  // A method the parent's sub-collections are changed through is not the parent's own update.
  const update = updateRequest(
    name,
    itemPath,
    item,
    create.post,
    writableFields,
    ctx.embeddedMethods,
    ctx.noDelete,
    ctx.realOf,
    ctx.warnings,
  );
  if (typeof update === 'string') return update;
  const { byPost } = update;
  // Without an update nothing changes in place: every writable field is create-only. A parent
  // field moves the object to another parent, which no API does in place.
  const createOnly = createOnlyFields({
    roles,
    parentFields,
    ...(create.atItem ? { createdAtKey: create.keyParam } : {}),
    updatable: update.op !== undefined || byPost !== undefined,
    notUpdatable: byPost ? writableFields.filter((f) => !byPost.fields.includes(f)) : [],
    // Sent with the create only: an update's body does not carry the create's query or array.
    sentWithCreateOnly: [
      ...(createQuery?.params.map((p) => p.field) ?? []),
      ...(createQuery?.bodyField !== undefined ? [createQuery.bodyField] : []),
    ],
  });
  const itemKey = itemKeyOf(name, collectionPath, itemPath, item, bodies, roles, ctx);
  if (typeof itemKey === 'string') return itemKey;
  const where = { name, collectionPath, itemPath, collection, item, ctx };
  const identity = identityOf(where, bodies, writableFields, itemKey);
  const answer = objectView(successSchema(create.post));
  const createIdField = readIdField(
    name,
    [create.post],
    Object.keys(answer.properties).length > 0 ? answer : undefined,
    `POST ${collectionPath}`,
    ctx.warnings,
  );
  const absentWhen = readAbsentWhen(name, [bodies.readSchema, bodies.getItem], read, ctx.warnings);
  const params = settled.params;
  const typed = typeInfoOf(where, bodies, { createOnly, roles, params, parentFields, identity });
  return assembleType(where, bodies, {
    update,
    roles,
    settled,
    parentFields,
    identity,
    typed,
    listing: listingOf(name, collectionPath, collection, ctx),
    absentWhen,
    createIdField,
    itemKey,
  });
}

/** Where a type is built: its name, collection and item path, and what `buildType` was handed. */
interface BuildPlace {
  readonly name: string;
  readonly collectionPath: string;
  readonly itemPath: string;
  readonly collection: Record<string, unknown>;
  readonly item: Record<string, unknown>;
  readonly ctx: BuildContext;
}

/** What a type's create sends and its read answers, as plain-data schemas. */
interface Bodies {
  readonly create: CreateRequest;
  /** The item path's GET (or the list standing for it: read-by-list.ts). */
  readonly getItem: Record<string, unknown>;
  /** What the create sends outside a JSON object body (create-query.ts). */
  readonly createQuery: CreateQuery | undefined;
  /** The create's fields, query fields and an array body's field included. */
  readonly createSchema: JsonSchema;
  readonly createView: ObjectView;
  /** The read answer's object schema (unwrapped). */
  readonly readSchema: JsonSchema;
  readonly read: ObjectView;
  /** The properties wrapping the object in the answers of the read and of the create. */
  readonly envelope: { readonly read?: string; readonly create?: string };
}

/**
 * The bodies of a type: the create's (shapes/write-requests.ts), the read's answer (unwrapped
 * from its envelope), the create's fields in its query (create-query.ts), each schema copied as
 * plain data within the document's budget; a string when the create's body cannot be sent.
 */
function bodiesOf(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  itemPath: string,
  item: Record<string, unknown>,
  ctx: BuildContext,
): Bodies | string {
  const copy = (where: string) => (schema: unknown) =>
    copySchema(schema, cutWarning(name, where, ctx.warnings), ctx.copied);
  const { paths, realOf, warnings } = ctx;
  const create = createRequest(
    name,
    collectionPath,
    collection,
    itemPath,
    paths,
    realOf,
    copy('create'),
    warnings,
  );
  if (typeof create === 'string') return create;
  const { post } = create;
  const createFieldNames = Object.keys(objectView(create.bodySchema).properties);
  const getItem = operation(item, 'GET')!;
  // An answer wrapping the object (`{"server": {…}}`): the object's schema is the wrapped one.
  const readEnvelope = envelopeOf(name, 'GET', itemPath, getItem, createFieldNames, warnings);
  const rawRead = successSchema(getItem);
  const readSchema = (copy('read')(
    readEnvelope !== undefined ? schemaAtPath(rawRead, readEnvelope) : rawRead,
  ) ?? {}) as JsonSchema;
  // Fields in the query string, and an array body as one field (create-query.ts).
  const queried = createQueryOf({
    typeName: name,
    where: create.where,
    pathItem: create.pathItem,
    op: post,
    body: create.bodySchema,
    readFields: Object.keys(objectView(readSchema).properties),
    // A create in a scope the collection path lacks (`POST /teams/{team}/widgets`, scoped-create.ts).
    scopeParams: create.atItem
      ? []
      : paramsOf(realOf.get(post)?.path ?? collectionPath).filter(
          (p) => !paramsOf(collectionPath).includes(p),
        ),
    warnings,
  });
  const createSchema = queried.schema ?? {};
  const createEnvelope = envelopeOf(name, 'POST', collectionPath, post, createFieldNames, warnings);
  return {
    create,
    getItem,
    createQuery: queried.query,
    createSchema,
    createView: objectView(createSchema),
    readSchema,
    read: objectView(readSchema),
    envelope: {
      ...(readEnvelope !== undefined ? { read: readEnvelope } : {}),
      ...(createEnvelope !== undefined ? { create: createEnvelope } : {}),
    },
  };
}

/** The warning for a schema copy cut short (schema-view.ts `acyclicCopy`). */
function cutWarning(name: string, where: string, warnings: string[]) {
  return (path: string, reason: CutReason): void => {
    warnings.push(
      reason === 'recursive'
        ? `${name}: the ${where} schema is recursive at ${path}; it is not checked below that point`
        : reason === 'deep'
          ? `${name}: the ${where} schema is nested more than ${SCHEMA_COPY_DEPTH} levels deep at ${path}; it is not checked below that depth`
          : `${name}: the ${where} schema is too large once its $refs are written out (more than ${SCHEMA_COPY_NODES.toLocaleString('en-US')} objects, or the document's schemas together more than ${DOCUMENT_COPY_NODES.toLocaleString('en-US')}); it is not checked from ${path} on`,
    );
  };
}

/**
 * Addressed by several parameters together: the field holding each (item-key.ts); undefined for a
 * type addressed by one, a string when a parameter has no field.
 */
function itemKeyOf(
  name: string,
  collectionPath: string,
  itemPath: string,
  item: Record<string, unknown>,
  bodies: Bodies,
  roles: FieldRoles,
  ctx: BuildContext,
): readonly ItemKeyPart[] | string | undefined {
  if (!ctx.itemKey) return undefined;
  const { read, createView } = bodies;
  const { writableFields } = roles;
  const keyParts = itemKeyParts({
    typeName: name,
    collectionPath,
    itemPath,
    params: ctx.itemKey,
    declared: item['x-tend-key-fields'],
    // A read schema the document leaves empty says nothing against the create's fields.
    readFields:
      Object.keys(read.properties).length > 0 ? Object.keys(read.properties) : writableFields,
    createFields: writableFields,
    hasNested: (path) => viewHasKeyPath(read, path) && viewHasKeyPath(createView, path),
  });
  if ('reason' in keyParts) {
    return `its objects are addressed by ${ctx.itemKey.map((p) => `{${p}}`).join(' and ')} together (${itemPath}), but ${keyParts.reason}`;
  }
  return keyParts.parts;
}

/** How a type's objects are told apart and found again. */
interface TypeIdentity extends Identity {
  /** Where Tend's marker goes, when the type uses one. */
  readonly marker?: MarkerLocation;
  /** The idempotency header as the create names it. */
  readonly idempotencyHeader?: string;
  /** The field holding an object's id in what the platform answers. */
  readonly idField: string;
}

/**
 * The identity of a type (identity.ts), also from the fields every oneOf/anyOf branch of the create
 * body shares; an item key's fields are a natural key, and an object created at its own address is
 * keyed by its name (item-create.ts) unless the document declares otherwise.
 */
function identityOf(
  where: BuildPlace,
  bodies: Bodies,
  writableFields: readonly string[],
  itemKey: readonly ItemKeyPart[] | undefined,
): TypeIdentity {
  const { name, collectionPath, itemPath, ctx } = where;
  const { create, createSchema, readSchema, read, getItem } = bodies;
  const { post, atItem, keyParam } = create;
  const keyView = withBranchFields(createSchema, bodies.createView, writableFields);
  const found = markerLocation(name, keyView.view, [createSchema, post], ctx.warnings);
  const idempotencyHeader = headerParameter(where.collection, post, 'idempotency-key');
  const inferred = inferIdentity({
    name,
    collectionPath,
    idParam: keyParam,
    idParamDescription: pathParamDescription(where.item, getItem, keyParam),
    read,
    create: keyView.view,
    writableFields: keyView.writable,
    branchFields: keyView.branchFields,
    markerField: found?.field,
    idempotencyHeader,
    explicit: [createSchema, readSchema, post],
    createText: [post['summary'], post['description']],
    createOperation: post,
    parentParams: [...collectionPath.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!),
    lookups: lookupParams(ctx.paths, collectionPath, itemPath, getItem),
    warnings: ctx.warnings,
  });
  const statedIdField = readIdField(
    name,
    [readSchema, createSchema],
    read,
    'the read schema',
    ctx.warnings,
  );
  // Created at its own address: the key is the item path parameter, found in what is listed.
  const itemKeyField = ctx.singleton
    ? ctx.singleton.ownerKey
    : atItem
      ? (statedIdField ?? keyFieldInRead(keyParam, read, NAME_LIKE))
      : undefined;
  // The item path names one object by the key's values together, and the create chooses them: a
  // second create with the same values names the same object (unless an overlay says otherwise).
  const explicitIdentity = [createSchema, readSchema, post].some(
    (s) => isObject(s) && s['x-tend-identity'] !== undefined,
  );
  const identity: Identity =
    itemKey && !explicitIdentity
      ? {
          identity: 'natural-key',
          naturalKeys: itemKey.map((k) => k.field),
          idempotencyKey: idempotencyHeader !== undefined,
          why: `natural key ${itemKey.map((k) => k.field).join(', ')}: ${itemPath} addresses one object by ${itemKey.map((k) => `{${k.param}}`).join(' and ')} together, held by ${itemKey.map((k) => `${k.field} (${k.why})`).join(' and ')}`,
        }
      : atItem
        ? itemCreateIdentity(inferred, {
            idParam: keyParam,
            itemPath: create.createdAt,
            method: ctx.realOf.get(post)!.method,
            keyField: itemKeyField,
            ...(ctx.singleton ? { ownersPath: ctx.singleton.ownersPath } : {}),
          })
        : inferred;
  const marker = markerInUse(found, [createSchema, post], identity.identity);
  // A singleton's read object need not carry its owner's key: the key is what it was read with.
  const idField = idFieldOf({
    idParam: create.idParam,
    read,
    naturalKeys: identity.naturalKeys,
    decided: ctx.singleton
      ? create.idParam
      : itemKey
        ? itemKey.at(-1)!.field
        : (statedIdField ?? itemKeyField),
  });
  return {
    ...identity,
    ...(marker !== undefined ? { marker } : {}),
    ...(idempotencyHeader !== undefined ? { idempotencyHeader } : {}),
    idField,
  };
}

/** A type's ResourceTypeInfo, with the parts of it the type repeats. */
interface TypedInfo {
  readonly info: ResourceTypeInfo;
  readonly keyFields: readonly string[];
  readonly importExclude: readonly ImportExclusion[];
  readonly versionField?: string;
}

/**
 * What the engine knows of a type: its desired-spec schema (the create body, output-only and
 * embedded fields left out, a natural key required, a field per parent, the import exclusions),
 * identity, the fields' roles and the type's declarations.
 */
function typeInfoOf(
  where: BuildPlace,
  bodies: Bodies,
  input: {
    readonly createOnly: readonly string[];
    readonly roles: FieldRoles;
    readonly params: readonly PathParam[];
    readonly parentFields: readonly string[];
    readonly identity: TypeIdentity;
  },
): TypedInfo {
  const { name, ctx } = where;
  const { createSchema, readSchema, read, createView } = bodies;
  const { post } = bodies.create;
  const { roles, identity } = input;
  const description = [createSchema['description'], post['summary'], post['description']].find(
    (d): d is string => typeof d === 'string' && d.trim() !== '',
  );
  // A create's scope (`{team}` of `POST /teams/{team}/widgets`, scoped-create.ts) is the key's
  // scope like a parent's: a name is unique in its team, not across teams.
  const scopeFields = (bodies.createQuery?.pathFields ?? [])
    .map((f) => f.field)
    .filter((f) => !(identity.naturalKeys ?? []).includes(f));
  const keyFields =
    identity.naturalKeys !== undefined
      ? [...input.parentFields, ...scopeFields, ...identity.naturalKeys]
      : [];
  const importExclude = readImportExclude(
    name,
    createSchema['x-tend-import-exclude'] ?? readSchema['x-tend-import-exclude'],
    [...Object.keys(createView.properties), ...Object.keys(read.properties)],
    ctx.warnings,
  );
  // A natural key must be declared: it is how Tend finds the object again.
  const schema = withImportExclude(
    withParentFields(
      requireFields(
        withoutProperties(createSchema, createView, [
          ...roles.outputInCreate,
          ...ctx.embeddedFields,
        ]),
        identity.naturalKeys ?? [],
      ),
      input.params,
      ctx.idFieldOf,
    ),
    importExclude,
  );
  const parent = [...input.params].reverse().find((p) => p.kind === 'parent');
  const versionField = readVersionField(
    name,
    [readSchema, createSchema, bodies.getItem],
    read,
    ctx.warnings,
  );
  const { createOnly } = input;
  const { createQuery } = bodies;
  const { marker } = identity;
  const info: ResourceTypeInfo = {
    name,
    ...(description !== undefined ? { description } : {}),
    schema,
    identity: identity.identity,
    ...(identity.reason !== undefined ? { identityReason: identity.reason } : {}),
    idField: identity.idField,
    // One field is the whole key only without parents: a name alone does not find a nested object.
    ...(keyFields.length === 1 ? { naturalKey: keyFields[0]! } : {}),
    ...(keyFields.length > 0 ? { naturalKeyFields: keyFields } : {}),
    createOnly,
    outputOnly: roles.outputOnly,
    sensitive: roles.sensitive,
    ...(createQuery !== undefined && createQuery.params.length > 0
      ? { sentInUrl: createQuery.params.map((q) => q.field) }
      : {}),
    ...(marker !== undefined ? { markerField: marker.field, markerKind: marker.kind } : {}),
    lifecycle: ctx.lifecycle ? 'platform' : 'annotations',
    idempotencyKey: identity.idempotencyKey,
    ...(parent?.kind === 'parent' ? { parent: { type: parent.type, field: parent.param } } : {}),
    ...(roles.serverOwned.length > 0 ? { serverOwned: roles.serverOwned } : {}),
    ...(roles.writeOnly.length > 0 ? { writeOnly: roles.writeOnly } : {}),
    ...(ctx.noDelete !== undefined ? { noDelete: ctx.noDelete } : {}),
  };
  return {
    info,
    keyFields,
    importExclude,
    ...(versionField !== undefined ? { versionField } : {}),
  };
}

/** How a type's list answers: its shape and envelope, its pagination, where listed objects hold the id. */
interface Listing {
  readonly getList: Record<string, unknown>;
  readonly listShape: ListShape;
  readonly paging: { pagination?: Pagination; note?: string };
  readonly listIdField?: string;
}

function listingOf(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  ctx: BuildContext,
): Listing {
  const getList = operation(collection, 'GET')!;
  const listEnvelope = envelopeOf(name, 'GET', collectionPath, getList, [], ctx.warnings, false);
  const listSchema = successSchema(getList);
  const shape: ListShape =
    listEnvelope !== undefined
      ? { kind: 'wrapped', field: listEnvelope, declared: true }
      : listShape(listSchema, name);
  const paging = paginationOf(name, collection, getList, listSchema, ctx.warnings);
  const listItems = isObject(listSchema) ? listSchema['items'] : undefined;
  const listIdField = readIdField(
    name,
    [getList],
    isObject(listItems) ? objectView(listItems) : undefined,
    `GET ${collectionPath}`,
    ctx.warnings,
  );
  return {
    getList,
    listShape: shape,
    paging,
    ...(listIdField !== undefined ? { listIdField } : {}),
  };
}

/**
 * A type's operations: where each really is (`realOf`), with its media type and how it was
 * assigned; an update addressed by fields says which (`x-tend-key-fields`).
 */
function operationsOf(
  where: BuildPlace,
  bodies: Bodies,
  update: UpdateRequest,
  getList: Record<string, unknown>,
): DerivedType['operations'] {
  const { name, collectionPath, itemPath, ctx } = where;
  const ref = (method: HttpMethod, path: string, op: Record<string, unknown>): OperationRef => {
    const media = sendableMedia(op, `${method} ${path}`);
    const real = ctx.realOf.get(op);
    return {
      method: real?.method ?? method,
      path: real?.path ?? path,
      ...(typeof op['operationId'] === 'string' ? { operationId: op['operationId'] } : {}),
      ...(media ? { contentType: media.contentType } : {}),
      ...(real ? { assigned: real.source } : {}),
    };
  };
  return {
    list: ref('GET', collectionPath, getList),
    read: ref('GET', itemPath, bodies.getItem),
    create: ref('POST', collectionPath, bodies.create.post),
    ...(update.op
      ? {
          update: {
            ...ref(update.method, itemPath, update.op),
            ...addressedByOf(
              name,
              update.where,
              update.op,
              ctx.addressedUpdates,
              bodies.read,
              ctx.warnings,
            ),
          },
        }
      : update.byPost
        ? { update: ref('POST', itemPath, update.byPost.operation) }
        : {}),
    ...(ctx.noDelete === undefined
      ? { delete: ref('DELETE', itemPath, operation(where.item, 'DELETE')!) }
      : {}),
  };
}

/** A type from the parts `buildType` found. */
function assembleType(
  where: BuildPlace,
  bodies: Bodies,
  parts: {
    readonly update: UpdateRequest;
    readonly roles: FieldRoles;
    readonly settled: SettledParents;
    readonly parentFields: readonly string[];
    readonly identity: TypeIdentity;
    readonly typed: TypedInfo;
    readonly listing: Listing;
    readonly absentWhen: readonly AbsentWhen[];
    readonly createIdField: string | undefined;
    readonly itemKey: readonly ItemKeyPart[] | undefined;
  },
): DerivedType {
  const { ctx } = where;
  const { create, createQuery, readSchema } = bodies;
  const { update, identity, listing, settled } = parts;
  const { byPost } = update;
  const { listIdField, paging } = listing;
  const createWrap = create.wrap;
  const updateWrap = update.wrap;
  return {
    info: parts.typed.info,
    collectionPath: where.collectionPath,
    itemPath: where.itemPath,
    idParam: create.idParam,
    operations: operationsOf(where, bodies, update, listing.getList),
    ...(byPost ? { updateFields: byPost.fields, updateWhy: byPost.why } : {}),
    listShape: listing.listShape,
    ...(listIdField !== undefined ? { listIdField } : {}),
    ...(Object.keys(bodies.envelope).length > 0 ? { envelope: bodies.envelope } : {}),
    ...(createWrap !== undefined || updateWrap !== undefined
      ? {
          requestEnvelope: {
            ...(createWrap !== undefined ? { create: createWrap.field } : {}),
            ...(updateWrap !== undefined ? { update: updateWrap.field } : {}),
          },
          requestEnvelopeWhy: [createWrap, updateWrap]
            .filter((w) => w !== undefined)
            .map((w) => `${w.field}: ${w.why}`),
        }
      : {}),
    ...(create.wrapNote !== undefined ? { requestEnvelopeNote: create.wrapNote } : {}),
    ...(createQuery !== undefined ? { createQuery } : {}),
    ...(paging.pagination !== undefined ? { pagination: paging.pagination } : {}),
    ...(paging.note !== undefined ? { paginationNote: paging.note } : {}),
    ...(identity.why !== undefined
      ? {
          identityWhy:
            listIdField !== undefined && identity.identity !== null
              ? `${identity.why} (the list GET ${ctx.realOf.get(listing.getList)?.path ?? where.collectionPath} answers another shape: its objects hold the id in ${listIdField})`
              : identity.why,
        }
      : {}),
    ...(identity.idempotencyKey
      ? { idempotencyHeader: identity.idempotencyHeader ?? 'Idempotency-Key' }
      : {}),
    writableFields: parts.roles.writableFields,
    params: settled.params,
    parentFields: parts.parentFields,
    keyFields: parts.typed.keyFields,
    writeOnly: parts.roles.writeOnly,
    serverOwned: parts.roles.serverOwned,
    embeddedFields: [...ctx.embeddedFields],
    readSchema,
    partialUpdate:
      byPost !== undefined ||
      (update.op !== undefined && update.op['x-tend-partial-update'] === true),
    absentWhenEmpty: stringList(
      bodies.getItem['x-tend-absent-when-empty'] ?? readSchema['x-tend-absent-when-empty'],
    ),
    importExclude: parts.typed.importExclude,
    ...(parts.typed.versionField !== undefined ? { versionField: parts.typed.versionField } : {}),
    ...(parts.absentWhen.length > 0 ? { absentWhen: parts.absentWhen } : {}),
    ...(parts.createIdField !== undefined ? { createIdField: parts.createIdField } : {}),
    ...(create.atItem
      ? { createAtItem: { param: create.keyParam, inBody: create.keyInBody ?? false } }
      : {}),
    ...(ctx.singleton ? { singleton: ctx.singleton } : {}),
    ...(Object.keys(settled.aliases).length > 0 ? { paramAliases: settled.aliases } : {}),
    ...(settled.inBody.length > 0 ? { parentFieldsInBody: settled.inBody } : {}),
    ...(settled.notes.length > 0 ? { parentNotes: settled.notes } : {}),
    ...(ctx.readByList !== undefined ? { readByList: ctx.readByList } : {}),
    ...(parts.itemKey ? { itemKey: parts.itemKey } : {}),
  };
}

/**
 * The version field declared with `x-tend-version-field` (on the read schema, the create schema or
 * the item GET, first found wins). Never guessed from a field's name: a field called `version` may
 * be a software version the user declares. Its first segment must be a property of the read schema.
 */
function readVersionField(
  name: string,
  places: readonly unknown[],
  read: ObjectView,
  warnings: string[],
): string | undefined {
  const value = places
    .map((s) => (isObject(s) ? s['x-tend-version-field'] : undefined))
    .find((v) => v !== undefined);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(value)) {
    warnings.push(
      `${name}: x-tend-version-field must be a field name or dotted path, not ${JSON.stringify(value)}; ignored`,
    );
    return undefined;
  }
  const top = value.split('.')[0]!;
  if (!(top in read.properties)) {
    warnings.push(
      `${name}: x-tend-version-field names ${value}, but the read schema has no field ${top}; ignored`,
    );
    return undefined;
  }
  return value;
}

/** An `x-tend-embedded` declaration as written on a parent's item path. */
interface EmbeddedDecl {
  readonly type: string;
  readonly field: string;
  readonly key: readonly string[];
  readonly method: 'PATCH' | 'PUT';
  readonly op?: { readonly field: string; readonly replace: string; readonly delete: string };
}

/** Reads the `x-tend-embedded` list of a path item; malformed entries are warnings. */
function readEmbedded(value: unknown, itemPath: string, warnings: string[]): EmbeddedDecl[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  const out: EmbeddedDecl[] = [];
  list.forEach((d: unknown, i) => {
    const where = `${itemPath}: x-tend-embedded[${i}]`;
    if (!isObject(d)) {
      warnings.push(`${where} is not a mapping; ignored`);
      return;
    }
    const field = d['field'];
    const type = d['type'] ?? field;
    const key = stringList(d['key']);
    if (typeof field !== 'string' || typeof type !== 'string' || !TYPE_NAME.test(type)) {
      warnings.push(
        `${where} needs a field (the parent's array of items) and a type name; ignored`,
      );
      return;
    }
    if (key.length === 0) {
      warnings.push(`${where} needs key: the item fields that tell items apart; ignored`);
      return;
    }
    const rawMethod = d['method'] ?? 'PATCH';
    const method = typeof rawMethod === 'string' ? rawMethod.toUpperCase() : '';
    if (method !== 'PATCH' && method !== 'PUT') {
      warnings.push(`${where}: method must be PATCH or PUT; ignored`);
      return;
    }
    const op = d['op'];
    let parsedOp: EmbeddedDecl['op'];
    if (op !== undefined) {
      if (
        !isObject(op) ||
        typeof op['field'] !== 'string' ||
        typeof op['replace'] !== 'string' ||
        typeof op['delete'] !== 'string'
      ) {
        warnings.push(`${where}: op must be {field, replace, delete} (strings); ignored`);
        return;
      }
      parsedOp = { field: op['field'], replace: op['replace'], delete: op['delete'] };
    }
    out.push({ type, field, key, method, ...(parsedOp ? { op: parsedOp } : {}) });
  });
  return out;
}

/** Builds a sub-collection type from its declaration and its parent; a string says why it cannot. */
function buildEmbedded(
  decl: EmbeddedDecl,
  parent: DerivedType,
  parentItem: Record<string, unknown>,
  warnings: string[],
  idFieldOf: (typeName: string) => string,
): DerivedType | string {
  const change = operation(parentItem, decl.method);
  if (change === undefined) {
    return `the parent has no ${decl.method} on ${parent.itemPath} to change items through`;
  }
  const readField = objectView(parent.readSchema).properties[decl.field];
  const items = isObject(readField) ? readField['items'] : undefined;
  if (!hasType(readField, 'array') && !isObject(items)) {
    return `the parent's GET ${parent.itemPath} has no array field ${decl.field}`;
  }
  const itemSchema = (isObject(items) ? items : {}) as JsonSchema;
  const view = objectView(itemSchema);
  const missingKey = decl.key.filter((k) => !(k in view.properties));
  if (missingKey.length > 0) {
    return `key field(s) ${missingKey.join(', ')} are not fields of the items of ${decl.field}`;
  }
  const params: PathParam[] = [
    ...parent.params,
    { kind: 'parent', param: parent.idParam, type: parent.info.name },
  ];
  const parentFields = parentFieldNames(params);
  const clash = parentFields.find((f) => f in view.properties);
  if (clash !== undefined) {
    return `the items of ${decl.field} have a field ${clash}, which also names the parent`;
  }
  const drop = [...(decl.op ? [decl.op.field] : []), ...names(view, isOutputOnly)];
  const dropped = new Set(drop);
  const writableFields = Object.keys(view.properties).filter((n) => !dropped.has(n));
  const writable = new Set(writableFields);
  const keyFields = [...parentFields, ...decl.key];
  const sensitive = names(view, isSensitive);
  const annotated = names(view, isCreateOnly).filter((f) => writable.has(f));
  // The key of an item is its identity within the parent: a new key is a new item.
  const createOnly = unique([...parentFields, ...decl.key, ...annotated]);
  const serverOwned = names(view, isServerOwned);
  const writeOnly = names(view, isWriteOnly).filter((f) => writable.has(f));
  const idField = 'id' in view.properties ? decl.key[0]! : 'id';
  if ('id' in view.properties) {
    warnings.push(
      `${decl.type}: the items have their own id field; objects are identified by ${keyFields.join(', ')}`,
    );
  }
  const importExclude = readImportExclude(
    decl.type,
    itemSchema['x-tend-import-exclude'],
    Object.keys(view.properties),
    warnings,
  );
  const schema = withImportExclude(
    withParentFields(withoutProperties(itemSchema, view, drop), params, idFieldOf),
    importExclude,
  );
  const changeRef: OperationRef = {
    method: decl.method,
    path: parent.itemPath,
    ...(typeof change['operationId'] === 'string' ? { operationId: change['operationId'] } : {}),
    contentType:
      (isObject(change['requestBody'])
        ? jsonMedia(change['requestBody']['content'])?.contentType
        : undefined) ?? 'application/json',
  };
  const info: ResourceTypeInfo = {
    name: decl.type,
    ...(typeof itemSchema['description'] === 'string'
      ? { description: itemSchema['description'] }
      : {}),
    schema,
    identity: 'natural-key',
    idField,
    naturalKeyFields: keyFields,
    createOnly,
    outputOnly: names(view, isOutputOnly),
    sensitive,
    lifecycle: parent.info.lifecycle,
    idempotencyKey: false,
    parent: { type: parent.info.name, field: parent.idParam },
    ...(serverOwned.length > 0 ? { serverOwned } : {}),
    ...(writeOnly.length > 0 ? { writeOnly } : {}),
    // Changed through the parent's PATCH, in batches (group commit): see ResourceTypeInfo.batched.
    batched: true,
  };
  return {
    info,
    collectionPath: parent.itemPath,
    itemPath: parent.itemPath,
    idParam: parent.idParam,
    operations: {
      list: parent.operations.read,
      read: parent.operations.read,
      create: changeRef,
      update: changeRef,
      delete: changeRef,
    },
    listShape: { kind: 'wrapped', field: decl.field },
    writableFields,
    params,
    parentFields,
    keyFields,
    writeOnly,
    serverOwned,
    embeddedFields: [],
    readSchema: itemSchema,
    absentWhenEmpty: [],
    importExclude,
    partialUpdate: true,
    embedded: {
      parentType: parent.info.name,
      field: decl.field,
      key: decl.key,
      method: decl.method,
      ...(decl.op ? { op: decl.op } : {}),
    },
  };
}

/**
 * The `x-tend-import-exclude` rules of a type: well-formed ones on fields the type has; the others
 * are warnings.
 */
function readImportExclude(
  type: string,
  value: unknown,
  fields: readonly string[],
  warnings: string[],
): ImportExclusion[] {
  const read = importExclusions(value, type);
  for (const w of read.warnings) warnings.push(w);
  const known = new Set(fields);
  return read.rules.filter((r) => {
    if (known.has(r.field)) return true;
    warnings.push(
      `${type}: x-tend-import-exclude names ${r.field}, which is not a field of its objects; ignored`,
    );
    return false;
  });
}

/** A desired-spec schema carrying exactly the given import exclusions (none: no key). */
function withImportExclude(schema: JsonSchema, rules: readonly ImportExclusion[]): JsonSchema {
  const { ['x-tend-import-exclude']: _written, ...rest } = schema;
  return rules.length > 0 ? { ...rest, 'x-tend-import-exclude': rules } : rest;
}

/** A schema whose `required` also lists the given fields (those it has). */
function requireFields(schema: JsonSchema, fields: readonly string[]): JsonSchema {
  return fields.reduce((s, f) => requirePath(s, keyPathSegments(f)), schema);
}

/**
 * A schema requiring the field at a key path, level by level (`spec.name`: `spec` required, and
 * `name` required in `spec`'s schema, copied); a path the schema does not have changes nothing.
 */
function requirePath(schema: JsonSchema, segments: readonly string[]): JsonSchema {
  const [head, ...rest] = segments;
  const props = isObject(schema['properties']) ? schema['properties'] : {};
  if (head === undefined || !Object.hasOwn(props, head)) return schema;
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  let out: JsonSchema = required.includes(head)
    ? schema
    : { ...schema, required: [...required, head] };
  const inner = props[head];
  if (rest.length > 0 && isObject(inner)) {
    const changed = requirePath(inner, rest);
    if (changed !== inner) {
      const properties: Record<string, unknown> = { ...props };
      setKey(properties, head, changed);
      out = { ...out, properties };
    }
  }
  return out;
}

/** The declared fields standing for `parent` path parameters, outermost first. */
function parentFieldNames(params: readonly PathParam[]): string[] {
  return params.filter((p) => p.kind === 'parent').map((p) => p.param);
}

/** A desired-spec schema with a required string field per parent path parameter. */
function withParentFields(
  schema: JsonSchema,
  params: readonly PathParam[],
  idFieldOf: (typeName: string) => string,
): JsonSchema {
  const parents = params.filter(
    (p): p is Extract<PathParam, { kind: 'parent' }> => p.kind === 'parent',
  );
  if (parents.length === 0) return schema;
  const properties: Record<string, unknown> = {};
  for (const p of parents) {
    setKey(properties, p.param, {
      type: 'string',
      description: `The id of the ${p.type} object this belongs to; write it as a reference, e.g. \${<provider>.${p.type}/<name>.${idFieldOf(p.type)}}`,
    });
  }
  const own = isObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  return {
    ...schema,
    properties: { ...properties, ...own },
    required: [...parents.map((p) => p.param), ...required],
  };
}

function listShape(schema: unknown, typeName: string): ListShape {
  if (hasType(schema, 'array') || (isObject(schema) && isObject(schema['items']))) {
    return { kind: 'array' };
  }
  const field = inferListEnvelope(schema, typeName);
  return field !== undefined ? { kind: 'wrapped', field } : { kind: 'unknown' };
}

/**
 * The envelope of an operation's answer: `x-tend-envelope` on the operation when declared (false:
 * none), else inferred from its success schema (GET and POST of one object; a list's is listShape).
 */
function envelopeOf(
  typeName: string,
  method: 'GET' | 'POST',
  path: string,
  op: Record<string, unknown>,
  createFields: readonly string[],
  warnings: string[],
  infer = true,
): string | undefined {
  const declared = op['x-tend-envelope'];
  if (declared !== undefined) {
    const read = readEnvelope(declared);
    if (read === null) return undefined;
    if (typeof read === 'string') return read;
    warnings.push(`${typeName}: ${method} ${path}: ${read.error}; ignored`);
  }
  // A list's wrapper is found by listShape, which knows arrays; here only single objects.
  if (!infer) return undefined;
  return inferObjectEnvelope(successSchema(op), typeName, createFields);
}

/** The pagination of a list: declared with x-tend-pagination, or inferred; and what is unclear. */
function paginationOf(
  typeName: string,
  collection: Record<string, unknown>,
  getList: Record<string, unknown>,
  listSchema: unknown,
  warnings: string[],
): { pagination?: Pagination; note?: string } {
  const declared = getList['x-tend-pagination'];
  if (declared !== undefined) {
    const read = readPagination(declared);
    if (read === null) return {};
    if (typeof read !== 'string') return { pagination: read };
    warnings.push(`${typeName}: ${read}; the list is read as inferred`);
  }
  const query: { name: string; schema: unknown }[] = [];
  for (const list of [collection['parameters'], getList['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (isObject(p) && p['in'] === 'query' && typeof p['name'] === 'string') {
        query.push({ name: p['name'], schema: p['schema'] });
      }
    }
  }
  const headers: string[] = [];
  const responses = getList['responses'];
  if (isObject(responses)) {
    for (const [code, r] of Object.entries(responses)) {
      if (!/^2/.test(code) || !isObject(r) || !isObject(r['headers'])) continue;
      for (const h of Object.keys(r['headers'])) headers.push(h);
    }
  }
  const inferred = inferPagination(query, listSchema, headers);
  if (typeof inferred === 'string') return { note: inferred };
  return inferred !== undefined ? { pagination: inferred } : {};
}

/** The description of a path parameter, on the operation or its path item. */
function pathParamDescription(
  pathItem: Record<string, unknown>,
  op: Record<string, unknown>,
  name: string,
): string | undefined {
  for (const list of [op['parameters'], pathItem['parameters']]) {
    if (!Array.isArray(list)) continue;
    for (const p of list) {
      if (isObject(p) && p['in'] === 'path' && p['name'] === name) {
        const d =
          p['description'] ?? (isObject(p['schema']) ? p['schema']['description'] : undefined);
        if (typeof d === 'string') return d;
      }
    }
  }
  return undefined;
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

/**
 * The fields an update declared with `x-tend-key-fields` takes its path parameters from (checked
 * by irregular-ops.ts against the paths); each must be a field the read object has, or Tend could
 * never fill the path: a warning names it.
 */
function addressedByOf(
  type: string,
  where: string,
  op: Record<string, unknown>,
  addressedUpdates: WeakSet<object>,
  read: ObjectView,
  warnings: string[],
): { addressedBy?: Record<string, string> } {
  if (!addressedUpdates.has(op)) return {};
  const out: Record<string, string> = {};
  for (const [param, field] of Object.entries(op['x-tend-key-fields'] as Record<string, string>)) {
    if (!Object.hasOwn(read.properties, keyPathSegments(field)[0]!)) {
      warnings.push(
        `${type}: ${where} takes {${param}} from the field ${field}, which the object read has no property for; the update will fail unless the platform answers it`,
      );
    }
    setKey(out, param, field);
  }
  return { addressedBy: out };
}

/**
 * `x-tend-consistent-reads` on the root: `true` says every read and list sent after a write has been
 * answered sees it (read-your-writes), so observe need not wait for an object created moments ago.
 * Anything but a boolean is a warning and means false: a wrong promise costs duplicates, a missing
 * one only a wait.
 */
function readConsistentReads(document: Record<string, unknown>, warnings: string[]): boolean {
  const value = document['x-tend-consistent-reads'];
  if (value === undefined || typeof value === 'boolean') return value === true;
  warnings.push(
    `x-tend-consistent-reads must be true or false, got ${JSON.stringify(value)}; ignored (reads are taken as eventually consistent)`,
  );
  return false;
}

/** `x-tend-parent-values`: path parameters that always take the same value. */
function parentValues(document: Record<string, unknown>, warnings: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const value = document['x-tend-parent-values'];
  if (value === undefined) return out;
  if (!isObject(value)) {
    warnings.push('x-tend-parent-values must map path parameter names to values; ignored');
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number') out.set(k, String(v));
    else warnings.push(`x-tend-parent-values.${k} must be a string or a number; ignored`);
  }
  return out;
}

function operation(
  item: Record<string, unknown>,
  method: HttpMethod,
): Record<string, unknown> | undefined {
  const op = item[method.toLowerCase()];
  return isObject(op) ? op : undefined;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
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

/** A path with its parameter names erased, so `/a/{x}` and `/a/{y}` compare equal. */
function shapeOf(path: string): string {
  return (
    '/' +
    splitPath(path)
      .map((s) => (isParam(s) ? '{}' : s))
      .join('/')
  );
}
