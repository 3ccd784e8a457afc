import type { Address, ResourceState } from '../core/index.js';
import { findingDenies } from '../core/index.js';
import { readPaused } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { OpenedWorkspace, WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** One resource of the twin as a node. */
export interface TwinNode {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  /** `declared`: in the intent; `removed`: remembered by Tend, no longer declared. */
  readonly origin: 'declared' | 'removed';
  readonly state: ResourceState | 'pending';
  readonly message?: string;
  readonly objectId?: string;
  readonly stateful: boolean;
  /** True when its reconciling is stopped by hand. */
  readonly paused: boolean;
  /**
   * Policy rules its observed object breaks, as the last pass found them (docs/policies.md); absent
   * when none. `deny`: how many of them are deny rules.
   */
  readonly violations?: { readonly count: number; readonly deny: number };
}

/** A reference: `from` reads a value of `to` (`${to.path}` in its spec), so `to` comes first. */
export interface TwinEdge {
  readonly from: Address;
  readonly to: Address;
}

/** The twin as a graph: resources, their references, and each one's status. */
export interface TwinGraph {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly nodes: readonly TwinNode[];
  readonly edges: readonly TwinEdge[];
  /** How many nodes are in each state. */
  readonly states: Readonly<Record<string, number>>;
}

/**
 * The twin as a graph from what Tend knows (never contacts the platform): every declared resource
 * with its last status and object id, every resource Tend remembers that is no longer declared, and
 * an edge per reference (declared references, or those recorded when a removed resource was last
 * declared).
 */
export async function twinGraph(ctx: AppContext, request: WorkspaceSelection): Promise<TwinGraph> {
  const opened = await openWorkspace(ctx, request, 'read');
  try {
    return await readTwinGraph(opened);
  } finally {
    await opened.ws.close();
  }
}

/** `twinGraph` of a workspace already open (one `tend serve` holds, see held-workspace.ts). */
export async function readTwinGraph(
  opened: Pick<OpenedWorkspace, 'ws' | 'nameSource'>,
): Promise<TwinGraph> {
  const { ws, nameSource } = opened;
  const status = new Map((await ws.store.listStatus()).map((s) => [s.address, s] as const));
  const twin = new Map((await ws.store.listTwin()).map((t) => [t.address, t] as const));
  const paused = new Set((await readPaused(ws.store, ws.name)).map((p) => p.address));
  const nodes: TwinNode[] = [];
  const edges: TwinEdge[] = [];
  const declared = new Set<Address>();
  for (const r of ws.intent.resources) {
    declared.add(r.address);
    const s = status.get(r.address);
    const t = twin.get(r.address);
    nodes.push({
      address: r.address,
      type: r.type,
      origin: 'declared',
      state: s?.state ?? 'pending',
      ...(s ? (s.message ? { message: s.message } : {}) : { message: 'never applied' }),
      ...(t ? { objectId: t.objectId } : {}),
      stateful: r.lifecycle.stateful === true,
      paused: paused.has(r.address),
      ...(s?.compliance && s.compliance.findings.length > 0
        ? {
            violations: {
              count: s.compliance.findings.length,
              deny: s.compliance.findings.filter(findingDenies).length,
            },
          }
        : {}),
    });
    for (const to of r.dependsOn) edges.push({ from: r.address, to });
  }
  for (const t of twin.values()) {
    if (declared.has(t.address)) continue;
    nodes.push({
      address: t.address,
      type: t.type,
      origin: 'removed',
      state: 'pending',
      message: 'no longer declared; deleted by the next pass that prunes',
      objectId: t.objectId,
      stateful: t.stateful,
      paused: false,
    });
    for (const to of t.dependsOn) edges.push({ from: t.address, to });
  }
  const states = new Map<string, number>();
  for (const n of nodes) states.set(n.state, (states.get(n.state) ?? 0) + 1);
  return {
    workspace: { name: ws.name, source: nameSource },
    nodes,
    edges,
    states: Object.fromEntries(states),
  };
}
