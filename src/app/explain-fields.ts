import type { Announcement, Change, Decision, FieldChange, FieldClaim } from '../core/index.js';
import { containsUnknown, fieldPath, isMarkerTag, isUnknown, ownValue } from '../core/index.js';
import { isSecretRef } from '../intent/index.js';
import { touchesField } from './change-filter.js';
import type { ChangedBy } from './drift.js';

/** What a secret field shows instead of its value, declared or observed. */
export const SECRET_TEXT = '(secret)';

/**
 * Where a field stands:
 * - `as-declared`: observed as declared;
 * - `drifted`: observed otherwise;
 * - `pending`: declared from a reference to something not created yet (known after apply);
 * - `absent`: declared, and the resource has no object;
 * - `secret`: declared as a secret, which Tend never reads back nor compares;
 * - `undeclared`: observed only; Tend leaves it alone.
 */
export type FieldState = 'as-declared' | 'drifted' | 'pending' | 'absent' | 'secret' | 'undeclared';

/**
 * Who owns a field (DESIGN.md §1.6): the intent, for a declared field no claim covers; the actor of a
 * claim (a decision in its favour: accept, yield, hold, escalate); nobody, for a field the intent does
 * not declare (left alone); or Tend, for its ownership marker.
 */
export type FieldOwner =
  | { readonly kind: 'intent' }
  | { readonly kind: 'actor'; readonly claim: FieldClaim }
  | { readonly kind: 'unowned' }
  | { readonly kind: 'marker' };

/** What the policy decides now about a drifted field, and who changed it. */
export interface DecisionNow {
  readonly changedBy: ChangedBy;
  readonly decision: Decision;
  /** False when an earlier pass decided it and the policy keeps to that decision. */
  readonly fresh: boolean;
}

/** One field of a resource, explained. */
export interface FieldReport {
  /** The field path below the spec (`replicas`, `tags.team`). */
  readonly field: string;
  readonly state: FieldState;
  readonly secret: boolean;
  /**
   * The declared value as written (a reference as `${type/name.path}`), and `resolved` when it
   * holds a reference: what it stands for now (`{"$unknown": …}` when not known until apply).
   */
  readonly declared?: { readonly written: unknown; readonly resolved?: unknown };
  /** The observed value; absent when the object has no such field (or there is no object). */
  readonly observed?: unknown;
  readonly owner: FieldOwner;
  /** For a drifted field: who changed it and what the policy decides now. */
  readonly decisionNow?: DecisionNow;
  /** The latest ledger entries touching the field, oldest first. */
  readonly entries: readonly Change[];
  /** Announcements about the field that are active now. */
  readonly announcements: readonly Announcement[];
}

/** Everything `explainFields` combines for one resource. */
export interface FieldFacts {
  /** The declared spec as written. */
  readonly written: Readonly<Record<string, unknown>>;
  /** The declared spec with references resolved (secrets left out). */
  readonly desired: Readonly<Record<string, unknown>>;
  /** The object's fields; undefined when the resource has no object. */
  readonly observed: Readonly<Record<string, unknown>> | undefined;
  /** Top-level fields holding secrets (sensitive, or declared from a secret reference). */
  readonly secrets: readonly string[];
  /** The field of the type that carries Tend's ownership marker (tags), if any. */
  readonly markerField?: string;
  /** The declared fields that differ from the observed ones (paths below the spec). */
  readonly drift: readonly FieldChange[];
  readonly claims: readonly FieldClaim[];
  /** The decisions of a read-only arbitrate pass for this resource. */
  readonly decisions: readonly {
    readonly field: string;
    readonly by: ChangedBy;
    readonly decision: Decision;
    readonly fresh: boolean;
  }[];
  /** The resource's ledger entries, oldest first. */
  readonly changes: readonly Change[];
  readonly announcements: readonly Announcement[];
  /** Most ledger entries kept per field. */
  readonly entriesPerField: number;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !isUnknown(v);
}

/** `field` is `other` or lies below it (`tags.team` below `tags`). */
const within = (field: string, other: string) => field === other || field.startsWith(`${other}.`);

interface Leaf {
  readonly field: string;
  readonly declared: boolean;
  readonly written?: unknown;
  readonly resolved?: unknown;
  readonly observed: unknown;
  readonly secret: boolean;
  readonly marker: boolean;
}

/**
 * The fields of a resource: every declared leaf (a declared object such as `tags` is walked, so each
 * declared tag is a field), then what the object holds besides (each undeclared key of a declared
 * object, each undeclared top-level field whole, and the keys of the marker field one by one).
 */
function leavesOf(facts: FieldFacts): Leaf[] {
  const out: Leaf[] = [];
  const extra: Leaf[] = [];
  const observedLeaf = (field: string, value: unknown, marker = false): Leaf => ({
    field,
    declared: false,
    observed: value,
    secret: false,
    marker,
  });
  const spreadUndeclared = (
    prefix: string,
    o: Record<string, unknown>,
    declaredKeys: readonly string[],
    isMarkerField: boolean,
  ) => {
    for (const k of Object.keys(o)) {
      if (declaredKeys.includes(k)) continue;
      extra.push(observedLeaf(`${prefix}.${k}`, ownValue(o, k), isMarkerField && isMarkerTag(k)));
    }
  };
  const walk = (
    written: Record<string, unknown>,
    resolved: unknown,
    observed: unknown,
    prefix: string,
  ) => {
    for (const key of Object.keys(written)) {
      const w = ownValue(written, key);
      const r = isPlainObject(resolved) ? ownValue(resolved, key) : undefined;
      const o = isPlainObject(observed) ? ownValue(observed, key) : undefined;
      const field = prefix ? `${prefix}.${key}` : key;
      const secret = prefix === '' && (facts.secrets.includes(key) || isSecretRef(w));
      if (!secret && isPlainObject(w) && Object.keys(w).length > 0) {
        walk(w, r, o, field);
        if (isPlainObject(o)) {
          spreadUndeclared(field, o, Object.keys(w), prefix === '' && key === facts.markerField);
        }
        continue;
      }
      out.push({
        field,
        declared: true,
        written: w,
        ...(!secret && containsReference(w) ? { resolved: r } : {}),
        observed: o,
        secret,
        marker: false,
      });
    }
  };
  walk(facts.written, facts.desired, facts.observed, '');
  for (const key of Object.keys(facts.observed ?? {})) {
    if (Object.hasOwn(facts.written, key)) continue;
    const o = ownValue(facts.observed!, key);
    if (key === facts.markerField && isPlainObject(o)) {
      spreadUndeclared(key, o, [], true);
    } else {
      extra.push({ ...observedLeaf(key, o), secret: facts.secrets.includes(key) });
    }
  }
  extra.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  for (const x of extra) out.push(x);
  return out;
}

/** True when a declared value holds a `${…}` reference. */
function containsReference(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('${');
  if (Array.isArray(v)) return v.some(containsReference);
  if (isPlainObject(v)) return Object.values(v).some(containsReference);
  return false;
}

/**
 * Explains every field of one resource from what was gathered about it: its declared value (as
 * written and resolved), its observed value, where it stands, who owns it, what the policy decides
 * now when it drifted, the latest ledger entries touching it and the announcements about it. Secret
 * fields never show a value: `(secret)` stands in for it. Pure.
 */
export function explainFields(facts: FieldFacts): FieldReport[] {
  return leavesOf(facts).map((leaf) => {
    const { field } = leaf;
    const hasObject = facts.observed !== undefined;
    let state: FieldState;
    if (leaf.secret) state = leaf.declared ? 'secret' : 'undeclared';
    else if (!leaf.declared) state = 'undeclared';
    else if (!hasObject) state = 'absent';
    else if (containsUnknown(leaf.resolved)) state = 'pending';
    else if (facts.drift.some((c) => within(field, c.path))) state = 'drifted';
    else state = 'as-declared';

    let owner: FieldOwner;
    if (leaf.marker) owner = { kind: 'marker' };
    else if (!leaf.declared) owner = { kind: 'unowned' };
    else {
      // A claim on a field that is as declared again lapses at the next pass: the intent owns it.
      const claim =
        state === 'drifted' || state === 'absent'
          ? facts.claims.find((c) => within(field, fieldPath(c.field)))
          : undefined;
      owner = claim ? { kind: 'actor', claim } : { kind: 'intent' };
    }

    const decided =
      state === 'drifted' ? facts.decisions.find((d) => within(field, d.field)) : undefined;
    const entries = facts.changes.filter((c) => touchesField(c, field));
    const announcements = facts.announcements
      .filter((a) => {
        const f = fieldPath(a.field);
        return within(field, f) || within(f, field);
      })
      .map((a) => (leaf.secret ? { ...a, value: SECRET_TEXT } : a));
    const observedValue = leaf.secret ? SECRET_TEXT : leaf.observed;
    return {
      field,
      state,
      secret: leaf.secret,
      ...(leaf.declared
        ? {
            declared: {
              written: leaf.secret ? SECRET_TEXT : leaf.written,
              ...('resolved' in leaf ? { resolved: leaf.resolved } : {}),
            },
          }
        : {}),
      ...(leaf.observed !== undefined ? { observed: observedValue } : {}),
      owner,
      ...(decided
        ? {
            decisionNow: {
              changedBy: decided.by,
              decision: decided.decision,
              fresh: decided.fresh,
            },
          }
        : {}),
      entries: entries.slice(-facts.entriesPerField),
      announcements,
    };
  });
}
