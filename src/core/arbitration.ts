import type { Address } from './address.js';
import { MOTIVATION_KINDS, URGENCIES, motivationExpired, parseDuration } from './attribution.js';
import type { ActorKind, Attribution, Motivation, Parsed, Urgency } from './attribution.js';
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

/** Weekdays as windows name them, in the order `Date.getUTCDay` numbers them. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * A named time window (UTC): between `from` (inclusive) and `to` (exclusive) when given, and — when
 * `days`/`hours` are given — only on those weekdays and between those times of day. E.g. a
 * revenue-critical freeze. Every part given must hold; a window with none holds always.
 */
export interface TimeWindow {
  readonly name: string;
  /** ISO time. */
  readonly from?: string;
  /** ISO time. */
  readonly to?: string;
  /** The weekdays a window of `hours` starts on (the part after midnight belongs to its start day). */
  readonly days?: readonly Weekday[];
  /** `HH:MM-HH:MM` in UTC; may wrap past midnight (`22:00-06:00`); the end may be `24:00`. */
  readonly hours?: string;
  readonly source?: SourceLocation;
}

/**
 * What a rule matches; every given condition must hold (an empty `when` matches everything). A list
 * matches when any of its values does. `field`, `type` and `ref` are globs (`*` any run of characters
 * within a dot-separated segment, `**` any run including dots). `field` is a path below the spec (a
 * `spec.` prefix is stripped) and covers the fields below it too: `tags` matches `tags.team`.
 * `labels` match the resource's labels exactly (every one given). `window` holds when the change was
 * made inside one of the named windows; `urgency` is a minimum (`high` matches high and critical; a
 * motivation without an urgency counts as `normal`). A condition on what a change does not say (a
 * motivation, an actor kind, an intent) does not hold for it.
 */
export interface RuleConditions {
  readonly actor?: readonly string[];
  readonly actorKind?: readonly ActorKind[];
  readonly intent?: readonly string[];
  readonly motivation?: readonly string[];
  readonly ref?: readonly string[];
  readonly urgency?: Urgency;
  readonly field?: readonly string[];
  readonly type?: readonly string[];
  readonly labels?: Readonly<Record<string, string>>;
  readonly window?: readonly string[];
}

/** One rule of an Arbitration document: first match wins. */
export interface ArbitrationRule {
  /** `<document name>#<1-based position>`, or `<document name>#<rule name>` when the rule is named. */
  readonly id: string;
  readonly when: RuleConditions;
  readonly decide: DecisionKind;
  /** For `hold`: until when (default `ttl`). */
  readonly until?: HoldUntil;
  /**
   * For `hold`: what to decide when it ends. Without it the change is decided again by the rules, and
   * a hold that has already ended is passed over for the next matching rule.
   */
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
  /** The field path below the spec (a `spec.` prefix is stripped). */
  readonly field: string;
  /** The declared value, redacted when secret: it is quoted in the reason. */
  readonly declared: unknown;
  /** The observed value, redacted when secret: it is quoted in the reason. */
  readonly observed: unknown;
  /** The change that explains the drift (actor `unknown` when nothing does); `at` is ISO. */
  readonly change: Attribution & { readonly source: ChangeSource; readonly at: string };
  /** The claim an actor already holds on the field, if any (its `value` redacted when secret). */
  readonly claim?: FieldClaim;
  /** The time of the decision (ISO): the policy never reads a clock. */
  readonly now: string;
}

/** A decision with the rule that made it and one line of reason in plain words. */
export interface Decision {
  readonly decision: DecisionKind;
  /**
   * The rule id (`scaling#2`, `default#1`), `precedence` when an outranking claim kept its value, or
   * `default` when no rule matched.
   */
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

// ---------------------------------------------------------------------------------------------
// The default policy

/**
 * Motivation kinds, highest first, when no Arbitration document sets `precedence`: the known kinds,
 * which MOTIVATION_KINDS lists in this order.
 */
export const DEFAULT_PRECEDENCE: readonly string[] = [...MOTIVATION_KINDS];

/**
 * The policy of a workspace without Arbitration documents: enforce, except incident-motivated
 * changes by humans, which hold for their TTL and then escalate.
 */
export const DEFAULT_POLICY: ArbitrationPolicy = {
  rules: [
    {
      id: 'default#1',
      when: { motivation: ['incident'], actorKind: ['human'] },
      decide: 'hold',
      until: { kind: 'ttl' },
      then: 'escalate',
    },
    { id: 'default#2', when: {}, decide: 'enforce' },
  ],
  precedence: DEFAULT_PRECEDENCE,
  windows: [],
  isDefault: true,
};

/**
 * The policy of a workspace from its Arbitration documents: their rules concatenated in load order,
 * the precedence of the one document that sets it (else DEFAULT_PRECEDENCE), and every window. When no
 * document declares a rule (documents that only set precedence or windows) the default rules apply;
 * with no document at all the policy is DEFAULT_POLICY.
 */
export function policyOf(decls: readonly ArbitrationDecl[]): ArbitrationPolicy {
  if (decls.length === 0) return DEFAULT_POLICY;
  const rules: ArbitrationRule[] = [];
  const windows: TimeWindow[] = [];
  let precedence: readonly string[] | undefined;
  for (const d of decls) {
    for (const r of d.rules) rules.push(r);
    for (const w of d.windows) windows.push(w);
    precedence ??= d.precedence;
  }
  return {
    rules: rules.length > 0 ? rules : DEFAULT_POLICY.rules,
    precedence: precedence ?? DEFAULT_PRECEDENCE,
    windows,
    isDefault: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Parsing the values rules and windows are written with

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

/**
 * Parses an ISO time with a zone (`2026-11-27T14:00:00Z`, `…+01:00`) or a date (midnight UTC) into
 * its canonical form (`toISOString`). A time without a zone is refused: it would mean something else
 * on every machine.
 */
export function parseTime(text: string): Parsed<string> {
  const m = ISO_TIME.exec(text.trim());
  const bad: Parsed<string> = {
    ok: false,
    error: `"${text}" is not an ISO time: write a date (2026-11-27) or a time with a zone (2026-11-27T14:00:00Z)`,
  };
  if (!m) return bad;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) {
    return { ok: false, error: `"${text}" is not a date: ${m[1]}-${m[2]} has no day ${m[3]}` };
  }
  const ms = Date.parse(m[4] === undefined ? `${m[1]}-${m[2]}-${m[3]}T00:00:00Z` : text.trim());
  if (Number.isNaN(ms)) return bad;
  return { ok: true, value: new Date(ms).toISOString() };
}

/** Parses `HH:MM-HH:MM` (UTC) into minutes of the day; the end may be `24:00`, never the start. */
export function parseHours(text: string): Parsed<{ start: number; end: number }> {
  const m = /^([01]\d|2[0-3]):([0-5]\d)\s*-\s*([01]\d|2[0-3]|24):([0-5]\d)$/.exec(text.trim());
  if (!m || (m[3] === '24' && m[4] !== '00')) {
    return {
      ok: false,
      error: `"${text}" is not a range of hours: write HH:MM-HH:MM in UTC, e.g. 09:00-17:00 or 22:00-06:00`,
    };
  }
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (start === end) {
    return {
      ok: false,
      error: `"${text}" is an empty range of hours: the start and the end are equal`,
    };
  }
  return { ok: true, value: { start, end } };
}

/** Parses how long a hold lasts: `ttl`, a duration (`30m`, `2h`) or an ISO time. */
export function parseHoldUntil(text: string): Parsed<HoldUntil> {
  const t = text.trim();
  if (t === 'ttl') return { ok: true, value: { kind: 'ttl' } };
  if (/^\d/.test(t) && !/^\d{4}-/.test(t)) {
    const d = parseDuration(t);
    return d.ok ? { ok: true, value: { kind: 'duration', ms: d.value } } : d;
  }
  const at = parseTime(t);
  if (at.ok) return { ok: true, value: { kind: 'time', at: at.value } };
  return {
    ok: false,
    error: `"${text}" is not how long a hold lasts: write ttl (the motivation's expiry), a duration (30m, 2h) or an ISO time (2026-11-27T14:00:00Z)`,
  };
}

// ---------------------------------------------------------------------------------------------
// Matching

/**
 * True when `text` matches the glob `pattern`: `*` matches any run of characters without a dot, `**`
 * any run including dots; every other character matches itself. Time is proportional to the product of
 * the lengths (no backtracking), so a hostile pattern costs no more than a plain one.
 */
export function matchGlob(pattern: string, text: string): boolean {
  // Tokens: a character (a code point, as the text is read), 1 for `*`, 2 for `**`.
  const chars = [...pattern];
  const tokens: (string | 1 | 2)[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] !== '*') tokens.push(chars[i]!);
    else if (chars[i + 1] === '*') {
      tokens.push(2);
      i++;
    } else tokens.push(1);
  }
  const n = tokens.length;
  // at[k]: the first k tokens match the text read so far.
  let at = new Uint8Array(n + 1);
  at[0] = 1;
  const close = (set: Uint8Array) => {
    for (let k = 0; k < n; k++) if (set[k] && typeof tokens[k] === 'number') set[k + 1] = 1;
  };
  close(at);
  for (const c of text) {
    const next = new Uint8Array(n + 1);
    let any = false;
    for (let k = 0; k < n; k++) {
      if (!at[k]) continue;
      const t = tokens[k]!;
      if (t === 2 || (t === 1 && c !== '.')) next[k] = 1;
      else if (t === c) next[k + 1] = 1;
      else continue;
      any = true;
    }
    if (!any) return false;
    close(next);
    at = next;
  }
  return at[n] === 1;
}

/** A field path below the spec: `spec.replicas` → `replicas`; one without the prefix is kept as is. */
export function fieldPath(text: string): string {
  return text.startsWith('spec.') ? text.slice('spec.'.length) : text;
}

/** True when the field glob matches the path or a field above it (`tags` covers `tags.team`). */
function matchField(pattern: string, path: string): boolean {
  const p = fieldPath(pattern);
  if (matchGlob(p, path)) return true;
  for (let i = path.indexOf('.'); i >= 0; i = path.indexOf('.', i + 1)) {
    if (matchGlob(p, path.slice(0, i))) return true;
  }
  return false;
}

const DAY_MS = 86_400_000;

/**
 * True when `at` lies inside the window: after `from`, before `to`, and — when given — within `hours`
 * on one of `days`. Hours that wrap past midnight (`22:00-06:00`) belong to the day they start on, so
 * `days: [fri]` with those hours covers Friday 22:00 to Saturday 06:00. A part that cannot be read
 * (only possible for a window built by hand) does not hold.
 */
export function inWindow(window: TimeWindow, at: Date): boolean {
  const t = at.getTime();
  if (Number.isNaN(t)) return false;
  if (window.from !== undefined && !(t >= Date.parse(window.from))) return false;
  if (window.to !== undefined && !(t < Date.parse(window.to))) return false;
  let day = at.getUTCDay();
  if (window.hours !== undefined) {
    const h = parseHours(window.hours);
    if (!h.ok) return false;
    const { start, end } = h.value;
    const minute = at.getUTCHours() * 60 + at.getUTCMinutes();
    if (start < end) {
      if (minute < start || minute >= end) return false;
    } else if (minute < end) {
      day = new Date(t - DAY_MS).getUTCDay(); // the part after midnight: the night started yesterday
    } else if (minute < start) return false;
  }
  return window.days === undefined || window.days.includes(WEEKDAYS[day]!);
}

/** Why a rule matched beyond its plain conditions: the window the change was made in. */
interface Match {
  readonly window?: string;
}

function anyOf<T>(list: readonly T[] | undefined, value: T | undefined): boolean {
  return list === undefined || (value !== undefined && list.includes(value));
}

function matches(
  when: RuleConditions,
  facts: DriftFacts,
  windows: readonly TimeWindow[],
  changedAt: Date,
): Match | undefined {
  const c = facts.change;
  const m = c.motivation;
  if (!anyOf(when.actor, c.actor)) return undefined;
  if (!anyOf(when.actorKind, c.actorKind)) return undefined;
  if (!anyOf(when.intent, c.intent)) return undefined;
  if (!anyOf(when.motivation, m?.kind)) return undefined;
  if (when.ref && !(m?.ref !== undefined && when.ref.some((g) => matchGlob(g, m.ref!)))) {
    return undefined;
  }
  if (when.urgency !== undefined) {
    if (m === undefined) return undefined;
    if (URGENCIES.indexOf(m.urgency ?? 'normal') < URGENCIES.indexOf(when.urgency))
      return undefined;
  }
  const field = fieldPath(facts.field);
  if (when.field && !when.field.some((g) => matchField(g, field))) return undefined;
  if (when.type && !when.type.some((g) => matchGlob(g, facts.type))) return undefined;
  if (when.labels) {
    for (const [k, v] of Object.entries(when.labels)) {
      if (!Object.hasOwn(facts.labels, k) || facts.labels[k] !== v) return undefined;
    }
  }
  if (when.window) {
    const inside = when.window.find((name) => {
      const w = windows.find((x) => x.name === name);
      return w !== undefined && inWindow(w, changedAt);
    });
    return inside === undefined ? undefined : { window: inside };
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Reasons

const MAX_SHOWN = 40;

/**
 * A value as a reason quotes it: text as it is, anything else as JSON, on one line and at most 40
 * characters. Values reach the policy redacted, so a secret is never shown.
 */
export function shortValue(value: unknown, max = MAX_SHOWN): string {
  let s: string;
  if (typeof value === 'string') s = value === '' ? '""' : value;
  else if (value === undefined) s = '(absent)';
  else {
    try {
      s = JSON.stringify(value) ?? `(a ${typeof value})`;
    } catch {
      s = '(a value)';
    }
  }
  // eslint-disable-next-line no-control-regex -- control characters are what is being removed
  s = s.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ');
  const chars = [...s];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : s;
}

/** `incident INC-42`, or `no motivation`. */
function why(m: Motivation | undefined): string {
  if (m === undefined) return 'no motivation';
  return m.ref ? `${shortValue(m.kind)} ${shortValue(m.ref)}` : shortValue(m.kind);
}

/** A time in a reason: `14:00` when it falls on the day of `now` (UTC), else `2026-11-27 14:00`. */
function clock(iso: string, nowMs: number): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return shortValue(iso);
  const t = new Date(ms).toISOString();
  const sameDay =
    !Number.isNaN(nowMs) && new Date(nowMs).toISOString().slice(0, 10) === t.slice(0, 10);
  return sameDay ? t.slice(11, 16) : `${t.slice(0, 10)} ${t.slice(11, 16)}`;
}

/** What Tend does, said as an action, for the reason of a decision that ends a hold. */
function act(decision: Exclude<DecisionKind, 'hold'>, facts: DriftFacts, actor: string): string {
  const f = fieldPath(facts.field);
  switch (decision) {
    case 'enforce':
      return `put ${f} back to ${shortValue(facts.declared)}`;
    case 'accept':
      return `accept ${f}=${shortValue(facts.observed)} into the intent`;
    case 'yield':
      return `yield ${f} to ${actor}`;
    case 'escalate':
      return `escalate ${f}=${shortValue(facts.observed)} for a human to decide`;
  }
}

/** The decision a `then` makes, with what `enforce` restores. */
function settled(decision: Exclude<DecisionKind, 'hold'>, rule: string, reason: string): Decision {
  return { decision, rule, reason, ...(decision === 'enforce' ? { restore: 'declared' } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Deciding

function msOf(iso: string | undefined, fallback: number): number {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isNaN(ms) ? fallback : ms;
}

function isoOf(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : 'unknown';
}

/** When a hold decided now for this change ends. */
function holdEnd(until: HoldUntil, facts: DriftFacts, changedMs: number): number {
  switch (until.kind) {
    case 'ttl':
      return msOf(facts.change.motivation?.expiresAt, changedMs + DEFAULT_HOLD_MS);
    case 'duration':
      return changedMs + until.ms;
    case 'time':
      return msOf(until.at, Number.NaN);
  }
}

/** The rank of a motivation kind in a precedence list: its index, or below every listed kind. */
/** Rank of a motivation kind in a precedence list: lower is stronger; unlisted kinds rank last. */
export function motivationRank(precedence: readonly string[], kind: string | undefined): number {
  const i = kind === undefined ? -1 : precedence.indexOf(kind);
  return i < 0 ? precedence.length : i;
}

/** The decision of the first matching rule, or `enforce` by `default`; `prefix` starts the reason. */
function byRules(
  policy: ArbitrationPolicy,
  facts: DriftFacts,
  nowMs: number,
  prefix: string,
): Decision {
  const c = facts.change;
  const f = fieldPath(facts.field);
  const observed = shortValue(facts.observed);
  const declared = shortValue(facts.declared);
  const actor = shortValue(c.actor);
  const motive = why(c.motivation);
  const changedMs = msOf(c.at, nowMs);
  const changedAt = new Date(Number.isNaN(changedMs) ? 0 : changedMs);
  const passed: string[] = [];
  // After an ended hold (the prefix) the holds passed over are that same hold: say it once.
  const say = (text: string) =>
    `${prefix}${text}${passed.length > 0 && prefix === '' ? `; ${passed.join('; ')}` : ''}`;
  for (const rule of policy.rules) {
    const match = matches(rule.when, facts, policy.windows, changedAt);
    if (!match) continue;
    const inside = match.window !== undefined ? ` (inside window ${shortValue(match.window)})` : '';
    const id = shortValue(rule.id);
    switch (rule.decide) {
      case 'enforce':
        return {
          decision: 'enforce',
          rule: rule.id,
          restore: 'declared',
          reason: say(
            `put ${f} back to ${declared}: ${actor}'s change to ${observed} (${motive}) matched rule ${id} enforce${inside}`,
          ),
        };
      case 'accept':
        return {
          decision: 'accept',
          rule: rule.id,
          reason: say(
            `accepted ${f}=${observed} from ${actor} (${motive}) into the intent: rule ${id} accept${inside}`,
          ),
        };
      case 'yield':
        return {
          decision: 'yield',
          rule: rule.id,
          reason: say(
            `kept ${f}=${observed} from ${actor}: rule ${id} yields to ${c.motivation ? motive : `${actor} (no motivation)`}${inside}`,
          ),
        };
      case 'escalate':
        return {
          decision: 'escalate',
          rule: rule.id,
          reason: say(
            `kept ${f}=${observed} from ${actor} (${motive}) for a human to decide: rule ${id} escalate${inside}`,
          ),
        };
      case 'hold': {
        const end = holdEnd(rule.until ?? { kind: 'ttl' }, facts, changedMs);
        const until = isoOf(end);
        if (!(end > nowMs)) {
          // Already over (a late-found change, or a hold that ended and is decided again).
          const ended = `the hold of ${f}=${observed} from ${actor} (${motive}) by rule ${id} ended at ${clock(until, nowMs)}`;
          if (rule.then) {
            return settled(rule.then, rule.id, say(`${ended}: ${act(rule.then, facts, actor)}`));
          }
          passed.push(`${ended}`);
          continue;
        }
        return {
          decision: 'hold',
          rule: rule.id,
          until,
          ...(rule.then ? { then: rule.then } : {}),
          reason: say(
            `held ${f}=${observed} from ${actor} until ${clock(until, nowMs)} (${motive}): rule ${id}${inside}, then ${rule.then ?? 'decide again'}`,
          ),
        };
      }
    }
  }
  return {
    decision: 'enforce',
    rule: 'default',
    restore: 'declared',
    reason: say(
      `put ${f} back to ${declared}: no rule matched ${actor}'s change to ${observed} (${motive})`,
    ),
  };
}

/**
 * Decides what to do about one drifted field. Pure and deterministic: the same policy and facts give
 * the same decision (the time is `facts.now`), and it never throws. In order:
 *
 * 1. A claim whose `hold` has ended (`until` at or before now), met by the claim's own actor: the
 *    claim's `then` decides, or without one the rules decide as for a new change. (Met by another
 *    actor's change, an ended hold no longer counts: the rules decide that change.)
 * 2. A change by another actor meeting a claim whose motivation is still active (no expiry counts as
 *    active) and ranks higher in `policy.precedence` (highest first; an unlisted kind, or none, ranks
 *    below every listed one): `enforce` the claim's value (`restore: 'claim'`, rule `precedence`).
 * 3. The first rule whose `when` matches the change decides. `enforce` restores the declared value;
 *    `hold` lasts until HoldUntil says (`ttl`: the motivation's expiry, else the change's time plus
 *    DEFAULT_HOLD_MS) and carries `then` — a hold that would already have ended takes its `then`, or
 *    without one gives way to the next matching rule.
 * 4. No rule matched: `enforce` (rule `default`).
 *
 * A claim recorded with `enforce` is no claim: the intent owns the field. Every decision carries a
 * one-line reason naming the field, the values, the actor, the motivation and the rule.
 */
export function decide(policy: ArbitrationPolicy, facts: DriftFacts): Decision {
  const nowMs = Date.parse(facts.now);
  const claim = facts.claim?.decision === 'enforce' ? undefined : facts.claim;
  if (claim === undefined) return byRules(policy, facts, nowMs, '');
  const f = fieldPath(facts.field);
  const sameActor = claim.actor === facts.change.actor;
  const held = `${f}=${shortValue(claim.value)} by ${shortValue(claim.actor)} (${why(claim.motivation)})`;
  if (claim.decision === 'hold' && claim.until !== undefined && Date.parse(claim.until) <= nowMs) {
    if (!sameActor) return byRules(policy, facts, nowMs, '');
    const ended = `hold of ${held} ended at ${clock(claim.until, nowMs)}`;
    if (claim.then) {
      const reason = `${ended}: ${act(claim.then, facts, shortValue(claim.actor))} (rule ${shortValue(claim.rule)})`;
      return settled(claim.then, claim.rule, reason);
    }
    return byRules(policy, facts, nowMs, `${ended}; `);
  }
  const mine = claim.motivation;
  const theirs = facts.change.motivation;
  if (
    !sameActor &&
    mine !== undefined &&
    !motivationExpired(mine, new Date(nowMs)) &&
    motivationRank(policy.precedence, mine.kind) < motivationRank(policy.precedence, theirs?.kind)
  ) {
    const until = mine.expiresAt !== undefined ? ` until ${clock(mine.expiresAt, nowMs)}` : '';
    const other = theirs ? shortValue(theirs.kind) : 'a change with no motivation';
    return {
      decision: 'enforce',
      rule: 'precedence',
      restore: 'claim',
      reason: `kept ${f}=${shortValue(claim.value)} from ${shortValue(claim.actor)} over ${shortValue(facts.change.actor)}'s ${shortValue(facts.observed)}: motivation ${shortValue(mine.kind)} outranks ${other}${until}`,
    };
  }
  return byRules(policy, facts, nowMs, '');
}
