import type { ObservedObject } from '../../../core/index.js';
import type { DerivedType } from '../derive-types.js';
import { isObject } from '../fields/schema-view.js';
import { observed, scalarId } from './answers.js';
import { collection, listPerScope } from './collection.js';
import type { AccessContext, ShapeAccess } from './context.js';
import { readRaw } from './reads.js';

// One object per owner at a fixed path (`/branches/{branch}/protection`): read, created, changed and
// deleted at its address like a collection's item, but listed through its owners.

/**
 * The objects of a singleton type: the owners' list gives the keys, and each owner's object is
 * read at its address; an owner without one (404) has none.
 */
async function listSingletons(
  ctx: AccessContext,
  t: DerivedType,
  signal?: AbortSignal,
): Promise<ObservedObject[]> {
  const out: ObservedObject[] = [];
  const ownerKey = t.singleton!.ownerKey;
  for (const { scope, items: owners } of await listPerScope(ctx, t, signal)) {
    const keys = owners
      .filter(isObject)
      .map((o) => scalarId(o[ownerKey]))
      .filter((k): k is string => k !== undefined);
    // Every owner is read at once (the client bounds concurrency).
    const read = await Promise.all(
      keys.map(async (key) => ({ key, got: await readRaw(ctx, t, scope, key, signal) })),
    );
    for (const { key, got } of read) {
      if (got === undefined) continue;
      const o = observed(ctx, t, got.body, scope, [key], got.etag);
      if (o) out.push(o);
    }
  }
  return out;
}

/** The access of a singleton type: a collection's, listed through the owners. */
export const singleton: ShapeAccess = { ...collection, list: listSingletons };
