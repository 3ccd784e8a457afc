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
import { ObjectIndex } from './object-index.js';
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
 * Three phases, in this order because each matches objects the next must not match again: the
 * declared resources (in reference order), the remembered resources no longer declared, then the
 * unmatched objects carrying our marker, sorted into orphans and what the journal explains. Observe
 * never mutates anything.
 */
export async function observe(ws: Workspace, options: ObserveOptions): Promise<Observation> {
  const twinEntries = await ws.store.listTwin();
  const twin = new Map(twinEntries.map((t) => [t.address, t] as const));
  const { lists, failures } = await listTypes(ws, twinEntries, options.signal);
  const m = matching(ws, twin, new ObjectIndex(ws.name, lists));
  const pendingVisibility = await matchDeclared(m, options);
  const removed = await matchRemoved(m, twinEntries);
  const orphans = await sortUnmatched(m, removed);
  return {
    objects: m.objects,
    pendingVisibility,
    removed,
    orphans,
    duplicates: m.duplicates,
    leftovers: m.leftovers,
    moves: m.moves,
    adoptions: m.adoptions,
    conflicts: m.conflicts,
    failures,
    twin,
  };
}

/**
 * Lists every type of every provider, and every type Tend remembers an object of. A type nobody
 * declares or remembers is listed only to find orphans: its failure is recorded, not thrown.
 */
async function listTypes(
  ws: Workspace,
  twinEntries: readonly TwinEntry[],
  signal: AbortSignal | undefined,
): Promise<{
  lists: Map<string, ObservedObject[]>;
  failures: { type: string; message: string }[];
}> {
  const types = new Set<string>();
  for (const [pname, provider] of ws.providers) {
    for (const t of provider.describe().types) types.add(`${pname}.${t.name}`);
  }
  for (const t of twinEntries) types.add(t.type);

  const lists = new Map<string, ObservedObject[]>();
  const failures: { type: string; message: string }[] = [];
  const neededTypes = new Set([
    ...ws.intent.resources.map((r) => r.type),
    ...twinEntries.map((t) => t.type),
  ]);
  await Promise.all(
    [...types].map(async (type) => {
      try {
        const { provider, info } = ws.typeOf(type);
        lists.set(type, await provider.list(info.name, signal));
      } catch (e) {
        const err = toTendError(e);
        if (neededTypes.has(type)) throw err.at(type, 'observe');
        failures.push({ type, message: err.message });
      }
    }),
  );
  return { lists, failures };
}

/** What the phases of one observation share, and what matching builds up. */
interface Matching {
  readonly ws: Workspace;
  readonly twin: ReadonlyMap<Address, TwinEntry>;
  readonly declared: { has(a: Address): boolean };
  readonly index: ObjectIndex;
  /**
   * Remembered objects of addresses no longer declared, by `type\0id`: a declared address that finds
   * one of them took over a removed address's object (a move), which must never be deleted.
   */
  readonly removedById: ReadonlyMap<string, Address>;
  readonly objects: Map<Address, ObservedObject>;
  readonly moves: Map<Address, Address>;
  readonly adoptions: Map<Address, FoundBy>;
  readonly conflicts: Map<Address, { objectId: string; owner: string }>;
  readonly duplicates: { address: Address; objectIds: string[] }[];
  readonly leftovers: Leftover[];
}

const key = (type: string, id: string) => `${type}\u0000${id}`;

function matching(
  ws: Workspace,
  twin: ReadonlyMap<Address, TwinEntry>,
  index: ObjectIndex,
): Matching {
  const declared = declaredIndex(ws.intent);
  const removedById = new Map<string, Address>();
  for (const t of twin.values()) {
    if (!declared.has(t.address)) removedById.set(key(t.type, t.objectId), t.address);
  }
  return {
    ws,
    twin,
    declared,
    index,
    removedById,
    objects: new Map(),
    moves: new Map(),
    adoptions: new Map(),
    conflicts: new Map(),
    duplicates: [],
    leftovers: [],
  };
}

/**
 * Phase 1: matches every declared resource, in reference order (a natural key may reference a
 * parent matched before it). Answers the declared addresses left unmatched whose object is presumed
 * still appearing: a create that settled moments ago may not be visible yet (eventual consistency),
 * so wait for it rather than create a second object. On a platform whose reads see its writes at
 * once, an object it does not list is gone, however recent its create.
 */
async function matchDeclared(m: Matching, options: ObserveOptions): Promise<Set<Address>> {
  const { ws } = m;
  const byAddress = declaredIndex(ws.intent);
  const pendingVisibility = new Set<Address>();
  const windowMs = options.visibilityWindowMs ?? DEFAULT_VISIBILITY_WINDOW_MS;
  for (const address of intentGraph(ws.intent).order) {
    const r = byAddress.get(address)!;
    if (await match(m, r.address, r.type, r)) continue;
    if (!m.twin.has(r.address)) continue;
    const window = visibilityWindowOf(ws.typeOf(r.type).provider, windowMs);
    if (window <= 0) continue;
    const [last] = await ws.store.operations({ address: r.address, limit: 1 });
    if (awaitsVisibility(last, options.now, window)) pendingVisibility.add(r.address);
  }
  return pendingVisibility;
}

/**
 * Phase 2: matches every remembered address no longer declared to what is left of its object. Only
 * objects that carry our marker are ever deleted. On a platform without tags the natural key is the
 * marker: an object Tend remembers managing (created or imported) may be deleted.
 */
async function matchRemoved(
  m: Matching,
  twinEntries: readonly TwinEntry[],
): Promise<RemovedInput[]> {
  const { ws } = m;
  const removed: RemovedInput[] = [];
  for (const t of twinEntries) {
    if (m.declared.has(t.address)) continue;
    const found = await match(m, t.address, t.type, undefined);
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
  return removed;
}

/**
 * Phase 3: sorts the objects with our marker that no address matched (their address is neither
 * declared nor remembered). Those the journal says Tend created for that address (a create given up
 * as superseded whose object showed up late, the leftovers of an interrupted replace whose twin entry
 * is gone) are Tend's own: added to `removed` (and their extra objects to the leftovers), so the
 * normal plan deletes them like any removed resource. The rest are answered: orphans (after a lost
 * store, every one), listed, and deleted only by `prune`.
 */
async function sortUnmatched(
  m: Matching,
  removed: RemovedInput[],
): Promise<{ type: string; object: ObservedObject }[]> {
  const { ws } = m;
  const orphans: { type: string; object: ObservedObject }[] = [];
  const journaled = new Map<
    Address,
    { type: string; object: ObservedObject; settled: boolean }[]
  >();
  for (const unmatched of m.index.unmatchedMarked()) {
    const { type, object: o } = unmatched;
    const op = o.marker?.op ? await ws.store.getOperation(o.marker.op) : undefined;
    if (op?.action !== 'create' || op.address !== o.marker?.address || op.type !== type) {
      orphans.push(unmatched);
      continue;
    }
    const settled = op.state === 'settled' && op.objectId === o.id;
    const l = journaled.get(op.address);
    if (l) l.push({ type, object: o, settled });
    else journaled.set(op.address, [{ type, object: o, settled }]);
  }
  const journaledRemoved: Address[] = [];
  for (const [address, found] of journaled) {
    // The object a create settled with is the address's; any other is a leftover deleted with it.
    found.sort((a, b) => Number(b.settled) - Number(a.settled));
    const [first, ...rest] = found;
    m.objects.set(address, first!.object);
    journaledRemoved.push(address);
    for (const r of rest) {
      m.leftovers.push({ address, type: r.type, old: r.object, group: `abandoned-${r.object.id}` });
    }
  }
  for (const address of journaledRemoved) {
    const object = m.objects.get(address)!;
    removed.push({
      address,
      type: journaled.get(address)![0]!.type,
      objectId: object.id,
      // The store no longer remembers what the intent said: an object only the journal knows is
      // treated as not stateful (it never was, or no longer is, the object of a declared resource).
      stateful: false,
      // What it references, by id among everything matched (for the order of deletes).
      dependsOn: referencedAddresses(object, m.objects),
    });
  }
  return orphans;
}

/**
 * Matches an address to its object: the id Tend remembers, else our marker for the address, else
 * (declared only) the address it `moved` from, else the natural key. Objects another address already
 * matched are never matched again, so no object is ever both kept and deleted. Records a move, an
 * adoption, the leftovers and duplicates the journal tells apart among several marked objects.
 */
async function match(
  m: Matching,
  address: Address,
  type: string,
  decl: ResourceDecl | undefined,
): Promise<ObservedObject | undefined> {
  const { index } = m;
  // Every object matched comes from the type's list: none listed, none found.
  if (index.listedNone(type)) return undefined;
  const remembered = m.twin.get(address);
  const free = (o: ObservedObject | undefined) =>
    o && !index.isMatched(type, o.id) ? o : undefined;
  const mine = index.marked(type, address).filter((o) => !index.isMatched(type, o.id));
  let found = remembered ? free(index.byId(type, remembered.objectId)) : undefined;
  let foundBy: 'marker' | 'natural-key' = 'marker';
  let movedFrom: Address | undefined;
  if (!found && mine.length > 0) found = mine[0];
  const from = decl?.moved?.from;
  if (!found && from !== undefined && !m.declared.has(from)) {
    const old = m.twin.get(from);
    found =
      (old && old.type === type ? free(index.byId(type, old.objectId)) : undefined) ??
      index.marked(type, from).find((o) => !index.isMatched(type, o.id));
    if (found) movedFrom = from;
  }
  if (!found && decl) {
    found = byNaturalKey(m, decl);
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
    movedFrom = m.removedById.get(key(type, found.id));
  }
  if (decl && movedFrom !== undefined) m.moves.set(address, movedFrom);
  else if (decl && !remembered) m.adoptions.set(address, foundBy);
  else if (decl && remembered && found.id === remembered.objectId) {
    // Someone removed or altered Tend's marker on an object Tend knows by its id: put it back.
    if (markerRemoved(m.ws, remembered, found)) m.adoptions.set(address, 'record');
  }
  const current = await sortExtras(m, address, type, found, mine);
  index.markMatched(type, current.id);
  m.objects.set(address, current);
  return current;
}

/**
 * Several objects carrying an address's marker: only the journal can tell an interrupted replace or
 * an abandoned create (finish it: delete Tend's extra object, also when the address was removed from
 * the intent since) from a duplicate (report it). Marks every extra object matched, records the leftovers and
 * duplicates, and answers the address's object. Rare, so the journal is read only here.
 */
async function sortExtras(
  m: Matching,
  address: Address,
  type: string,
  found: ObservedObject,
  mine: readonly ObservedObject[],
): Promise<ObservedObject> {
  let extra = mine.filter((o) => o.id !== found.id);
  if (extra.length === 0) return found;
  const history = await m.ws.store.operations({ address, limit: REPLACE_HISTORY });
  const explained = explainExtras(found, mine, history);
  const current = explained.current;
  extra = [];
  for (const o of explained.duplicates) {
    const abandoned = await abandonedCreate(m.ws, o, address, current.id);
    if (abandoned) explained.leftovers.push({ old: o, group: abandoned });
    else extra.push(o);
  }
  for (const l of explained.leftovers) {
    m.leftovers.push({ address, type, old: l.old, group: l.group });
    m.index.markMatched(type, l.old.id);
  }
  if (extra.length > 0) {
    m.duplicates.push({ address, objectIds: extra.map((o) => o.id) });
    for (const o of extra) m.index.markMatched(type, o.id);
  }
  return current;
}

/**
 * A natural-key type is found by its key fields (several for nested types: zone, name, type),
 * compared after the provider's normalisation. Key values may reference a parent (`zone_id:
 * ${pdns.zones/example.id}`), resolved against the objects matched so far: declared resources are
 * matched in dependency order, and a child whose parent does not exist yet matches nothing. Records
 * a conflict when only another workspace's objects have the key.
 */
function byNaturalKey(m: Matching, decl: ResourceDecl): ObservedObject | undefined {
  const { ws, index } = m;
  const { provider, info } = ws.typeOf(decl.type);
  if (info.identity !== 'natural-key') return undefined;
  const keys = info.naturalKeyFields ?? (info.naturalKey ? [info.naturalKey] : []);
  if (keys.length === 0) return undefined;
  const norm = (field: string, v: unknown) =>
    canonicalJson(provider.normalize ? provider.normalize(info.name, field, v) : v);
  const wanted: string[] = [];
  for (const field of keys) {
    const v = resolveReferences(valueAtKeyPath(decl.spec, field), (target, path) => {
      const o = m.objects.get(target);
      const value = o ? getPath(o.fields, path) : undefined;
      return value === undefined ? undefined : { value };
    });
    if (v === undefined || containsUnknown(v)) return undefined;
    wanted.push(norm(field, v));
  }
  const keyOf = (o: ObservedObject) =>
    keys.map((field) => norm(field, valueAtKeyPath(o.fields, field))).join('\u0000');
  const candidates = index.withKey(decl.type, wanted.join('\u0000'), keyOf).filter(
    (o) =>
      !index.isMatched(decl.type, o.id) &&
      // An object marked for another declared address is that address's, not this one's.
      !(
        o.marker?.workspace === ws.name &&
        o.marker.address !== decl.address &&
        m.declared.has(o.marker.address)
      ),
  );
  const own = candidates.find((o) => !o.marker || o.marker.workspace === ws.name);
  if (own) return own;
  // Only objects another workspace marked have this key: theirs, never taken over.
  const theirs = candidates[0];
  if (theirs?.marker) {
    m.conflicts.set(decl.address, { objectId: theirs.id, owner: theirs.marker.workspace });
  }
  return undefined;
}

/**
 * The group to delete an extra object of an address under, when the journal says Tend created it
 * for that address by a create that never made it the address's object (a create given up as
 * superseded whose object showed up late, or a step 1 of a replace that failed): such an object
 * holds nothing anyone was told about, and deleting it is finishing Tend's own work.
 */
async function abandonedCreate(
  ws: Workspace,
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
