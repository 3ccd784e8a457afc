import type {
  FoundBy,
  Address,
  ObservedObject,
  Operation,
  Provider,
  RemovedInput,
  ResourceDecl,
} from '../core/index.js';
import {
  canonicalJson,
  containsUnknown,
  getPath,
  mentionsId,
  readMarkerIn,
  resolveReferences,
  toTendError,
  valueAtKeyPath,
} from '../core/index.js';
import type { TwinEntry } from '../store/index.js';
import type { Workspace } from './workspace.js';
import { declaredIndex, intentGraph } from './workspace.js';

/** What exists now, matched to the intent. */
export interface Observation {
  /** The object of each declared (or remembered) address that exists. */
  readonly objects: Map<Address, ObservedObject>;
  /** Declared addresses whose object was just created but is not visible yet (do not re-create). */
  readonly pendingVisibility: ReadonlySet<Address>;
  /** Remembered resources no longer declared whose object still exists and carries our marker. */
  readonly removed: RemovedInput[];
  /** Objects carrying our marker that neither the intent nor the store knows: listed, never deleted. */
  readonly orphans: { type: string; object: ObservedObject }[];
  /**
   * Extra objects carrying the marker of an address that already has one, which no journaled replace
   * explains: reported, never deleted automatically.
   */
  readonly duplicates: { address: Address; objectIds: string[] }[];
  /**
   * Old objects of create-before-destroy replaces that were interrupted after their replacement was
   * created (step 1 settled) and before the old object was deleted (step 2). The replacement is the
   * address's object in `objects`; the executor deletes the old one as the group's step 2 once the
   * replacement is verified and nothing declared references the old one.
   */
  readonly leftovers: Leftover[];
  /**
   * Declared addresses whose object is recorded in Tend's memory, or marked, under another address
   * (a rename with the same natural key, or `moved: { from }`): address → the old address. The plan
   * moves them; the old address is never deleted.
   */
  readonly moves: Map<Address, Address>;
  /** Declared addresses whose object Tend has no record of: found by its marker or natural key. */
  readonly adoptions: Map<Address, FoundBy>;
  /**
   * Declared addresses whose natural key is taken by an object carrying another workspace's marker:
   * never matched, never adopted.
   */
  readonly conflicts: Map<Address, { objectId: string; owner: string }>;
  /** Types that could not be listed, with the reason. */
  readonly failures: { type: string; message: string }[];
  readonly twin: Map<Address, TwinEntry>;
}

/** The old object of an unfinished replace. */
export interface Leftover {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly old: ObservedObject;
  /** The replace's group id (its step 2, the delete, joins it). */
  readonly group: string;
}

/** How many recent operations of an address are searched for the replaces that explain extra objects. */
const REPLACE_HISTORY = 50;

/**
 * Explains several objects carrying one address's marker with the journal: a settled step 1 create
 * of a replace names the object it replaces. Starting from `found`, follows settled replaces to the
 * newest replacement that exists (the address's object); the objects replaced along the way are
 * leftovers; any other extra object is a duplicate.
 */
export function explainExtras(
  found: ObservedObject,
  mine: readonly ObservedObject[],
  history: readonly Operation[],
): {
  current: ObservedObject;
  leftovers: { old: ObservedObject; group: string }[];
  duplicates: ObservedObject[];
} {
  const byId = new Map(mine.map((o) => [o.id, o] as const));
  byId.set(found.id, found);
  // Settled step 1 creates of replaces, newest last: replaced id → the replacement and its group.
  const replacedBy = new Map<string, { id: string; group: string }>();
  for (const op of history) {
    if (op.action !== 'create' || op.state !== 'settled' || !op.replaces || !op.objectId) continue;
    if (!op.group) continue;
    replacedBy.set(op.replaces, { id: op.objectId, group: op.group });
  }
  let current = found;
  const seen = new Set<string>([found.id]);
  // The remembered object may itself be a replacement whose own old object is still around, or an
  // old object whose replacement exists: walk forward from it, then collect what it replaced.
  for (
    let next = replacedBy.get(current.id);
    next && byId.has(next.id) && !seen.has(next.id);
    next = replacedBy.get(current.id)
  ) {
    seen.add(next.id);
    current = byId.get(next.id)!;
  }
  const leftovers: { old: ObservedObject; group: string }[] = [];
  const duplicates: ObservedObject[] = [];
  for (const o of byId.values()) {
    if (o.id === current.id) continue;
    const r = replacedBy.get(o.id);
    if (r) leftovers.push({ old: o, group: r.group });
    else duplicates.push(o);
  }
  return { current, leftovers, duplicates };
}

/**
 * How long after its create settled an object a list does not show is presumed still appearing on a
 * platform that may be eventually consistent (DESIGN.md §4), in ms. The one default of every use case.
 */
export const DEFAULT_VISIBILITY_WINDOW_MS = 10_000;

/** Options for observe. */
export interface ObserveOptions {
  /**
   * How long after its create an invisible object is presumed still appearing, on a provider that
   * does not promise consistent reads (default DEFAULT_VISIBILITY_WINDOW_MS); see visibilityWindowOf.
   */
  readonly visibilityWindowMs?: number;
  readonly now: Date;
  readonly signal?: AbortSignal;
}

/**
 * The visibility window of a provider's types: 0 when the provider says its reads see its writes at
 * once (`consistentReads`: an object it does not list is gone), else `windowMs`.
 */
export function visibilityWindowOf(provider: Pick<Provider, 'describe'>, windowMs: number): number {
  return provider.describe().consistentReads === true ? 0 : windowMs;
}

/**
 * True when a declared address whose remembered object is not listed waits for it rather than taking
 * it as deleted: its last operation is a create that settled less than `windowMs` before `now` (the
 * object may not be visible yet). A window of 0 never waits.
 */
export function awaitsVisibility(
  last: Pick<Operation, 'action' | 'state' | 'settledAt'> | undefined,
  now: Date,
  windowMs: number,
): boolean {
  return (
    windowMs > 0 &&
    last?.action === 'create' &&
    last.state === 'settled' &&
    last.settledAt !== undefined &&
    now.getTime() - Date.parse(last.settledAt) < windowMs
  );
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
  const declaredSet: { has(a: Address): boolean } = declaredIndex(ws.intent);

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
  // Objects already matched to an address, per type (by id): never matched again.
  const claimedByType = new Map<string, Set<string>>();
  const isClaimed = (type: string, id: string): boolean =>
    claimedByType.get(type)?.has(id) ?? false;
  const claim = (type: string, id: string): void => {
    let ids = claimedByType.get(type);
    if (!ids) claimedByType.set(type, (ids = new Set()));
    ids.add(id);
  };
  const duplicates: { address: Address; objectIds: string[] }[] = [];
  const leftovers: Leftover[] = [];
  const key = (type: string, id: string) => `${type}\u0000${id}`;

  /**
   * Per-type indexes of the listed objects, built on first use: by id, by the address in our marker,
   * and (for natural-key types) by normalised key. Matching is then linear in the number of objects.
   */
  interface TypeIndex {
    readonly byId: Map<string, ObservedObject>;
    readonly byMarker: Map<string, ObservedObject[]>;
    byKey?: Map<string, ObservedObject[]>;
  }
  const indexes = new Map<string, TypeIndex>();
  const indexOf = (type: string): TypeIndex => {
    let ix = indexes.get(type);
    if (ix) return ix;
    ix = { byId: new Map(), byMarker: new Map() };
    for (const o of lists.get(type) ?? []) {
      if (!ix.byId.has(o.id)) ix.byId.set(o.id, o);
      if (o.marker?.workspace === ws.name) {
        const l = ix.byMarker.get(o.marker.address);
        if (l) l.push(o);
        else ix.byMarker.set(o.marker.address, [o]);
      }
    }
    indexes.set(type, ix);
    return ix;
  };

  const moves = new Map<Address, Address>();
  const adoptions = new Map<Address, FoundBy>();
  const conflicts = new Map<Address, { objectId: string; owner: string }>();
  // Remembered objects of addresses no longer declared, by type and id: a declared address that finds
  // one of them took over a removed address's object (a move), which must never be deleted.
  const removedById = new Map<string, Address>();
  for (const t of twinEntries) {
    if (!declaredSet.has(t.address)) removedById.set(key(t.type, t.objectId), t.address);
  }

  /**
   * Matches an address to its object: the id Tend remembers, else our marker for the address, else
   * (declared only) the address it `moved` from, else the natural key. Objects another address
   * already claimed are never matched again, so no object is ever both kept and deleted.
   */
  const match = async (address: Address, type: string, decl: ResourceDecl | undefined) => {
    const ix = indexOf(type);
    // Every object matched comes from the type's list: none listed, none found.
    if (ix.byId.size === 0) return undefined;
    const remembered = twin.get(address);
    const free = (o: ObservedObject | undefined) => (o && !isClaimed(type, o.id) ? o : undefined);
    const mine = (ix.byMarker.get(address) ?? []).filter((o) => !isClaimed(type, o.id));
    let found = remembered ? free(ix.byId.get(remembered.objectId)) : undefined;
    let foundBy: 'marker' | 'natural-key' = 'marker';
    let movedFrom: Address | undefined;
    if (!found && mine.length > 0) found = mine[0];
    const from = decl?.moved?.from;
    if (!found && from !== undefined && !declaredSet.has(from)) {
      const old = twin.get(from);
      found =
        (old && old.type === type ? free(ix.byId.get(old.objectId)) : undefined) ??
        (ix.byMarker.get(from) ?? []).find((o) => !isClaimed(type, o.id));
      if (found) movedFrom = from;
    }
    if (!found && decl) {
      found = byNaturalKey(decl);
      foundBy = 'natural-key';
      if (found?.marker && found.marker.address !== address) {
        // Our marker for an address nothing declares any more: the resource was renamed.
        movedFrom = found.marker.address;
      }
    }
    if (!found) return undefined;
    if (decl && movedFrom === undefined) {
      // A removed address still recorded with this object: moved (also after a crash that wrote the
      // new record but had not yet forgotten the old one).
      movedFrom = removedById.get(key(type, found.id));
    }
    if (decl && movedFrom !== undefined) moves.set(address, movedFrom);
    else if (decl && !remembered) adoptions.set(address, foundBy);
    else if (decl && remembered && found.id === remembered.objectId && markerLost(found, address)) {
      // Someone removed or altered Tend's marker on an object Tend knows by its id: put it back.
      adoptions.set(address, 'record');
    }
    let current = found;
    let extra = mine.filter((o) => o.id !== current.id);
    if (extra.length > 0) {
      // Several objects carry this address's marker: only the journal can tell an interrupted
      // replace or an abandoned create (finish it: delete Tend's extra object, also when the address
      // was removed from the intent since) from a duplicate (report it). Rare, so the journal is read
      // only here.
      const history = await ws.store.operations({ address, limit: REPLACE_HISTORY });
      const explained = explainExtras(current, mine, history);
      current = explained.current;
      extra = [];
      for (const o of explained.duplicates) {
        const abandoned = await abandonedCreate(o, address, current.id);
        if (abandoned) explained.leftovers.push({ old: o, group: abandoned });
        else extra.push(o);
      }
      for (const l of explained.leftovers) {
        leftovers.push({ address, type, old: l.old, group: l.group });
        claim(type, l.old.id);
      }
    }
    objects.set(address, current);
    claim(type, current.id);
    if (extra.length > 0) {
      duplicates.push({ address, objectIds: extra.map((o) => o.id) });
      for (const o of extra) claim(type, o.id);
    }
    return current;
  };

  /** True when the type carries markers and the object's does not name this workspace and address. */
  const markerLost = (o: ObservedObject, address: Address): boolean => {
    const remembered = twin.get(address);
    return remembered !== undefined && markerRemoved(ws, remembered, o);
  };

  /**
   * A natural-key type is found by its key fields (several for nested types: zone, name, type),
   * compared after the provider's normalisation. Key values may reference a parent (`zone_id:
   * ${pdns.zones/example.id}`), resolved against the objects matched so far: declared resources are
   * matched in dependency order, and a child whose parent does not exist yet matches nothing.
   */
  const byNaturalKey = (decl: ResourceDecl) => {
    const { provider, info } = ws.typeOf(decl.type);
    if (info.identity !== 'natural-key') return undefined;
    const keys = info.naturalKeyFields ?? (info.naturalKey ? [info.naturalKey] : []);
    if (keys.length === 0) return undefined;
    const norm = (field: string, v: unknown) =>
      canonicalJson(provider.normalize ? provider.normalize(info.name, field, v) : v);
    const wanted: string[] = [];
    for (const field of keys) {
      const v = resolveReferences(valueAtKeyPath(decl.spec, field), (target, path) => {
        const o = objects.get(target);
        const value = o ? getPath(o.fields, path) : undefined;
        return value === undefined ? undefined : { value };
      });
      if (v === undefined || containsUnknown(v)) return undefined;
      wanted.push(norm(field, v));
    }
    const ix = indexOf(decl.type);
    if (!ix.byKey) {
      ix.byKey = new Map();
      for (const o of lists.get(decl.type) ?? []) {
        const k = keys.map((field) => norm(field, valueAtKeyPath(o.fields, field))).join('\u0000');
        const l = ix.byKey.get(k);
        if (l) l.push(o);
        else ix.byKey.set(k, [o]);
      }
    }
    const candidates = (ix.byKey.get(wanted.join('\u0000')) ?? []).filter(
      (o) =>
        !isClaimed(decl.type, o.id) &&
        // An object marked for another declared address is that address's, not this one's.
        !(
          o.marker?.workspace === ws.name &&
          o.marker.address !== decl.address &&
          declaredSet.has(o.marker.address)
        ),
    );
    const own = candidates.find((o) => !o.marker || o.marker.workspace === ws.name);
    if (own) return own;
    // Only objects another workspace marked have this key: theirs, never taken over.
    const theirs = candidates[0];
    if (theirs?.marker) {
      conflicts.set(decl.address, { objectId: theirs.id, owner: theirs.marker.workspace });
    }
    return undefined;
  };

  const byAddress = declaredIndex(ws.intent);
  const inOrder = intentGraph(ws.intent).order.map((a) => byAddress.get(a)!);

  const windowMs = options.visibilityWindowMs ?? DEFAULT_VISIBILITY_WINDOW_MS;
  for (const r of inOrder) {
    if (await match(r.address, r.type, r)) continue;
    // A create that settled moments ago may not be visible yet (eventual consistency): wait for it
    // rather than create a second object. On a platform whose reads see its writes at once, an
    // object it does not list is gone, however recent its create.
    if (!twin.has(r.address)) continue;
    const window = visibilityWindowOf(ws.typeOf(r.type).provider, windowMs);
    if (window <= 0) continue;
    const [last] = await ws.store.operations({ address: r.address, limit: 1 });
    if (awaitsVisibility(last, options.now, window)) pendingVisibility.add(r.address);
  }

  const removed: RemovedInput[] = [];
  for (const t of twinEntries) {
    if (declaredSet.has(t.address)) continue;
    const found = await match(t.address, t.type, undefined);
    // Only objects that carry our marker are ever deleted. On a platform without tags the natural
    // key is the marker: an object Tend remembers managing (created or imported) may be deleted.
    const tagless = ws.typeOf(t.type).info.markerField === undefined;
    if (
      found &&
      (tagless || (found.marker?.workspace === ws.name && found.marker.address === t.address))
    ) {
      removed.push({
        address: t.address,
        type: t.type,
        objectId: found.id,
        stateful: t.stateful,
        dependsOn: t.dependsOn,
      });
    }
  }

  // Objects with our marker for an address that is neither declared nor remembered. Those the journal
  // says Tend created for that address (a create given up as superseded whose object showed up late,
  // the leftovers of an interrupted replace whose twin entry is gone) are Tend's own: the normal
  // plan deletes them like any removed resource. The rest are orphans (after a lost store, every
  // one): listed, and deleted only by `prune`.
  const orphans: { type: string; object: ObservedObject }[] = [];
  const journaled = new Map<
    Address,
    { type: string; object: ObservedObject; settled: boolean }[]
  >();
  for (const [type, list] of lists) {
    for (const o of list) {
      if (o.marker?.workspace !== ws.name || isClaimed(type, o.id)) continue;
      const op = o.marker.op ? await ws.store.getOperation(o.marker.op) : undefined;
      if (op?.action !== 'create' || op.address !== o.marker.address || op.type !== type) {
        orphans.push({ type, object: o });
        continue;
      }
      const settled = op.state === 'settled' && op.objectId === o.id;
      const l = journaled.get(op.address);
      if (l) l.push({ type, object: o, settled });
      else journaled.set(op.address, [{ type, object: o, settled }]);
    }
  }
  const journaledRemoved: Address[] = [];
  for (const [address, found] of journaled) {
    // The object a create settled with is the address's; any other is a leftover deleted with it.
    found.sort((a, b) => Number(b.settled) - Number(a.settled));
    const [first, ...rest] = found;
    objects.set(address, first!.object);
    journaledRemoved.push(address);
    for (const r of rest) {
      leftovers.push({ address, type: r.type, old: r.object, group: `abandoned-${r.object.id}` });
    }
  }
  for (const address of journaledRemoved) {
    const object = objects.get(address)!;
    removed.push({
      address,
      type: journaled.get(address)![0]!.type,
      objectId: object.id,
      // The store no longer remembers what the intent said: an object only the journal knows is
      // treated as not stateful (it never was, or no longer is, the object of a declared resource).
      stateful: false,
      // What it references, by id among everything matched (for the order of deletes).
      dependsOn: referencedAddresses(object, objects),
    });
  }
  return {
    objects,
    pendingVisibility,
    removed,
    orphans,
    duplicates,
    leftovers,
    moves,
    adoptions,
    conflicts,
    failures,
    twin,
  };

  /**
   * The group to delete an extra object of an address under, when the journal says Tend created it
   * for that address by a create that never made it the address's object (a create given up as
   * superseded whose object showed up late, or a step 1 of a replace that failed): such an object
   * holds nothing anyone was told about, and deleting it is finishing Tend's own work.
   */
  async function abandonedCreate(
    o: ObservedObject,
    address: Address,
    currentId: string,
  ): Promise<string | undefined> {
    if (!o.marker?.op || o.id === currentId) return undefined;
    const op = await ws.store.getOperation(o.marker.op);
    if (op?.action !== 'create' || op.address !== address) return undefined;
    if (op.state === 'settled' && op.objectId === o.id) return undefined;
    return op.group ?? `abandoned-${op.id}`;
  }
}

/**
 * True when Tend saw its marker for the remembered address on the object and the object no longer
 * carries it (someone removed or altered it). Only a marker Tend saw can have been removed: an
 * imported object carries none until its first change.
 */
export function markerRemoved(ws: Workspace, remembered: TwinEntry, o: ObservedObject): boolean {
  const { markerField: field, markerKind } = ws.typeOf(remembered.type).info;
  if (field === undefined) return false;
  const had = readMarkerIn(markerKind, getPath(remembered.fields, field));
  if (had?.workspace !== ws.name || had.address !== remembered.address) return false;
  return o.marker?.workspace !== ws.name || o.marker.address !== remembered.address;
}

/** The addresses whose objects another object's fields mention by id (what it depends on). */
export function referencedAddresses(
  object: ObservedObject,
  objects: ReadonlyMap<Address, ObservedObject>,
): Address[] {
  const out: Address[] = [];
  for (const [address, other] of objects) {
    if (other.id !== object.id && mentionsId(object.fields, other.id)) out.push(address);
  }
  return out.sort();
}
