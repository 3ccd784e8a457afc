import { matchGlob } from './arbitration.js';
import type { Address } from './address.js';
import type { SourceLocation } from './intent.js';

/**
 * Policies (`kind: Policy`, docs/policies.md): rules in CEL over a resource's fields, shaped after
 * Kubernetes' ValidatingAdmissionPolicy, evaluated on the intent, on a plan's predicted result and
 * on what the platform holds. This file holds what is pure about them: their declaration, which
 * resources they match, and what a verdict is. CEL is compiled and evaluated in src/policy.
 */

/** What a violation does: `deny` refuses (the intent, the plan, a drifted value); `warn` is shown; `audit` only recorded. */
export const POLICY_ACTIONS = ['deny', 'warn', 'audit'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

export const POLICY_SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type PolicySeverity = (typeof POLICY_SEVERITIES)[number];

/**
 * Which resources a policy concerns. Every given criterion must hold; within one, any value may.
 * `types` (`sb.buckets`, `sb.*`), `names` and `addresses` are globs (`*` within a dot-separated
 * segment, `**` across them); `labels` are the resource document's labels, equal values.
 */
export interface PolicyMatch {
  readonly types?: readonly string[];
  readonly names?: readonly string[];
  readonly addresses?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
}

/** A named CEL expression, evaluated before the validations and read as `variables.<name>`. */
export interface PolicyVariableDecl {
  readonly name: string;
  readonly expression: string;
  readonly source: SourceLocation;
}

/** One rule: `expression` must be true; otherwise `message` (or `messageExpression`) says why. */
export interface PolicyValidationDecl {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
  /** A machine-readable reason, as in Kubernetes (`Invalid`, `Forbidden`, …); default `Invalid`. */
  readonly reason: string;
  readonly source: SourceLocation;
}

/** A `kind: Policy` document. */
export interface PolicyDecl {
  readonly kind: 'Policy';
  readonly name: string;
  readonly description?: string;
  readonly match: PolicyMatch;
  readonly variables: readonly PolicyVariableDecl[];
  readonly validations: readonly PolicyValidationDecl[];
  readonly actions: readonly PolicyAction[];
  readonly severity: PolicySeverity;
  readonly source: SourceLocation;
}

/** What a policy is matched against: a resource as it is declared. */
export interface PolicySubject {
  readonly address: Address;
  /** `provider.resourceType`. */
  readonly type: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** True when `match` selects `subject` (an empty match selects every resource). */
export function policyMatches(match: PolicyMatch, subject: PolicySubject): boolean {
  if (match.types && !match.types.some((g) => matchGlob(g, subject.type))) return false;
  if (match.names && !match.names.some((g) => matchGlob(g, subject.name))) return false;
  if (match.addresses && !match.addresses.some((g) => matchGlob(g, subject.address))) return false;
  if (match.labels) {
    for (const [k, v] of Object.entries(match.labels)) {
      if (!Object.hasOwn(subject.labels, k) || subject.labels[k] !== v) return false;
    }
  }
  return true;
}

/**
 * The moment a policy is evaluated at: the intent as written (`declared`), the plan's predicted
 * result (`predicted`), or what the platform holds (`observed`).
 */
export type PolicyMoment = 'declared' | 'predicted' | 'observed';

/**
 * The result of one rule on one resource: `pass`, `fail` (a violation), `undecidable` (a value the
 * rule reads is not known yet — `(known after apply)`, or a field the intent leaves to the
 * platform), or `error` (the expression failed: a type mismatch, a missing key).
 */
export type PolicyResult = 'pass' | 'fail' | 'undecidable' | 'error';

/** One rule's verdict on one resource at one moment. */
export interface PolicyVerdict {
  readonly policy: string;
  /** 0-based index of the validation in the policy. */
  readonly rule: number;
  readonly address: Address;
  readonly moment: PolicyMoment;
  readonly result: PolicyResult;
  /** For `fail`: the rule's message; for `undecidable` and `error`: why. */
  readonly message: string;
  readonly reason: string;
  readonly actions: readonly PolicyAction[];
  readonly severity: PolicySeverity;
  /** The fields of the resource the rule reads (`*` when it reads the whole object). */
  readonly fields: readonly string[];
  /** Where the rule is written. */
  readonly source: SourceLocation;
}

/** True when a verdict refuses what it was computed on: a violated (or failed) `deny` rule. */
export function denies(v: PolicyVerdict): boolean {
  return (v.result === 'fail' || v.result === 'error') && v.actions.includes('deny');
}

/** True when a verdict is shown as a warning: a violated `warn` rule that does not deny. */
export function warns(v: PolicyVerdict): boolean {
  return (v.result === 'fail' || v.result === 'error') && !denies(v) && v.actions.includes('warn');
}

/** `policy <name> rule <n>` with its message, as every report words a violation. */
export function verdictText(v: PolicyVerdict): string {
  const what = v.result === 'fail' ? 'violated' : v.result === 'error' ? 'failed' : v.result;
  return `policy ${v.policy} (${v.actions.join(', ')}) rule ${v.rule + 1} ${what}: ${v.message}`;
}
