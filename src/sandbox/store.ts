import type { TypeName } from './spec.js';

/** One object as the sandbox keeps it. */
export interface StoredObject {
  readonly type: TypeName;
  readonly id: string;
  /** Every field, read-only ones included; secrets only as `sha256:` digests. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Clock time (ms) from which reads see the object (eventual consistency). */
  readonly visibleAt: number;
}

/** One entry of the audit feed. Objects in it never carry secrets. */
export interface AuditEntry {
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  /** The X-Tend-Actor-Kind header, recorded as sent (null when absent, and in older state files). */
  readonly actorKind: string | null;
  readonly intent: string | null;
  readonly motivation: string | null;
  readonly action: 'create' | 'update' | 'delete';
  readonly type: TypeName;
  readonly id: string;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

/** What a create with an idempotency key left behind, to answer a replay with. */
export interface IdempotencyRecord {
  readonly type: TypeName;
  /** A digest of the request body: a replay must send the same body. */
  readonly fingerprint: string;
  /** The response body of the original create. */
  readonly response: Record<string, unknown>;
}

/** Everything the sandbox remembers, as plain JSON (what the state file holds). */
export interface StateSnapshot {
  readonly version: 1;
  /** The last audit sequence number handed out; never goes back, not even on reset. */
  readonly seq: number;
  readonly objects: readonly StoredObject[];
  readonly idempotency: Readonly<Record<string, IdempotencyRecord>>;
  readonly audit: readonly AuditEntry[];
}

/**
 * The sandbox's memory: objects by type and id (in creation order), idempotency keys, and the audit
 * feed with long-poll waiters. It enforces no API rules (resources.ts does); `onChange` is called
 * after every change so the state can be saved.
 */
export class SandboxState {
  private readonly byType = new Map<TypeName, Map<string, StoredObject>>();
  private idempotency = new Map<string, IdempotencyRecord>();
  private audit: AuditEntry[] = [];
  private seq = 0;
  private readonly waiters = new Set<() => void>();
  /** Called after every change. */
  onChange: () => void = () => {};

  constructor(snapshot?: StateSnapshot) {
    if (snapshot) this.restore(snapshot);
  }

  /** The objects of a type, in creation order, visible or not. */
  list(type: TypeName): StoredObject[] {
    return [...(this.byType.get(type)?.values() ?? [])];
  }

  /** Every object of every type. */
  all(): StoredObject[] {
    return [...this.byType.values()].flatMap((objects) => [...objects.values()]);
  }

  get(type: TypeName, id: string): StoredObject | undefined {
    return this.byType.get(type)?.get(id);
  }

  /** Inserts or replaces an object (a replaced object keeps its place in the order). */
  put(object: StoredObject): void {
    let objects = this.byType.get(object.type);
    if (!objects) this.byType.set(object.type, (objects = new Map<string, StoredObject>()));
    objects.set(object.id, object);
    this.onChange();
  }

  remove(type: TypeName, id: string): void {
    this.byType.get(type)?.delete(id);
    this.onChange();
  }

  idempotencyRecord(key: string): IdempotencyRecord | undefined {
    return this.idempotency.get(key);
  }

  rememberIdempotency(key: string, record: IdempotencyRecord): void {
    this.idempotency.set(key, record);
    this.onChange();
  }

  /** Appends to the audit feed, numbering the entry, and wakes every long poll. */
  appendAudit(entry: Omit<AuditEntry, 'seq'>): AuditEntry {
    const numbered = { seq: ++this.seq, ...entry };
    this.audit.push(numbered);
    this.onChange();
    for (const wake of [...this.waiters]) wake();
    return numbered;
  }

  /** Up to `limit` audit entries with a sequence number above `after`, oldest first. */
  auditAfter(after: number, limit: number): AuditEntry[] {
    const start = this.audit.findIndex((e) => e.seq > after);
    return start < 0 ? [] : this.audit.slice(start, start + limit);
  }

  /**
   * Resolves when an audit entry is appended, after `ms`, when `signal` aborts, or when the state
   * is closed, whichever comes first.
   */
  waitForAudit(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener('abort', done);
    });
  }

  /** Wakes every long poll now (the sandbox is closing). */
  wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Forgets objects, idempotency keys and the audit feed; sequence numbers keep increasing. */
  clear(): void {
    this.byType.clear();
    this.idempotency.clear();
    this.audit = [];
    this.onChange();
  }

  /** A plain-JSON copy of everything remembered. */
  snapshot(): StateSnapshot {
    return {
      version: 1,
      seq: this.seq,
      objects: this.all(),
      idempotency: Object.fromEntries(this.idempotency),
      audit: [...this.audit],
    };
  }

  private restore(snapshot: StateSnapshot): void {
    this.seq = snapshot.seq;
    for (const object of snapshot.objects) {
      let objects = this.byType.get(object.type);
      if (!objects) this.byType.set(object.type, (objects = new Map<string, StoredObject>()));
      objects.set(object.id, object);
    }
    this.idempotency = new Map(Object.entries(snapshot.idempotency));
    // State files written before the actor kind was recorded have entries without it.
    this.audit = snapshot.audit.map((e) => ({ ...e, actorKind: e.actorKind ?? null }));
  }
}
