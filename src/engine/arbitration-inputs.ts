import type { Address, Announcement, FieldClaim, Marker, ObservedChange } from '../core/index.js';
import { getPath, readMarkerIn, toTendError } from '../core/index.js';
import type { Workspace } from './workspace.js';

// What the arbitrate phase reads before it decides (the feeds' news, the claims actors hold, the
// announcements not used yet), so that deciding (arbitrate.ts) reads no store and writes nothing.

/** One audit-feed entry about an object Tend manages. */
export interface FeedEvent {
  readonly provider: string;
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly change: ObservedChange;
}

/** What the feeds brought since the stored cursors, and the cursors to store once it is recorded. */
export interface FeedBatch {
  readonly events: readonly FeedEvent[];
  /** Entries about objects Tend does not manage are counted, never recorded. */
  readonly ignored: number;
  readonly cursors: ReadonlyMap<string, string>;
}

/** Most feed pages read in one pass (per provider); the rest waits for the next pass. */
const MAX_FEED_PAGES = 50;

/**
 * Reads every provider's audit feed from its stored cursor, without waiting and without advancing the
 * cursor (the recorder's `recordDecisions` does): the entries about managed objects by actors other
 * than `ownActor`.
 */
export async function readFeeds(
  ws: Workspace,
  ownActor: string,
  signal?: AbortSignal,
): Promise<FeedBatch> {
  const events: FeedEvent[] = [];
  const cursors = new Map<string, string>();
  let ignored = 0;
  const twin = await ws.store.listTwin();
  const byObject = new Map(twin.map((t) => [`${t.type}\u0000${t.objectId}`, t.address] as const));
  for (const [name, provider] of ws.providers) {
    if (!provider.changes) continue;
    const stored = await ws.store.getCursor(name);
    let cursor = stored;
    for (let page = 0; page < MAX_FEED_PAGES; page++) {
      const got = await provider.changes(cursor, { waitMs: 0, ...(signal ? { signal } : {}) });
      for (const c of got.changes) {
        if (c.actor === ownActor) continue;
        const type = `${name}.${c.type}`;
        const marker = markerOfChange(ws, type, c.after ?? c.before);
        const address =
          byObject.get(`${type}\u0000${c.id}`) ??
          (marker?.workspace === ws.name ? marker.address : undefined);
        if (address === undefined) ignored++;
        else events.push({ provider: name, address, type, change: c });
      }
      if (got.cursor === cursor || got.changes.length === 0) break;
      cursor = got.cursor;
    }
    if (cursor !== undefined && cursor !== stored) cursors.set(name, cursor);
  }
  return { events, ignored, cursors };
}

/** The marker in the fields an audit entry shows, read where the type keeps it. */
function markerOfChange(
  ws: Workspace,
  type: string,
  fields: Readonly<Record<string, unknown>> | undefined,
): Marker | undefined {
  if (!fields) return undefined;
  let info;
  try {
    info = ws.typeOf(type).info;
  } catch {
    return undefined; // a type this workspace does not know: not Tend's
  }
  if (info.markerField === undefined) return undefined;
  return readMarkerIn(info.markerKind, getPath(fields, info.markerField));
}

/**
 * The feeds' news since the stored cursors, or — when a feed cannot be read — nothing, with the
 * reason given to `warn`: changes are then attributed from what Tend last saw.
 */
export async function readFeedsOrNothing(
  ws: Workspace,
  ownActor: string,
  warn: (message: string) => void,
  signal?: AbortSignal,
): Promise<FeedBatch> {
  try {
    return await readFeeds(ws, ownActor, signal);
  } catch (e) {
    warn(`audit feed: ${toTendError(e).message}; changes are attributed from what Tend last saw`);
    return { events: [], ignored: 0, cursors: new Map() };
  }
}

/** The meta key marking an announcement as used to explain a change (`announcement-used:<id>`). */
export const ANNOUNCEMENT_USED_KEY = (id: string) => `announcement-used:${id}`;

/** What Tend remembers that arbitration decides with: the claims held, the announcements unused. */
export interface ArbitrationMemory {
  /** The claims actors hold (of the addresses arbitrated). */
  readonly claims: readonly FieldClaim[];
  /** Announcements active now that no earlier pass used to explain a change. */
  readonly announcements: readonly Announcement[];
}

/** Reads the arbitration memory at `now`: every claim, or only those of `only` (a focused pass). */
export async function readArbitrationMemory(
  ws: Workspace,
  now: Date,
  only?: ReadonlySet<Address>,
): Promise<ArbitrationMemory> {
  const claims = only
    ? (await Promise.all([...only].map((a) => ws.store.claims(a)))).flat()
    : await ws.store.claims();
  const announcements: Announcement[] = [];
  for (const a of await ws.store.announcements({ activeAt: now.toISOString() })) {
    if ((await ws.store.getMeta(ANNOUNCEMENT_USED_KEY(a.id))) === undefined) announcements.push(a);
  }
  return { claims, announcements };
}
