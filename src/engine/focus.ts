import type { Address, Intent, ObservedObject } from '../core/index.js';
import { getPath, readMarkerIn } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import type { FeedBatch } from './arbitrate.js';
import type { Observation } from './observe.js';
import { markerRemoved } from './observe.js';
import { targetClosure } from './planner.js';
import type { Workspace } from './workspace.js';

/**
 * True when a focused pass cannot be used and a full pass must run instead: the feed has nothing
 * new, the journal holds unsettled operations (recovery comes first), or an entry is about an
 * address the intent does not declare. A focused pass re-reads only the objects the audit feed
 * names; everything a full observation finds by listing (adoptions by marker or natural key, moves,
 * orphans, duplicates, deletes of removed resources, objects waiting to become visible) is left to
 * the full passes, so any sign of those sends the pass back to a full one.
 */
export async function needsFullPass(ws: Workspace, feed: FeedBatch): Promise<boolean> {
  if (feed.events.length === 0) return true;
  if ((await ws.store.unsettled()).length > 0) return true;
  const declared = graphOf(ws.intent);
  return feed.events.some((e) => !declared.has(e.address));
}

const graphs = new WeakMap<Intent, ReadonlyMap<Address, readonly Address[]>>();

function graphOf(intent: Intent): ReadonlyMap<Address, readonly Address[]> {
  let graph = graphs.get(intent);
  if (!graph) {
    graph = new Map(intent.resources.map((r) => [r.address, r.dependsOn] as const));
    graphs.set(intent, graph);
  }
  return graph;
}

/** `focus` and everything it references, transitively (the graph is cached per intent). */
export function dependencyClosure(intent: Intent, focus: ReadonlySet<Address>): Set<Address> {
  return targetClosure(graphOf(intent), [], [...focus]) ?? new Set();
}

/**
 * The observation of a focused pass: the objects of `focus` read again, one GET each, and the objects
 * they reference as Tend last recorded them (only their ids and fields are used, to resolve
 * references). Nothing else is listed. Returns undefined — run a full pass — when an address of the
 * focus has no record to read by (never created, or forgotten), or its object is found under another
 * address's marker (a move or a mix-up only the full matching can sort out).
 */
export async function observeFocused(
  ws: Workspace,
  focus: ReadonlySet<Address>,
  dependencies: ReadonlySet<Address>,
  signal?: AbortSignal,
): Promise<Observation | undefined> {
  const twin = new Map<Address, TwinEntry>();
  for (const address of new Set([...focus, ...dependencies])) {
    const entry = await ws.store.getTwin(address);
    if (entry) twin.set(address, entry);
    else if (focus.has(address)) return undefined;
  }
  const objects = new Map<Address, ObservedObject>();
  const adoptions: Observation['adoptions'] = new Map();
  const reads = await Promise.all(
    [...focus].map(async (address) => {
      const entry = twin.get(address)!;
      const { provider, info } = ws.typeOf(entry.type);
      return { address, entry, object: await provider.read(info.name, entry.objectId, signal) };
    }),
  );
  for (const { address, entry, object } of reads) {
    if (!object) continue; // deleted: the plan's create sends the pass back to a full one
    const marker = object.marker;
    if (marker?.workspace === ws.name && marker.address !== address) return undefined;
    objects.set(address, object);
    if (markerRemoved(ws, entry, object)) {
      // Someone removed Tend's marker from an object Tend knows by its id: the plan puts it back.
      adoptions.set(address, 'record');
    }
  }
  for (const address of dependencies) {
    if (focus.has(address)) continue;
    const entry = twin.get(address);
    if (!entry) continue;
    const { info } = ws.typeOf(entry.type);
    const marker =
      info.markerField === undefined
        ? undefined
        : readMarkerIn(info.markerKind, getPath(entry.fields, info.markerField));
    objects.set(address, {
      type: info.name,
      id: entry.objectId,
      fields: entry.fields,
      ...(marker ? { marker } : {}),
    });
  }
  return {
    objects,
    pendingVisibility: new Set(),
    removed: [],
    orphans: [],
    duplicates: [],
    leftovers: [],
    moves: new Map(),
    adoptions,
    conflicts: new Map(),
    failures: [],
    twin,
  };
}
