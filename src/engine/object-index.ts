// The objects one observation listed, looked up per type by id, by the address in this workspace's
// marker and by natural key, and which of them an address has already matched. Each type's index is
// built on first use, in one pass over its list, so matching stays linear in the number of objects.
import type { Address, ObservedObject } from '../core/index.js';

/** One type's lookups; `byKey` is built the first time a natural key is asked for. */
interface TypeIndex {
  readonly byId: Map<string, ObservedObject>;
  readonly byMarker: Map<Address, ObservedObject[]>;
  byKey?: Map<string, ObservedObject[]>;
}

const NONE: readonly ObservedObject[] = Object.freeze([]);

/**
 * The listed objects of one observation by type (`provider.resourceType`), and the ones matched: an
 * object is matched to one address at most, so once matched it is never matched again.
 */
export class ObjectIndex {
  readonly #types = new Map<string, TypeIndex>();
  /** Matched object ids, per type. */
  readonly #matched = new Map<string, Set<string>>();

  /**
   * @param workspace whose marker `marked` and `unmatchedMarked` look for
   * @param lists every listed object, by type, in the order the platform listed them
   */
  constructor(
    private readonly workspace: string,
    private readonly lists: ReadonlyMap<string, readonly ObservedObject[]>,
  ) {}

  /** True when the type listed no object (or was not listed): nothing of it can be matched. */
  listedNone(type: string): boolean {
    return this.#of(type).byId.size === 0;
  }

  /** The object of the type with this id (the first listed, should a list repeat one). */
  byId(type: string, id: string): ObservedObject | undefined {
    return this.#of(type).byId.get(id);
  }

  /** The objects of the type whose marker names this workspace and the address, in list order. */
  marked(type: string, address: Address): readonly ObservedObject[] {
    return this.#of(type).byMarker.get(address) ?? NONE;
  }

  /**
   * The objects of the type whose natural key is `key`, in list order. `keyOf` computes an object's
   * key; it is called for every object of the type the first time a key of that type is asked for,
   * so it must be the same function for every call with one type.
   */
  withKey(
    type: string,
    key: string,
    keyOf: (o: ObservedObject) => string,
  ): readonly ObservedObject[] {
    const ix = this.#of(type);
    if (!ix.byKey) {
      ix.byKey = new Map();
      for (const o of this.lists.get(type) ?? NONE) {
        const k = keyOf(o);
        const l = ix.byKey.get(k);
        if (l) l.push(o);
        else ix.byKey.set(k, [o]);
      }
    }
    return ix.byKey.get(key) ?? NONE;
  }

  /** True when an address has matched the object. */
  isMatched(type: string, id: string): boolean {
    return this.#matched.get(type)?.has(id) ?? false;
  }

  /** Marks the object matched by an address: it is never matched again. */
  markMatched(type: string, id: string): void {
    let ids = this.#matched.get(type);
    if (!ids) this.#matched.set(type, (ids = new Set()));
    ids.add(id);
  }

  /** The listed objects carrying this workspace's marker that nothing matched, type by type, in list order. */
  unmatchedMarked(): { readonly type: string; readonly object: ObservedObject }[] {
    const out: { readonly type: string; readonly object: ObservedObject }[] = [];
    for (const [type, list] of this.lists) {
      for (const o of list) {
        if (o.marker?.workspace !== this.workspace || this.isMatched(type, o.id)) continue;
        out.push(Object.freeze({ type, object: o }));
      }
    }
    return out;
  }

  #of(type: string): TypeIndex {
    let ix = this.#types.get(type);
    if (ix) return ix;
    ix = { byId: new Map(), byMarker: new Map() };
    for (const o of this.lists.get(type) ?? NONE) {
      if (!ix.byId.has(o.id)) ix.byId.set(o.id, o);
      if (o.marker?.workspace === this.workspace) {
        const l = ix.byMarker.get(o.marker.address);
        if (l) l.push(o);
        else ix.byMarker.set(o.marker.address, [o]);
      }
    }
    this.#types.set(type, ix);
    return ix;
  }
}
