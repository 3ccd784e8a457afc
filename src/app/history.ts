import type { Address, Change } from '../core/index.js';
import type { LedgerVerification } from '../store/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `history` is asked. */
export interface HistoryRequest extends WorkspaceSelection {
  /** Most recent N entries. */
  readonly limit: number;
  readonly address?: Address;
}

/** The change ledger's latest entries and whether its hash chain holds. */
export interface HistoryReport {
  readonly changes: readonly Change[];
  readonly ledger: LedgerVerification;
}

/** Reads the change ledger; read-only. */
export async function history(ctx: AppContext, request: HistoryRequest): Promise<HistoryReport> {
  const { ws } = await openWorkspace(ctx, request, 'read');
  try {
    const changes = await ws.store.changes({
      limit: request.limit,
      ...(request.address ? { address: request.address } : {}),
    });
    return { changes, ledger: await ws.store.verifyLedger() };
  } finally {
    await ws.close();
  }
}
