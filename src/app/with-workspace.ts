import type { Workspace } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { HeldLease, LeaseOptions } from './lease.js';
import { acquireWorkspaceLease } from './lease.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace, rememberWorkspaceName } from './workspace.js';

/** A workspace opened for writing, with its lease held. */
export interface LeasedWorkspace {
  readonly ws: Workspace;
  readonly nameSource: WorkspaceNameSource;
  readonly lease: HeldLease;
  /** Aborts when the request's signal does (`lease.signal` of the options) or the lease is lost. */
  readonly signal: AbortSignal;
}

/**
 * A writing use case asked to work inside a run that holds the lease already (`tend worker` carrying
 * out a fleet's job between passes) instead of opening the workspace and taking the lease itself.
 */
export interface UnderLease {
  readonly heldByRun?: LeasedWorkspace;
}

/** How a writing use case holds its workspace. */
export interface WithWorkspaceOptions<P> {
  readonly lease: LeaseOptions;
  /**
   * Checks made on the open workspace before the lease is taken, so that a caller's mistake is
   * reported at once rather than after waiting for another writer; what it returns is handed on.
   */
  readonly prepare?: (ws: Workspace) => P;
}

/**
 * Every writing use case's frame: opens the workspace for writing, takes its lease (waiting as the
 * options say; `workspace.locked` naming the holder), remembers a folder-derived name, runs `fn`,
 * and always releases the lease and closes the workspace, whatever `fn` does.
 */
export async function withWorkspace<T, P = undefined>(
  ctx: AppContext,
  selection: WorkspaceSelection & UnderLease,
  options: WithWorkspaceOptions<P>,
  fn: (held: LeasedWorkspace, prepared: P) => Promise<T>,
): Promise<T> {
  const held = selection.heldByRun;
  if (held) {
    // Already held by a run (a fleet's job between passes): its workspace, lease and fence, which
    // stay the run's (nothing is opened, released or closed here).
    const prepared = options.prepare ? options.prepare(held.ws) : (undefined as P);
    const wanted = options.lease.signal;
    const signal = wanted ? AbortSignal.any([wanted, held.signal]) : held.signal;
    return fn({ ...held, signal }, prepared);
  }
  const { ws, nameSource } = await openWorkspace(ctx, selection);
  let lease: HeldLease | undefined;
  try {
    const prepared = options.prepare ? options.prepare(ws) : (undefined as P);
    lease = await acquireWorkspaceLease(ctx, ws, options.lease);
    await rememberWorkspaceName(ws, nameSource);
    const wanted = options.lease.signal;
    const signal = wanted ? AbortSignal.any([wanted, lease.signal]) : lease.signal;
    return await fn({ ws, nameSource, lease, signal }, prepared);
  } finally {
    await lease?.release();
    await ws.close();
  }
}
