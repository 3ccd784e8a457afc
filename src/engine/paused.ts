import type { Address } from '../core/index.js';
import type { Store } from '../store/index.js';

/**
 * Resources whose reconciling was stopped by hand (`tend pause`, `POST /resources/{address}/pause`):
 * kept in the store's meta table under this key, one JSON list per workspace. A pass leaves them
 * alone (planned as waiting, never acted on, status `pending` with the reason) until resumed.
 */
export const PAUSED_KEY = (workspace: string) => `paused:${workspace}`;

/** One stopped resource: who stopped it, when and why. */
export interface PausedResource {
  readonly address: Address;
  readonly by: string;
  readonly since: string;
  readonly reason?: string;
}

/** The stopped resources of a workspace, in address order (none when nothing was ever stopped). */
export async function readPaused(
  store: Pick<Store, 'getMeta'>,
  workspace: string,
): Promise<PausedResource[]> {
  const raw = await store.getMeta(PAUSED_KEY(workspace));
  if (raw === undefined) return [];
  const parsed = JSON.parse(raw) as unknown;
  return Array.isArray(parsed) ? (parsed as PausedResource[]) : [];
}

/** Why a pass leaves each stopped resource alone, by address (the status message). */
export function pausedReasons(paused: readonly PausedResource[]): Map<Address, string> {
  return new Map(
    paused.map((p) => [
      p.address,
      `reconciling stopped by ${p.by} at ${p.since}${p.reason ? ` (${p.reason})` : ''}; resume to let Tend act on it again`,
    ]),
  );
}
