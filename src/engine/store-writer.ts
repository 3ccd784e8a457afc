import type { Store } from '../store/index.js';
import { TendError } from '../core/index.js';

/** The methods of a Store that write (everything a pass must leave to the recorder). */
const WRITES = [
  'putTwin',
  'deleteTwin',
  'journal',
  'settle',
  'appendChange',
  'setCursor',
  'putStatus',
  'deleteStatus',
  'putAnnouncement',
  'putClaim',
  'deleteClaim',
  'acquireLease',
  'renewLease',
  'releaseLease',
  'setMeta',
  'putActionRun',
] as const satisfies readonly (keyof Store)[];

/** The methods of a Store that only read, or close it. */
type Read =
  | 'getTwin'
  | 'getTwins'
  | 'listTwin'
  | 'getOperation'
  | 'unsettled'
  | 'operations'
  | 'changes'
  | 'verifyLedger'
  | 'getCursor'
  | 'listStatus'
  | 'announcements'
  | 'claims'
  | 'getLease'
  | 'getMeta'
  | 'getActionRun'
  | 'actionRuns'
  | 'close';

/** Every method of Store is sorted above: a new one fails to compile here until it is. */
type Unsorted = Exclude<keyof Store, (typeof WRITES)[number] | Read>;
const sorted: [Unsorted] extends [never] ? true : Unsorted = true;
void sorted;

const writers = new WeakMap<Store, Store>();

/**
 * The store the recorder writes through for a workspace whose store is `store`: `store` itself,
 * unless it is a view made by `onlyTheRecorderWrites`. Only the recorder (recorder.ts and the
 * Operator it extends) asks for it; `src/engine/recorder-only.test.ts` checks that.
 */
export function writerOf(store: Store): Store {
  return writers.get(store) ?? store;
}

/**
 * A view of `store` that reads through to it and refuses every write (`engine.write_outside_recorder`),
 * while the recorder writes to `store` itself (`writerOf`). A pass run over a workspace holding this
 * view fails at the first write made anywhere but the recorder: the test of that guarantee
 * (`src/engine/pass-recorder.test.ts`) runs whole passes over it.
 */
export function onlyTheRecorderWrites(store: Store): Store {
  const refused = new Set<string>(WRITES);
  const view = new Proxy(store, {
    get(target, key, receiver) {
      if (typeof key === 'string' && refused.has(key)) {
        return () =>
          Promise.reject(
            new TendError(
              'engine.write_outside_recorder',
              `store.${key} was called outside the recorder: every write of a pass goes through the Recorder (docs/decisions/0036-pass-recorder.md)`,
            ),
          );
      }
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  writers.set(view, store);
  return view;
}
