import type {
  ActorContext,
  Change,
  Address,
  Marker,
  Motivation,
  ObservedObject,
  Operation,
  OperationAction,
  SecretRegistry,
} from '../core/index.js';
import {
  CUSTOM_WORD,
  canonicalJson,
  hashValue,
  operationId,
  setKey,
  toTendError,
  TendError,
  valueAtKeyPath,
} from '../core/index.js';
import type { Clock } from './clock.js';
import type { Store } from '../store/index.js';
import type { CrashHook, WritePoint } from './crash-points.js';
import { noCrash } from './crash-points.js';
import type { Reporter } from './events.js';
import { writerOf } from './store-writer.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

/** What one journaled mutation acts on. */
export interface OperationTarget {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly stateful: boolean;
  readonly dependsOn: readonly Address[];
  /** Multi-step operations (a replace) share a group; steps count from 1. */
  readonly group?: string;
  readonly step?: number;
  /** On the create of a create-before-destroy replace: the id of the object it replaces. */
  readonly replaces?: string;
  /** Hashes of the write-only values sent (see TwinEntry.sent), remembered with the object. */
  readonly sent?: Readonly<Record<string, string>>;
}

/**
 * How long an object may stay invisible to reads after the platform created it, by default. Only
 * types without an idempotency key wait it out before a create whose outcome is unknown is resent.
 */
export const DEFAULT_CONSISTENCY_WINDOW_MS = 5000;

/** Tuning of the operator. */
export interface OperatorOptions {
  /**
   * How long after sending a create an object it made may still be invisible (eventual consistency).
   * A create of a type without an idempotency key whose outcome is unknown is resent only once the
   * window has passed and a second look still does not find it. Default DEFAULT_CONSISTENCY_WINDOW_MS.
   */
  readonly consistencyWindowMs?: number;
}

/**
 * Removes secret fields from observed data before it is stored or logged, registering their values
 * with `secrets` (the process's redactor): a secret the platform returns is then redacted wherever
 * else it shows up, in an error message or another field.
 */
export function redact(
  secretFields: readonly string[],
  fields: Readonly<Record<string, unknown>>,
  secrets: SecretRegistry,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (secretFields.includes(k)) secrets.add(v);
    else setKey(out, k, v);
  }
  return out;
}

/**
 * The motivation Tend records for its own writes: the note of the step (`create`, `update`, `adopt`,
 * `move from <address>`) as the kind, with the rest as the reference.
 */
export function motivationOfNote(note: string): Motivation {
  const space = note.indexOf(' ');
  const kind = (space < 0 ? note : note.slice(0, space)).toLowerCase();
  const ref = space < 0 ? undefined : note.slice(space + 1);
  return CUSTOM_WORD.test(kind)
    ? { kind, ...(ref ? { ref } : {}) }
    : { kind: 'reconcile', ref: note };
}

/** The names of top-level fields that differ between two objects. */
export function changedFields(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>> | undefined,
): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  // Equal as data ⇔ the same canonical JSON (what hashValue hashes; no digest needed to compare).
  // Two shortcuts give the same answer without writing it: the same value on both sides is equal,
  // and an object (or array) never writes as the `null` an absent side does.
  const differs = (a: unknown, b: unknown): boolean => {
    if (a === b) return false;
    if ((a === undefined || a === null) && typeof b === 'object' && b !== null) return true;
    if ((b === undefined || b === null) && typeof a === 'object' && a !== null) return true;
    return canonicalJson(a ?? null) !== canonicalJson(b ?? null);
  };
  return [...keys].filter((k) => differs(before?.[k], after?.[k])).sort();
}

/**
 * Performs mutations with the journal protocol (DESIGN.md §4): the operation is written before the
 * request is sent, the request carries the operation id as idempotency key and the ownership marker,
 * the twin is updated, and then the operation is settled with the observed result (settling is the
 * commit point: a settled operation needs nothing more), and the change goes to the ledger. An unknown outcome (timeout after sending)
 * is resolved by looking the object up, never by blindly sending again.
 */
export class Operator {
  /** The store every write goes to (see `writerOf`); reads go through the workspace's. */
  protected readonly store: Store;

  constructor(
    protected readonly ws: Workspace,
    protected readonly actor: ActorContext,
    protected readonly clock: Clock,
    protected readonly report: Reporter,
    protected readonly crash: CrashHook = noCrash,
    private readonly options: OperatorOptions = {},
  ) {
    this.store = writerOf(ws.store);
  }

  /** The consistency window in force. */
  get consistencyWindowMs(): number {
    return this.options.consistencyWindowMs ?? DEFAULT_CONSISTENCY_WINDOW_MS;
  }

  /** The operation id of one generation of an operation on a target. */
  private idOf(
    target: OperationTarget,
    action: OperationAction,
    desiredHash: string,
    generation: number,
  ): string {
    return operationId({
      workspace: this.ws.name,
      address: target.address,
      action,
      desiredHash,
      generation,
      ...(target.group ? { group: target.group } : {}),
      ...(target.step ? { step: target.step } : {}),
    });
  }

  /**
   * The most recent journaled attempt of an operation (the highest generation), if any: how a
   * multi-step operation finds out which of its steps already happened before a crash.
   */
  async latest(
    target: OperationTarget,
    action: OperationAction,
    desiredHash: string,
  ): Promise<Operation | undefined> {
    let found: Operation | undefined;
    for (let generation = 0; ; generation++) {
      const op = await this.ws.store.getOperation(
        this.idOf(target, action, desiredHash, generation),
      );
      if (!op) return found;
      found = op;
    }
  }

  /** Runs one store write of an operation between its two crash points. */
  private async write<T>(
    point: WritePoint,
    op: Pick<Operation, 'action' | 'group'>,
    fn: () => Promise<T>,
  ): Promise<T> {
    const action = op.group ? `replace-${op.action}` : op.action;
    this.crash('before', point, action);
    const result = await fn();
    this.crash('after', point, action);
    return result;
  }

  /** A fresh, deterministic operation: the first id (by generation) not already in the journal. */
  private async begin(
    target: OperationTarget,
    action: OperationAction,
    desiredHash: string,
    objectId?: string,
  ): Promise<Operation> {
    for (let generation = 0; ; generation++) {
      const id = this.idOf(target, action, desiredHash, generation);
      if (await this.ws.store.getOperation(id)) continue;
      const marker: Marker = { workspace: this.ws.name, address: target.address, op: id };
      const op: Operation = {
        id,
        address: target.address,
        type: target.type,
        action,
        desiredHash,
        marker,
        state: 'pending',
        createdAt: this.clock.now().toISOString(),
        ...(objectId ? { objectId } : {}),
        ...(target.group ? { group: target.group, step: target.step ?? 1 } : {}),
        ...(target.replaces ? { replaces: target.replaces } : {}),
      };
      await this.write('journal', op, () => this.store.journal(op));
      return op;
    }
  }

  async settle(op: Operation, objectId: string | undefined): Promise<void> {
    await this.write('settle', op, () =>
      this.store.settle(op.id, {
        state: 'settled',
        at: this.clock.now().toISOString(),
        ...(objectId ? { objectId } : {}),
      }),
    );
  }

  /** Errors already reported as `op-failed`, so callers do not report them twice. */
  readonly reported = new WeakSet<object>();

  async fail(op: Operation, e: unknown): Promise<TendError> {
    const err = toTendError(e).at(op.address, 'apply');
    this.reported.add(err);
    await this.write('settle', op, () =>
      this.store.settle(op.id, {
        state: 'failed',
        at: this.clock.now().toISOString(),
        error: `${err.code}: ${err.message}`,
      }),
    );
    this.report({ kind: 'op-failed', address: op.address, action: op.action, error: err });
    return err;
  }

  /** Reports a settled operation with how long it took. */
  private done(op: Operation, objectId: string, started: number): void {
    this.report({
      kind: 'op-done',
      address: op.address,
      action: op.action,
      opId: op.id,
      objectId,
      ms: this.clock.now().getTime() - started,
    });
  }

  /**
   * Tend no longer remembers an object at `address`: its twin entry and its status go (a delete, a
   * move's old address, a finished replace of a moved resource). Within the operation's `twin` crash
   * points when one is given, else the `forget` action's.
   */
  async forget(address: Address, op?: Operation): Promise<void> {
    if (op) await this.write('twin', op, () => this.forgetNow(address));
    else {
      this.crash('before', 'twin', 'forget');
      await this.forgetNow(address);
      this.crash('after', 'twin', 'forget');
    }
  }

  /** The writes of `forget`, without crash points (the caller is between its own). */
  protected async forgetNow(address: Address): Promise<void> {
    await this.store.deleteTwin(address);
    await this.store.deleteStatus(address);
  }

  /** Remembers an object as the one managing an address. */
  async remember(target: OperationTarget, object: ObservedObject, op?: Operation): Promise<void> {
    const hidden = secretFields(this.ws, target.type, target.address);
    const put = () =>
      this.store.putTwin({
        address: target.address,
        type: target.type,
        objectId: object.id,
        fields: redact(hidden, object.fields, this.ws.secrets),
        stateful: target.stateful,
        dependsOn: target.dependsOn,
        observedAt: this.clock.now().toISOString(),
        ...(target.sent ? { sent: target.sent } : {}),
      });
    await (op ? this.write('twin', op, put) : put());
  }

  private async record(
    op: Operation,
    target: OperationTarget,
    action: Change['action'],
    objectId: string,
    before: Readonly<Record<string, unknown>> | undefined,
    after: Readonly<Record<string, unknown>> | undefined,
    note?: string,
  ): Promise<void> {
    const hidden = secretFields(this.ws, target.type, target.address);
    const b = before ? redact(hidden, before, this.ws.secrets) : undefined;
    const a = after ? redact(hidden, after, this.ws.secrets) : undefined;
    await this.write('ledger', op, () =>
      this.store.appendChange({
        time: this.clock.now().toISOString(),
        actor: this.actor.actor,
        ...(this.actor.intent ? { intent: this.actor.intent } : {}),
        actorKind: 'tend',
        motivation: motivationOfNote(note ?? this.actor.motivation ?? 'apply'),
        source: 'tend',
        address: target.address,
        type: target.type,
        objectId,
        action,
        fields: changedFields(b, a),
        ...(b ? { before: b } : {}),
        ...(a ? { after: a } : {}),
        ...(this.ws.origin ? { origin: this.ws.origin } : {}),
      }),
    );
  }

  /** Creates an object; `desired` includes resolved secrets and is never stored. */
  async create(
    target: OperationTarget,
    desired: Record<string, unknown>,
    desiredHash: string,
    motivation = 'create',
  ): Promise<ObservedObject> {
    const { info } = this.ws.typeOf(target.type);
    if (info.identity === null) {
      throw new TendError(
        'provider.unsafe_create',
        `${target.type} has no safe identity (${info.identityReason ?? 'no natural key, marker or idempotency key'}): Tend will not create it automatically`,
        {
          address: target.address,
          phase: 'apply',
          hint: 'declare an identity for the type in an overlay, or create the object by hand and let Tend adopt it',
        },
      );
    }
    const op = await this.begin(target, 'create', desiredHash);
    return this.sendCreate(op, target, desired, motivation);
  }

  /** Sends a journaled create (first attempt, or a resend with the same key after a crash). */
  async sendCreate(
    op: Operation,
    target: OperationTarget,
    desired: Record<string, unknown>,
    motivation: string,
  ): Promise<ObservedObject> {
    const { provider, info } = this.ws.typeOf(target.type);
    const actor = { ...this.actor, motivation };
    const started = this.clock.now().getTime();
    this.report({ kind: 'op-start', address: target.address, action: 'create', opId: op.id });
    let created: ObservedObject;
    const sentAt = this.clock.now().getTime();
    try {
      created = await provider.create(info.name, desired, {
        idempotencyKey: op.id,
        marker: op.marker,
        actor,
      });
    } catch (e) {
      if (!toTendError(e).outcomeUnknown) throw await this.fail(op, e);
      let resolved: ObservedObject | undefined;
      try {
        resolved = await this.resolveUnknownCreate(op, target, desired, actor, sentAt);
      } catch (definite) {
        throw await this.fail(op, definite);
      }
      if (!resolved) {
        // Still unknown: the operation stays pending, and recovery resolves it on the next pass.
        const err = toTendError(e).at(op.address, 'apply');
        this.reported.add(err);
        this.report({ kind: 'op-failed', address: op.address, action: op.action, error: err });
        throw err;
      }
      created = resolved;
    }
    await this.adopt(op, target, created, motivation);
    this.done(op, created.id, started);
    return created;
  }

  /**
   * Remembers the object a create found or made, settles the create, and records it in the ledger.
   * The twin is written before the settle: a settled operation has had every effect on Tend's memory
   * (a crash in between leaves it pending, and recovery adopts the object again). The ledger comes
   * last: a crash just before it loses one history entry, never an object.
   */
  async adopt(
    op: Operation,
    target: OperationTarget,
    created: ObservedObject,
    note?: string,
  ): Promise<void> {
    await this.remember(target, created, op);
    await this.settle(op, created.id);
    await this.record(op, target, 'create', created.id, undefined, created.fields, note);
  }

  /**
   * After a create whose outcome is unknown (sent at `sentAt`, epoch ms): look for the object; when it
   * is not there, resend with the SAME idempotency key. With a key that is safe at once (the platform
   * answers a replay with the first object). Without one, a second create would be a second object, so
   * the consistency window since the send is waited out first and the object looked for again.
   * Bounded: undefined when the outcome is still unknown (the operation then stays pending for
   * recovery); a definite refusal of a resend is thrown.
   */
  private async resolveUnknownCreate(
    op: Operation,
    target: OperationTarget,
    desired: Record<string, unknown>,
    actor: ActorContext,
    sentAt: number,
  ): Promise<ObservedObject | undefined> {
    const { provider, info } = this.ws.typeOf(target.type);
    let lastSent = sentAt;
    for (let attempt = 0; attempt < 3; attempt++) {
      const found = await this.findCreated(op, desired).catch(() => undefined);
      if (found) return found;
      if (!info.idempotencyKey) {
        const late = await this.awaitVisible(op, desired, lastSent);
        if (late) return late;
      } else {
        await this.clock.sleep(200 * 2 ** attempt);
      }
      try {
        lastSent = this.clock.now().getTime();
        return await provider.create(info.name, desired, {
          idempotencyKey: op.id,
          marker: op.marker,
          actor,
        });
      } catch (e) {
        const err = toTendError(e);
        if (!err.outcomeUnknown && !err.retryable) throw e;
      }
    }
    return undefined;
  }

  /**
   * Keeps looking for the object a create made until it shows up or the consistency window since
   * `since` (epoch ms, when the create was last sent) is over; undefined when it never showed up.
   */
  async awaitVisible(
    op: Operation,
    desired: Readonly<Record<string, unknown>> | undefined,
    since: number,
  ): Promise<ObservedObject | undefined> {
    const until = since + this.consistencyWindowMs;
    for (let delay = 100; this.clock.now().getTime() < until; delay = Math.min(delay * 2, 1000)) {
      await this.clock.sleep(Math.min(delay, until - this.clock.now().getTime()));
      const found = await this.findCreated(op, desired).catch(() => undefined);
      if (found) return found;
    }
    return undefined;
  }

  /**
   * Looks for the object a create made: by the marker it carries (op included), or, for a
   * natural-key type whose objects cannot carry a marker, by the key fields' desired values
   * (compared after the provider's normalisation).
   */
  async findCreated(
    op: Operation,
    desired: Readonly<Record<string, unknown>> | undefined,
  ): Promise<ObservedObject | undefined> {
    const { provider, info } = this.ws.typeOf(op.type);
    const keys =
      info.identity === 'natural-key'
        ? (info.naturalKeyFields ?? (info.naturalKey !== undefined ? [info.naturalKey] : []))
        : [];
    if (info.markerField !== undefined || keys.length === 0 || desired === undefined) {
      return this.findByMarker(op.type, op.marker);
    }
    if (keys.some((k) => valueAtKeyPath(desired, k) === undefined)) return undefined;
    const norm = (field: string, v: unknown) =>
      hashValue(provider.normalize ? provider.normalize(info.name, field, v) : v);
    return (await provider.list(info.name)).find((o) =>
      keys.every(
        (k) => norm(k, valueAtKeyPath(o.fields, k)) === norm(k, valueAtKeyPath(desired, k)),
      ),
    );
  }

  /** Finds the object carrying a marker (provider's find, else a list filtered by marker). */
  async findByMarker(type: string, marker: Marker): Promise<ObservedObject | undefined> {
    const { provider, info } = this.ws.typeOf(type);
    if (provider.find) return provider.find(info.name, marker);
    const all = await provider.list(info.name);
    return all.find(
      (o) =>
        o.marker?.workspace === marker.workspace &&
        o.marker.address === marker.address &&
        (marker.op === undefined || o.marker.op === marker.op),
    );
  }

  /** Updates an object in place. */
  async update(
    target: OperationTarget,
    current: ObservedObject,
    desired: Record<string, unknown>,
    desiredHash: string,
    motivation = 'update',
  ): Promise<ObservedObject> {
    const { provider, info } = this.ws.typeOf(target.type);
    const op = await this.begin(target, 'update', desiredHash, current.id);
    const actor = { ...this.actor, motivation };
    const started = this.clock.now().getTime();
    this.report({ kind: 'op-start', address: target.address, action: 'update', opId: op.id });
    const ctx = {
      marker: current.marker ?? { workspace: this.ws.name, address: target.address },
      actor,
    };
    let updated: ObservedObject;
    try {
      updated = await provider.update(info.name, current.id, desired, current, ctx);
    } catch (e) {
      if (!toTendError(e).outcomeUnknown) throw await this.fail(op, e);
      // Updates are idempotent: re-read and let verification decide.
      const again = await provider.read(info.name, current.id).catch(() => undefined);
      if (!again) throw await this.fail(op, e);
      updated = again;
    }
    await this.remember(target, updated, op);
    await this.settle(op, updated.id);
    await this.record(op, target, 'update', updated.id, current.fields, updated.fields, motivation);
    this.done(op, updated.id, started);
    return updated;
  }

  /**
   * Records an object under the target's address without touching it otherwise: the adoption of an
   * object Tend had no record of, or the move of one recorded (or marked) under `from`. Where the
   * type has tags and the object's marker names another address (or none), the marker is rewritten
   * first, with an update that sends nothing else; then the twin is written under the new address
   * and the record of `from` forgotten, in one write point. Journaled as an update, so a crash
   * anywhere leaves either the old record (the next plan moves again) or the new one.
   */
  async takeOver(
    target: OperationTarget,
    current: ObservedObject,
    motivation: string,
    from?: Address,
  ): Promise<ObservedObject> {
    const { provider, info } = this.ws.typeOf(target.type);
    const desiredHash = hashValue({ claim: current.id, from: from ?? null });
    const op = await this.begin(target, 'update', desiredHash, current.id);
    const started = this.clock.now().getTime();
    this.report({
      kind: 'op-start',
      address: target.address,
      action: 'update',
      opId: op.id,
      detail: from ? `move from ${from}` : motivation,
    });
    const marker: Marker = { workspace: this.ws.name, address: target.address };
    const remark =
      info.markerField !== undefined &&
      (current.marker?.workspace !== marker.workspace || current.marker.address !== marker.address);
    let taken = current;
    if (remark) {
      const actor = { ...this.actor, motivation };
      try {
        taken = await provider.update(info.name, current.id, {}, current, { marker, actor });
      } catch (e) {
        if (!toTendError(e).outcomeUnknown) throw await this.fail(op, e);
        const again = await provider.read(info.name, current.id).catch(() => undefined);
        if (!again) throw await this.fail(op, e);
        taken = again;
      }
    }
    const hidden = secretFields(this.ws, target.type, target.address);
    await this.write('twin', op, async () => {
      await this.store.putTwin({
        address: target.address,
        type: target.type,
        objectId: taken.id,
        fields: redact(hidden, taken.fields, this.ws.secrets),
        stateful: target.stateful,
        dependsOn: target.dependsOn,
        observedAt: this.clock.now().toISOString(),
        ...(target.sent ? { sent: target.sent } : {}),
      });
      if (from !== undefined && from !== target.address) await this.forgetNow(from);
    });
    await this.settle(op, taken.id);
    const note = from ? `move from ${from}` : motivation;
    const moved = from !== undefined && from !== target.address;
    await this.record(
      op,
      target,
      moved ? 'move' : 'update',
      taken.id,
      current.fields,
      taken.fields,
      note,
    );
    this.done(op, taken.id, started);
    return taken;
  }

  /** Deletes an object (only ever one that carries Tend's marker; callers check). */
  async delete(
    target: OperationTarget,
    current: ObservedObject,
    forget: boolean,
    motivation = 'delete',
  ): Promise<void> {
    const { provider, info } = this.ws.typeOf(target.type);
    const op = await this.begin(target, 'delete', hashValue({ delete: current.id }), current.id);
    const started = this.clock.now().getTime();
    this.report({ kind: 'op-start', address: target.address, action: 'delete', opId: op.id });
    try {
      await provider.delete(info.name, current.id, { actor: { ...this.actor, motivation } });
    } catch (e) {
      if (!toTendError(e).outcomeUnknown) throw await this.fail(op, e);
      const still = await provider.read(info.name, current.id).catch(() => current);
      if (still) throw await this.fail(op, e);
    }
    if (forget) await this.forget(target.address, op);
    await this.settle(op, current.id);
    await this.record(op, target, 'delete', current.id, current.fields, undefined, motivation);
    this.done(op, current.id, started);
  }
}
