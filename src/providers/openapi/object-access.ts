import type { Marker, ObservedObject, SecretRegistry, WriteContext } from '../../core/index.js';
import type { Schedule } from './transport/group-commit.js';
import type { DerivedType } from './derive-types.js';
import type { HttpClient } from './transport/http-client.js';
import { carrying } from './access/answers.js';
import { collection, listCollection } from './access/collection.js';
import { comparable } from './access/comparable.js';
import type { AccessContext, ShapeAccess } from './access/context.js';
import { embedded, embeddedState } from './access/embedded.js';
import { singleton } from './access/singleton.js';

/** What object access needs: the HTTP client, the types (to reach parents), a warning sink. */
export interface ObjectAccessOptions {
  readonly http: HttpClient;
  /**
   * The endpoint the client's paths are relative to: next-page links (a `Link` header, a next URL
   * in the body) are followed only below it. Without it such links are refused.
   */
  readonly baseUrl?: string;
  readonly types: ReadonlyMap<string, DerivedType>;
  /** Records a disagreement between the platform and its document; called once per distinct message. */
  readonly warn: (message: string) => void;
  /** Where the values of secret fields the platform returns are registered (the redactor). */
  readonly secrets?: SecretRegistry;
  /** Unix milliseconds now, for `x-tend-normalize: past-is-now` (default Date.now). */
  readonly now?: () => number;
  /** When batched changes and shared reads start (default: the next turn of the event loop). */
  readonly schedule?: Schedule;
}

/**
 * The calls behind the provider verbs, for every kind of derived type: top-level collections,
 * collections nested under parents (their parent ids come from the object id, or from the desired
 * spec's parent fields on create), and sub-collections embedded in a parent and changed through the
 * parent's PATCH. Reads never mutate; writes send what was declared in its canonical spelling.
 */
export interface ObjectAccess {
  list(t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]>;
  /**
   * The list as the platform answered it: a collection's entries are not completed from their item
   * reads (what `list` does when an entry lacks a compared field); other shapes list as `list` does.
   */
  listAnswered(t: DerivedType, signal?: AbortSignal): Promise<ObservedObject[]>;
  read(t: DerivedType, id: string, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  create(
    t: DerivedType,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  update(
    t: DerivedType,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  remove(t: DerivedType, id: string, ctx: WriteContext): Promise<void>;
  /** The object carrying a marker (marker types only; undefined for others). */
  find(t: DerivedType, marker: Marker, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  /**
   * The comparable form of a declared or observed value at a dotted path of a type's object;
   * `object` is the whole object (declared spec or observed fields) when the caller has it, for
   * normalisations keyed by a sibling field.
   */
  normalize(
    t: DerivedType,
    path: string,
    value: unknown,
    object?: Readonly<Record<string, unknown>>,
  ): unknown;
}

/**
 * Creates the object access of one provider: each call goes to the implementation of its type's
 * shape (access/collection.ts, access/singleton.ts, access/embedded.ts), all of them sharing one
 * context (the HTTP client, the redactor, the parent reads and batches of embedded items).
 */
export function createObjectAccess(options: ObjectAccessOptions): ObjectAccess {
  const warned = new Set<string>();
  const ctx: AccessContext = {
    http: options.http,
    baseUrl: options.baseUrl,
    types: options.types,
    warn: (message) => {
      if (warned.has(message)) return;
      warned.add(message);
      options.warn(message);
    },
    secrets: options.secrets,
    now: options.now ?? (() => Date.now()),
    list: (t, signal) => shapeOf(t).list(ctx, t, signal),
    embedded: embeddedState(options.http, options.schedule),
  };
  return {
    list: ctx.list,
    listAnswered: (t, signal) =>
      shapeOf(t) === collection ? listCollection(ctx, t, signal, false) : ctx.list(t, signal),
    read: (t, id, signal) => shapeOf(t).read(ctx, t, id, signal),
    create: (t, desired, wctx) => shapeOf(t).create(ctx, t, desired, wctx),
    update: (t, id, desired, current, wctx) =>
      shapeOf(t).update(ctx, t, id, desired, current, wctx),
    remove: (t, id, wctx) => shapeOf(t).remove(ctx, t, id, wctx),
    find: async (t, marker, signal) =>
      t.info.markerField === undefined ? undefined : carrying(await ctx.list(t, signal), marker),
    normalize: (t, path, value, object) => comparable(ctx.now, t, path, value, object),
  };
}

/** The implementation for a type's shape: embedded in a parent, one per owner, or a collection. */
function shapeOf(t: DerivedType): ShapeAccess {
  return t.embedded ? embedded : t.singleton ? singleton : collection;
}
