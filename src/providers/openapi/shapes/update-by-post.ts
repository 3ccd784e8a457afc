import { sendableMedia } from '../transport/request-media.js';
import { isObject, objectView, successSchema } from '../fields/schema-view.js';

/** An update sent by POST on the item path, and the fields it takes. */
export interface PostUpdate {
  readonly operation: Record<string, unknown>;
  /** The top-level fields its body takes (only these are sent on an update). */
  readonly fields: readonly string[];
  /** Why it was taken for the update, in words (for inspect). */
  readonly why: string;
}

/**
 * The POST on an item path that changes the object in place, as APIs without PATCH or PUT offer
 * (Stripe: `POST /v1/customers/{customer}` takes the fields to change): taken for the update only
 * when the item path has no PATCH and no PUT and the POST looks like an update of this object, not
 * an action on it (`/cancel`-style actions usually have paths of their own, but not always):
 *
 * - its request body is an object schema Tend can send (JSON or a form) with properties;
 * - every field it requires is a field of the create body (an action requires its own arguments);
 * - at least half of its fields are fields of the create body (it changes what create sets);
 * - when both its answer and the item GET's have properties, the answer is the object again (it
 *   carries at least half of the GET's fields).
 *
 * It takes only the changed fields (a merge); the create's fields it does not take cannot change in
 * place. `create` is the collection's POST, never taken (an API that creates by POST on the item
 * path). Returns undefined when there is no such POST.
 */
export function postUpdate(
  itemPath: string,
  item: Record<string, unknown>,
  create: Record<string, unknown>,
  createFields: readonly string[],
): PostUpdate | undefined {
  const post = item['post'];
  if (!isObject(post) || post === create) return undefined;
  if (isObject(item['patch']) || isObject(item['put'])) return undefined;
  const media = sendableMedia(post, `POST ${itemPath}`);
  if (media === undefined) return undefined;
  const body = objectView(media.schema);
  const fields = Object.keys(body.properties);
  if (fields.length === 0) return undefined;
  const known = new Set(createFields);
  if (body.required.some((f) => !known.has(f))) return undefined;
  const shared = fields.filter((f) => known.has(f));
  if (shared.length * 2 < fields.length) return undefined;
  const answer = Object.keys(objectView(successSchema(post)).properties);
  const read = Object.keys(objectView(successSchema(item['get'])).properties);
  if (answer.length > 0 && read.length > 0) {
    const answered = new Set(answer);
    if (read.filter((f) => answered.has(f)).length * 2 < read.length) return undefined;
  }
  return {
    operation: post,
    fields,
    why: `POST ${itemPath} takes ${shared.length} of its ${fields.length} fields from the create body and answers with the object: an update of the fields it carries`,
  };
}
