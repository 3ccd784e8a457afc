/**
 * Announcements (DESIGN.md §1.6, §7): an actor says, before or just after it changes a field, what it
 * sets, who it is, the goal it serves and why now, for how long. When Tend then observes that field
 * drift to that value, the announcement explains the drift (source `announcement`) and the
 * arbitration policy decides with the actor's intent and motivation instead of treating it as a
 * change by `unknown`. Pure: the time is passed in.
 */
import type { Address } from './address.js';
import { parseAddress } from './address.js';
import type { ActorKind, Motivation, Urgency } from './attribution.js';
import {
  ACTOR_KINDS,
  INTENT_WORDS,
  MAX_REF_LENGTH,
  MOTIVATION_KINDS,
  URGENCIES,
  checkActorKind,
  checkIntentWord,
  checkMotivationKind,
  checkUrgency,
  formatDuration,
  parseDuration,
  parseMotivation,
} from './attribution.js';
import { canonicalJson, sha256 } from './hash.js';
import { FORBIDDEN_KEYS, formatDataPath, ownValue, shapeProblems } from './safe-keys.js';
import { nearMatches } from './similar.js';

/**
 * An actor's declaration that it set (or will set) one field of one resource to a value, with its
 * attribution, valid from `createdAt` (less ANNOUNCE_AFTER_MS) until `expiresAt`. Frozen data: it
 * is stored as memory (like the twin), never in the ledger, and holds no secret.
 */
export interface Announcement {
  /** 12 hex digits of the SHA-256 of the announcement's content and createdAt. */
  readonly id: string;
  readonly address: Address;
  /** The field path below the spec (`replicas`, `tags.team`). */
  readonly field: string;
  /** The value the actor sets (a JSON value). */
  readonly value: unknown;
  readonly actor: string;
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  /** Why now; its `expiresAt` is the announcement's unless the actor gave another. */
  readonly motivation?: Motivation;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly note?: string;
}

/**
 * How long before an announcement a change it explains may have been made: an actor (an autoscaler,
 * a person on call) often acts first and announces a moment later. One hour.
 */
export const ANNOUNCE_AFTER_MS = 3_600_000;
/** How long an announcement lasts when it gives neither `ttl` nor `expiresAt`: one hour. */
export const DEFAULT_ANNOUNCE_TTL_MS = 3_600_000;
/** The shortest announcement: one second. */
export const MIN_ANNOUNCE_TTL_MS = 1000;
/** The longest announcement: 30 days. A standing arrangement belongs in the intent's Arbitration rules. */
export const MAX_ANNOUNCE_TTL_MS = 30 * 86_400_000;
/** The longest actor name. */
export const MAX_ACTOR_LENGTH = 100;
/** The longest note. */
export const MAX_NOTE_LENGTH = 1000;
/** The longest field path. */
export const MAX_FIELD_LENGTH = 256;
/** The largest value, as JSON text. */
export const MAX_VALUE_BYTES = 65_536;

/** The keys an announcement is written with (flags, a JSON file, a YAML file). */
export const ANNOUNCEMENT_KEYS = [
  'address',
  'field',
  'value',
  'actor',
  'actorKind',
  'intent',
  'motivation',
  'ref',
  'urgency',
  'ttl',
  'expiresAt',
  'note',
] as const;

const MOTIVATION_KEYS = ['kind', 'ref', 'urgency', 'expires', 'expiresAt'] as const;

/** Keys Tend sets itself: written in the input, they are refused with a reason. */
const SET_BY_TEND: Readonly<Record<string, string>> = {
  id: 'is computed by Tend from the content; remove it',
  createdAt:
    'is the time Tend stores the announcement; remove it (use ttl or expiresAt for how long it lasts)',
};

/** One problem with an announcement: the key path (`ttl`, `motivation.kind`; empty for the whole) and what to do. */
export interface AnnouncementProblem {
  readonly path: string;
  readonly message: string;
  /** `key` when the key itself is wrong (unknown, or set by Tend), not its value. */
  readonly at?: 'key';
}

/** The outcome of reading an announcement: the announcement, or every problem at once. */
export type AnnouncementRead =
  | {
      readonly ok: true;
      readonly value: Announcement;
      /** Stored as given, but perhaps a typo: a custom word one or two edits from a known one. */
      readonly warnings: string[];
    }
  | {
      readonly ok: false;
      /** Each problem as `<key>: <what is wrong; what to write instead>`. */
      readonly errors: string[];
      readonly problems: AnnouncementProblem[];
    };

/** Options of `readAnnouncement`. */
export interface ReadAnnouncementOptions {
  /** How a key path is named in `errors` (the CLI names its flags); default: the path itself. */
  readonly label?: (path: string) => string;
}

/**
 * Reads an announcement given as plain data — the same shape from CLI flags, a JSON file or a YAML
 * file — made at `now`. Never throws: every problem is reported at once, each naming the key, what
 * is wrong and what to write instead; unknown keys are errors with a did-you-mean. `field` may carry
 * the `spec.` prefix (stripped); `motivation` is the text form (`traffic:spike; urgency=high`) or a
 * mapping `{ kind, ref?, urgency?, expires? }`; `ref` and `urgency` may also be given beside it.
 * The announcement lasts `ttl` (1s to 30d, default 1h) or until `expiresAt` (at most 30d ahead),
 * never both; its motivation expires with it unless it says otherwise.
 */
export function readAnnouncement(
  input: unknown,
  now: Date,
  options: ReadAnnouncementOptions = {},
): AnnouncementRead {
  const problems: AnnouncementProblem[] = [];
  const label = options.label ?? ((p: string) => p);
  const problem = (path: string, message: string, at?: 'key'): void => {
    problems.push(at ? { path, message, at } : { path, message });
  };
  const result = (value: Announcement | undefined): AnnouncementRead => {
    if (value !== undefined && problems.length === 0) {
      return { ok: true, value, warnings: customWordWarnings(value, label) };
    }
    return {
      ok: false,
      problems,
      errors: problems.map((p) => (p.path === '' ? p.message : `${label(p.path)}: ${p.message}`)),
    };
  };
  const nowMs = now.getTime();
  // Far enough from the ends of the Date range that now + 30 days is still a time.
  if (Number.isNaN(nowMs) || Math.abs(nowMs) > MAX_TIME_MS - MAX_ANNOUNCE_TTL_MS) {
    problem('', 'the time of the announcement is not a valid time');
    return result(undefined);
  }
  if (!isPlainRecord(input)) {
    problem(
      '',
      `an announcement is a mapping with address, field, value and actor (and optionally actorKind, intent, motivation, ref, urgency, ttl or expiresAt, note); got ${describeType(input)}`,
    );
    return result(undefined);
  }
  const get = (key: string): unknown => ownValue(input, key);

  for (const key of Object.keys(input)) {
    if ((ANNOUNCEMENT_KEYS as readonly string[]).includes(key)) continue;
    const reason = Object.prototype.hasOwnProperty.call(SET_BY_TEND, key)
      ? SET_BY_TEND[key]
      : undefined;
    problem(key, reason ?? unknownKeyMessage(key, ANNOUNCEMENT_KEYS), 'key');
  }

  const address = readAddress(get('address'), problem);
  const field = readField(get('field'), problem);
  const value = readValue(input, problem);
  const actor = readActor(get('actor'), problem);
  const actorKind = readWord(get('actorKind'), 'actorKind', problem, (w) => {
    const c = checkActorKind(w);
    return c.ok
      ? { ok: true, value: c.value }
      : {
          ok: false,
          message: `"${w}" is not an actor kind${suggest(w, ACTOR_KINDS)}: use one of ${ACTOR_KINDS.join(', ')}`,
        };
  });
  const intent = readWord(get('intent'), 'intent', problem, (w) =>
    checkIntentWord(w).ok
      ? { ok: true, value: w }
      : {
          ok: false,
          message: `"${w}" is not an intent word${suggest(w, INTENT_WORDS)}: use one of ${INTENT_WORDS.join(', ')}, or a custom word of lower-case letters, digits and dashes (at most 40)`,
        },
  );
  const note = readNote(get('note'), problem);
  const expiresAt = readExpiry(get('ttl'), get('expiresAt'), nowMs, problem, label);
  const motivation = readMotivationInput(
    get('motivation'),
    get('ref'),
    get('urgency'),
    now,
    problem,
    label,
  );

  if (
    problems.length > 0 ||
    address === undefined ||
    field === undefined ||
    value === undefined ||
    actor === undefined ||
    expiresAt === undefined
  ) {
    return result(undefined);
  }
  const content = {
    address,
    field,
    value: value.json,
    actor,
    ...(actorKind !== undefined ? { actorKind } : {}),
    ...(intent !== undefined ? { intent } : {}),
    ...(motivation !== undefined
      ? { motivation: { ...motivation, expiresAt: motivation.expiresAt ?? expiresAt } }
      : {}),
    createdAt: now.toISOString(),
    expiresAt,
    ...(note !== undefined ? { note } : {}),
  };
  return result({ id: announcementId(content), ...content });
}

/** Warnings for custom intent and motivation words that look like typos of known ones. */
function customWordWarnings(a: Announcement, label: (path: string) => string): string[] {
  const out: string[] = [];
  const check = (
    word: string | undefined,
    known: readonly string[],
    path: string,
    what: string,
  ) => {
    if (word === undefined || known.includes(word)) return;
    const near = nearMatches(word, known, 1);
    if (near.length > 0) {
      out.push(
        `${label(path)}: "${word}" is not ${what} Tend knows (did you mean ${near[0]}?); it is recorded as a custom word, and rules for ${near[0]} will not match it`,
      );
    }
  };
  check(a.intent, INTENT_WORDS, 'intent', 'an intent');
  check(a.motivation?.kind, MOTIVATION_KINDS, 'motivation', 'a motivation kind');
  return out;
}

/** The id of an announcement: 12 hex digits of the SHA-256 of its canonical JSON without `id`. */
export function announcementId(content: Omit<Announcement, 'id'>): string {
  return sha256(canonicalJson(content)).slice(0, 12);
}

/**
 * The plain data that `readAnnouncement` reads back, at the announcement's `createdAt`, as this very
 * announcement (same id): for showing an announcement in the form it is written in.
 */
export function announcementInput(a: Announcement): Record<string, unknown> {
  return {
    address: a.address,
    field: a.field,
    value: a.value,
    actor: a.actor,
    ...(a.actorKind !== undefined ? { actorKind: a.actorKind } : {}),
    ...(a.intent !== undefined ? { intent: a.intent } : {}),
    ...(a.motivation !== undefined ? { motivation: { ...a.motivation } } : {}),
    expiresAt: a.expiresAt,
    ...(a.note !== undefined ? { note: a.note } : {}),
  };
}

/** A field path as the store and the diff write it: below the spec, without a `spec.` prefix. */
export function specFieldPath(field: string): string {
  return field.startsWith('spec.') ? field.slice('spec.'.length) : field;
}

/**
 * True when announcement `a` explains that the field `field` of `address` was observed at `at` with
 * `observedValue`: same address and field (either may carry the `spec.` prefix), the value equal by
 * `same` (the caller's normalising comparison, as the diff uses), and `at` within the announcement's
 * window: from ANNOUNCE_AFTER_MS before it was made until it expires, both ends included.
 */
export function matchesDrift(
  a: Announcement,
  address: Address,
  field: string,
  observedValue: unknown,
  at: Date,
  same: (announced: unknown, observed: unknown) => boolean,
): boolean {
  if (a.address !== address || specFieldPath(a.field) !== specFieldPath(field)) return false;
  const t = at.getTime();
  const from = Date.parse(a.createdAt) - ANNOUNCE_AFTER_MS;
  const until = Date.parse(a.expiresAt);
  if (!(t >= from && t <= until)) return false;
  return same(a.value, observedValue);
}

/** True when `a` has expired at `at` (its expiry is at or before it). */
export function announcementExpired(a: Announcement, at: Date): boolean {
  return Date.parse(a.expiresAt) <= at.getTime();
}

// ---------------------------------------------------------------------------------------------------

type Report = (path: string, message: string, at?: 'key') => void;

/** The largest time a Date holds (ECMAScript: 100,000,000 days either side of 1970). */
const MAX_TIME_MS = 8.64e15;
type Check<T> = { ok: true; value: T } | { ok: false; message: string };

function isPlainRecord(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Names a value's type for a message, without calling anything on it. */
function describeType(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object')
    return isPlainRecord(v) ? 'a mapping' : 'an object that is not plain data';
  if (typeof v === 'number')
    return Number.isFinite(v) ? `the number ${v}` : `the number ${String(v)}`;
  if (typeof v === 'boolean') return `${v}`;
  if (typeof v === 'string') return 'text';
  return `a ${typeof v}`;
}

/** `"text"` for a message, shortened. */
function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

/** `; did you mean x?` for a near candidate (also a lower-case spelling), else ''. */
function suggest(word: string, candidates: readonly string[]): string {
  const lower = word.toLowerCase();
  const near =
    lower !== word && candidates.includes(lower) ? [lower] : nearMatches(word, candidates, 1);
  return near.length > 0 ? ` (did you mean ${near[0]}?)` : '';
}

function unknownKeyMessage(key: string, known: readonly string[]): string {
  if (FORBIDDEN_KEYS.has(key)) {
    return `is refused: the keys __proto__, constructor and prototype could reach an object's prototype; remove it`;
  }
  const near = nearMatches(key, known, 1);
  const kebab = key.includes('-')
    ? key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    : key;
  const guess = near[0] ?? (known.includes(kebab) ? kebab : undefined);
  return guess !== undefined
    ? `unknown key; did you mean ${guess}?`
    : `unknown key; the keys are ${known.join(', ')}`;
}

function hasControl(text: string, allowNewlines = false): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (allowNewlines && (c === 10 || c === 9 || c === 13)) continue;
    if (c < 32 || (c >= 127 && c < 160)) return true;
  }
  return false;
}

function readAddress(v: unknown, problem: Report): Address | undefined {
  const example = 'write the resource as provider.type/name, e.g. sb.services/api';
  if (v === undefined) {
    problem('address', `missing; ${example}`);
    return undefined;
  }
  if (typeof v !== 'string') {
    problem('address', `is ${describeType(v)}; ${example}`);
    return undefined;
  }
  if (!parseAddress(v)) {
    problem(
      'address',
      `${quote(v)} is not an address; ${example} (lower-case name of letters, digits, - and _)`,
    );
    return undefined;
  }
  return v as Address;
}

function readField(v: unknown, problem: Report): string | undefined {
  const example =
    'write the field as in the resource document, e.g. replicas, spec.replicas or tags.team';
  if (v === undefined) {
    problem('field', `missing; ${example}`);
    return undefined;
  }
  if (typeof v !== 'string') {
    problem('field', `is ${describeType(v)}; ${example}`);
    return undefined;
  }
  if (v.length > MAX_FIELD_LENGTH) {
    problem('field', `is longer than ${MAX_FIELD_LENGTH} characters; ${example}`);
    return undefined;
  }
  if (hasControl(v)) {
    problem('field', `${quote(v)} holds control characters; ${example}`);
    return undefined;
  }
  if (v === 'spec') {
    problem('field', `"spec" names the whole spec; name one field in it, e.g. spec.replicas`);
    return undefined;
  }
  const path = specFieldPath(v);
  const segments = path.split('.');
  if (segments.some((s) => s.trim() === '')) {
    problem('field', `${quote(v)} has an empty segment; ${example}`);
    return undefined;
  }
  const forbidden = segments.find((s) => FORBIDDEN_KEYS.has(s));
  if (forbidden !== undefined) {
    problem(
      'field',
      `${quote(v)} uses the segment ${forbidden}, which Tend refuses (it could reach an object's prototype); ${example}`,
    );
    return undefined;
  }
  return path;
}

/** The value as JSON would carry it (a fresh copy, -0 written 0), or undefined with a problem. */
function readValue(input: Record<string, unknown>, problem: Report): { json: unknown } | undefined {
  const example = 'write the value the actor sets as JSON, e.g. 5, true, "blue" or {"team": "web"}';
  if (!Object.prototype.hasOwnProperty.call(input, 'value') || input['value'] === undefined) {
    problem('value', `missing; ${example}`);
    return undefined;
  }
  const v = input['value'];
  const shape = shapeProblems(v, { limit: 1 })[0];
  if (shape !== undefined) {
    const at = formatDataPath(shape.path);
    problem(
      'value',
      shape.kind === 'forbidden-key'
        ? `holds the key ${String(shape.path.at(-1))} at ${at}, which Tend refuses (it could reach an object's prototype); rename it`
        : shape.kind === 'too-deep'
          ? `is nested too deeply (at ${at}); write a flatter value`
          : `refers to itself (at ${at}); write the value out`,
    );
    return undefined;
  }
  const bad = notJson(v);
  if (bad !== undefined) {
    problem(
      'value',
      `holds ${bad.what} at ${formatDataPath(bad.path)}, which JSON cannot carry; ${example}`,
    );
    return undefined;
  }
  const text = JSON.stringify(v);
  if (text.length > MAX_VALUE_BYTES) {
    problem(
      'value',
      `is ${text.length} characters as JSON, more than ${MAX_VALUE_BYTES}; announce the one field that changed, not a whole document`,
    );
    return undefined;
  }
  return { json: JSON.parse(text) as unknown };
}

/** The first part of `v` that is not JSON data, with its path; undefined when all of it is. */
function notJson(v: unknown): { what: string; path: (string | number)[] } | undefined {
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v, path: [] }];
  while (stack.length > 0) {
    const { v: x, path } = stack.pop()!;
    if (x === null || typeof x === 'string' || typeof x === 'boolean') continue;
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) return { what: String(x), path };
      continue;
    }
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) {
        if (!(i in x)) return { what: 'a hole in a list', path: [...path, i] };
        stack.push({ v: x[i] as unknown, path: [...path, i] });
      }
      continue;
    }
    if (typeof x === 'object') {
      if (!isPlainRecord(x)) return { what: 'an object that is not plain data', path };
      for (const k of Object.keys(x)) stack.push({ v: x[k], path: [...path, k] });
      continue;
    }
    return { what: x === undefined ? 'an undefined value' : `a ${typeof x}`, path };
  }
  return undefined;
}

function readActor(v: unknown, problem: Report): string | undefined {
  const example = 'write who makes the change, e.g. hpa, alice or deploy-bot';
  if (v === undefined) {
    problem('actor', `missing; ${example}`);
    return undefined;
  }
  if (typeof v !== 'string') {
    problem('actor', `is ${describeType(v)}; ${example}`);
    return undefined;
  }
  if (v.trim() === '') {
    problem('actor', `is empty; ${example}`);
    return undefined;
  }
  if (v.length > MAX_ACTOR_LENGTH) {
    problem('actor', `is longer than ${MAX_ACTOR_LENGTH} characters; ${example}`);
    return undefined;
  }
  if (hasControl(v)) {
    problem('actor', `${quote(v)} holds control characters; ${example}`);
    return undefined;
  }
  if (v.trim() !== v) {
    problem('actor', `${quote(v)} starts or ends with spaces; write ${quote(v.trim())}`);
    return undefined;
  }
  return v;
}

/** An optional word checked by `check`. */
function readWord<T>(
  v: unknown,
  key: string,
  problem: Report,
  check: (word: string) => Check<T>,
): T | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    problem(key, `is ${describeType(v)}; write a word`);
    return undefined;
  }
  const c = check(v);
  if (!c.ok) {
    problem(key, c.message);
    return undefined;
  }
  return c.value;
}

function readNote(v: unknown, problem: Report): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    problem('note', `is ${describeType(v)}; write a sentence of text`);
    return undefined;
  }
  if (v.length > MAX_NOTE_LENGTH) {
    problem(
      'note',
      `is longer than ${MAX_NOTE_LENGTH} characters; keep it to a sentence or two and put a link in ref`,
    );
    return undefined;
  }
  if (hasControl(v, true)) {
    problem('note', 'holds control characters; write plain text (new lines are fine)');
    return undefined;
  }
  return v;
}

/** An ISO time as text, or undefined with a problem. */
function readTime(v: unknown, path: string, problem: Report): number | undefined {
  const example = 'write an ISO time such as 2026-11-24T14:00:00Z';
  if (v instanceof Date) {
    const ms = v.getTime();
    if (Number.isNaN(ms)) {
      problem(path, `is not a valid time; ${example}`);
      return undefined;
    }
    return ms;
  }
  if (typeof v !== 'string') {
    problem(path, `is ${describeType(v)}; ${example}`);
    return undefined;
  }
  const ms = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(v) || Number.isNaN(ms)) {
    problem(path, `${quote(v)} is not an ISO time; ${example}`);
    return undefined;
  }
  return ms;
}

/** When the announcement expires (ISO), from `ttl` or `expiresAt`, or undefined with a problem. */
function readExpiry(
  ttl: unknown,
  expiresAt: unknown,
  nowMs: number,
  problem: Report,
  label: (path: string) => string,
): string | undefined {
  const range = `between ${formatDuration(MIN_ANNOUNCE_TTL_MS)} and ${formatDuration(MAX_ANNOUNCE_TTL_MS)}`;
  if (ttl !== undefined && expiresAt !== undefined) {
    problem(
      'ttl',
      `is given together with ${label('expiresAt')}; give one of them: ${label('ttl')} counts from now (e.g. 2h), ${label('expiresAt')} is an ISO time`,
    );
    return undefined;
  }
  if (expiresAt !== undefined) {
    const ms = readTime(expiresAt, 'expiresAt', problem);
    if (ms === undefined) return undefined;
    if (ms <= nowMs) {
      problem(
        'expiresAt',
        `${new Date(ms).toISOString()} is not in the future; give a later time, or a ttl such as 2h`,
      );
      return undefined;
    }
    if (ms - nowMs > MAX_ANNOUNCE_TTL_MS) {
      problem(
        'expiresAt',
        `${new Date(ms).toISOString()} is more than ${formatDuration(MAX_ANNOUNCE_TTL_MS)} ahead; announce for at most ${formatDuration(MAX_ANNOUNCE_TTL_MS)} (announce again if it still holds, or write an Arbitration rule for a standing arrangement)`,
      );
      return undefined;
    }
    if (ms - nowMs < MIN_ANNOUNCE_TTL_MS) {
      problem(
        'expiresAt',
        `is less than ${formatDuration(MIN_ANNOUNCE_TTL_MS)} ahead; give a later time`,
      );
      return undefined;
    }
    return new Date(ms).toISOString();
  }
  if (ttl === undefined) return new Date(nowMs + DEFAULT_ANNOUNCE_TTL_MS).toISOString();
  if (typeof ttl !== 'string') {
    problem(
      'ttl',
      `is ${describeType(ttl)}; write a duration with its unit ${range}, e.g. 30m, 2h or 7d`,
    );
    return undefined;
  }
  const d = parseDuration(ttl);
  if (!d.ok) {
    problem(
      'ttl',
      `${quote(ttl)} is not a duration; write a number and a unit ${range}, e.g. 30m, 2h, 1h30m or 7d`,
    );
    return undefined;
  }
  if (d.value < MIN_ANNOUNCE_TTL_MS || d.value > MAX_ANNOUNCE_TTL_MS) {
    problem(
      'ttl',
      d.value > MAX_ANNOUNCE_TTL_MS
        ? `${quote(ttl)} is longer than ${formatDuration(MAX_ANNOUNCE_TTL_MS)}; announce for at most ${formatDuration(MAX_ANNOUNCE_TTL_MS)} (announce again if it still holds, or write an Arbitration rule for a standing arrangement)`
        : `${quote(ttl)} is shorter than ${formatDuration(MIN_ANNOUNCE_TTL_MS)}; write a duration ${range}`,
    );
    return undefined;
  }
  return new Date(nowMs + d.value).toISOString();
}

/** parseMotivation, with a ttl too long for a Date reported instead of thrown. */
function parseMotivationSafely(text: string, now: Date): ReturnType<typeof parseMotivation> {
  try {
    return parseMotivation(text, now);
  } catch {
    return { ok: false, error: 'its ttl is too long to be a time; give a ttl such as 2h' };
  }
}

interface MotivationParts {
  kind: string;
  ref?: string;
  urgency?: Urgency;
  expiresAt?: string;
}

/** The motivation from `motivation` (text or mapping) and the `ref` and `urgency` beside it. */
function readMotivationInput(
  v: unknown,
  ref: unknown,
  urgency: unknown,
  now: Date,
  problem: Report,
  label: (path: string) => string,
): Motivation | undefined {
  let m: MotivationParts | undefined;
  let ok = true;
  if (v === undefined) {
    m = undefined;
  } else if (typeof v === 'string') {
    const parsed = parseMotivationSafely(v, now);
    if (parsed.ok) m = { ...parsed.value };
    else {
      ok = false;
      problem(
        'motivation',
        `${parsed.error} (the text form is kind[:ref][; urgency=high][; ttl=2h | expires=<ISO time>], e.g. traffic:spike 2026-11-24; urgency=high)`,
      );
    }
  } else if (isPlainRecord(v)) {
    m = readMotivationRecord(v, problem);
    ok = m !== undefined;
  } else {
    ok = false;
    problem(
      'motivation',
      `is ${describeType(v)}; write a kind such as ${MOTIVATION_KINDS.slice(0, 3).join(', ')} (or kind:ref), or a mapping { kind, ref, urgency, expires }`,
    );
  }

  const extraRef = readRef(ref, 'ref', problem);
  const extraUrgency = readUrgency(urgency, 'urgency', problem);
  if ((ref !== undefined || urgency !== undefined) && v === undefined) {
    for (const key of [ref !== undefined ? 'ref' : '', urgency !== undefined ? 'urgency' : '']) {
      if (key !== '') {
        problem(
          key,
          `belongs to a motivation, and none is given; add ${label('motivation')} with its kind, e.g. ${MOTIVATION_KINDS.slice(0, 4).join(', ')}`,
        );
      }
    }
    return undefined;
  }
  if (!ok || m === undefined) return undefined;
  if (extraRef !== undefined) {
    if (m.ref !== undefined && m.ref !== extraRef) {
      problem(
        'ref',
        `is given twice (also in ${label('motivation')} as ${quote(m.ref)}); give it once`,
      );
    } else m.ref = extraRef;
  }
  if (extraUrgency !== undefined) {
    if (m.urgency !== undefined && m.urgency !== extraUrgency) {
      problem(
        'urgency',
        `is given twice (also in ${label('motivation')} as ${m.urgency}); give it once`,
      );
    } else m.urgency = extraUrgency;
  }
  if (m.ref !== undefined && hasControl(m.ref)) {
    problem('motivation', 'its reference holds control characters; write plain text');
  }
  if (m.expiresAt !== undefined && Date.parse(m.expiresAt) <= now.getTime()) {
    problem(
      'motivation',
      `expires at ${m.expiresAt}, which is not in the future; an expired reason explains nothing: give a later expiry, or none (it then expires with the announcement)`,
    );
  }
  return {
    kind: m.kind,
    ...(m.ref !== undefined && m.ref !== '' ? { ref: m.ref } : {}),
    ...(m.urgency !== undefined ? { urgency: m.urgency } : {}),
    ...(m.expiresAt !== undefined ? { expiresAt: m.expiresAt } : {}),
  };
}

function readMotivationRecord(
  v: Record<string, unknown>,
  report: Report,
): MotivationParts | undefined {
  let failed = false;
  const problem: Report = (path, message, at) => {
    failed = true;
    report(path, message, at);
  };
  for (const key of Object.keys(v)) {
    if (!(MOTIVATION_KEYS as readonly string[]).includes(key)) {
      problem(`motivation.${key}`, unknownKeyMessage(key, MOTIVATION_KEYS), 'key');
    }
  }
  const kindValue = ownValue(v, 'kind');
  let kind: string | undefined;
  if (kindValue === undefined) {
    problem(
      'motivation.kind',
      `missing; write why now, one of ${MOTIVATION_KINDS.join(', ')} or a custom word`,
    );
  } else if (typeof kindValue !== 'string') {
    problem('motivation.kind', `is ${describeType(kindValue)}; write a word such as traffic`);
  } else if (!checkMotivationKind(kindValue).ok) {
    problem(
      'motivation.kind',
      `"${kindValue}" is not a motivation kind${suggest(kindValue, MOTIVATION_KINDS)}: use one of ${MOTIVATION_KINDS.join(', ')}, or a custom word of lower-case letters, digits and dashes (at most 40)`,
    );
  } else kind = kindValue;
  const ref = readRef(ownValue(v, 'ref'), 'motivation.ref', problem);
  const urgency = readUrgency(ownValue(v, 'urgency'), 'motivation.urgency', problem);
  const expires = ownValue(v, 'expires');
  const expiresAtValue = ownValue(v, 'expiresAt');
  let expiresAt: string | undefined;
  if (expires !== undefined && expiresAtValue !== undefined) {
    problem('motivation.expires', 'is given together with motivation.expiresAt; give one of them');
  } else if (expires !== undefined || expiresAtValue !== undefined) {
    const key = expires !== undefined ? 'motivation.expires' : 'motivation.expiresAt';
    const ms = readTime(expires ?? expiresAtValue, key, problem);
    if (ms !== undefined) expiresAt = new Date(ms).toISOString();
  }
  if (kind === undefined || failed) return undefined;
  return {
    kind,
    ...(ref !== undefined ? { ref } : {}),
    ...(urgency !== undefined ? { urgency } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

function readRef(v: unknown, path: string, problem: Report): string | undefined {
  if (v === undefined) return undefined;
  const example = 'write a reference such as INC-42, CVE-2026-1234 or a short phrase';
  if (typeof v !== 'string') {
    problem(path, `is ${describeType(v)}; ${example}`);
    return undefined;
  }
  if (v.length > MAX_REF_LENGTH) {
    problem(path, `is longer than ${MAX_REF_LENGTH} characters; ${example}`);
    return undefined;
  }
  if (hasControl(v)) {
    problem(path, `holds control characters; ${example}`);
    return undefined;
  }
  return v.trim();
}

function readUrgency(v: unknown, path: string, problem: Report): Urgency | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    problem(path, `is ${describeType(v)}; write one of ${URGENCIES.join(', ')}`);
    return undefined;
  }
  const u = checkUrgency(v);
  if (!u.ok) {
    problem(
      path,
      `"${v}" is not an urgency${suggest(v, URGENCIES)}: write one of ${URGENCIES.join(', ')}`,
    );
    return undefined;
  }
  return u.value;
}
