import type { ResourceStatus } from '../core/index.js';
import { toTendError } from '../core/index.js';
import type { PausedResource, ProviderState } from '../engine/index.js';
import { observe, PROVIDER_STATE_KEY, readPaused } from '../engine/index.js';
import type { GitSource, Lease } from '../store/index.js';
import type { AppContext } from './context.js';
import type { LiveFindings } from './plan.js';
import { liveFindings } from './plan.js';
import type { OpenedWorkspace, WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { isSharedStore, openWorkspace, storeLocation } from './workspace.js';
import { withRegistry } from './fleet.js';

/** What `status` is asked. */
export interface StatusRequest extends WorkspaceSelection {
  /**
   * Do not contact the platform (no orphans, duplicates or replaces in progress). Default false: read
   * it, as `tend status` does. A server's answers default to SERVED_STATUS_OFFLINE instead.
   */
  readonly offline?: boolean;
}

/**
 * The default of `offline` for a server's answers, the same for `GET /status` and the MCP `status`
 * tool: what Tend knows (the loop observes the platform every pass), without listing the platform
 * on every request — a server answers many readers at once (issue 25, item 9). `offline: false`
 * also reads the platform.
 */
export const SERVED_STATUS_OFFLINE = true;

/** Each resource's state after the last pass, each provider's, the lease, and what is live. */
export interface StatusReport extends Partial<LiveFindings> {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly resources: readonly ResourceStatus[];
  /** How each provider answered the last pass (`unauthorized` when it refused our credentials). */
  readonly providers: readonly ({ readonly name: string } & ProviderState)[];
  /** Who holds the workspace now, if anyone. */
  readonly lease?: Lease;
  /** Resources whose reconciling was stopped by hand (`tend pause`): passes leave them alone. */
  readonly paused: readonly PausedResource[];
  /** Why the live findings are missing, when the platform could not be read. */
  readonly platformError?: string;
  /**
   * A git workspace registered in the fleet's store: its repository, ref and path, and the commit its
   * holder's last finished pass planned from (absent before the first) with that pass's time.
   */
  readonly gitSource?: GitSource & { readonly commit?: string; readonly lastPassAt?: string };
}

/** Reads what Tend knows of a workspace; read-only (never waits for a writer's lease). */
export async function status(ctx: AppContext, request: StatusRequest): Promise<StatusReport> {
  const opened = await openWorkspace(ctx, request, 'read', { recorded: true });
  try {
    const report = await readStatus(ctx, opened, request.offline ?? false);
    const git = await registeredGitSource(ctx, request, opened.ws.name);
    return git ? { ...report, gitSource: git } : report;
  } finally {
    await opened.ws.close();
  }
}

/** The registration of a git workspace in a shared store, with the commit of its last pass. */
async function registeredGitSource(
  ctx: AppContext,
  request: StatusRequest,
  name: string,
): Promise<StatusReport['gitSource']> {
  const location = storeLocation(ctx, request);
  if (!isSharedStore(location)) return undefined;
  const found = await withRegistry(ctx, { store: location }, async (registry) =>
    (await registry.listWorkspaces()).find((w) => w.name === name),
  );
  if (found?.source.kind !== 'git') return undefined;
  return {
    ...found.source,
    ...(found.lastOrigin ? { commit: found.lastOrigin.commit } : {}),
    ...(found.lastPassAt ? { lastPassAt: found.lastPassAt } : {}),
  };
}

/**
 * `status` of a workspace already open (one `tend serve` holds, see held-workspace.ts): what the
 * store says now, and with `offline` false what the platform says.
 */
export async function readStatus(
  ctx: AppContext,
  opened: Pick<OpenedWorkspace, 'ws' | 'nameSource'>,
  offline: boolean,
): Promise<StatusReport> {
  const { ws, nameSource } = opened;
  const stored = new Map((await ws.store.listStatus()).map((s) => [s.address, s] as const));
  const resources: ResourceStatus[] = ws.intent.resources.map(
    (r) =>
      stored.get(r.address) ?? {
        address: r.address,
        state: 'pending',
        message: 'never applied',
        checks: [],
        updatedAt: '',
      },
  );
  const providers: ({ name: string } & ProviderState)[] = [];
  for (const name of ws.providers.keys()) {
    const raw = await ws.store.getMeta(PROVIDER_STATE_KEY(name));
    if (raw !== undefined) providers.push({ name, ...(JSON.parse(raw) as ProviderState) });
  }
  const lease = await ws.store.getLease(ws.name);
  const base = {
    workspace: { name: ws.name, source: nameSource },
    resources,
    providers,
    paused: await readPaused(ws.store, ws.name),
    ...(lease && Date.parse(lease.expiresAt) > ctx.clock.now().getTime() ? { lease } : {}),
  };
  if (offline) return base;
  try {
    const obs = await observe(ws, { now: ctx.clock.now() });
    return { ...base, ...liveFindings(obs) };
  } catch (e) {
    return { ...base, platformError: toTendError(e).message };
  }
}
