import type { Address } from './address.js';

/**
 * The ownership marker Tend puts on everything it creates (as tags, where the platform has them).
 * It is how Tend rediscovers its objects when its store is lost, and how it tells its own objects
 * from everyone else's: Tend deletes only objects that carry its marker.
 */
export interface Marker {
  /** Which Tend workspace owns the object (several intents may share one platform). */
  readonly workspace: string;
  readonly address: Address;
  /** The idempotency key of the operation that created the object (tells old from new in a replace). */
  readonly op?: string;
}

export const MARKER_WORKSPACE_TAG = 'tend.workspace';
export const MARKER_ADDRESS_TAG = 'tend.address';
export const MARKER_OP_TAG = 'tend.op';

/** The tags that carry a marker. */
export function markerTags(marker: Marker): Record<string, string> {
  const tags: Record<string, string> = {
    [MARKER_WORKSPACE_TAG]: marker.workspace,
    [MARKER_ADDRESS_TAG]: marker.address,
  };
  if (marker.op) tags[MARKER_OP_TAG] = marker.op;
  return tags;
}

/** Reads a marker back from tags; undefined when the object carries none. */
export function readMarker(tags: unknown): Marker | undefined {
  if (tags === null || typeof tags !== 'object') return undefined;
  const t = tags as Record<string, unknown>;
  const workspace = t[MARKER_WORKSPACE_TAG];
  const address = t[MARKER_ADDRESS_TAG];
  if (typeof workspace !== 'string' || typeof address !== 'string' || !address.includes('/')) {
    return undefined;
  }
  const op = t[MARKER_OP_TAG];
  return typeof op === 'string'
    ? { workspace, address: address as Address, op }
    : { workspace, address: address as Address };
}

/** True when a tag key is one of Tend's marker keys (they are never drift, never the user's). */
export function isMarkerTag(key: string): boolean {
  return key === MARKER_WORKSPACE_TAG || key === MARKER_ADDRESS_TAG || key === MARKER_OP_TAG;
}
