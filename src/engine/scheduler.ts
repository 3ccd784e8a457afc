// The graph a plan is carried out as: nodes keyed by a phase and an address, each started once what
// it depends on has ended, at most `maxInFlight` bounded ones running at once. It knows nothing of
// plans or steps: the executor adds the nodes and says what each waits for.
import type { Address } from '../core/index.js';

/**
 * Which part of an address's work a node is: `step` the declared resource's planned step (a
 * replace's step 1), `delete` a removed resource's delete, `delete-replaced` step 2 of a
 * create-before-destroy replace, `finish-replace` deleting the old object of a replace interrupted in
 * an earlier pass.
 */
export type Phase = 'step' | 'delete' | 'delete-replaced' | 'finish-replace';

/** A node of the execution graph: one phase of one address's work (frozen). */
export interface NodeId {
  readonly phase: Phase;
  readonly address: Address;
}

/** The id of one phase of an address's work. */
export function nodeId(phase: Phase, address: Address): NodeId {
  return Object.freeze({ phase, address });
}

/**
 * Ends a node stopped at a gate, and every node that waits for it: they are held back (blocked), not
 * failed. `root` is the address whose step was stopped, `why` what it needs (told to what waits on it).
 */
export class Blocked extends Error {
  constructor(
    readonly root: Address,
    readonly why: string,
  ) {
    super(root);
  }
}

/** Ends a node that never started: tend is stopping, or a node it waits for failed. */
export class Skipped extends Error {
  constructor(readonly reason: 'stopping' | 'dependency-failed') {
    super(reason);
  }
}

/** A node that did not end well, with what ended it (a Blocked, a Skipped, or the step's error). */
export interface NodeFailure {
  readonly node: NodeId;
  readonly error: unknown;
}

/** Carries out a graph of nodes; see `createScheduler`. */
export interface Scheduler {
  /**
   * Adds a node. `deps` is asked (once) after every node added in the same turn is known, so nodes
   * may name ones added after them; a dependency that is not a node counts as done. A node starts
   * when every dependency has ended well; one ended by a Blocked ends it with a Blocked of the same
   * root, any other failure with a Skipped. A `bounded` node holds one of the `maxInFlight` slots
   * while it runs (never while it waits). Adding an id again does nothing.
   */
  add(id: NodeId, deps: () => readonly NodeId[], run: () => Promise<void>, bounded: boolean): void;
  /** Waits until every node has ended; the ones that failed, in the order they were added. */
  settle(): Promise<readonly NodeFailure[]>;
}

/** Options of a scheduler. */
export interface SchedulerOptions {
  /** How many bounded nodes run at once (at least 1). */
  readonly maxInFlight: number;
  /** When aborted, no node starts any more: each ends with Skipped('stopping'). */
  readonly signal?: AbortSignal;
}

/** A scheduler over nodes added with `add`; nothing starts before the turn they were added in ends. */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const inFlight = slots(options.maxInFlight);
  const byPhase: Record<Phase, Map<Address, Promise<void>>> = {
    step: new Map(),
    delete: new Map(),
    'delete-replaced': new Map(),
    'finish-replace': new Map(),
  };
  const ids: NodeId[] = [];
  const done: Promise<void>[] = [];

  const add: Scheduler['add'] = (id, deps, run, bounded) => {
    const nodes = byPhase[id.phase];
    if (nodes.has(id.address)) return;
    // Taken when a slot is free (or at once, unbounded): the signal is read as the work starts.
    const go = (): Promise<void> =>
      options.signal?.aborted ? Promise.reject(new Skipped('stopping')) : run();
    const start = (): Promise<void> => {
      if (!bounded) return go();
      const slot = inFlight.acquire();
      const body = () => go().finally(() => inFlight.release());
      return slot ? slot.then(body) : body();
    };
    // Every node of the plan is added before any looks its dependencies up (one microtask).
    const p = Promise.resolve().then((): Promise<void> => {
      const waitsFor = deps();
      // Most resources reference nothing: they wait for no settled-all. A waiting node holds no slot.
      if (waitsFor.length === 0) return start();
      return Promise.allSettled(
        waitsFor.map((d) => byPhase[d.phase].get(d.address) ?? Promise.resolve()),
      ).then((results) => {
        const blocked = results.find(
          (r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason instanceof Blocked,
        );
        if (blocked) {
          const root = blocked.reason as Blocked;
          throw new Blocked(root.root, root.why);
        }
        if (results.some((r) => r.status === 'rejected')) {
          throw new Skipped('dependency-failed');
        }
        return start();
      });
    });
    nodes.set(id.address, p);
    ids.push(id);
    done.push(p);
  };

  const settle = async (): Promise<readonly NodeFailure[]> => {
    const results = await Promise.allSettled(done);
    const failures: NodeFailure[] = [];
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      if (r.status === 'rejected') {
        const error: unknown = r.reason;
        failures.push(Object.freeze({ node: ids[i]!, error }));
      }
    }
    return failures;
  };

  return { add, settle };
}

/**
 * At most `size` holders at once; the others wait in arrival order. `acquire` answers undefined
 * when a slot is free now (no promise made), else a promise of the slot.
 */
function slots(size: number): { acquire(): Promise<void> | undefined; release(): void } {
  let free = Math.max(1, size);
  // Read from `head` by index: `shift()` of a long array moves every element, and a pass of 100,000
  // resources queues nearly all of them here (quadratic: 31% of a 100,000 no-drift pass's CPU).
  const waiting: ((() => void) | undefined)[] = [];
  let head = 0;
  return {
    acquire() {
      if (free > 0) {
        free--;
        return undefined;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      if (head === waiting.length) {
        free++;
        return;
      }
      const next = waiting[head]!;
      waiting[head++] = undefined;
      if (head === waiting.length) {
        waiting.length = 0;
        head = 0;
      }
      next();
    },
  };
}
