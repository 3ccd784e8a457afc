import type { JsonSchema } from '../../../core/index.js';
import type { HttpMethod } from '../transport/http-client.js';
import { requestMedia } from '../transport/request-media.js';
import { isObject } from '../fields/schema-view.js';
import type { RealOperation } from './irregular-ops.js';
import { schemaAtPath } from './envelope.js';
import { queryOnlyCreate } from './create-query.js';
import { createdAtItem, keyParamOf, lastParam, withItemKey } from './item-create.js';
import type { RequestEnvelope } from './request-envelope.js';
import { requestEnvelopeHint, requestEnvelopeOf } from './request-envelope.js';
import type { PostUpdate } from './update-by-post.js';
import { postUpdate } from './update-by-post.js';

/**
 * What a type's create and update send, the shape decisions of a type's writes: which operation,
 * which body (JSON, a form, none: request-media.ts), wrapped in which property
 * (request-envelope.ts), with the object's own name added when it is created at its own address
 * (item-create.ts); and for the update PATCH, else PUT, else a POST that updates
 * (update-by-post.ts). A string is why a type cannot be written to.
 */

/** The create of a type as it is sent. */
export interface CreateRequest {
  /** The create operation (the collection's POST, wherever it really is). */
  readonly post: Record<string, unknown>;
  /** The path item the create really sits on (its own parameters, not the collection's). */
  readonly pathItem: Record<string, unknown>;
  /** Its method and path as the document writes them (`PUT /environments/{name}`), for messages. */
  readonly where: string;
  /** True when it creates at the object's own item path (item-create.ts `createdAtItem`). */
  readonly atItem: boolean;
  /** The item path parameter taking an object's id: its last. */
  readonly idParam: string;
  /** The parameter naming the object it creates: the create's own when it is at the item path. */
  readonly keyParam: string;
  /** Where an object created at its own address is created (the create's path). */
  readonly createdAt: string;
  /** The request envelope wrapping the fields, when there is one. */
  readonly wrap?: RequestEnvelope;
  /** A body of one object property not taken as a wrapper: what to declare if it is one. */
  readonly wrapNote?: string;
  /** Set when created at its own address: whether the body has the key field too. */
  readonly keyInBody?: boolean;
  /** The fields' schema (unwrapped, with the key field of a create at the item path). */
  readonly bodySchema: JsonSchema;
}

/**
 * The create of a type: a JSON body, else a form (request-media.ts); created at its own item path
 * (`PUT /x/{name}`), a create without a body sends the name alone, and so does a create whose
 * fields all travel in the query (create-query.ts). `copy` makes the plain-data copy of the body's
 * schema (schema-view.ts `acyclicCopy`, within the document's budget). A string: the reason the
 * type is unmapped.
 */
export function createRequest(
  name: string,
  collectionPath: string,
  collection: Record<string, unknown>,
  itemPath: string,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  realOf: WeakMap<object, RealOperation>,
  copy: (schema: unknown) => unknown,
  warnings: string[],
): CreateRequest | string {
  const post = collection['post'] as Record<string, unknown>;
  const real = realOf.get(post);
  const pathItem = paths[real?.path ?? ''] ?? collection;
  const atItem = createdAtItem(real, itemPath);
  const bodyless = post['requestBody'] === undefined && (atItem || queryOnlyCreate(pathItem, post));
  const body = bodyless ? undefined : requestMedia(post, `POST ${real?.path ?? collectionPath}`);
  if (body !== undefined && 'reason' in body) return body.reason;
  const copiedBody = body && isObject(body.schema) ? copy(body.schema) : undefined;
  // A body wrapping the fields in one property (`{"group": {…}}`): the fields are the wrapped ones.
  const where = `${real?.method ?? 'POST'} ${real?.path ?? collectionPath}`;
  const wrap = requestEnvelopeOf(name, where, post, copiedBody, warnings);
  // Not taken as a wrapper, though it could be one: inspect says what to declare if it is.
  const wrapNote = wrap === undefined ? requestEnvelopeHint(name, where, copiedBody) : undefined;
  const written = wrap !== undefined ? schemaAtPath(copiedBody, wrap.field) : copiedBody;
  const idParam = lastParam(itemPath) ?? '';
  // Created at its own address: keyed by the create's own parameter, at the create's own path.
  const createdAt = real?.path ?? itemPath;
  const keyParam = atItem ? keyParamOf(real, itemPath) : idParam;
  const keyed = atItem
    ? withItemKey(written as JsonSchema | undefined, keyParam, createdAt)
    : undefined;
  return {
    post,
    pathItem,
    where,
    atItem,
    idParam,
    keyParam,
    createdAt,
    ...(wrap !== undefined ? { wrap } : {}),
    ...(wrapNote !== undefined ? { wrapNote } : {}),
    ...(keyed ? { keyInBody: keyed.inBody } : {}),
    bodySchema: (keyed?.schema ?? written) as JsonSchema,
  };
}

/** The update of a type as it is sent; neither `op` nor `byPost` when nothing changes in place. */
export interface UpdateRequest {
  /** The item path's PATCH, else its PUT. */
  readonly op?: Record<string, unknown>;
  readonly method: HttpMethod;
  /** Its method and path as the document writes them, for messages ('' without `op`). */
  readonly where: string;
  /** The request envelope of its body, when there is one. */
  readonly wrap?: RequestEnvelope;
  /** Set when, without PATCH and PUT, a POST on the item path is the update (update-by-post.ts). */
  readonly byPost?: PostUpdate;
}

/**
 * The update of a type: PATCH, else PUT (not a method its parent's sub-collections are changed
 * through: `embeddedMethods`), else a POST on the item path that updates, whose fields are the only
 * ones that change in place. A string: a type that can neither be changed nor deleted (`noDelete`
 * says where Tend looked for a DELETE), which Tend does not manage.
 */
export function updateRequest(
  name: string,
  itemPath: string,
  item: Record<string, unknown>,
  post: Record<string, unknown>,
  writableFields: readonly string[],
  embeddedMethods: readonly string[],
  noDelete: string | undefined,
  realOf: WeakMap<object, RealOperation>,
  warnings: string[],
): UpdateRequest | string {
  const patch = embeddedMethods.includes('PATCH') ? undefined : operation(item, 'patch');
  const put = embeddedMethods.includes('PUT') ? undefined : operation(item, 'put');
  const op = patch ?? put;
  const method: HttpMethod = patch ? 'PATCH' : 'PUT';
  const where = op ? `${realOf.get(op)?.method ?? method} ${realOf.get(op)?.path ?? itemPath}` : '';
  const media = op ? requestMedia(op, where) : undefined;
  const wrap =
    op && media !== undefined && !('reason' in media)
      ? requestEnvelopeOf(name, where, op, media.schema, warnings)
      : undefined;
  // Without PATCH or PUT, a POST on the item path may be the update (update-by-post.ts); the
  // create's fields it does not take cannot change in place.
  const byPost = op ? undefined : postUpdate(itemPath, item, post, writableFields);
  if (noDelete !== undefined && !op && !byPost) {
    return `${noDelete}, and no PATCH, PUT or update by POST there: Tend could create these objects but never change or remove them`;
  }
  return {
    ...(op ? { op } : {}),
    method,
    where,
    ...(wrap !== undefined ? { wrap } : {}),
    ...(byPost ? { byPost } : {}),
  };
}

function operation(
  item: Record<string, unknown>,
  method: 'patch' | 'put',
): Record<string, unknown> | undefined {
  const op = item[method];
  return isObject(op) ? op : undefined;
}
