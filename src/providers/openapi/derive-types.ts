import type { JsonSchema, ResourceTypeInfo } from '../../core/index.js';
import { keyPathSegments, setKey } from '../../core/index.js';
import type { AuditFeed } from './audit-feed.js';
import { auditTypeWarnings, readAuditFeed } from './audit-feed.js';
import type { ImportExclusion } from './fields/annotations.js';
import {
  NORMALIZE_OPS,
  importExclusions,
  isCreateOnly,
  isOutputOnly,
  isSensitive,
  isServerOwned,
  isWriteOnly,
  normalizeOps,
  KEYED_FORMATS,
  unknownTendExtensions,
} from './fields/annotations.js';
import { NAME_LIKE, inferIdentity, lookupParams, withBranchFields } from './fields/identity.js';
import { markerLocation } from './fields/marker-location.js';
import type { HttpMethod } from './transport/http-client.js';
import { requestMedia, sendableMedia } from './transport/request-media.js';
import { requestEnvelopeHint, requestEnvelopeOf } from './shapes/request-envelope.js';
import { postUpdate } from './shapes/update-by-post.js';
import { deletion } from './shapes/no-delete.js';
import type { AbsentWhen } from './fields/object-annotations.js';
import { readAbsentWhen, readIdField } from './fields/object-annotations.js';
import {
  inferListEnvelope,
  inferObjectEnvelope,
  readEnvelope,
  schemaAtPath,
} from './shapes/envelope.js';
import type { RealOperation } from './shapes/irregular-ops.js';
import { assembleOperations } from './shapes/irregular-ops.js';
import { longerName, noItemPathReason } from './shapes/path-pairing.js';
import type { ItemKeyPart } from './shapes/item-key.js';
import { compositeItemPath, itemKeyParts } from './shapes/item-key.js';
import { keyedCollections } from './shapes/keyed-collection.js';
import { listCandidates, listCandidatesHint, listedFieldsOf } from './shapes/list-candidates.js';
import type { ItemCreate, PathParam, Singleton } from './shapes/item-create.js';
import {
  createdAtItem,
  itemCreateChoice,
  itemCreateIdentity,
  keyFieldInRead,
  keyParamOf,
  lastParam,
  singletonChoice,
  withSingleton,
  settleParentClash,
  withItemCreate,
  withItemKey,
} from './shapes/item-create.js';
import type { Pagination } from './shapes/pagination.js';
import { isCheckOnlyGet, readByListOperation, readByListReason } from './shapes/read-by-list.js';
import { inferPagination, readPagination } from './shapes/pagination.js';
import type { CreateQuery } from './shapes/create-query.js';
import { createQueryOf, queryOnlyCreate } from './shapes/create-query.js';
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
 */
export function deriveTypes(document: Record<string, unknown>): DerivedTypes {
  const warnings: string[] = [];
  const unmapped: UnmappedPath[] = [];
  const types: DerivedType[] = [];

  const lifecycle = extensionPath(document, 'x-tend-lifecycle', warnings);
  const audit = readAuditFeed(document, warnings);
  const consistentReads = readConsistentReads(document, warnings);
  const fixedValues = parentValues(document, warnings);
  for (const w of unknownTendExtensions(document)) warnings.push(w);

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

  // Operations off the plain collection and item paths, moved onto them (see irregular-ops).
  const assembled = assembleOperations(documentPaths, warnings);
  const paths = assembled.paths;
  const moved = (p: string): readonly string[] => assembled.movedFrom.get(p) ?? [];
  /** A working path as the document writes it (the paths it stands for, when a rule made it). */
  const shown = (p: string): string =>
    Object.hasOwn(documentPaths, p) || moved(p).length === 0 ? p : moved(p).join(' and ');

  const listedFields = listedFieldsOf(documentPaths);
  const copied = { nodes: 0 };
  const handled = new Set<string>();
  if (lifecycle) handled.add(lifecycle.path);
  if (audit) handled.add(audit.path);
  const byName = new Map<string, DerivedType>();
  /** Types by the shape of their item path (`/servers/{}/zones/{}`), to find parents. */
  const byItemShape = new Map<string, DerivedType>();

  // The item paths of each collection path (`/a/{x}` under `/a`), found once: looking them up per
  // collection would cost time quadratic in the number of paths.
  const itemPathsOf = new Map<string, string[]>();
  for (const p of Object.keys(paths)) {
    const segments = splitPath(p);
    const last = segments[segments.length - 1];
    if (last === undefined || !isParam(last)) continue;
    const key = segments.slice(0, -1).join('/');
    const list = itemPathsOf.get(key);
    if (list) list.push(p);
    else itemPathsOf.set(key, [p]);
  }
  // Collections whose path ends in a parameter (`/repositories/{workspace}`, keyed-collection.ts):
  // not items of the path above them.
  const { found: keyed, reasons: keyedReasons } = keyedCollections(paths, itemPathsOf);
  for (const p of keyed.keys()) {
    const key = splitPath(p).slice(0, -1).join('/');
    const siblings = itemPathsOf.get(key)?.filter((q) => q !== p);
    if (siblings === undefined) continue;
    if (siblings.length > 0) itemPathsOf.set(key, siblings);
    else itemPathsOf.delete(key);
  }

  // Shallow paths first, so a parent type exists before its children are looked at.
  const collections = Object.keys(paths)
    .map((p, i) => ({ p, i, depth: splitPath(p).length }))
    .sort((a, b) => a.depth - b.depth || a.i - b.i)
    .map((x) => x.p);

  for (const collectionPath of collections) {
    const segments = splitPath(collectionPath);
    const declaredItems = itemPathsOf.get(segments.join('/')) ?? [];
    // The root collection (`/` with `/{realm}`, when the base URL ends in the collection) is named
    // after its item parameter (`realms`).
    const rootParam = segments.length === 0 ? declaredItems[0]?.slice(2, -1) : undefined;
    const last =
      rootParam !== undefined && /^[A-Za-z][A-Za-z0-9_-]*$/.test(rootParam)
        ? `${rootParam}s`
        : (keyed.get(collectionPath)?.name ?? segments[segments.length - 1]);
    if (last === undefined || (segments.length > 0 && isParam(last))) continue;
    if (handled.has(collectionPath)) continue;
    const collection = paths[collectionPath]!;
    const pairedItems = declaredItems;
    // One object per owner at a fixed path below it (`/branches/{branch}/protection`): item-create.ts.
    const single =
      !operation(collection, 'POST') && pairedItems.length === 0
        ? singletonChoice(
            collectionPath,
            paths,
            (owner) => byItemShape.get(shapeOf(owner))?.info.idField,
            NAME_LIKE,
          )
        : undefined;
    if (typeof single === 'string') {
      handled.add(collectionPath);
      unmapped.push({ path: collectionPath, reason: single });
      continue;
    }
    const itemPaths = single ? [collectionPath] : pairedItems;
    // Objects addressed by several parameters together (`/buckets/{clusterId}/{bucket}`), when no
    // item path directly under the collection deletes one (item-key.ts).
    const composite =
      single ||
      !operation(collection, 'POST') ||
      itemPaths.some((p) => operation(paths[p]!, 'DELETE'))
        ? undefined
        : compositeItemPath(collectionPath, paths);
    if (!operation(collection, 'POST') && itemPaths.length === 0) continue; // not a collection
    if (
      itemPaths.length === 0 &&
      !composite &&
      byItemShape.has(shapeOf(parentOf(collectionPath)))
    ) {
      continue; // an action on objects of a type (POST /volumes/{id}/resize): reported below
    }

    const related = unique([
      collectionPath,
      ...itemPaths,
      ...(composite ? [composite.path] : []),
      ...[collectionPath, ...itemPaths].flatMap(moved),
    ]);
    const setAside = (reason: string): void => {
      for (const p of related) {
        if (handled.has(p)) continue;
        handled.add(p);
        if (Object.hasOwn(documentPaths, p)) unmapped.push({ path: p, reason });
      }
    };

    const ignore = collection['x-tend-ignore'];
    if (ignore !== undefined && ignore !== false) {
      setAside(
        typeof ignore === 'string' && ignore.trim() !== ''
          ? `ignored by x-tend-ignore: ${ignore}`
          : 'ignored by x-tend-ignore',
      );
      continue;
    }
    // Without a POST, objects may be created at their own item path (item-create.ts).
    const atItem =
      operation(collection, 'POST') || single
        ? undefined
        : itemCreateChoice(
            collectionPath,
            itemPaths,
            paths,
            operation(collection, 'GET') !== undefined,
          );
    if (typeof atItem === 'string') {
      setAside(atItem);
      continue;
    }
    const creatable = single
      ? withSingleton(collection, single, assembled.realOf)
      : atItem
        ? withItemCreate(collection, atItem, assembled.realOf)
        : collection;
    if (!operation(collection, 'GET')) {
      // Where a person would look next: GETs elsewhere that list objects with the create's fields.
      const hint = listCandidatesHint(
        typeof collection['x-tend-type'] === 'string' ? collection['x-tend-type'] : last,
        listCandidates(
          shown(collectionPath),
          operation(collection, 'POST'),
          Object.keys(documentPaths),
          listedFields,
        ),
      );
      setAside(`no GET on ${shown(collectionPath)}: Tend cannot list these objects${hint}`);
      continue;
    }
    if (itemPaths.length === 0 && !composite) {
      setAside(noItemPathReason(collectionPath, paths, shown));
      continue;
    }
    const params = resolveParams(
      single ? splitPath(single.ownersPath) : segments,
      fixedValues,
      byItemShape,
    );
    const explicitName = collection['x-tend-type'];
    const parentType = [...params].reverse().find((p) => p.kind === 'parent');
    let name = last;
    if (explicitName !== undefined) {
      if (typeof explicitName === 'string' && TYPE_NAME.test(explicitName)) name = explicitName;
      else
        warnings.push(
          `${collectionPath}: x-tend-type must be a name of letters, digits, - and _; ignored`,
        );
    } else if (byName.has(last) && parentType?.kind === 'parent') {
      name = `${parentType.type}-${last}`;
    } else if (byName.has(last)) {
      // A clash without a parent type: qualified by the nearest other name in the path
      // (`/repos/{owner}/{repo}/keys` → repos-keys next to /user/keys).
      // A version segment (`/v2/volumes`) is the same resource again, not another: not qualified.
      const qualifier = [...segments.slice(0, -1)].reverse().find((seg) => !isParam(seg));
      if (qualifier !== undefined && !/^v\d+/i.test(qualifier)) name = `${qualifier}-${last}`;
    }
    if (explicitName === undefined && byName.has(name)) {
      // Taken: qualified by more of the path, deterministically (path-pairing.ts).
      name = longerName(collectionPath, (n) => byName.has(n)) ?? name;
    }
    if (!TYPE_NAME.test(name)) {
      setAside(
        `"${name}" cannot be a resource type name (letters, digits, - and _ only); name it with x-tend-type`,
      );
      continue;
    }
    // Several item paths for one collection are rare; the first complete one wins.
    const itemPath =
      atItem?.itemPath ??
      composite?.path ??
      itemPaths.find((p) => operation(paths[p]!, 'GET') && operation(paths[p]!, 'DELETE')) ??
      itemPaths[0]!;
    const item = paths[itemPath]!;
    // Without a GET on the item path, one object may be read from the list (read-by-list.ts) —
    // not when the document has a GET there that a declaration or a rule put elsewhere.
    const documentGet = [
      itemPath,
      ...moved(itemPath),
      ...(['delete', 'patch', 'put'] as const).map((m) => {
        const o = item[m];
        return isObject(o) ? assembled.realOf.get(o)?.path : undefined;
      }),
    ].some(
      (q) =>
        q !== undefined &&
        isObject(documentPaths[q]?.['get']) &&
        !isCheckOnlyGet(documentPaths[q]?.['get']),
    );
    const byList = documentGet
      ? undefined
      : readByListOperation(
          name,
          collectionPath,
          collection,
          shown(itemPath),
          item,
          assembled.realOf,
        );
    if (!operation(item, 'GET') && !byList) {
      setAside(`no GET on ${shown(itemPath)}: Tend cannot read one object`);
      continue;
    }
    // Without DELETE the type may still be managed, its objects never deleted (no-delete.ts).
    const deletes = deletion(
      itemPath,
      item,
      itemPathsOf.get(splitPath(itemPath).join('/')) ?? [],
      paths,
    );
    if (deletes.kind === 'unmapped') {
      setAside(deletes.reason);
      continue;
    }
    const owner = byName.get(name);
    if (owner !== undefined) {
      setAside(
        `type name "${name}" is already taken by ${owner.collectionPath}; name one of them with x-tend-type`,
      );
      continue;
    }
    const embeddedDecls = readEmbedded(item['x-tend-embedded'], itemPath, warnings);
    const readable = byList ? { ...item, get: byList } : item;
    const built = buildType(name, collectionPath, creatable, itemPath, readable, params, {
      realOf: assembled.realOf,
      addressedUpdates: assembled.addressedUpdates,
      copied,
      lifecycle: lifecycle !== undefined,
      warnings,
      parentFieldsOf: (typeName) => byName.get(typeName)?.parentFields ?? [],
      idFieldOf: (typeName) => byName.get(typeName)?.info.idField ?? 'id',
      embeddedFields: embeddedDecls.map((d) => d.field),
      embeddedMethods: embeddedDecls.map((d) => d.method),
      paths,
      ...(single
        ? { singleton: { ownerKey: single.ownerKey, ownersPath: single.ownersPath } }
        : {}),
      ...(deletes.kind === 'none' ? { noDelete: deletes.reason } : {}),
      ...(byList
        ? { readByList: readByListReason(shown(itemPath), isCheckOnlyGet(item['get'])) }
        : {}),
      ...(composite ? { itemKey: composite.params } : {}),
    });
    if (typeof built === 'string') {
      setAside(built);
      continue;
    }
    for (const p of related) handled.add(p);
    for (const p of itemPaths.filter((p) => p !== itemPath)) {
      // A path a rule made (`/x/{id}.json` read as `/x/{id}`) is listed as the document writes it.
      for (const q of [p, ...moved(p)].filter((q) => Object.hasOwn(documentPaths, q))) {
        unmapped.push({
          path: q,
          reason: composite
            ? `a list of the "${name}" objects that share {${lastParam(p) ?? ''}}; "${name}" lists them all at ${shown(collectionPath)} and addresses one at ${shown(itemPath)}`
            : `${shown(itemPath)} is already the item path of "${name}"`,
        });
      }
    }
    byName.set(name, built);
    // A type addressed by several parameters is no parent: its children's paths name its key
    // parts one parameter each, which the parents' single-id scopes do not fill.
    if (!composite) byItemShape.set(shapeOf(itemPath), built);
    types.push(built);

    for (const decl of embeddedDecls) {
      const embedded = buildEmbedded(
        decl,
        built,
        item,
        warnings,
        (typeName) => byName.get(typeName)?.info.idField ?? 'id',
      );
      if (typeof embedded === 'string') {
        warnings.push(`${itemPath}: x-tend-embedded ${decl.type}: ${embedded}`);
        continue;
      }
      if (byName.has(embedded.info.name)) {
        warnings.push(
          `${itemPath}: x-tend-embedded ${decl.type}: type name "${embedded.info.name}" is already taken`,
        );
        continue;
      }
      byName.set(embedded.info.name, embedded);
      types.push(embedded);
    }
  }

  for (const p of Object.keys(documentPaths)) {
    if (handled.has(p)) continue;
    unmapped.push({
      path: p,
      reason:
        assembled.notes.get(p) ??
        keyedReasons.get(p) ??
        unmappedReason(assembled.readAs.get(p) ?? p, documentPaths[p]!, byItemShape, fixedValues),
    });
  }
  // A path whose operations a rule merged into another (`/x/{id}.json` read as `/x/{id}`) that no
  // type ended up calling: listed, so that every path of the document is either used or explained.
  const used = new Set<string>();
  for (const t of types) {
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
    if (p === lifecycle?.path || p === audit?.path) continue; // the provider's own endpoints
    const methods = Object.keys(documentPaths[p]!)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => m.toUpperCase());
    unmapped.push({
      path: p,
      reason: `${methods.join(', ') || 'no operation'} on ${p}: read as ${assembled.readAs.get(p) ?? 'part of a type'}, but not an operation Tend uses for it (the plain path's own operation wins)`,
    });
  }
  if (audit) for (const w of auditTypeWarnings(audit, byName)) warnings.push(w);

  return {
    types,
    unmapped,
    ...(lifecycle ? { lifecycle } : {}),
    ...(audit ? { audit } : {}),
    consistentReads,
    warnings,
  };
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

/** Builds one type from a complete path pair; a string is the reason it cannot be mapped. */
function buildType(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  itemPath: string,
  item: Record<string, unknown>,
  documentParams: readonly PathParam[],
  ctx: BuildContext,
): DerivedType | string {
  const post = operation(collection, 'POST')!;
  // The path item the create really sits on (its own parameters: `PUT /environments/{name}`'s, not
  // the collection's), when it was moved onto the collection.
  const createPathItem = ctx.paths[ctx.realOf.get(post)?.path ?? ''] ?? collection;
  // A JSON body, else a form (request-media.ts); anything else is the reason the type is unmapped.
  // Created at its own item path (PUT /x/{name}): a create without a body sends the name alone.
  const atItem = createdAtItem(ctx.realOf.get(post), itemPath);
  // A create whose fields all travel in the query (create-query.ts) sends no body either.
  const bodyless =
    post['requestBody'] === undefined && (atItem || queryOnlyCreate(createPathItem, post));
  const body = bodyless
    ? undefined
    : requestMedia(post, `POST ${ctx.realOf.get(post)?.path ?? collectionPath}`);
  if (body !== undefined && 'reason' in body) return body.reason;
  const cut = (where: string) => (path: string, reason: CutReason) =>
    ctx.warnings.push(
      reason === 'recursive'
        ? `${name}: the ${where} schema is recursive at ${path}; it is not checked below that point`
        : reason === 'deep'
          ? `${name}: the ${where} schema is nested more than ${SCHEMA_COPY_DEPTH} levels deep at ${path}; it is not checked below that depth`
          : `${name}: the ${where} schema is too large once its $refs are written out (more than ${SCHEMA_COPY_NODES.toLocaleString('en-US')} objects, or the document's schemas together more than ${DOCUMENT_COPY_NODES.toLocaleString('en-US')}); it is not checked from ${path} on`,
    );
  const copiedBody =
    body && isObject(body.schema) ? copySchema(body.schema, cut('create'), ctx.copied) : undefined;
  // A body wrapping the fields in one property (`{"group": {…}}`): the fields are the wrapped ones.
  const createWhere = `${ctx.realOf.get(post)?.method ?? 'POST'} ${ctx.realOf.get(post)?.path ?? collectionPath}`;
  const createWrap = requestEnvelopeOf(name, createWhere, post, copiedBody, ctx.warnings);
  // Not taken as a wrapper, though it could be one: inspect says what to declare if it is.
  const createWrapNote =
    createWrap === undefined ? requestEnvelopeHint(name, createWhere, copiedBody) : undefined;
  const written =
    createWrap !== undefined ? schemaAtPath(copiedBody, createWrap.field) : copiedBody;
  const idParam = lastParam(itemPath) ?? '';
  // Created at its own address: keyed by the create's own parameter, at the create's own path.
  const createdAt = ctx.realOf.get(post)?.path ?? itemPath;
  const keyParam = atItem ? keyParamOf(ctx.realOf.get(post), itemPath) : idParam;
  const keyed = atItem
    ? withItemKey(written as JsonSchema | undefined, keyParam, createdAt)
    : undefined;
  const bodySchema = (keyed?.schema ?? written) as JsonSchema;
  const createFieldNames = Object.keys(objectView(bodySchema).properties);
  const getItem = operation(item, 'GET')!;
  // An answer wrapping the object (`{"server": {…}}`): the object's schema is the wrapped one.
  const readEnvelopeField = envelopeOf(
    name,
    'GET',
    itemPath,
    getItem,
    createFieldNames,
    ctx.warnings,
  );
  const rawRead = successSchema(getItem);
  const readSchema = (copySchema(
    readEnvelopeField !== undefined ? schemaAtPath(rawRead, readEnvelopeField) : rawRead,
    cut('read'),
    ctx.copied,
  ) ?? {}) as JsonSchema;
  // Fields in the query string, and an array body as one field (create-query.ts).
  const queried = createQueryOf({
    typeName: name,
    where: createWhere,
    pathItem: createPathItem,
    op: post,
    body: bodySchema,
    readFields: Object.keys(objectView(readSchema).properties),
    warnings: ctx.warnings,
  });
  const createQuery = queried.query;
  const createSchema = queried.schema ?? {};
  const createEnvelopeField = envelopeOf(
    name,
    'POST',
    collectionPath,
    post,
    createFieldNames,
    ctx.warnings,
  );
  const create = objectView(createSchema);
  const read = objectView(readSchema);

  // A parent parameter the create body has as a field too is renamed or filled (item-create.ts).
  const settled = settleParentClash(collectionPath, documentParams, Object.keys(create.properties));
  if (typeof settled === 'string') return settled;
  const params = settled.params;
  const parentFields = parentFieldNames(params);
  // Sets for every membership test below: a schema may have many thousands of properties.
  const embedded = ctx.embeddedFields;
  const embeddedSet = new Set(embedded);
  const outputInCreate = names(create, isOutputOnly).filter((n) => !embeddedSet.has(n));
  const outputInCreateSet = new Set(outputInCreate);
  const outputOnly = unique([...names(read, isOutputOnly), ...outputInCreate]).filter(
    (n) => !embeddedSet.has(n),
  );
  const writableFields = Object.keys(create.properties).filter(
    (n) => !outputInCreateSet.has(n) && !embeddedSet.has(n),
  );
  const writable = new Set(writableFields);
  const sensitive = unique([...names(create, isSensitive), ...names(read, isSensitive)]);
  const serverOwned = unique([...names(create, isServerOwned), ...names(read, isServerOwned)]);
  const writeOnly = names(create, isWriteOnly).filter((n) => writable.has(n));
  const annotated = unique([...names(create, isCreateOnly), ...names(read, isCreateOnly)]);
  for (const view of [create, read]) {
    for (const [field, prop] of Object.entries(view.properties)) {
      if (view === read && field in create.properties) continue; // reported once
      const bad = normalizeOps(prop).unknown;
      if (bad.length > 0) {
        ctx.warnings.push(
          `${name}.${field}: x-tend-normalize does not know ${bad.join(', ')}; it offers ${NORMALIZE_OPS.join(', ')}, and {by, at?, format: ${KEYED_FORMATS.join('|')}} or {by, at?, cases} keyed by a sibling field`,
        );
      }
    }
  }

  // A method the parent's sub-collections are changed through is not the parent's own update.
  const patch = ctx.embeddedMethods.includes('PATCH') ? undefined : operation(item, 'PATCH');
  const put = ctx.embeddedMethods.includes('PUT') ? undefined : operation(item, 'PUT');
  const updateOp = patch ?? put;
  const updateMethod: HttpMethod = patch ? 'PATCH' : 'PUT';
  const updateWhere = updateOp
    ? `${ctx.realOf.get(updateOp)?.method ?? updateMethod} ${ctx.realOf.get(updateOp)?.path ?? itemPath}`
    : '';
  const updateMedia = updateOp ? requestMedia(updateOp, updateWhere) : undefined;
  const updateWrap =
    updateOp && updateMedia !== undefined && !('reason' in updateMedia)
      ? requestEnvelopeOf(name, updateWhere, updateOp, updateMedia.schema, ctx.warnings)
      : undefined;
  // Without PATCH or PUT, a POST on the item path may be the update (update-by-post.ts); the
  // create's fields it does not take cannot change in place.
  const byPost = updateOp ? undefined : postUpdate(itemPath, item, post, writableFields);
  if (ctx.noDelete !== undefined && !updateOp && !byPost) {
    return `${ctx.noDelete}, and no PATCH, PUT or update by POST there: Tend could create these objects but never change or remove them`;
  }
  const notUpdatable = byPost ? writableFields.filter((f) => !byPost.fields.includes(f)) : [];
  // Without an update nothing changes in place: every writable field is create-only. A parent
  // field moves the object to another parent, which no API does in place.
  const createOnly = unique([
    ...parentFields,
    ...(atItem ? [keyParam] : []),
    ...(updateOp || byPost ? annotated.filter((f) => writable.has(f)) : writableFields),
    ...notUpdatable,
    ...annotated.filter((f) => writable.has(f)),
    // Sent with the create only: an update's body does not carry the create's query or array.
    ...(createQuery?.params.map((p) => p.field) ?? []).filter((f) => writable.has(f)),
    ...(createQuery?.bodyField !== undefined && writable.has(createQuery.bodyField)
      ? [createQuery.bodyField]
      : []),
  ]);

  // Addressed by several parameters together: the field holding each (item-key.ts).
  const keyParts = ctx.itemKey
    ? itemKeyParts({
        typeName: name,
        collectionPath,
        itemPath,
        params: ctx.itemKey,
        declared: item['x-tend-key-fields'],
        // A read schema the document leaves empty says nothing against the create's fields.
        readFields:
          Object.keys(read.properties).length > 0 ? Object.keys(read.properties) : writableFields,
        createFields: writableFields,
        hasNested: (path) => viewHasKeyPath(read, path) && viewHasKeyPath(create, path),
      })
    : undefined;
  if (keyParts !== undefined && 'reason' in keyParts) {
    return `its objects are addressed by ${ctx.itemKey!.map((p) => `{${p}}`).join(' and ')} together (${itemPath}), but ${keyParts.reason}`;
  }
  const itemKey = keyParts?.parts;

  // Identity (identity.ts): also from the fields every oneOf/anyOf branch of the create body shares.
  const keyView = withBranchFields(createSchema, create, writableFields);
  const found = markerLocation(name, keyView.view, [createSchema, post], ctx.warnings);
  const idempotencyHeader = headerParameter(collection, post, 'idempotency-key');
  const inferred = inferIdentity({
    name,
    collectionPath,
    idParam: keyParam,
    idParamDescription: pathParamDescription(item, getItem, keyParam),
    read,
    create: keyView.view,
    writableFields: keyView.writable,
    branchFields: keyView.branchFields,
    markerField: found?.field,
    idempotencyHeader,
    explicit: [createSchema, readSchema, post],
    createText: [post['summary'], post['description']],
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
  const identity: typeof inferred =
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
            itemPath: createdAt,
            method: ctx.realOf.get(post)!.method,
            keyField: itemKeyField,
            ...(ctx.singleton ? { ownersPath: ctx.singleton.ownersPath } : {}),
          })
        : inferred;
  // A text marker is the last resort: inferred, it is used only when the type has no other identity
  // (a token in a person's description is noise where a name already identifies the object).
  // Stated with x-tend-marker, it is used as stated.
  const stated = [createSchema, post].some((s) => isObject(s) && s['x-tend-marker'] !== undefined);
  const marker =
    found?.kind === 'text' && !stated && identity.identity !== 'marker' ? undefined : found;
  const answer = objectView(successSchema(post));
  const createIdField = readIdField(
    name,
    [post],
    Object.keys(answer.properties).length > 0 ? answer : undefined,
    `POST ${collectionPath}`,
    ctx.warnings,
  );
  const absentWhen = readAbsentWhen(name, [readSchema, operation(item, 'GET')], read, ctx.warnings);
  // A singleton's read object need not carry its owner's key: the key is what it was read with.
  const idField = ctx.singleton
    ? idParam
    : itemKey
      ? itemKey.at(-1)!.field
      : (statedIdField ??
        itemKeyField ??
        (idParam in read.properties
          ? idParam
          : 'id' in read.properties
            ? 'id'
            : identity.naturalKeys !== undefined && identity.naturalKeys.length === 1
              ? identity.naturalKeys[0]!
              : idParam));

  const description = [createSchema['description'], post['summary'], post['description']].find(
    (d): d is string => typeof d === 'string' && d.trim() !== '',
  );

  const keyFields =
    identity.naturalKeys !== undefined ? [...parentFields, ...identity.naturalKeys] : [];
  const importExclude = readImportExclude(
    name,
    createSchema['x-tend-import-exclude'] ?? readSchema['x-tend-import-exclude'],
    [...Object.keys(create.properties), ...Object.keys(read.properties)],
    ctx.warnings,
  );
  // A natural key must be declared: it is how Tend finds the object again.
  const schema = withImportExclude(
    withParentFields(
      requireFields(
        withoutProperties(createSchema, create, [...outputInCreate, ...embedded]),
        identity.naturalKeys ?? [],
      ),
      params,
      ctx.idFieldOf,
    ),
    importExclude,
  );
  const parent = [...params].reverse().find((p) => p.kind === 'parent');
  const versionField = readVersionField(
    name,
    [readSchema, createSchema, operation(item, 'GET')!],
    read,
    ctx.warnings,
  );
  const info: ResourceTypeInfo = {
    name,
    ...(description !== undefined ? { description } : {}),
    schema,
    identity: identity.identity,
    ...(identity.reason !== undefined ? { identityReason: identity.reason } : {}),
    idField,
    // One field is the whole key only without parents: a name alone does not find a nested object.
    ...(keyFields.length === 1 ? { naturalKey: keyFields[0]! } : {}),
    ...(keyFields.length > 0 ? { naturalKeyFields: keyFields } : {}),
    createOnly,
    outputOnly,
    sensitive,
    ...(createQuery !== undefined && createQuery.params.length > 0
      ? { sentInUrl: createQuery.params.map((q) => q.field) }
      : {}),
    ...(marker !== undefined ? { markerField: marker.field, markerKind: marker.kind } : {}),
    lifecycle: ctx.lifecycle ? 'platform' : 'annotations',
    idempotencyKey: identity.idempotencyKey,
    ...(parent?.kind === 'parent' ? { parent: { type: parent.type, field: parent.param } } : {}),
    ...(serverOwned.length > 0 ? { serverOwned } : {}),
    ...(writeOnly.length > 0 ? { writeOnly } : {}),
    ...(ctx.noDelete !== undefined ? { noDelete: ctx.noDelete } : {}),
  };

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
  const getList = operation(collection, 'GET')!;
  const listEnvelope = envelopeOf(name, 'GET', collectionPath, getList, [], ctx.warnings, false);
  const listSchema = successSchema(getList);
  const listShapeFound: ListShape =
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
  const envelope = {
    ...(readEnvelopeField !== undefined ? { read: readEnvelopeField } : {}),
    ...(createEnvelopeField !== undefined ? { create: createEnvelopeField } : {}),
  };

  return {
    info,
    collectionPath,
    itemPath,
    idParam,
    operations: {
      list: ref('GET', collectionPath, getList),
      read: ref('GET', itemPath, getItem),
      create: ref('POST', collectionPath, post),
      ...(updateOp
        ? {
            update: {
              ...ref(updateMethod, itemPath, updateOp),
              ...addressedByOf(
                name,
                updateWhere,
                updateOp,
                ctx.addressedUpdates,
                read,
                ctx.warnings,
              ),
            },
          }
        : byPost
          ? { update: ref('POST', itemPath, byPost.operation) }
          : {}),
      ...(ctx.noDelete === undefined
        ? { delete: ref('DELETE', itemPath, operation(item, 'DELETE')!) }
        : {}),
    },
    ...(byPost ? { updateFields: byPost.fields, updateWhy: byPost.why } : {}),
    listShape: listShapeFound,
    ...(listIdField !== undefined ? { listIdField } : {}),
    ...(Object.keys(envelope).length > 0 ? { envelope } : {}),
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
    ...(createWrapNote !== undefined ? { requestEnvelopeNote: createWrapNote } : {}),
    ...(createQuery !== undefined ? { createQuery } : {}),
    ...(paging.pagination !== undefined ? { pagination: paging.pagination } : {}),
    ...(paging.note !== undefined ? { paginationNote: paging.note } : {}),
    ...(identity.why !== undefined
      ? {
          identityWhy:
            listIdField !== undefined && identity.identity !== null
              ? `${identity.why} (the list GET ${ctx.realOf.get(getList)?.path ?? collectionPath} answers another shape: its objects hold the id in ${listIdField})`
              : identity.why,
        }
      : {}),
    ...(identity.idempotencyKey
      ? { idempotencyHeader: idempotencyHeader ?? 'Idempotency-Key' }
      : {}),
    writableFields,
    params,
    parentFields,
    keyFields,
    writeOnly,
    serverOwned,
    embeddedFields: [...embedded],
    readSchema,
    partialUpdate:
      byPost !== undefined ||
      (updateOp !== undefined && updateOp['x-tend-partial-update'] === true),
    absentWhenEmpty: stringList(
      getItem['x-tend-absent-when-empty'] ?? readSchema['x-tend-absent-when-empty'],
    ),
    importExclude,
    ...(versionField !== undefined ? { versionField } : {}),
    ...(absentWhen.length > 0 ? { absentWhen } : {}),
    ...(createIdField !== undefined ? { createIdField } : {}),
    ...(atItem ? { createAtItem: { param: keyParam, inBody: keyed?.inBody ?? false } } : {}),
    ...(ctx.singleton ? { singleton: ctx.singleton } : {}),
    ...(Object.keys(settled.aliases).length > 0 ? { paramAliases: settled.aliases } : {}),
    ...(settled.inBody.length > 0 ? { parentFieldsInBody: settled.inBody } : {}),
    ...(settled.notes.length > 0 ? { parentNotes: settled.notes } : {}),
    ...(ctx.readByList !== undefined ? { readByList: ctx.readByList } : {}),
    ...(itemKey ? { itemKey } : {}),
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

function names(view: ObjectView, test: (p: Record<string, unknown>) => boolean): string[] {
  const out: string[] = [];
  const props = view.properties;
  for (const n of Object.keys(props)) if (test(props[n]!)) out.push(n);
  return out;
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

function parentOf(path: string): string {
  return '/' + splitPath(path).slice(0, -1).join('/');
}
