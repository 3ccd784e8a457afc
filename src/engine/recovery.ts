import type { ActorContext, Address, ObservedObject } from '../core/index.js';
import { hashValue, toTendError } from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import { Operator } from './operator.js';
import { resolveDesired } from './planner.js';
import { isSecretRef, withSecrets } from './secrets.js';
import type { Workspace } from './workspace.js';

/**
 * Resolves every unsettled operation left by a crash or an unknown outcome, before anything new is
 * planned (DESIGN.md §4, step 4). A create is looked up by its marker: found → adopted; not found and
 * the intent still wants the same thing → resent with the same idempotency key; otherwise marked
 * superseded and left to the next plan. Updates and deletes are idempotent: re-read and settle (or
 * resend the delete). Returns how many operations were resolved.
 */
export async function recoverJournal(
  ws: Workspace,
  known: ReadonlyMap<Address, ObservedObject>,
  actor: ActorContext,
  clock: Clock,
  report: Reporter,
  crash?: CrashHook,
): Promise<number> {
  const pending = await ws.store.unsettled();
  if (pending.length === 0) return 0;
  const operator = new Operator(ws, actor, clock, report, crash);
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const twin = new Map((await ws.store.listTwin()).map((t) => [t.address, t] as const));
  for (const op of pending) {
    const decl = decls.get(op.address);
    const remembered = twin.get(op.address);
    const target = {
      address: op.address,
      type: op.type,
      stateful: decl?.lifecycle.stateful ?? remembered?.stateful ?? false,
      dependsOn: decl?.dependsOn ?? remembered?.dependsOn ?? [],
      ...(op.group ? { group: op.group, step: op.step ?? 1 } : {}),
    };
    let outcome: string;
    try {
      const { provider, info } = ws.typeOf(op.type);
      if (op.action === 'create') {
        const found = await operator.findByMarker(op.type, op.marker);
        if (found) {
          await operator.adopt(op, target, found, 'recovered');
          outcome = `adopted ${found.id} (created before the interruption)`;
        } else {
          const desired = decl ? resolveDesired(decl, (a) => known.get(a)) : undefined;
          if (decl && desired && hashValue(desired) === op.desiredHash) {
            const secrets: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(decl.spec)) if (isSecretRef(v)) secrets[k] = v;
            const created = await operator.sendCreate(
              op,
              target,
              { ...desired, ...withSecrets(secrets, ws.env, ws.intent.dir) },
              'recovered',
            );
            outcome = `resent with the same idempotency key → ${created.id}`;
          } else {
            await operator.fail(
              op,
              new Error('superseded: not found, and the intent changed since'),
            );
            outcome = 'superseded (not created; the intent changed)';
          }
        }
      } else if (op.action === 'update') {
        await operator.settle(op, op.objectId);
        outcome = 'settled; the next plan corrects what is left';
      } else {
        const still = op.objectId ? await provider.read(info.name, op.objectId) : undefined;
        if (still) {
          await provider.delete(info.name, still.id, { actor });
        }
        await operator.settle(op, op.objectId);
        if (!op.group) {
          await ws.store.deleteTwin(op.address);
          await ws.store.deleteStatus(op.address);
        }
        outcome = still ? 'delete resent' : 'already deleted';
      }
    } catch (e) {
      outcome = `still unresolved: ${toTendError(e).message}`;
    }
    report({ kind: 'recovered', opId: op.id, address: op.address, outcome });
  }
  return pending.length;
}
