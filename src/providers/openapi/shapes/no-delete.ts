import { isObject } from '../fields/schema-view.js';

/** How the objects of a type are deleted, as the document says. */
export type Deletion =
  /** The item path has DELETE. */
  | { readonly kind: 'delete' }
  /**
   * The API offers no DELETE for these objects (Stripe prices, tax rates: deactivated, never
   * deleted): the type is managed, but a removed resource is never deleted (its plan step is
   * blocked). `reason` says where Tend looked.
   */
  | { readonly kind: 'none'; readonly reason: string }
  /** The item path is not really the objects' (a DELETE sits one parameter deeper): not a type. */
  | { readonly kind: 'unmapped'; readonly reason: string };

/**
 * Whether the objects at an item path can be deleted. An item path without DELETE is a type whose
 * objects cannot be deleted, unless an item path below it has a DELETE
 * (`/object-storage/buckets/{clusterId}` without, `/object-storage/buckets/{clusterId}/{bucket}`
 * with): then the objects are really named by both parameters, and this item path is a listing of
 * them, not one object. `below` are the item paths directly under `itemPath` (`itemPath/{x}`).
 * (The caller also requires an update in place: a type that can be neither changed nor deleted is
 * not managed.)
 */
export function deletion(
  itemPath: string,
  item: Record<string, unknown>,
  below: readonly string[],
  paths: Readonly<Record<string, Record<string, unknown>>>,
): Deletion {
  if (isObject(item['delete'])) return { kind: 'delete' };
  const deeper = below.find((p) => isObject(paths[p]?.['delete']));
  if (deeper !== undefined) {
    return {
      kind: 'unmapped',
      reason: `no DELETE on ${itemPath}, but ${deeper} has one: these objects seem to be named by the parameters of ${deeper}, and Tend does not pair that item path with this collection`,
    };
  }
  return { kind: 'none', reason: `no DELETE on ${itemPath}` };
}
