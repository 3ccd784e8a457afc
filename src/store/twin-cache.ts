import type { Address } from '../core/index.js';
import type { Store, TwinEntry } from './store.js';

/** A store that can tell whether another connection has committed since it last asked. */
export interface VersionedStore extends Store {
  /**
   * A number that changes when another connection (another process, or another store opened on the
   * same database) commits; this store's own writes do not change it (SQLite's `data_version`, at
   * once; PostgreSQL's version row of the workspace, in one read).
   */
  dataVersion(): number | Promise<number>;
}

function isVersioned(store: Store): store is VersionedStore {
  return typeof (store as Partial<VersionedStore>).dataVersion === 'function';
}

/**
 * The twin kept in memory (issue 13: every pass of `tend run` read the whole twin back from the
 * store — 10,000 rows parsed again each time, and again for the audit feed). The first `listTwin`
 * reads it; writes through this store mark their address, which is read back (as the store keeps it:
 * secrets redacted) at the next read; a commit by anyone else — another process on the same
 * database — drops the copy, and the next read loads it again. Everything else passes through.
 * A store that cannot tell about other connections is returned as it is.
 */
export function withTwinCache(store: Store): Store {
  if (!isVersioned(store)) return store;
  let byAddress: Map<Address, TwinEntry> | undefined;
  let sorted: TwinEntry[] | undefined;
  let version = -1;
  const dirty = new Set<Address>();
  const types = new Map<string, string>();

  /** The copy, when it still says what the database holds (after reading back what we wrote). */
  const fresh = async (): Promise<Map<Address, TwinEntry> | undefined> => {
    const now = await store.dataVersion();
    if (byAddress === undefined || now !== version) {
      byAddress = undefined;
      sorted = undefined;
      dirty.clear();
      return undefined;
    }
    if (dirty.size > 0) {
      // One read for all of them (a recovery or an apply writes thousands between two reads).
      const addresses = [...dirty];
      dirty.clear();
      const entries = await store.getTwins(addresses);
      for (const address of addresses) byAddress.delete(address);
      for (const entry of entries) byAddress.set(entry.address, compactTwinEntry(entry, types));
      sorted = undefined;
    }
    return byAddress;
  };

  const load = async (): Promise<Map<Address, TwinEntry>> => {
    // The version first: a commit elsewhere while reading shows at the next read.
    version = await store.dataVersion();
    const entries = (await store.listTwin()).map((e) => compactTwinEntry(e, types));
    byAddress = new Map(entries.map((e) => [e.address, e] as const));
    sorted = entries;
    return byAddress;
  };

  const twin: Pick<Store, 'getTwin' | 'getTwins' | 'listTwin' | 'putTwin' | 'deleteTwin'> = {
    async getTwin(address) {
      const known = await fresh();
      return known ? known.get(address) : store.getTwin(address);
    },
    async getTwins(addresses) {
      const known = await fresh();
      if (!known) return store.getTwins(addresses);
      const found = [...new Set(addresses)].flatMap((a) => known.get(a) ?? []);
      return found.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    },
    async listTwin() {
      const known = (await fresh()) ?? (await load());
      sorted ??= [...known.values()].sort((a, b) =>
        a.address < b.address ? -1 : a.address > b.address ? 1 : 0,
      );
      return [...sorted];
    },
    async putTwin(entry) {
      dirty.add(entry.address);
      await store.putTwin(entry);
    },
    async deleteTwin(address) {
      dirty.add(address);
      await store.deleteTwin(address);
    },
  };

  return new Proxy(store, {
    get(target, key) {
      if (
        key === 'getTwin' ||
        key === 'getTwins' ||
        key === 'listTwin' ||
        key === 'putTwin' ||
        key === 'deleteTwin'
      ) {
        return twin[key];
      }
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      if (typeof key === 'string' && KEEPS_TWIN.has(key)) return method;
      // A method not known to leave the twin alone (a batched write added later) may change it:
      // the copy is dropped, whatever it does.
      return (...args: unknown[]) => {
        byAddress = undefined;
        sorted = undefined;
        dirty.clear();
        return method(...args);
      };
    },
  });
}

/** One empty list shared by every entry that references nothing (most of them). */
const NOTHING: readonly Address[] = Object.freeze([]);

/**
 * A twin entry as the cache holds it (issue 13, item 3): equal to what the store read, but its type
 * string is the one `types` already holds for that type and an empty `dependsOn` is one shared frozen
 * list — the store gives every row its own copies of both. Fields are kept as read: their keys are
 * already shared (the JSON parser interns property names).
 */
export function compactTwinEntry(entry: TwinEntry, types: Map<string, string>): TwinEntry {
  let type = types.get(entry.type);
  if (type === undefined) types.set(entry.type, (type = entry.type));
  return {
    address: entry.address,
    type,
    objectId: entry.objectId,
    fields: entry.fields,
    stateful: entry.stateful,
    dependsOn: entry.dependsOn.length === 0 ? NOTHING : entry.dependsOn,
    observedAt: entry.observedAt,
    ...(entry.sent === undefined ? {} : { sent: entry.sent }),
  };
}

/** Store methods that never write the twin table: calling them keeps the copy. */
const KEEPS_TWIN = new Set([
  'dataVersion',
  'journal',
  'settle',
  'getOperation',
  'unsettled',
  'operations',
  'appendChange',
  'changes',
  'verifyLedger',
  'getCursor',
  'setCursor',
  'putStatus',
  'listStatus',
  'deleteStatus',
  'putAnnouncement',
  'announcements',
  'putClaim',
  'deleteClaim',
  'claims',
  'acquireLease',
  'renewLease',
  'releaseLease',
  'getLease',
  'getMeta',
  'setMeta',
  'putActionRun',
  'getActionRun',
  'actionRuns',
  'close',
]);
