// Group commit for the calls of one provider: the changes of sub-collection items made through one
// parent's PATCH go out together, and identical reads asked for at the same time share one request.

/** Runs a callback once everything that can run without I/O has run (default: `setImmediate`). */
export type Schedule = (run: () => void) => void;

const nextTurn: Schedule = (run) => void setImmediate(run);

/** One change waiting for its batch. */
interface Waiting<C> {
  readonly change: C;
  /** Two changes with the same conflict key never share a batch (two changes of one item). */
  readonly conflict: string;
  readonly signal?: AbortSignal;
  resolve(): void;
  reject(e: unknown): void;
}

/** The changes of one destination (a parent's path): waiting ones, and whether a batch is out. */
interface Lane<C> {
  waiting: Waiting<C>[];
  /** A flush is scheduled or a batch is being sent: the next flush waits for it to finish. */
  busy: boolean;
}

/**
 * Batches the changes sent to one destination: changes submitted while the event loop is busy (every
 * step of a pass that became ready at the same moment) or while the destination's previous batch is
 * in flight go out in one request, sent by `send`. One batch per destination at a time; the next
 * takes everything that arrived meanwhile. `send` either succeeds for the whole batch (the platform
 * applies it whole) or fails it whole: every change of the batch then fails with its error.
 *
 * Durability is the caller's: a change is submitted only after its operation is journaled, and its
 * promise resolves only after the request succeeded, so "journaled before sent, settled after" holds
 * for every change of a batch.
 */
export class GroupCommit<C> {
  private readonly lanes = new Map<string, Lane<C>>();

  constructor(
    private readonly send: (destination: string, changes: readonly C[]) => Promise<void>,
    private readonly schedule: Schedule = nextTurn,
  ) {}

  /** Queues a change for `destination`; resolves once a request carrying it has succeeded. */
  submit(destination: string, change: C, conflict: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    let lane = this.lanes.get(destination);
    if (!lane) {
      lane = { waiting: [], busy: false };
      this.lanes.set(destination, lane);
    }
    const promise = new Promise<void>((resolve, reject) => {
      lane.waiting.push({ change, conflict, ...(signal ? { signal } : {}), resolve, reject });
    });
    if (!lane.busy) this.kick(destination, lane);
    return promise;
  }

  /** How many changes wait for a destination (for tests). */
  waiting(destination: string): number {
    return this.lanes.get(destination)?.waiting.length ?? 0;
  }

  private kick(destination: string, lane: Lane<C>): void {
    lane.busy = true;
    this.schedule(() => void this.flush(destination, lane));
  }

  private async flush(destination: string, lane: Lane<C>): Promise<void> {
    const batch: Waiting<C>[] = [];
    const later: Waiting<C>[] = [];
    const seen = new Set<string>();
    for (const w of lane.waiting) {
      if (w.signal?.aborted) w.reject(abortReason(w.signal));
      else if (seen.has(w.conflict)) later.push(w);
      else {
        seen.add(w.conflict);
        batch.push(w);
      }
    }
    lane.waiting = later;
    try {
      if (batch.length > 0) {
        let error: { e: unknown } | undefined;
        try {
          await this.send(
            destination,
            batch.map((w) => w.change),
          );
        } catch (e) {
          error = { e };
        }
        for (const w of batch) {
          if (error) w.reject(error.e);
          else w.resolve();
        }
      }
    } finally {
      if (lane.waiting.length > 0) this.kick(destination, lane);
      else {
        lane.busy = false;
        this.lanes.delete(destination);
      }
    }
  }
}

/**
 * Shares one call among the identical calls asked for before it starts: a call joins one that is
 * scheduled but not yet started, never one already under way (whose answer may predate what the
 * joiner did just before asking). Every caller gets the same result, so callers must not mutate it.
 */
export class SharedCalls<T> {
  private readonly scheduled = new Map<string, Promise<T>>();

  constructor(private readonly schedule: Schedule = nextTurn) {}

  /** Runs `call` for `key`, or joins the not-yet-started call for the same key. */
  run(key: string, call: () => Promise<T>): Promise<T> {
    const existing = this.scheduled.get(key);
    if (existing) return existing;
    const p = new Promise<T>((resolve, reject) => {
      this.schedule(() => {
        // From here on, a new caller starts a call of its own.
        this.scheduled.delete(key);
        call().then(resolve, reject);
      });
    });
    this.scheduled.set(key, p);
    return p;
  }
}

/** Why an aborted signal stopped a call, as an Error. */
export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new Error(typeof r === 'string' ? r : 'aborted');
}
