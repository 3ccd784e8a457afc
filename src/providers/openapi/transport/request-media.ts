import { isObject, jsonMedia } from '../fields/schema-view.js';

/** The media type of form-encoded request bodies (`a=1&metadata[k]=v`). */
export const FORM_MEDIA = 'application/x-www-form-urlencoded';

/**
 * Encodes a request body for its media type: a form (`application/x-www-form-urlencoded`) in bracket
 * notation (form-encoding.ts, loaded with `qs` for the first form: docs/decisions/0033-lazy-modules.md),
 * anything else as JSON.
 */
export async function encodeRequestBody(
  body: unknown,
  contentType: string | undefined,
): Promise<string> {
  if (contentType !== undefined && isForm(contentType)) {
    const { encodeForm } = await import('./form-encoding.js');
    return encodeForm(body);
  }
  return JSON.stringify(body);
}

/** True when a media type is a form (`application/x-www-form-urlencoded`, parameters ignored). */
export function isForm(contentType: string): boolean {
  return contentType.split(';')[0]!.trim().toLowerCase() === FORM_MEDIA;
}

/** The request body Tend sends to an operation: its media type and schema. */
export interface RequestMedia {
  /** The media type as the document names it, without parameters (`application/json`). */
  readonly contentType: string;
  /** How Tend encodes what it sends: JSON, or a form with brackets for nesting (form-encoding.ts). */
  readonly encoding: 'json' | 'form';
  readonly schema: Record<string, unknown>;
}

/**
 * The request body of an operation that Tend can send, or why there is none: a JSON body first
 * (`application/json`, any `*json`, `*\/*`), else a form (`application/x-www-form-urlencoded`, as
 * Stripe takes every write). A body only in `multipart/form-data` (file uploads) or another media
 * type is not sent; the reason says which media types the operation takes and what to do. `what` is
 * the operation as the reason names it (`POST /v1/products`).
 */
export function requestMedia(
  operation: Record<string, unknown>,
  what: string,
): RequestMedia | { readonly reason: string } {
  const body = operation['requestBody'];
  if (!isObject(body)) {
    return {
      reason: `${what} declares no request body: Tend cannot tell what to send; if it takes one, describe it in an overlay (requestBody with a JSON or form schema)`,
    };
  }
  const content = body['content'];
  const json = jsonMedia(content);
  if (json !== undefined) {
    if (isObject(json.schema)) {
      return { contentType: json.contentType, encoding: 'json', schema: json.schema };
    }
    return {
      reason: `${what} declares a ${json.contentType} request body without a schema: Tend cannot tell what to send; give it a schema in an overlay`,
    };
  }
  const keys = isObject(content) ? Object.keys(content) : [];
  const formKey = keys.find((k) => baseType(k) === FORM_MEDIA);
  if (formKey !== undefined) {
    const media = (content as Record<string, unknown>)[formKey];
    const schema = isObject(media) ? media['schema'] : undefined;
    if (isObject(schema)) return { contentType: FORM_MEDIA, encoding: 'form', schema };
    return {
      reason: `${what} declares a ${FORM_MEDIA} request body without a schema: Tend cannot tell what to send; give it a schema in an overlay`,
    };
  }
  if (keys.length === 0) {
    return {
      reason: `${what} declares a request body with no media type: Tend cannot tell what to send; describe it in an overlay (a JSON or form schema)`,
    };
  }
  const types = keys.map(baseType);
  if (types.includes('multipart/form-data')) {
    return {
      reason: `${what} takes only ${types.join(', ')}: Tend does not send multipart bodies (file uploads), only JSON and ${FORM_MEDIA}`,
    };
  }
  return {
    reason: `${what} takes only ${types.join(', ')}: Tend sends JSON or ${FORM_MEDIA} bodies; if the API also accepts JSON, say so in an overlay`,
  };
}

/** The request body an operation takes, when Tend can send it (see requestMedia). */
export function sendableMedia(
  operation: Record<string, unknown>,
  what: string,
): RequestMedia | undefined {
  const media = requestMedia(operation, what);
  return 'reason' in media ? undefined : media;
}

function baseType(key: string): string {
  return key.split(';')[0]!.trim().toLowerCase();
}
