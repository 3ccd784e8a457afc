import type { Address } from '../core/index.js';
import { nearMatches, parseAddress, TendError } from '../core/index.js';
import type { PausedResource, Workspace } from '../engine/index.js';
import { PAUSED_KEY, readPaused } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `pauseResource` and `resumeResource` are asked. */
export interface PauseRequest extends WorkspaceSelection {
  readonly address: string;
  /** Who stops it (an API token's name, `$USER` on the command line). */
  readonly by: string;
  /** Why, in a few words (shown in status). */
  readonly reason?: string;
}

/** The resources whose reconciling is stopped, after a pause, a resume or a read. */
export interface PausedReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly paused: readonly PausedResource[];
  /** False when the resource was already in the state asked for (nothing was written). */
  readonly changed: boolean;
}

/** The longest reason kept. */
const MAX_REASON = 500;

function declaredAddress(ws: Workspace, text: string): Address {
  if (!parseAddress(text)) {
    throw new TendError('pause.bad_address', `"${text}" is not an address`, {
      hint: 'write provider.type/name, e.g. sb.services/api',
    });
  }
  const declared = ws.intent.resources.map((r) => r.address as string);
  if (!declared.includes(text)) {
    const near = nearMatches(text, declared);
    throw new TendError(
      'pause.unknown_address',
      `${text} is not a resource the intent declares${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''}`,
      { hint: 'tend status lists the declared resources' },
    );
  }
  return text as Address;
}

async function update(
  ctx: AppContext,
  request: PauseRequest,
  change: (current: PausedResource[], address: Address) => PausedResource[] | undefined,
): Promise<PausedReport> {
  const { ws, nameSource } = await openWorkspace(ctx, request, 'read');
  try {
    const address = declaredAddress(ws, request.address);
    const current = await readPaused(ws.store, ws.name);
    const next = change(current, address);
    if (next) {
      next.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
      await ws.store.setMeta(PAUSED_KEY(ws.name), JSON.stringify(next));
    }
    return {
      workspace: { name: ws.name, source: nameSource },
      paused: next ?? current,
      changed: next !== undefined,
    };
  } finally {
    await ws.close();
  }
}

/**
 * Stops reconciling one declared resource: every later pass (of `tend run`, `tend serve`, `tend
 * apply`) leaves it alone — nothing is sent for it, its status is `pending` with who stopped it and
 * why — until `resumeResource`. Stored in the workspace's store, so it outlives the process. Does not
 * take the lease (like an announcement, it is input a running loop reads at its next pass).
 */
export function pauseResource(ctx: AppContext, request: PauseRequest): Promise<PausedReport> {
  const reason = request.reason?.trim().slice(0, MAX_REASON);
  return update(ctx, request, (current, address) =>
    current.some((p) => p.address === address)
      ? undefined
      : [
          ...current,
          {
            address,
            by: request.by,
            since: ctx.clock.now().toISOString(),
            ...(reason ? { reason } : {}),
          },
        ],
  );
}

/** Lets Tend reconcile a stopped resource again (at the next pass). */
export function resumeResource(
  ctx: AppContext,
  request: Omit<PauseRequest, 'by' | 'reason'>,
): Promise<PausedReport> {
  return update(ctx, { ...request, by: '' }, (current, address) =>
    current.some((p) => p.address === address)
      ? current.filter((p) => p.address !== address)
      : undefined,
  );
}
