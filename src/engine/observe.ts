import type { Address, ObservedObject, RemovedInput, ResourceDecl } from '../core/index.js';
import { toTendError } from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import type { Workspace } from './workspace.js';

/** What exists now, matched to the intent. */
export interface Observation {
  /** The object of each declared (or remembered) address that exists. */
  readonly objects: Map<Address, ObservedObject>;
  /** Declared addresses whose object was just created but is not visible yet (do not re-create). */
  readonly pendingVisibility: Set<Address>;
  /** Remembered resources no longer declared whose object still exists and carries our marker. */
  readonly removed: RemovedInput[];
  /** Objects carrying our marker that neither the intent nor the store knows: listed, never deleted. */
  readonly orphans: { type: string; object: ObservedObject }[];
  /** Extra objects carrying the marker of an address that already has one. */
  readonly duplicates: { address: Address; objectIds: string[] }[];
  /** Types that could not be listed, with the reason. */
  readonly failures: { type: string; message: string }[];
  readonly twin: Map<Address, TwinEntry>;
}

/** Options for observe. */
export interface ObserveOptions {
  /** How long after its create an invisible object is presumed still appearing. */
  readonly visibilityWindowMs: number;
  readonly now: Date;
  readonly signal?: AbortSignal;
}

/**
 * Lists every type of every provider the intent uses (one list call per type) and matches objects
 * to addresses: by the id Tend remembers, else by ownership marker, else (natural-key types) by name.
 * Observe never mutates anything.
 */
export async function observe(ws: Workspace, options: ObserveOptions): Promise<Observation> {
  const twinEntries = await ws.store.listTwin();
  const twin = new Map(twinEntries.map((t) => [t.address, t] as const));
  const declared = ws.intent.resources;
  const declaredSet = new Set<Address>(declared.map((r) => r.address));

  const types = new Set<string>();
  for (const [pname, provider] of ws.providers) {
    for (const t of provider.describe().types) types.add(`${pname}.${t.name}`);
  }
  for (const t of twinEntries) types.add(t.type);

  const lists = new Map<string, ObservedObject[]>();
  const failures: { type: string; message: string }[] = [];
  const neededTypes = new Set([...declared.map((r) => r.type), ...twinEntries.map((t) => t.type)]);
  await Promise.all(
    [...types].map(async (type) => {
      try {
        const { provider, info } = ws.typeOf(type);
        lists.set(type, await provider.list(info.name, options.signal));
      } catch (e) {
        const err = toTendError(e);
        // Types nobody declares are listed only to find orphans; their failure is not fatal.
        if (neededTypes.has(type)) throw err.at(type, 'observe');
        failures.push({ type, message: err.message });
      }
    }),
  );

  const objects = new Map<Address, ObservedObject>();
  const pendingVisibility = new Set<Address>();
  const claimed = new Set<string>();
  const duplicates: { address: Address; objectIds: string[] }[] = [];
  const key = (type: string, id: string) => `${type}\u0000${id}`;

  const match = (address: Address, type: string, decl: ResourceDecl | undefined) => {
    const list = lists.get(type) ?? [];
    const remembered = twin.get(address);
    const mine = list.filter(
      (o) =>
        o.marker?.workspace === ws.name &&
        o.marker.address === address &&
        !claimed.has(key(type, o.id)),
    );
    let found = remembered ? list.find((o) => o.id === remembered.objectId) : undefined;
    if (!found && mine.length > 0) found = mine[0];
    if (!found && decl) {
      const { info } = ws.typeOf(type);
      const nk = info.identity === 'natural-key' ? info.naturalKey : undefined;
      if (nk !== undefined && decl.spec[nk] !== undefined) {
        found = list.find((o) => o.fields[nk] === decl.spec[nk] && !claimed.has(key(type, o.id)));
      }
    }
    if (found) {
      objects.set(address, found);
      claimed.add(key(type, found.id));
      const extra = mine.filter((o) => o.id !== found.id).map((o) => o.id);
      if (extra.length > 0) {
        duplicates.push({ address, objectIds: extra });
        for (const id of extra) claimed.add(key(type, id));
      }
    }
    return found;
  };

  for (const r of declared) {
    if (match(r.address, r.type, r)) continue;
    // A create that settled moments ago may not be visible yet (eventual consistency): wait for it
    // rather than create a second object.
    if (!twin.has(r.address)) continue;
    const [last] = await ws.store.operations({ address: r.address, limit: 1 });
    if (
      last?.action === 'create' &&
      last.state === 'settled' &&
      last.settledAt !== undefined &&
      options.now.getTime() - Date.parse(last.settledAt) < options.visibilityWindowMs
    ) {
      pendingVisibility.add(r.address);
    }
  }

  const removed: RemovedInput[] = [];
  for (const t of twinEntries) {
    if (declaredSet.has(t.address)) continue;
    const found = match(t.address, t.type, undefined);
    // Only objects that carry our marker are ever deleted.
    if (found && found.marker?.workspace === ws.name && found.marker.address === t.address) {
      removed.push({
        address: t.address,
        type: t.type,
        objectId: found.id,
        stateful: t.stateful,
        dependsOn: t.dependsOn,
      });
    }
  }

  const orphans: { type: string; object: ObservedObject }[] = [];
  for (const [type, list] of lists) {
    for (const o of list) {
      if (o.marker?.workspace === ws.name && !claimed.has(key(type, o.id))) {
        orphans.push({ type, object: o });
      }
    }
  }
  return { objects, pendingVisibility, removed, orphans, duplicates, failures, twin };
}
