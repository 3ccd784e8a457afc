import type { Address } from './address.js';
import type { ActorKind, Attribution, Motivation, Urgency } from './attribution.js';
import type { ChangeSource } from './change.js';
import type { SourceLocation } from './intent.js';

/**
 * What Tend does about a drifted field (DESIGN.md §2):
 * - `enforce`: put the wanted value back (the declared one, or an outranking owner's);
 * - `accept`: take the observed value into the intent (a patch to the YAML; the actor owns the field
 *   until the intent says the same);
 * - `yield`: hand the field to that actor and stop managing it;
 * - `hold`: keep the observed value until a time, then decide again;
 * - `escalate`: keep the observed value, mark the resource `blocked` and report it for a human.
 */
export const DECISIONS = ['enforce', 'accept', 'yield', 'hold', 'escalate'] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/** How long a `hold` lasts. */
export type HoldUntil =
  /** Until the motivation's expiry (the announcement's or the header's TTL); DEFAULT_HOLD_MS without one. */
  | { readonly kind: 'ttl' }
  /** A fixed time after the change was made. */
  | { readonly kind: 'duration'; readonly ms: number }
  /** An absolute time (ISO). */
  | { readonly kind: 'time'; readonly at: string };

/** How long a `hold` with `until: ttl` lasts when the change's motivation has no expiry: 1 hour. */
export const DEFAULT_HOLD_MS = 3_600_000;

/**
 * A named time window (UTC): between `from` and `to` when given, and — when `days`/`hours` are
 * given — only on those weekdays and between those times of day. E.g. a revenue-critical freeze.
 */
export interface TimeWindow {
  readonly name: string;
  readonly from?: string;
  readonly to?: string;
  /** Lower-case three-letter weekdays: mon … sun. */
  readonly days?: readonly string[];
  /** `HH:MM-HH:MM` in UTC; may wrap past midnight. */
  readonly hours?: string;
  readonly source?: SourceLocation;
}

/**
 * What a rule matches; every given condition must hold (an empty `when` matches everything). A list
 * matches any of its values. `field`, `type` and `ref` are globs (`*` any run of characters within a
 * dot-separated segment, `**` any run including dots). `field` is written as in the resource document;
 * the `spec.` prefix may be left out. `labels` match the resource's labels exactly. `window` holds when
 * the change was made inside the named window; `urgency` is a minimum (`high` matches high and
 * critical).
 */
export interface RuleConditions {
  readonly actor?: readonly string[];
  readonly actorKind?: readonly ActorKind[];
  readonly intent?: readonly string[];
  readonly motivation?: readonly string[];
  readonly ref?: string;
  readonly urgency?: Urgency;
  readonly field?: string;
  readonly type?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly window?: string;
}

/** One rule of an Arbitration document: first match wins. */
export interface ArbitrationRule {
  /** `<document name>#<1-based position>`, or the rule's own `name` when given. */
  readonly id: string;
  readonly when: RuleConditions;
  readonly decide: DecisionKind;
  /** For `hold`: until when (default `ttl`). */
  readonly until?: HoldUntil;
  /** For `hold`: what to decide when it ends (default: decide again by the rules, see `decide`). */
  readonly then?: Exclude<DecisionKind, 'hold'>;
  readonly source?: SourceLocation;
}

/**
 * The arbitration policy of a workspace: the rules of its Arbitration documents in load order, the
 * motivation precedence (highest first) used when a new change meets a field an actor holds, and
 * the named windows.
 */
export interface ArbitrationPolicy {
  readonly rules: readonly ArbitrationRule[];
  readonly precedence: readonly string[];
  readonly windows: readonly TimeWindow[];
  /** True when no Arbitration document was declared and this is the built-in default. */
  readonly isDefault: boolean;
}

/** A `kind: Arbitration` document. */
export interface ArbitrationDecl {
  readonly kind: 'Arbitration';
  readonly name: string;
  readonly rules: readonly ArbitrationRule[];
  readonly precedence?: readonly string[];
  readonly windows: readonly TimeWindow[];
  readonly source: SourceLocation;
}

/**
 * The claim an actor has on a field after a decision in its favour (`accept`, `yield`, `hold`,
 * `escalate`): the value it set and why. The intent owns every declared field no claim covers.
 */
export interface FieldClaim extends Attribution {
  readonly address: Address;
  /** The field path below the spec (`replicas`, `tags.team`). */
  readonly field: string;
  /** The value the actor set (as observed). */
  readonly value: unknown;
  readonly decision: DecisionKind;
  /** The rule that made the decision. */
  readonly rule: string;
  readonly since: string;
  /** For `hold`: when it ends (ISO). */
  readonly until?: string;
  /** For `hold`: what to decide when it ends; absent: decide again by the rules. */
  readonly then?: Exclude<DecisionKind, 'hold'>;
  /** The ledger entry of the change this claim stands on. */
  readonly seq?: number;
  /**
   * Hash of the declared value when the decision was made: when the intent comes to declare another
   * value, its author has taken the field back and the claim lapses.
   */
  readonly declaredHash?: string;
}

/** Everything a decision about one drifted field depends on. */
export interface DriftFacts {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The field path below the spec. */
  readonly field: string;
  readonly declared: unknown;
  readonly observed: unknown;
  /** The change that explains the drift (actor `unknown` when nothing does). */
  readonly change: Attribution & { readonly source: ChangeSource; readonly at: string };
  /** The claim an actor already holds on the field, if any. */
  readonly claim?: FieldClaim;
  readonly now: string;
}

/** A decision with the rule that made it and one line of reason in plain words. */
export interface Decision {
  readonly decision: DecisionKind;
  /** The rule id, `precedence` when an outranking claim kept its value, or `default#N`. */
  readonly rule: string;
  readonly reason: string;
  /** What `enforce` puts back: the declared value, or the value of the claim that outranks. */
  readonly restore?: 'declared' | 'claim';
  /** For `hold`: when it ends. */
  readonly until?: string;
  readonly then?: Exclude<DecisionKind, 'hold'>;
}

/** The decision as the ledger records it, with the fields it covers. */
export interface RecordedDecision extends Decision {
  readonly fields: readonly string[];
}

/** Re-exported so that callers of the policy need one import. */
export type { ActorKind, Attribution, Motivation, Urgency };
