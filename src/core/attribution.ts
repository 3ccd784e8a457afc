/**
 * Who made a change and why (DESIGN.md §1.6): the actor, the kind of actor, the intent (the goal it
 * serves) and the motivation (why now). Pure vocabulary and parsers shared by the ledger, the
 * arbitration policy, announcements and the providers' audit feeds.
 */

/** The kinds of actor that write to infrastructure. */
export const ACTOR_KINDS = ['human', 'controller', 'agent', 'pipeline', 'tend'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** The intent words Tend knows; any other word matching CUSTOM_WORD is a custom intent. */
export const INTENT_WORDS = [
  'availability',
  'cost',
  'security',
  'compliance',
  'performance',
  'consistency',
] as const;

/** The motivation kinds Tend knows; any other word matching CUSTOM_WORD is a custom kind. */
export const MOTIVATION_KINDS = [
  'incident',
  'cve',
  'traffic',
  'scheduled',
  'maintenance',
  'stability',
  'budget',
  'experiment',
] as const;

/** How urgent a motivation is, least first. */
export const URGENCIES = ['low', 'normal', 'high', 'critical'] as const;
export type Urgency = (typeof URGENCIES)[number];

/** A custom intent or motivation word: lower case, digits and dashes, at most 40 characters. */
export const CUSTOM_WORD = /^[a-z][a-z0-9-]{0,39}$/;

/** Why now: the kind of reason, a reference (a ticket, an incident, a CVE id), urgency, expiry. */
export interface Motivation {
  readonly kind: string;
  readonly ref?: string;
  readonly urgency?: Urgency;
  /** When the reason stops holding (ISO time): a spike is over, an incident closed. */
  readonly expiresAt?: string;
}

/** Who made a change and why. */
export interface Attribution {
  readonly actor: string;
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: Motivation;
}

/** A parse that either gives a value or says, in plain words, what is wrong. */
export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(error: string): Parsed<T> => ({ ok: false, error });

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** Parses a duration such as `90s`, `15m`, `2h`, `1h30m`, `7d` into milliseconds. */
export function parseDuration(text: string): Parsed<number> {
  const t = text.trim();
  if (!/^(?:\d{1,9}(?:ms|s|m|h|d|w))+$/.test(t)) {
    return bad(
      `"${text}" is not a duration: write a number and a unit, e.g. 30s, 15m, 2h, 1h30m, 7d`,
    );
  }
  let total = 0;
  for (const m of t.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  if (total === 0) return bad(`"${text}" is a zero duration: give a positive one`);
  return ok(total);
}

/** Renders milliseconds as the shortest duration text (`2h`, `1h30m`, `45s`). */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (parts.length === 0) return `${ms}ms`;
  return parts.join('');
}

/** Checks an intent word: a known one or a custom word. */
export function checkIntentWord(word: string): Parsed<string> {
  if ((INTENT_WORDS as readonly string[]).includes(word) || CUSTOM_WORD.test(word)) return ok(word);
  return bad(
    `intent "${word}" is not a word Tend can record: use one of ${INTENT_WORDS.join(', ')}, or a custom word of lower-case letters, digits and dashes`,
  );
}

/** Checks a motivation kind: a known one or a custom word. */
export function checkMotivationKind(word: string): Parsed<string> {
  if ((MOTIVATION_KINDS as readonly string[]).includes(word) || CUSTOM_WORD.test(word)) {
    return ok(word);
  }
  return bad(
    `motivation "${word}" is not a kind Tend can record: use one of ${MOTIVATION_KINDS.join(', ')}, or a custom word of lower-case letters, digits and dashes`,
  );
}

/** Checks an actor kind. */
export function checkActorKind(word: string): Parsed<ActorKind> {
  return (ACTOR_KINDS as readonly string[]).includes(word)
    ? ok(word as ActorKind)
    : bad(`actor kind "${word}" is not one of ${ACTOR_KINDS.join(', ')}`);
}

/** Checks an urgency. */
export function checkUrgency(word: string): Parsed<Urgency> {
  return (URGENCIES as readonly string[]).includes(word)
    ? ok(word as Urgency)
    : bad(`urgency "${word}" is not one of ${URGENCIES.join(', ')}`);
}

/** The longest reference kept (a ticket id, an incident name, a CVE id, a short phrase). */
export const MAX_REF_LENGTH = 200;

/**
 * Parses the text form of a motivation, as actors send it in the `X-Tend-Motivation` header and
 * write it on the command line: `kind[:ref][; urgency=high][; ttl=2h | expires=<ISO time>]`, e.g.
 * `incident:INC-42; urgency=high; ttl=2h` or `traffic:spike 2026-11-24; expires=2026-11-24T14:00:00Z`.
 * A `ttl` counts from `at` (when the change was made). Unknown keys are errors, so a typo is never
 * silently dropped.
 */
export function parseMotivation(text: string, at: Date): Parsed<Motivation> {
  const [head = '', ...options] = text.split(';');
  const colon = head.indexOf(':');
  const kindText = (colon < 0 ? head : head.slice(0, colon)).trim();
  const ref = colon < 0 ? undefined : head.slice(colon + 1).trim();
  const kind = checkMotivationKind(kindText);
  if (!kind.ok) return kind;
  if (ref !== undefined && ref.length > MAX_REF_LENGTH) {
    return bad(
      `the reference of motivation "${kindText}" is longer than ${MAX_REF_LENGTH} characters`,
    );
  }
  let urgency: Urgency | undefined;
  let expiresAt: string | undefined;
  for (const option of options) {
    if (option.trim() === '') continue;
    const eq = option.indexOf('=');
    const key = (eq < 0 ? option : option.slice(0, eq)).trim();
    const value = eq < 0 ? '' : option.slice(eq + 1).trim();
    if (key === 'urgency') {
      const u = checkUrgency(value);
      if (!u.ok) return u;
      urgency = u.value;
    } else if (key === 'ttl') {
      const d = parseDuration(value);
      if (!d.ok) return bad(`ttl: ${d.error}`);
      expiresAt = new Date(at.getTime() + d.value).toISOString();
    } else if (key === 'expires') {
      const ms = Date.parse(value);
      if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
        return bad(`expires: "${value}" is not an ISO time such as 2026-11-24T14:00:00Z`);
      }
      expiresAt = new Date(ms).toISOString();
    } else {
      return bad(`"${key}" is not a motivation option: use urgency=, ttl= or expires=`);
    }
  }
  return ok({
    kind: kind.value,
    ...(ref ? { ref } : {}),
    ...(urgency ? { urgency } : {}),
    ...(expiresAt ? { expiresAt } : {}),
  });
}

/** The text form of a motivation (the inverse of parseMotivation, with `expires=`). */
export function formatMotivation(m: Motivation): string {
  let out = m.ref ? `${m.kind}:${m.ref}` : m.kind;
  if (m.urgency) out += `; urgency=${m.urgency}`;
  if (m.expiresAt) out += `; expires=${m.expiresAt}`;
  return out;
}

/** True when a motivation has an expiry at or before `now`. */
export function motivationExpired(m: Motivation | undefined, now: Date): boolean {
  return m?.expiresAt !== undefined && Date.parse(m.expiresAt) <= now.getTime();
}
