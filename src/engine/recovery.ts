import type { ActorContext, Address, ObservedObject, Operation } from '../core/index.js';
import { containsUnknown, hashValue, toTendError } from '../core/index.js';
import type { Clock } from './clock.js';
import type { CrashHook } from './crash-points.js';
import type { Reporter } from './events.js';
import type { OperationTarget, OperatorOptions } from './operator.js';
import { Recorder } from './recorder.js';
import { resolveDesired } from './planner.js';
import { sendableSpec } from './secrets.js';
import type { Workspace } from './workspace.js';
import { sentHashes } from './write-only.js';

/** Options for recovering the journal. */
export interface RecoveryOptions extends OperatorOptions {
  /**
   * How many addresses are resolved at once: `remote` while looking objects up or resending (default
   * 64), `local` from what the pass already knows (default 512). Tests compare with 1 and 1.
   */
  readonly concurrency?: { readonly local?: number; readonly remote?: number };
  /** The pass's recorder, which makes every store write (else one is made from these arguments). */
  readonly recorder?: Recorder;
}

/**
 * Resolves every unsettled operation left by a crash or an unknown outcome, before anything new is
 * planned (DESIGN.md §4, step 4), oldest first:
 * - create: looked up by its marker (or natural key). Found → adopted and settled. Not found and the
 *   intent still wants the same thing → resent with the same idempotency key: at once when the type
 *   takes the key (a replay cannot make a second object), otherwise only after the platform's
 *   consistency window since the operation was journaled has passed and a second look still finds
 *   nothing. Not found and the intent changed → failed as superseded (after the window, so that a
 *   late object is adopted rather than created again by the next plan). An object that shows up
 *   even later carries this operation's id in its marker: `observe` finds it in the journal and
 *   the normal plan deletes it as Tend's own (it is never left as an orphan or a duplicate).
 * - update: settled; the next plan corrects whatever is still different.
 * - delete: resent if the object still exists (a delete is idempotent) and settled; a definite
 *   refusal fails it (the next pass plans again). A plain delete of a resource declared again is
 *   superseded rather than resumed.
 * The step 1 create of a create-before-destroy replace is resolved like any create; observe then
 * sees both objects and the executor finishes the replace (see `observe` leftovers).
 * Returns how many operations were pending.
 */
export async function recoverJournal(
  ws: Workspace,
  known: ReadonlyMap<Address, ObservedObject>,
  actor: ActorContext,
  clock: Clock,
  report: Reporter,
  crash?: CrashHook,
  options: RecoveryOptions = {},
): Promise<number> {
  const pending = await ws.store.unsettled();
  if (pending.length === 0) return 0;
  const operator = options.recorder ?? new Recorder(ws, actor, clock, report, crash, options);
  const decls = new Map(ws.intent.resources.map((r) => [r.address, r] as const));
  const twin = new Map((await ws.store.listTwin()).map((t) => [t.address, t] as const));
  const resolve = async (op: Operation) => {
    const decl = decls.get(op.address);
    const remembered = twin.get(op.address);
    let target: OperationTarget = {
      address: op.address,
      type: op.type,
      stateful: decl?.lifecycle.stateful ?? remembered?.stateful ?? false,
      dependsOn: decl?.dependsOn ?? remembered?.dependsOn ?? [],
      ...(op.group ? { group: op.group, step: op.step ?? 1 } : {}),
      ...(op.replaces ? { replaces: op.replaces } : {}),
    };
    // What the intent wants now, for a create (resolved once: the hashes sent and the comparison).
    const desired =
      op.action === 'create' && decl ? resolveDesired(decl, (a) => known.get(a)) : undefined;
    const sent = desired ? sentHashes(ws.typeOf(op.type).info, desired) : remembered?.sent;
    if (sent) target = { ...target, sent };
    let outcome: string;
    try {
      if (op.action === 'create') {
        // Compared only when the object must be looked up or resent (hashing costs a pass of 10,000).
        const wanted = () =>
          decl !== undefined &&
          desired !== undefined &&
          !containsUnknown(desired) &&
          hashValue(desired) === op.desiredHash
            ? desired
            : undefined;
        outcome = await recoverCreate(ws, operator, known, op, target, wanted, () =>
          sendableSpec(decl!.spec, desired ?? {}, ws.env, ws.intent.dir, ws.secrets),
        );
      } else if (op.action === 'update') {
        await operator.settle(op, op.objectId);
        outcome = 'settled; the next plan corrects what is left';
      } else {
        outcome = await recoverDelete(ws, operator, op, decl !== undefined, {
          ...actor,
          motivation: 'recovered',
        });
      }
    } catch (e) {
      outcome = `still unresolved: ${toTendError(e).message}`;
    }
    report({ kind: 'recovered', opId: op.id, address: op.address, outcome });
  };
  // One address's operations resolve in journal order (a replace's steps); different addresses
  // resolve concurrently, so their store writes share commits and their lookups overlap.
  const byAddress = new Map<Address, Operation[]>();
  for (const op of pending) {
    const list = byAddress.get(op.address);
    if (list) list.push(op);
    else byAddress.set(op.address, [op]);
  }
  const inOrder = async (ops: readonly Operation[]) => {
    for (const op of ops) await resolve(op);
  };
  // Addresses recovery resolves from what it already knows (an update, or a create whose object the
  // pass listed with this operation's marker) ask the platform nothing: LOCAL_CONCURRENCY of them
  // run at once, so each of their writes (twin, settle, ledger) shares a group commit with hundreds
  // of others instead of RECOVERY_CONCURRENCY (10,000 recovered: ~60 commits, not ~470). The others,
  // which look objects up or resend, go through their own, smaller pool.
  const local: Operation[][] = [];
  const remote: Operation[][] = [];
  for (const ops of byAddress.values()) {
    (ops.every((op) => resolvesLocally(op, known)) ? local : remote).push(ops);
  }
  const pool = (queue: readonly Operation[][], size: number) => {
    let next = 0;
    return Array.from({ length: Math.min(size, queue.length) }, async () => {
      while (next < queue.length) await inOrder(queue[next++]!);
    });
  };
  await Promise.all([
    ...pool(local, options.concurrency?.local ?? LOCAL_CONCURRENCY),
    ...pool(remote, options.concurrency?.remote ?? RECOVERY_CONCURRENCY),
  ]);
  return pending.length;
}

/**
 * True when recovery resolves an operation without asking the platform anything: an update (settled
 * as it is) or a create whose object the pass has just listed with this operation's marker.
 */
export function resolvesLocally(
  op: Operation,
  known: ReadonlyMap<Address, ObservedObject>,
): boolean {
  if (op.action === 'update') return true;
  return op.action === 'create' && known.get(op.address)?.marker?.op === op.id;
}

/** How many addresses recovery resolves at once while it looks objects up or resends. */
const RECOVERY_CONCURRENCY = 64;

/**
 * How many addresses it resolves at once from what it already knows: enough that a group commit
 * carries many writes, few enough that the work in flight stays small (young) for the collector.
 */
const LOCAL_CONCURRENCY = 512;

async function recoverCreate(
  ws: Workspace,
  operator: Recorder,
  known: ReadonlyMap<Address, ObservedObject>,
  op: Operation,
  target: OperationTarget,
  wanted: () => Record<string, unknown> | undefined,
  sendable: () => Record<string, unknown>,
): Promise<string> {
  const { info } = ws.typeOf(op.type);
  // The pass has just listed everything: an object carrying this operation's marker is already here.
  const seen = known.get(op.address);
  if (seen?.marker?.op === op.id) {
    await operator.adopt(op, target, seen, 'recovered');
    return `adopted ${seen.id} (created before the interruption)`;
  }
  // What the intent wants now, when it still wants what the operation was for; else undefined.
  const desired = wanted();
  let found = await operator.findCreated(op, desired);
  if (!found && (desired === undefined || !info.idempotencyKey)) {
    // Not visible may mean not visible YET: without a key a resend could make a second object, and
    // a superseded operation's object could still appear. Wait out the window, then decide.
    found = await operator.awaitVisible(op, desired, Date.parse(op.createdAt));
  }
  if (found) {
    await operator.adopt(op, target, found, 'recovered');
    return `adopted ${found.id} (created before the interruption)`;
  }
  if (desired === undefined) {
    await operator.fail(op, new Error('superseded: not found, and the intent changed since'));
    return 'superseded (not created; the intent changed)';
  }
  const created = await operator.sendCreate(op, target, sendable(), 'recovered');
  return info.idempotencyKey
    ? `resent with the same idempotency key → ${created.id}`
    : `not found after the consistency window; resent → ${created.id}`;
}

async function recoverDelete(
  ws: Workspace,
  operator: Recorder,
  op: Operation,
  declared: boolean,
  actor: ActorContext,
): Promise<string> {
  if (!op.group && declared) {
    await operator.fail(op, new Error('superseded: the resource is declared again'));
    return 'superseded (the resource is declared again; not deleted)';
  }
  const { provider, info } = ws.typeOf(op.type);
  let still = op.objectId ? await provider.read(info.name, op.objectId) : undefined;
  if (still?.marker && !ownedBy(still, ws.name, op.address)) {
    // The id was reused: a natural-key object deleted before the crash was made again since, for
    // another address (or by someone else). That one is not this operation's to delete.
    still = undefined;
  }
  if (still) {
    try {
      await provider.delete(info.name, still.id, { actor });
    } catch (e) {
      // Unknown outcome: stays pending for the next pass. A refusal: failed, the next plan decides.
      if (toTendError(e).outcomeUnknown) throw e;
      const err = await operator.fail(op, e);
      return `delete refused: ${err.message}`;
    }
  }
  await operator.settle(op, op.objectId);
  if (!op.group) await operator.forget(op.address);
  return still ? 'delete resent' : 'already deleted';
}

/** True when an object's marker names this workspace and address. */
function ownedBy(o: ObservedObject, workspace: string, address: Address): boolean {
  return o.marker?.workspace === workspace && o.marker.address === address;
}
