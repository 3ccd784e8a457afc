import type { Address, Attribution, ChangeSource, Decision, FieldClaim } from '../core/index.js';
import { attributionOf } from '../engine/index.js';
import type { AppContext } from './context.js';
import { declaredDrift } from '../engine/index.js';
import { observeAndDecide } from './observe-drift.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `drift` is asked. */
export type DriftRequest = WorkspaceSelection;

/** Who made a change, why, and how Tend knows (an audit entry, an announcement, or nothing). */
export type ChangedBy = Attribution & { readonly source: ChangeSource };

/** One declared field whose observed value differs from its declared value. */
export interface DriftedField {
  readonly address: Address;
  /** The field path below the spec. */
  readonly field: string;
  /** The declared value, references resolved. */
  readonly declared: unknown;
  readonly observed: unknown;
  /**
   * Who changed it, as the arbitrate step finds it: an announcement, an audit-feed entry, or
   * `unknown` when the value differs from what Tend last saw and nothing says who. Absent when
   * nothing shows that anyone changed it on the platform (the intent changed, or it was never
   * applied): apply then sets the declared value.
   */
  readonly changedBy?: ChangedBy;
  /** What the policy decides, with its rule and reason (absent with `changedBy`). */
  readonly decision?: Decision;
  /** False when an earlier pass decided it and the policy keeps to that decision. */
  readonly fresh?: boolean;
}

/** A declared resource without an object. */
export interface MissingResource {
  readonly address: Address;
  /**
   * `deleted`: Tend had recorded its object, which is gone (apply creates it again); `not-created`:
   * never applied; `conflict`: its natural key is taken by another workspace's object.
   */
  readonly reason: 'deleted' | 'not-created' | 'conflict';
  /** Who deleted it, when the audit feed says. */
  readonly deletedBy?: ChangedBy;
}

/** Every drifted declared field, who changed it and what the policy decides; claims held by actors. */
export interface DriftReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly fields: readonly DriftedField[];
  readonly missing: readonly MissingResource[];
  /** The fields actors hold now after decisions in their favour (accept, yield, hold, escalate). */
  readonly claims: readonly FieldClaim[];
  readonly warnings: readonly string[];
  /**
   * True when something differs from the intent: a drifted field not yielded to an actor (a yielded
   * field is no longer Tend's to manage), or a declared resource without an object. The exit code.
   */
  readonly drifted: boolean;
}

/**
 * Observes the platform (read-only: no lease, nothing recorded, feed cursors not advanced) and lists
 * every drifted declared field with who changed it and what the policy decides, the declared
 * resources that have no object, and the fields actors hold.
 */
export async function drift(ctx: AppContext, request: DriftRequest): Promise<DriftReport> {
  const { ws, nameSource } = await openWorkspace(ctx, request, 'read', { recorded: true });
  try {
    const now = ctx.clock.now();
    const { observation, feed, arbitration, warnings } = await observeAndDecide(ws, now);
    const decisions = new Map(
      arbitration.decisions.map((d) => [`${d.address}\u0000${d.field}`, d]),
    );
    const fields: DriftedField[] = [];
    const missing: MissingResource[] = [];
    for (const decl of ws.intent.resources) {
      const obj = observation.objects.get(decl.address);
      if (!obj) {
        if (observation.pendingVisibility.has(decl.address)) continue;
        const twin = observation.twin.get(decl.address);
        const event = feed.events.find(
          (e) =>
            e.address === decl.address &&
            e.change.action === 'delete' &&
            (twin === undefined || e.change.id === twin.objectId),
        );
        missing.push({
          address: decl.address,
          reason: observation.conflicts.has(decl.address)
            ? 'conflict'
            : twin !== undefined
              ? 'deleted'
              : 'not-created',
          ...(event ? { deletedBy: { ...attributionOf(event.change), source: 'audit' } } : {}),
        });
        continue;
      }
      const { drift: changes } = declaredDrift(ws, decl, obj.fields, (a) =>
        observation.objects.get(a),
      );
      for (const c of changes) {
        const d = decisions.get(`${decl.address}\u0000${c.path}`);
        fields.push({
          address: decl.address,
          field: c.path,
          declared: c.after,
          observed: c.before,
          ...(d ? { changedBy: d.by, decision: d.decision, fresh: d.fresh } : {}),
        });
      }
    }
    const claims = await ws.store.claims();
    return {
      workspace: { name: ws.name, source: nameSource },
      fields,
      missing,
      claims,
      warnings,
      drifted: missing.length > 0 || fields.some((f) => f.decision?.decision !== 'yield'),
    };
  } finally {
    await ws.close();
  }
}
