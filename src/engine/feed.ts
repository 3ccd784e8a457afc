import type { Address, Change } from '../core/index.js';
import { parseMotivation, readMarker } from '../core/index.js';
import { changedFields, redact } from './operator.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

/** What one read of a provider's audit feed brought. */
export interface FeedResult {
  /** Changes to managed objects made by someone other than this Tend, now in the ledger. */
  readonly recorded: Change[];
}

/**
 * Reads a provider's audit feed after the stored cursor, records every change to a managed object
 * made by another actor in the ledger (with its actor, intent and motivation), and advances the
 * cursor. Tend's own writes are already in the ledger and are skipped. May wait up to `waitMs`.
 */
export async function ingestFeed(
  ws: Workspace,
  providerName: string,
  ownActor: string,
  waitMs: number,
  signal?: AbortSignal,
): Promise<FeedResult> {
  const provider = ws.providers.get(providerName);
  if (!provider?.changes) return { recorded: [] };
  const cursor = await ws.store.getCursor(providerName);
  const page = await provider.changes(cursor, { waitMs, ...(signal ? { signal } : {}) });
  const recorded: Change[] = [];
  if (page.changes.length > 0) {
    const twin = await ws.store.listTwin();
    const byObject = new Map(twin.map((t) => [`${t.type}\u0000${t.objectId}`, t] as const));
    for (const c of page.changes) {
      if (c.actor === ownActor) continue;
      const type = `${providerName}.${c.type}`;
      const remembered = byObject.get(`${type}\u0000${c.id}`);
      const marker = readMarker((c.after ?? c.before)?.['tags']);
      const address: Address | undefined =
        remembered?.address ?? (marker?.workspace === ws.name ? marker.address : undefined);
      if (!address) continue;
      let fieldsToHide;
      try {
        fieldsToHide = secretFields(ws, type, address);
      } catch {
        continue;
      }
      const parsed = c.motivation ? parseMotivation(c.motivation, new Date(c.time)) : undefined;
      const motivation = parsed?.ok
        ? parsed.value
        : parsed
          ? { kind: 'unparsed', ref: c.motivation }
          : undefined;
      const before = c.before ? redact(fieldsToHide, c.before, ws.secrets) : undefined;
      const after = c.after ? redact(fieldsToHide, c.after, ws.secrets) : undefined;
      recorded.push(
        await ws.store.appendChange({
          time: c.time,
          actor: c.actor,
          ...(c.intent ? { intent: c.intent } : {}),
          ...(motivation ? { motivation } : {}),
          source: 'audit',
          address,
          type,
          objectId: c.id,
          action: c.action,
          fields: changedFields(before, after),
          ...(before ? { before } : {}),
          ...(after ? { after } : {}),
        }),
      );
    }
  }
  if (page.cursor !== cursor) await ws.store.setCursor(providerName, page.cursor);
  return { recorded };
}
