import type { ActorKind, Change, ChangeSource, DecisionKind } from '../core/index.js';
import {
  ACTOR_KINDS,
  DECISIONS,
  fieldPath,
  matchGlob,
  nearMatches,
  parseDuration,
  TendError,
} from '../core/index.js';

/** The sources a ledger entry may have, for validating `--source`. */
export const CHANGE_SOURCES: readonly ChangeSource[] = ['tend', 'audit', 'announcement', 'unknown'];

/**
 * Which ledger entries to keep. Every condition given must hold; a list holds when any of its values
 * does. Frozen data: the HTTP API and the MCP server filter with the same shape.
 */
export interface ChangeFilter {
  readonly actor?: readonly string[];
  readonly actorKind?: readonly ActorKind[];
  readonly intent?: readonly string[];
  /** Motivation kinds (`incident`, `traffic`, …). */
  readonly motivation?: readonly string[];
  /** Addresses, types (`sb.services`: every resource of it) or globs (`sb.services/*`, `sb.*`). */
  readonly address?: readonly string[];
  /** Field paths below the spec (`replicas`, `tags.team`); a `spec.` prefix is stripped. */
  readonly field?: readonly string[];
  readonly source?: readonly ChangeSource[];
  readonly decision?: readonly DecisionKind[];
  /** Entries at or after this time (ISO). */
  readonly since?: string;
  /** Entries before this time (ISO). */
  readonly until?: string;
}

/** A filter as a person or a script writes it: words, ISO times or durations ago. */
export interface ChangeFilterInput {
  readonly actor?: readonly string[];
  readonly actorKind?: readonly string[];
  readonly intent?: readonly string[];
  readonly motivation?: readonly string[];
  readonly address?: readonly string[];
  readonly field?: readonly string[];
  readonly source?: readonly string[];
  readonly decision?: readonly string[];
  /** An ISO time, or a duration ago (`2h`: the last two hours). */
  readonly since?: string;
  /** An ISO time, or a duration ago. */
  readonly until?: string;
}

/**
 * A time bound: an ISO time (a date alone is midnight UTC), or a duration ago counted from `now`
 * (`2h` is two hours before now). Throws `history.bad_filter` naming the flag when it is neither.
 */
export function timeBound(text: string, now: Date, flag: string): string {
  const t = text.trim();
  const d = parseDuration(t);
  if (d.ok) return new Date(now.getTime() - d.value).toISOString();
  if (/^\d{4}-\d{2}-\d{2}(?:$|T)/.test(t)) {
    const ms = Date.parse(t);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  }
  throw new TendError(
    'history.bad_filter',
    `${flag} "${text}" is neither an ISO time nor a duration`,
    {
      hint: 'write a time such as 2026-11-24T14:00:00Z or 2026-11-24, or a duration ago such as 30m, 2h or 7d',
    },
  );
}

/** Checks every word of a list against the words Tend knows, with a did-you-mean. */
function oneOf<T extends string>(
  values: readonly string[] | undefined,
  known: readonly T[],
  flag: string,
): T[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  for (const v of values) {
    if ((known as readonly string[]).includes(v)) continue;
    const near = nearMatches(v, known, 1);
    throw new TendError(
      'history.bad_filter',
      `${flag} "${v}" is not one of ${known.join(', ')}${near.length > 0 ? `; did you mean ${near[0]}?` : ''}`,
    );
  }
  return values as T[];
}

const listOf = (values: readonly string[] | undefined): string[] | undefined => {
  const kept = values?.map((v) => v.trim()).filter((v) => v !== '');
  return kept && kept.length > 0 ? kept : undefined;
};

/**
 * Reads a filter as written into a ChangeFilter: kinds, sources and decisions checked (a typo is an
 * error with a did-you-mean, never a filter that silently matches nothing), times resolved against
 * `now`, fields stripped of `spec.`. Throws `history.bad_filter`.
 */
export function readChangeFilter(input: ChangeFilterInput, now: Date): ChangeFilter {
  const since = input.since === undefined ? undefined : timeBound(input.since, now, '--since');
  const until = input.until === undefined ? undefined : timeBound(input.until, now, '--until');
  if (since !== undefined && until !== undefined && since >= until) {
    throw new TendError(
      'history.bad_filter',
      `--since (${since}) is not before --until (${until}): no entry can match`,
    );
  }
  const actor = listOf(input.actor);
  const actorKind = oneOf(listOf(input.actorKind), ACTOR_KINDS, '--actor-kind');
  const intent = listOf(input.intent);
  const motivation = listOf(input.motivation);
  const address = listOf(input.address);
  const field = listOf(input.field)?.map(fieldPath);
  const source = oneOf(listOf(input.source), CHANGE_SOURCES, '--source');
  const decision = oneOf(listOf(input.decision), DECISIONS, '--decision');
  return {
    ...(actor ? { actor } : {}),
    ...(actorKind ? { actorKind } : {}),
    ...(intent ? { intent } : {}),
    ...(motivation ? { motivation } : {}),
    ...(address ? { address } : {}),
    ...(field ? { field } : {}),
    ...(source ? { source } : {}),
    ...(decision ? { decision } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
  };
}

/**
 * True when an address matches a pattern: the address itself; a type (`sb.services`), matching every
 * resource of it; or a glob, where `*` is any run of characters within the type or within the name
 * (`sb.services/*`, `*` + `/api`, `sb.*`). A pattern without `/` is a pattern of types. Linear (the
 * policy's `matchGlob`): a hostile pattern costs no more than a plain one.
 */
export function addressMatches(pattern: string, address: string): boolean {
  const slash = address.indexOf('/');
  const at = pattern.indexOf('/');
  const typePattern = at < 0 ? pattern : pattern.slice(0, at);
  const namePattern = at < 0 ? '*' : pattern.slice(at + 1);
  // Neither part of an address holds a `/`: any run of characters is the policy's `**`.
  const part = (glob: string, text: string) => matchGlob(glob.replace(/\*+/g, '**'), text);
  return part(typePattern, address.slice(0, slash)) && part(namePattern, address.slice(slash + 1));
}

/**
 * True when a ledger entry touches a field: one of its fields (or of its decision's) is the field, a
 * field below it (`tags` touches `tags.team`), or one above it (an entry that changed `tags` touches
 * `tags.team`). Creates and deletes list every field they set or removed.
 */
export function touchesField(change: Pick<Change, 'fields' | 'decision'>, field: string): boolean {
  const f = fieldPath(field);
  const related = (e: string) => e === f || e.startsWith(`${f}.`) || f.startsWith(`${e}.`);
  return change.fields.some(related) || (change.decision?.fields.some(related) ?? false);
}

/** True when an entry passes every condition of a filter. */
export function matchesChange(filter: ChangeFilter, c: Change): boolean {
  if (filter.actor && !filter.actor.includes(c.actor)) return false;
  if (filter.actorKind && (c.actorKind === undefined || !filter.actorKind.includes(c.actorKind))) {
    return false;
  }
  if (filter.intent && (c.intent === undefined || !filter.intent.includes(c.intent))) return false;
  if (
    filter.motivation &&
    (c.motivation === undefined || !filter.motivation.includes(c.motivation.kind))
  ) {
    return false;
  }
  if (filter.source && !filter.source.includes(c.source)) return false;
  if (filter.decision && (!c.decision || !filter.decision.includes(c.decision.decision))) {
    return false;
  }
  if (filter.address) {
    const a = c.address;
    if (a === undefined || !filter.address.some((p) => addressMatches(p, a))) return false;
  }
  if (filter.field && !filter.field.some((f) => touchesField(c, f))) return false;
  if (filter.since !== undefined || filter.until !== undefined) {
    const t = Date.parse(c.time);
    if (Number.isNaN(t)) return false;
    if (filter.since !== undefined && t < Date.parse(filter.since)) return false;
    if (filter.until !== undefined && t >= Date.parse(filter.until)) return false;
  }
  return true;
}

/** The one address a filter names exactly (no glob, no type), which the store can look up by itself. */
export function exactAddress(filter: ChangeFilter): string | undefined {
  const a = filter.address;
  return a?.length === 1 && a[0]!.includes('/') && !a[0]!.includes('*') ? a[0] : undefined;
}

/** True when a filter has no condition but, at most, one exact address. */
export function isPlainQuery(filter: ChangeFilter): boolean {
  const { address, ...rest } = filter;
  return (
    Object.keys(rest).length === 0 && (address === undefined || exactAddress(filter) !== undefined)
  );
}
