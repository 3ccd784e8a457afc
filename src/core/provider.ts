import type { ActionDefinition } from './action.js';
import type { ActorKind } from './attribution.js';
import type { Marker, MarkerKind } from './marker.js';

/** A JSON Schema, as plain data. */
export type JsonSchema = Record<string, unknown>;

/**
 * How a provider identifies objects so that a create is never sent twice (DESIGN.md §4):
 * - `natural-key`: the user-chosen name is the identity (a second create with it fails);
 * - `marker`: the object stores Tend's marker tags, so it can be found by them;
 * - `server-id`: the server picks the id; creates carry an idempotency key.
 */
export type IdentityStrategy = 'natural-key' | 'marker' | 'server-id';

/** What a provider says about one of its resource types. */
export interface ResourceTypeInfo {
  /** The type's name within its provider, e.g. `volumes`. */
  readonly name: string;
  readonly description?: string;
  /** Schema of a desired spec (the create request body, without read-only fields). */
  readonly schema: JsonSchema;
  /** Null when the type has no safe identity: automatic creation is refused (identityReason says why). */
  readonly identity: IdentityStrategy | null;
  readonly identityReason?: string;
  /** The field of an observed object holding its server id. */
  readonly idField: string;
  /**
   * For `natural-key` identity when one field is the whole key. Absent when the key has several
   * fields (see naturalKeyFields): matching on one of them alone would confuse objects.
   */
  readonly naturalKey?: string;
  /** Top-level fields that cannot change without replacing the object (from annotations). */
  readonly createOnly: readonly string[];
  /** Fields the platform sets; declared values for them are refused. */
  readonly outputOnly: readonly string[];
  /** Fields holding secrets: must be a `{ fromEnv | fromFile }` reference in intent; never compared. */
  readonly sensitive: readonly string[];
  /**
   * Top-level fields the create sends in the URL's query string, not in a body: a secret there is
   * kept by whatever logs URLs (the platform's access log, a proxy). Absent: none.
   */
  readonly sentInUrl?: readonly string[];
  /**
   * Where Tend's ownership marker goes: a field, or a dotted path to one (`metadata.labels`); absent
   * when the type's objects have no place for it.
   */
  readonly markerField?: string;
  /** How the marker field carries the marker (absent: a `map`, as tags and labels do). */
  readonly markerKind?: MarkerKind;
  /** Where update-vs-replace comes from: the platform's lifecycle endpoint or field annotations. */
  readonly lifecycle: 'platform' | 'annotations';
  /** True when the create call accepts an idempotency key. */
  readonly idempotencyKey: boolean;
  /**
   * For `natural-key` identity: every field whose values together identify an object, parent fields
   * first (PowerDNS rrsets: `zone_id, name, type`; zones: `name`). Compare each after resolving
   * references and `Provider.normalize`. Absent means `[naturalKey]`.
   */
  readonly naturalKeyFields?: readonly string[];
  /**
   * For objects that live inside an object of another type: that type, and the declared field that
   * holds the parent's id (written in intent as a reference, `zone_id: ${dns.zones/example.id}`).
   */
  readonly parent?: { readonly type: string; readonly field: string };
  /** Fields the platform changes on its own (serials, counters): never drift, never anyone's change. */
  readonly serverOwned?: readonly string[];
  /** Fields sent on create that the platform never returns: never compared. */
  readonly writeOnly?: readonly string[];
  /**
   * Set when the platform offers no way to delete the type's objects (Stripe prices: deactivated,
   * never deleted): where the provider looked, e.g. `no DELETE on /v1/prices/{price}`. Tend never
   * deletes such an object: a removed resource's delete, and a replace (which deletes the old
   * object), are blocked in the plan (`noDeleteReason`).
   */
  readonly noDelete?: string;
  /**
   * True when the type's objects hold data (a PostgreSQL database): resources of the type are
   * stateful — replace and delete gated behind `--approve-destroy` — unless a resource declares
   * `lifecycle.stateful: false`.
   */
  readonly stateful?: boolean;
  /**
   * True when the provider sends the changes of this type's objects together, per parent, in one
   * request (PowerDNS rrsets in their zone's PATCH: group commit). The executor starts every ready
   * step of such a type at once, outside its in-flight bound, so that they share one batch.
   */
  readonly batched?: boolean;
}

/** What a provider offers. */
export interface ProviderDescription {
  readonly types: readonly ResourceTypeInfo[];
  /** True when the provider implements `changes` (an attributed audit feed). */
  readonly auditFeed: boolean;
  /**
   * True when the platform's reads see its writes at once (read-your-writes): once a create has
   * answered, every later `list` and `read` shows the object, so an object Tend created that a list
   * does not show is gone. Absent or false: the platform may be eventually consistent, and an object
   * created moments ago that a list does not show yet is waited for (the visibility window) rather
   * than taken as deleted. Say true only when it always holds: a wrong true makes Tend create a
   * second object for one that was merely late.
   */
  readonly consistentReads?: boolean;
  /** Problems found reading the platform's description (never fatal). */
  readonly warnings: readonly string[];
}

/** One object as the platform reports it now. */
export interface ObservedObject {
  /** The resource type within the provider (`volumes`). */
  readonly type: string;
  readonly id: string;
  /** Every field the platform returned, read-only ones included. */
  readonly fields: Readonly<Record<string, unknown>>;
  /** Tend's ownership marker, when the object carries one. */
  readonly marker?: Marker;
  /**
   * The platform's version of the object, when it reports one (a declared version field, or the
   * ETag of a read): it changes whenever the object does. Opaque: compared for equality only.
   */
  readonly version?: string;
}

/** Who is acting, sent with every mutation so the platform's audit feed attributes it. */
export interface ActorContext {
  readonly actor: string;
  /** Sent as `X-Tend-Actor-Kind`; absent sends no such header. */
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: string;
}

/** Everything a mutating call needs besides the object itself. */
export interface WriteContext {
  /** Sent as `Idempotency-Key` where the type supports one. */
  readonly idempotencyKey?: string;
  /** Tags to put on a created object (and keep on an updated one). */
  readonly marker?: Marker;
  readonly actor: ActorContext;
  readonly signal?: AbortSignal;
  /**
   * Called right before each request that may change the platform is sent (every attempt, a retry
   * included; for a transaction, before its COMMIT): throws when the sender can no longer be sure it
   * holds the workspace's lease, and then nothing is sent. A provider passes it as late as it can.
   */
  readonly fence?: () => void;
}

/** The outcome of `evaluate`: what a change from current to desired requires. */
export interface LifecycleEvaluation {
  readonly action: 'none' | 'update' | 'replace';
  /** The fields that force the action (for replace: the fields that cannot change in place). */
  readonly fields: readonly string[];
  /** Who decided: the platform's lifecycle endpoint, field annotations, or the default (update). */
  readonly source: 'platform' | 'annotation' | 'default';
  readonly reason?: string;
}

/** One entry of a platform's audit feed: a change with its actor, intent and motivation. */
export interface ObservedChange {
  /** Opaque position in the feed; the cursor to resume after this entry. */
  readonly cursor: string;
  readonly time: string;
  readonly actor: string;
  /** The kind of actor, when the feed says and it is one of ACTOR_KINDS (anything else is dropped). */
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: string;
  readonly action: 'create' | 'update' | 'delete';
  readonly type: string;
  readonly id: string;
  readonly before?: Readonly<Record<string, unknown>>;
  readonly after?: Readonly<Record<string, unknown>>;
}

/** A page of the audit feed. */
export interface ChangesPage {
  readonly changes: readonly ObservedChange[];
  /** Cursor to pass next time (unchanged when there was nothing new). */
  readonly cursor: string;
}

/**
 * How a provider's platform is doing, as seen by its client: a circuit opens after repeated
 * failures (Tend stops hammering a platform that is down) and closes again after a successful probe.
 */
export interface ProviderHealth {
  readonly circuit: 'closed' | 'open' | 'half-open';
  /** When the circuit last changed state (ISO time). */
  readonly since?: string;
  readonly lastError?: string;
  /** Current request rate limit (requests/s) after adapting to 429s; 0 when unlimited. */
  readonly rateLimit: number;
}

/**
 * The provider contract. Every call is idempotent given the same arguments; `list`, `read`, `find`,
 * `evaluate` and `changes` never mutate. Errors are TendErrors: `retryable` says whether trying again
 * may help, `outcomeUnknown` says a mutation may have happened (the journal then looks it up).
 */
export interface Provider {
  readonly name: string;
  describe(): ProviderDescription;
  list(type: string, signal?: AbortSignal): Promise<ObservedObject[]>;
  /** Undefined when the object does not exist (or is not visible yet). */
  read(type: string, id: string, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  create(
    type: string,
    desired: Record<string, unknown>,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  update(
    type: string,
    id: string,
    desired: Record<string, unknown>,
    current: ObservedObject,
    ctx: WriteContext,
  ): Promise<ObservedObject>;
  /** Deleting an object that does not exist succeeds. */
  delete(type: string, id: string, ctx: WriteContext): Promise<void>;
  evaluate(
    type: string,
    current: ObservedObject,
    desired: Record<string, unknown>,
  ): Promise<LifecycleEvaluation>;
  /** The audit feed after `cursor` (from the start when undefined); may wait up to `waitMs` for news. */
  changes?(
    cursor: string | undefined,
    options?: { waitMs?: number; signal?: AbortSignal },
  ): Promise<ChangesPage>;
  /** Finds the object carrying a marker (by address, and by op when given). */
  find?(type: string, marker: Marker, signal?: AbortSignal): Promise<ObservedObject | undefined>;
  /**
   * Normalises a value of a field for comparison (trailing dots, case, set order). `object` is the
   * whole object the path is in (a declared spec or observed fields), when the caller has it: some
   * values compare by a sibling field (a DNS record's data by the rrset's `type`).
   */
  normalize?(
    type: string,
    path: string,
    value: unknown,
    object?: Readonly<Record<string, unknown>>,
  ): unknown;
  /** The client's view of the platform's health (circuit state, adapted rate limit). */
  health?(): ProviderHealth;
  /** Releases what the provider holds (connections, timers); the provider is not used afterwards. */
  close?(): Promise<void>;
  /**
   * The Day-2 actions a resource type offers (`tend action <address> --list`), e.g. `rotate-password`
   * on a PostgreSQL role; none when absent. Each step of an action is idempotent or verifiable
   * (core/action.ts); the engine journals, resumes and records them (docs/actions.md).
   */
  actions?(type: string): readonly ActionDefinition[];
}
