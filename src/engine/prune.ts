import type { ActorContext, Address, ObservedObject } from '../core/index.js';
import { TendError, mentionsId, noDeleteReason, toTendError } from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { Observation } from './observe.js';
import { Recorder } from './recorder.js';
import type { Workspace } from './workspace.js';

// `tend prune`: the deliberate way to delete what carries this workspace's marker and the intent does
// not declare (DESIGN.md principle 5: no surprise destroys). That is every orphan (an object neither
// the intent nor Tend's memory explains: after a lost store, every removed resource), which observe
// lists and the normal plan never touches, and every removed resource the store still remembers that
// an apply left in place (--no-prune, or a gated stateful delete). Prune deletes them only when asked,
// through the journal protocol, a stateful one only with approval.

/** One object prune may delete. */
export interface PruneTarget {
  /** `provider.resourceType`. */
  readonly type: string;
  readonly id: string;
  /** The address its marker names (no longer declared). */
  readonly address: Address;
  /**
   * Whether deleting it destroys state. Known only when the store's twin still remembers the object
   * (a resource removed from the intent, left by an apply with --no-prune or gated); an orphan the
   * store does not know (after the store was lost, or made by another copy of the store) is treated
   * as NOT stateful: nothing records that it was, and the marker does not say.
   */
  readonly stateful: boolean;
  /** The address whose twin entry names this object, when the store remembers it (forgotten on delete). */
  readonly rememberedAs?: Address;
  /** Addresses of the other candidates this one references (they are deleted after it). */
  readonly uses: readonly Address[];
}

/** A candidate prune leaves alone, and why. */
export interface HeldTarget {
  readonly target: PruneTarget;
  readonly reason: string;
}

/** What prune would do: deletes in a safe order (what references another candidate goes first). */
export interface PrunePlan {
  readonly toDelete: readonly PruneTarget[];
  /** Stateful without approval, or still used by something that stays. */
  readonly gated: readonly HeldTarget[];
}

/** What prune did. Plain data, for the application layer to render or return as JSON. */
export interface PruneResult {
  readonly deleted: readonly PruneTarget[];
  /** Not deleted by design (the plan's `gated`). */
  readonly gated: readonly HeldTarget[];
  /** A delete the platform refused, or whose outcome stayed unknown (journaled; recovered later). */
  readonly failed: readonly {
    readonly target: PruneTarget;
    readonly code: string;
    readonly message: string;
  }[];
  /** Not attempted: already gone, no longer an orphan, or something that uses it was not deleted. */
  readonly skipped: readonly HeldTarget[];
}

/** Options of planPrune. */
export interface PrunePlanOptions {
  /** Also delete candidates known to be stateful. */
  readonly approveDestroy: boolean;
  /** True for a type whose objects cannot be deleted (`ResourceTypeInfo.noDelete`): always held. */
  readonly noDelete?: (type: string) => boolean;
}

/**
 * Plans the deletion of an observation's orphans and removed resources: every one, except a stateful
 * one without `approveDestroy`, and any still referenced by an object that stays (a declared resource,
 * or a held candidate), whose delete the platform would refuse or whose user would break. Pure: reads
 * nothing but the observation and the twin it carries.
 */
export function planPrune(
  ws: Pick<Workspace, 'name'>,
  observation: Pick<Observation, 'orphans' | 'removed' | 'objects' | 'twin'>,
  options: PrunePlanOptions,
): PrunePlan {
  const remembered = new Map<string, { stateful: boolean; address: Address }>();
  for (const t of observation.twin.values()) remembered.set(keyOf(t.type, t.objectId), t);
  // The candidates: resources removed from the intent that the store remembers (left by an apply
  // with --no-prune, or gated), and orphans the store does not know.
  const candidates = new Map<string, { type: string; object: ObservedObject; address: Address }>();
  for (const r of observation.removed) {
    const object = observation.objects.get(r.address);
    if (object)
      candidates.set(keyOf(r.type, object.id), { type: r.type, object, address: r.address });
  }
  for (const o of observation.orphans) {
    const marker = o.object.marker;
    if (marker?.workspace !== ws.name) continue;
    candidates.set(keyOf(o.type, o.object.id), { ...o, address: marker.address });
  }
  // Which candidates each candidate references (by id anywhere in its fields), by key.
  const uses = new Map<string, string[]>();
  for (const [k, c] of candidates) {
    uses.set(
      k,
      [...candidates]
        .filter(([k2, c2]) => k2 !== k && mentionsId(c.object.fields, c2.object.id))
        .map(([k2]) => k2),
    );
  }
  const usersOf = (k: string) => [...uses].filter(([, l]) => l.includes(k)).map(([u]) => u);

  const targets = new Map<string, PruneTarget>();
  for (const [k, c] of candidates) {
    const known = remembered.get(k);
    targets.set(k, {
      type: c.type,
      id: c.object.id,
      address: c.address,
      stateful: known?.stateful ?? false,
      ...(known ? { rememberedAs: known.address } : {}),
      uses: [...new Set(uses.get(k)!.map((u) => candidates.get(u)!.address))].sort(),
    });
  }

  const removedAddresses = new Set(observation.removed.map((r) => r.address));
  const held = new Map<string, string>();
  for (const [k, t] of targets) {
    if (options.noDelete?.(t.type) === true) {
      held.set(k, `${t.address} (${t.id}) cannot be deleted: ${noDeleteReason(t.type)}`);
    } else if (t.stateful && !options.approveDestroy) {
      held.set(k, `${t.address} (${t.id}) is stateful: approve with --approve-destroy`);
    }
  }
  // Whatever stays and references a candidate keeps it (the platform would refuse the delete, or
  // the user of it would break): declared objects, and held candidates, transitively.
  for (const [k, t] of targets) {
    if (held.has(k)) continue;
    for (const [address, obj] of observation.objects) {
      if (removedAddresses.has(address) || !mentionsId(obj.fields, t.id)) continue;
      held.set(k, `${t.address} (${t.id}) is still used by ${address}`);
      break;
    }
  }
  for (let changed = true; changed;) {
    changed = false;
    for (const [k, t] of targets) {
      if (held.has(k)) continue;
      const user = usersOf(k).find((u) => held.has(u));
      if (user) {
        held.set(k, `${t.address} (${t.id}) is still used by ${targets.get(user)!.address}`);
        changed = true;
      }
    }
  }

  // Users before what they use; otherwise in a stable order (type, then id).
  const order: PruneTarget[] = [];
  const placed = new Set<string>();
  const visit = (k: string, path: ReadonlySet<string>) => {
    if (placed.has(k) || path.has(k)) return;
    for (const u of usersOf(k)) visit(u, new Set([...path, k]));
    placed.add(k);
    order.push(targets.get(k)!);
  };
  for (const k of [...targets.keys()].filter((k) => !held.has(k)).sort()) visit(k, new Set());
  return {
    toDelete: order,
    gated: [...held].map(([k, reason]) => ({ target: targets.get(k)!, reason })),
  };
}

function keyOf(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

/** Options of executePrune. */
export interface PruneOptions {
  readonly actor: ActorContext;
  readonly clock: Clock;
  readonly report: Reporter;
  /** When aborted, no new delete starts. */
  readonly signal?: AbortSignal;
  /** Test hook called around every store write (the torture suite kills the process there). */
  readonly crash?: CrashHook;
}

/**
 * Carries out a prune plan: each delete follows the journal protocol (journaled → sent → settled →
 * recorded in the ledger with motivation `prune`), one at a time in the plan's order. Before each
 * delete the object is read again: one that is gone, or no longer carries this workspace's marker
 * for the same address, is skipped. A failed delete skips the orphans it uses. A delete whose outcome
 * is unknown stays pending in the journal, and recovery finishes it on the next pass.
 */
export async function executePrune(
  ws: Workspace,
  plan: PrunePlan,
  options: PruneOptions,
): Promise<PruneResult> {
  const operator = new Recorder(ws, options.actor, options.clock, options.report, options.crash);
  const deleted: PruneTarget[] = [];
  const failed: { target: PruneTarget; code: string; message: string }[] = [];
  const skipped: HeldTarget[] = [];
  const notDeleted = new Set<string>();
  for (const t of plan.toDelete) {
    if (options.signal?.aborted) {
      skipped.push({ target: t, reason: 'not started: prune is stopping' });
      continue;
    }
    const user = plan.toDelete.find(
      (u) => notDeleted.has(keyOf(u.type, u.id)) && u.uses.includes(t.address),
    );
    if (user) {
      notDeleted.add(keyOf(t.type, t.id));
      skipped.push({
        target: t,
        reason: `not attempted: ${user.address}, which uses it, was not deleted`,
      });
      continue;
    }
    const { provider, info } = ws.typeOf(t.type);
    try {
      const now = await provider.read(info.name, t.id, options.signal);
      if (!now) {
        skipped.push({ target: t, reason: 'already gone' });
        continue;
      }
      // Only an object that still carries this workspace's marker for the same address is deleted.
      // (On a type without tags the natural key is the marker: there, the store must remember it.)
      const tagless = info.markerField === undefined;
      const marked = now.marker?.workspace === ws.name && now.marker.address === t.address;
      if (!marked && !(tagless && t.rememberedAs !== undefined)) {
        notDeleted.add(keyOf(t.type, t.id));
        skipped.push({
          target: t,
          reason: 'its marker changed since it was observed; not deleted',
        });
        continue;
      }
      await operator.delete(
        {
          address: t.rememberedAs ?? t.address,
          type: t.type,
          stateful: t.stateful,
          dependsOn: t.uses,
        },
        now,
        t.rememberedAs !== undefined,
        'prune',
      );
      deleted.push(t);
    } catch (e) {
      const err = e instanceof TendError ? e : toTendError(e);
      notDeleted.add(keyOf(t.type, t.id));
      failed.push({ target: t, code: err.code, message: err.message });
    }
  }
  return { deleted, gated: plan.gated, failed, skipped };
}
