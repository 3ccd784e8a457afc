import type { Address, Change } from '../core/index.js';
import type { ChangeQuery, LedgerVerification } from '../store/index.js';
import type { ChangeFilter, ChangeFilterInput } from './change-filter.js';
import { exactAddress, isPlainQuery, matchesChange, readChangeFilter } from './change-filter.js';
import type { AppContext } from './context.js';
import type { WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `history` is asked: the latest `limit` entries that pass the filter. */
export interface HistoryRequest extends WorkspaceSelection, ChangeFilterInput {
  /** Most recent N entries. */
  readonly limit: number;
}

/** The change ledger's latest entries and whether its hash chain holds. */
export interface HistoryReport {
  readonly changes: readonly Change[];
  readonly ledger: LedgerVerification;
  /** The filter applied, as read (times resolved to ISO). */
  readonly filter: ChangeFilter;
}

/** The ledger reads `readChanges` needs. */
export interface LedgerReader {
  changes(query?: ChangeQuery): Promise<Change[]>;
}

/** The first window of entries read to find `limit` matches: a few times the limit. */
const FIRST_WINDOW = 256;

/**
 * The latest `limit` entries that pass `filter`, oldest first. The store gives the most recent N
 * entries (of one address at most); for any other filter the ledger is read backwards in growing
 * windows (each four times the last) until `limit` entries match or the ledger is exhausted, so a
 * common filter reads little and a rare one reads at most the ledger once more than needed.
 */
export async function readChanges(
  ledger: LedgerReader,
  filter: ChangeFilter,
  limit: number,
): Promise<Change[]> {
  if (limit <= 0) return [];
  const address = exactAddress(filter) as Address | undefined;
  const base: ChangeQuery = address === undefined ? {} : { address };
  if (isPlainQuery(filter)) return ledger.changes({ ...base, limit });
  for (let window = Math.max(FIRST_WINDOW, limit * 4); ; window *= 4) {
    const got = await ledger.changes({ ...base, limit: window });
    const matched = got.filter((c) => matchesChange(filter, c));
    if (matched.length >= limit || got.length < window) return matched.slice(-limit);
  }
}

/** Reads the change ledger, filtered; read-only. Throws `history.bad_filter` for a filter Tend cannot read. */
export async function history(ctx: AppContext, request: HistoryRequest): Promise<HistoryReport> {
  // A bad filter is reported before the intent is loaded or the store opened.
  const filter = readChangeFilter(request, ctx.clock.now());
  const { ws } = await openWorkspace(ctx, request, 'read', { recorded: true });
  try {
    const changes = await readChanges(ws.store, filter, request.limit);
    return { changes, ledger: await ws.store.verifyLedger(), filter };
  } finally {
    await ws.close();
  }
}
