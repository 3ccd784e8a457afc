import {
  ACTOR_KINDS,
  DECISIONS,
  INTENT_WORDS,
  MOTIVATION_KINDS,
  URGENCIES,
  WEEKDAYS,
  checkActorKind,
  checkIntentWord,
  checkMotivationKind,
  checkUrgency,
  fieldPath,
  isValidName,
  parseHoldUntil,
  parseHours,
  parseTime,
  parseType,
} from '../core/index.js';
import type {
  ActorKind,
  ArbitrationDecl,
  ArbitrationRule,
  DecisionKind,
  Diagnostic,
  HoldUntil,
  RuleConditions,
  SourceLocation,
  TimeWindow,
  Weekday,
} from '../core/index.js';
import { FieldReader, isRecord, typeName } from './fields.js';
import { readLabels } from './labels.js';
import type { ParsedDocument } from './parse-documents.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { reportAt, sourceOf } from './report.js';
import { closest, didYouMean, listOf } from './suggest.js';

const FIELDS = ['kind', 'name', 'precedence', 'windows', 'rules'] as const;
const RULE_FIELDS = ['name', 'when', 'decide', 'until', 'then'] as const;
const WHEN_FIELDS = [
  'actor',
  'actorKind',
  'intent',
  'motivation',
  'ref',
  'urgency',
  'field',
  'type',
  'labels',
  'window',
] as const;
const WINDOW_FIELDS = ['name', 'from', 'to', 'days', 'hours'] as const;

/** Names of rules and windows: lower-case, starting with a letter (a number would read as a position). */
const LOCAL_NAME = /^[a-z][a-z0-9_-]{0,62}$/;

/** A rule as read, with where it is written. */
export interface RuleDraft {
  readonly rule: ArbitrationRule;
  readonly at: readonly PathSegment[];
}

/** A window as read, with where it is written. */
export interface WindowDraft {
  readonly window: TimeWindow;
  readonly at: readonly PathSegment[];
}

/** An Arbitration document read as far as it could be: enough for the checks across documents. */
export interface ArbitrationDraft {
  readonly doc: ParsedDocument;
  /** The document's name when it is valid. */
  readonly name?: string;
  readonly rules: readonly RuleDraft[];
  readonly windows: readonly WindowDraft[];
  /** The precedence when the document sets one (valid kinds only). */
  readonly precedence?: readonly string[];
  /** Every window name a rule refers to, with where. */
  readonly windowRefs: readonly { readonly name: string; readonly at: readonly PathSegment[] }[];
  readonly source: SourceLocation;
}

/** The values of a condition written as one value or a list, each with where it is written. */
type Written = { readonly value: string; readonly at: readonly PathSegment[] }[];

/**
 * Reads `obj[key]` as one non-empty string or a list of them. An empty list is refused unless
 * `allowEmpty` (`arbitration.condition`: it would match nothing). Undefined when absent.
 */
function strings(
  r: FieldReader,
  obj: Record<string, unknown>,
  key: string,
  at: readonly PathSegment[],
  allowEmpty = false,
): Written | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  const path = [...at, key];
  const single = !Array.isArray(v);
  const items = single ? [v] : (v as unknown[]);
  if (items.length === 0 && !allowEmpty) {
    r.report(
      'arbitration.condition',
      `\`${formatPath(path)}\` is an empty list, which would match nothing`,
      path,
      { hint: `leave \`${key}\` out to match every change, or list what it should match` },
    );
    return [];
  }
  const out: Written = [];
  items.forEach((item, i) => {
    const itemAt = single ? path : [...path, i];
    if (typeof item === 'string' && item.trim() !== '') {
      out.push({ value: item.trim(), at: itemAt });
      return;
    }
    const plain = typeof item === 'number' || typeof item === 'boolean';
    r.report(
      'field.type',
      `\`${formatPath(itemAt)}\` must be a non-empty string${single ? ' or a list of them' : ''}, got ${typeName(item)}`,
      itemAt,
      plain ? { hint: `quote it: "${String(item)}"` } : {},
    );
  });
  return out;
}

/**
 * Checks intent words or motivation kinds: a word Tend cannot record is an error; a custom word close
 * to a known one is a warning (`arbitration.custom_word`), since it is most likely a typo.
 */
function vocabulary(r: FieldReader, written: Written, what: 'intent' | 'motivation'): string[] {
  const known: readonly string[] = what === 'intent' ? INTENT_WORDS : MOTIVATION_KINDS;
  const check = what === 'intent' ? checkIntentWord : checkMotivationKind;
  const out: string[] = [];
  for (const { value, at } of written) {
    const c = check(value);
    if (!c.ok) {
      r.report(`arbitration.${what}`, `${c.error}.${didYouMean(value, known)}`, at);
      continue;
    }
    const near = known.includes(value) ? undefined : closest(value, known);
    if (near !== undefined) {
      r.report(
        'arbitration.custom_word',
        `${what} \`${value}\` is not one Tend knows, so it is taken as a custom word. Did you mean \`${near}\`?`,
        at,
        {
          severity: 'warning',
          hint: `a custom word only matches changes that say exactly \`${value}\``,
        },
      );
    }
    out.push(value);
  }
  return out;
}

/** Reads `precedence`: motivation kinds, highest first, each once. */
function readPrecedence(r: FieldReader, value: Record<string, unknown>): string[] | undefined {
  const written = strings(r, value, 'precedence', [], true);
  if (written === undefined) return undefined;
  const seen = new Map<string, readonly PathSegment[]>();
  const unique: Written = [];
  for (const w of written) {
    const first = seen.get(w.value);
    if (first !== undefined) {
      r.report(
        'arbitration.precedence',
        `motivation \`${w.value}\` is already ranked at \`${formatPath(first)}\``,
        w.at,
        { hint: 'list each motivation kind once, highest first' },
      );
      continue;
    }
    seen.set(w.value, w.at);
    unique.push(w);
  }
  return vocabulary(r, unique, 'motivation');
}

const FULL_DAYS: Readonly<Record<Weekday, string>> = {
  sun: 'sunday',
  mon: 'monday',
  tue: 'tuesday',
  wed: 'wednesday',
  thu: 'thursday',
  fri: 'friday',
  sat: 'saturday',
};

/** Reads one entry of `days`: `mon` … `sun` or the day's full name, in any case. */
function weekday(text: string): Weekday | undefined {
  const t = text.toLowerCase();
  return WEEKDAYS.find((d) => t === d || t === FULL_DAYS[d]);
}

function readWindow(
  r: FieldReader,
  entry: unknown,
  at: readonly PathSegment[],
  doc: ParsedDocument,
): TimeWindow | undefined {
  if (!isRecord(entry)) {
    r.report(
      'field.type',
      `a window must be a mapping with a \`name\`, got ${typeName(entry)}`,
      at,
      {
        hint: 'e.g. - { name: freeze, from: 2026-11-27T00:00:00Z, to: 2026-11-30T00:00:00Z }',
      },
    );
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(entry, WINDOW_FIELDS, at, 'a window');
  const name = r.string(entry, 'name', at, true);
  if (name !== undefined && !LOCAL_NAME.test(name)) {
    r.report(
      'name.invalid',
      `window name \`${name}\` is invalid: use lower-case letters, digits, - and _, starting with a letter`,
      [...at, 'name'],
    );
  }
  const time = (key: 'from' | 'to'): { iso: string; ms: number } | undefined => {
    const text = r.string(entry, key, at, false);
    if (text === undefined) return undefined;
    const t = parseTime(text);
    if (!t.ok) {
      r.report('arbitration.time', `\`${key}\`: ${t.error}`, [...at, key]);
      return undefined;
    }
    return { iso: t.value, ms: Date.parse(t.value) };
  };
  const from = time('from');
  const to = time('to');
  if (from && to && from.ms >= to.ms) {
    r.report(
      'arbitration.window',
      `window \`${name ?? '?'}\` ends (${to.iso}) before it begins (${from.iso})`,
      [...at, 'to'],
      { hint: '`from` is the first instant inside the window, `to` the first one after it' },
    );
  }
  let days: Weekday[] | undefined;
  const writtenDays = strings(r, entry, 'days', at);
  if (writtenDays !== undefined) {
    days = [];
    for (const { value, at: dayAt } of writtenDays) {
      const d = weekday(value);
      if (d === undefined) {
        r.report(
          'arbitration.day',
          `\`${value}\` is not a day: use ${listOf(WEEKDAYS)}.${didYouMean(value.toLowerCase(), WEEKDAYS)}`,
          dayAt,
        );
      } else if (!days.includes(d)) days.push(d);
    }
  }
  const hours = r.string(entry, 'hours', at, false);
  if (hours !== undefined) {
    const h = parseHours(hours);
    if (!h.ok) r.report('arbitration.hours', h.error, [...at, 'hours']);
  }
  if (
    name !== undefined &&
    from === undefined &&
    to === undefined &&
    writtenDays === undefined &&
    hours === undefined &&
    r.diagnostics.length === before
  ) {
    r.report(
      'arbitration.window',
      `window \`${name}\` has no bounds, so it would hold at every instant`,
      at,
      { hint: 'give it from and/or to (ISO times), days (mon … sun) or hours (HH:MM-HH:MM, UTC)' },
    );
  }
  if (r.diagnostics.length > before || name === undefined) return undefined;
  return {
    name,
    ...(from ? { from: from.iso } : {}),
    ...(to ? { to: to.iso } : {}),
    ...(days ? { days } : {}),
    ...(hours !== undefined ? { hours: hours.trim() } : {}),
    source: sourceOf(doc, at),
  };
}

function readWindows(r: FieldReader, value: Record<string, unknown>, doc: ParsedDocument) {
  const out: WindowDraft[] = [];
  const v = value.windows;
  if (v === undefined || v === null) return out;
  if (!Array.isArray(v)) {
    r.report('field.type', `\`windows\` must be a list of windows, got ${typeName(v)}`, [
      'windows',
    ]);
    return out;
  }
  v.forEach((entry: unknown, i) => {
    const at = ['windows', i];
    const w = readWindow(r, entry, at, doc);
    if (w) out.push({ window: w, at });
  });
  return out;
}

/** A glob that stands for resource types: `provider.type`, where either part may hold `*`. */
function typeGlobProblem(glob: string): string | undefined {
  if (parseType(glob.replace(/\*+/g, 'x')) !== undefined) return undefined;
  return `type \`${glob}\` does not look like <provider>.<resourceType> (e.g. sb.instances, sb.*, *.instances)`;
}

/** A glob that stands for field paths below the spec: dot-separated, no empty segment. */
function fieldGlobProblem(glob: string, written: string): string | undefined {
  if (glob === 'spec') {
    return '`field: spec` names the whole spec: leave `field` out to match every field';
  }
  if (/^[^.\s]+(?:\.[^.\s]+)*$/.test(glob)) return undefined;
  return `field \`${written}\` is not a field path: names separated by dots (replicas, spec.tags.team, resources.*.cpu)`;
}

/** Reads a rule's `when`; returns the conditions, and the window names it refers to. */
function readWhen(
  r: FieldReader,
  entry: Record<string, unknown>,
  at: readonly PathSegment[],
  windowRefs: { name: string; at: readonly PathSegment[] }[],
): RuleConditions {
  const when = r.mapping(entry, 'when', at);
  if (when === undefined) return {};
  const w = [...at, 'when'];
  r.unknownFields(when, WHEN_FIELDS, w, '`when`');
  const conditions: {
    -readonly [K in keyof RuleConditions]: RuleConditions[K];
  } = {};

  const actor = strings(r, when, 'actor', w);
  if (actor) conditions.actor = actor.map((a) => a.value);

  const kinds = strings(r, when, 'actorKind', w);
  if (kinds) {
    const ok: ActorKind[] = [];
    for (const { value, at: kAt } of kinds) {
      const k = checkActorKind(value);
      if (k.ok) ok.push(k.value);
      else r.report('arbitration.actor_kind', `${k.error}.${didYouMean(value, ACTOR_KINDS)}`, kAt);
    }
    conditions.actorKind = ok;
  }

  const intent = strings(r, when, 'intent', w);
  if (intent) conditions.intent = vocabulary(r, intent, 'intent');
  const motivation = strings(r, when, 'motivation', w);
  if (motivation) conditions.motivation = vocabulary(r, motivation, 'motivation');

  const ref = strings(r, when, 'ref', w);
  if (ref) conditions.ref = ref.map((x) => x.value);

  const urgency = when.urgency;
  if (urgency !== undefined && urgency !== null) {
    const uAt = [...w, 'urgency'];
    if (typeof urgency !== 'string') {
      r.report(
        'field.type',
        `\`${formatPath(uAt)}\` is a minimum: one of ${listOf(URGENCIES)}, got ${typeName(urgency)}`,
        uAt,
        { hint: 'urgency: high matches high and critical' },
      );
    } else {
      const u = checkUrgency(urgency);
      if (u.ok) conditions.urgency = u.value;
      else r.report('arbitration.urgency', `${u.error}.${didYouMean(urgency, URGENCIES)}`, uAt);
    }
  }

  const field = strings(r, when, 'field', w);
  if (field) {
    const ok: string[] = [];
    for (const { value, at: fAt } of field) {
      const path = fieldPath(value);
      const problem = fieldGlobProblem(path, value);
      if (problem === undefined) ok.push(path);
      else r.report('arbitration.field', problem, fAt);
    }
    conditions.field = ok;
  }

  const type = strings(r, when, 'type', w);
  if (type) {
    const ok: string[] = [];
    for (const { value, at: tAt } of type) {
      const problem = typeGlobProblem(value);
      if (problem === undefined) ok.push(value);
      else
        r.report('arbitration.type', problem, tAt, {
          hint: 'leave `type` out to match every type',
        });
    }
    conditions.type = ok;
  }

  const labels = readLabels(r, when, 'labels', w);
  if (labels) conditions.labels = labels;

  const window = strings(r, when, 'window', w);
  if (window) {
    conditions.window = window.map((x) => x.value);
    for (const x of window) windowRefs.push({ name: x.value, at: x.at });
  }
  return conditions;
}

function isDecision(word: string): word is DecisionKind {
  return (DECISIONS as readonly string[]).includes(word);
}

function readRule(
  r: FieldReader,
  entry: unknown,
  at: readonly PathSegment[],
  position: number,
  docName: string,
  names: Map<string, readonly PathSegment[]>,
  windowRefs: { name: string; at: readonly PathSegment[] }[],
  doc: ParsedDocument,
): ArbitrationRule | undefined {
  if (!isRecord(entry)) {
    r.report('field.type', `a rule must be a mapping with \`decide\`, got ${typeName(entry)}`, at, {
      hint: 'e.g. - { when: { motivation: incident }, decide: hold, until: ttl }',
    });
    return undefined;
  }
  const before = r.diagnostics.length;
  r.unknownFields(entry, RULE_FIELDS, at, 'a rule');
  const name = r.string(entry, 'name', at, false);
  if (name !== undefined) {
    const first = names.get(name);
    if (!LOCAL_NAME.test(name)) {
      r.report(
        'name.invalid',
        `rule name \`${name}\` is invalid: use lower-case letters, digits, - and _, starting with a letter`,
        [...at, 'name'],
      );
    } else if (first !== undefined) {
      r.report(
        'arbitration.duplicate_rule',
        `rule name \`${name}\` is already used by \`${formatPath(first)}\`; names are unique within a document`,
        [...at, 'name'],
      );
    } else names.set(name, at);
  }
  const when = readWhen(r, entry, at, windowRefs);
  let decide: DecisionKind | undefined;
  const d = r.string(entry, 'decide', at, true);
  if (d !== undefined) {
    if (isDecision(d)) decide = d;
    else {
      r.report(
        'arbitration.decision',
        `\`${d}\` is not a decision: use one of ${listOf(DECISIONS)}.${didYouMean(d, DECISIONS)}`,
        [...at, 'decide'],
      );
    }
  }
  const holdOnly = (key: 'until' | 'then') => {
    r.report(
      'arbitration.hold_only',
      `\`${key}\` belongs to a rule that decides hold; this one decides ${decide}`,
      [...at, key],
      { target: 'key', hint: `remove \`${key}\`, or decide: hold` },
    );
  };
  let until: HoldUntil | undefined;
  if (entry.until !== undefined && entry.until !== null) {
    if (decide !== undefined && decide !== 'hold') holdOnly('until');
    else if (typeof entry.until !== 'string') {
      r.report(
        'arbitration.until',
        `\`until\` must be ttl, a duration (30m, 2h) or an ISO time, got ${typeName(entry.until)}`,
        [...at, 'until'],
      );
    } else {
      const u = parseHoldUntil(entry.until);
      if (u.ok) until = u.value;
      else r.report('arbitration.until', u.error, [...at, 'until']);
    }
  }
  let then: Exclude<DecisionKind, 'hold'> | undefined;
  if (entry.then !== undefined && entry.then !== null) {
    const t = r.string(entry, 'then', at, false);
    if (decide !== undefined && decide !== 'hold') holdOnly('then');
    else if (t === 'hold') {
      r.report('arbitration.then_hold', '`then: hold` would hold for ever', [...at, 'then'], {
        hint: 'a hold ends in enforce, accept, yield or escalate; to hold longer, give a later `until`',
      });
    } else if (t !== undefined) {
      if (isDecision(t)) then = t as Exclude<DecisionKind, 'hold'>;
      else {
        const after = DECISIONS.filter((x) => x !== 'hold');
        r.report(
          'arbitration.decision',
          `\`${t}\` is not a decision: use one of ${listOf(after)}.${didYouMean(t, after)}`,
          [...at, 'then'],
        );
      }
    }
  }
  if (r.diagnostics.slice(before).some((x) => x.severity === 'error') || decide === undefined) {
    return undefined;
  }
  return {
    id: `${docName}#${name ?? position}`,
    when,
    decide,
    ...(until ? { until } : {}),
    ...(then ? { then } : {}),
    source: sourceOf(doc, at),
  };
}

/**
 * Reads a `kind: Arbitration` document: its `name`, optional `precedence` (motivation kinds, highest
 * first), optional `windows` and its `rules` (first match wins). Every problem is reported at its
 * place; what needs the other documents (duplicate names, window references, a second precedence,
 * unreachable rules) is checked by `checkArbitration`.
 */
export function readArbitrationDoc(
  doc: ParsedDocument,
  value: Record<string, unknown>,
): { draft: ArbitrationDraft; diagnostics: Diagnostic[] } {
  const r = new FieldReader(doc);
  r.unknownFields(value, FIELDS, [], 'an Arbitration document');
  let name = r.string(value, 'name', [], true);
  if (name !== undefined && !isValidName(name)) {
    r.report(
      'name.invalid',
      `Arbitration name \`${name}\` is invalid: use lower-case letters, digits, - and _, starting and ending with a letter or digit`,
      ['name'],
      { hint: 'e.g. name: scaling' },
    );
    name = undefined;
  }
  const precedence = readPrecedence(r, value);
  const windows = readWindows(r, value, doc);
  const rules: RuleDraft[] = [];
  const windowRefs: { name: string; at: readonly PathSegment[] }[] = [];
  const v = value.rules;
  if (v !== undefined && v !== null) {
    if (!Array.isArray(v)) {
      r.report('field.type', `\`rules\` must be a list of rules, got ${typeName(v)}`, ['rules'], {
        hint: 'rules:\n  - when: { motivation: incident }\n    decide: hold',
      });
    } else {
      const names = new Map<string, readonly PathSegment[]>();
      v.forEach((entry: unknown, i) => {
        const at = ['rules', i];
        const rule = readRule(r, entry, at, i + 1, name ?? '?', names, windowRefs, doc);
        if (rule) rules.push({ rule, at });
      });
    }
  }
  return {
    draft: {
      doc,
      ...(name !== undefined ? { name } : {}),
      rules,
      windows,
      ...(precedence !== undefined ? { precedence } : {}),
      windowRefs,
      source: sourceOf(doc),
    },
    diagnostics: r.diagnostics,
  };
}

/** True for a rule that decides every change it meets, so that no rule after it is ever tried. */
function endsTheList(rule: ArbitrationRule): boolean {
  // A hold without `then` gives way to the next rule once it has ended.
  return Object.keys(rule.when).length === 0 && !(rule.decide === 'hold' && !rule.then);
}

function at(d: { source: SourceLocation }): string {
  return `${d.source.file}:${d.source.line}`;
}

/**
 * The checks across Arbitration documents (in load order): names are unique, at most one sets
 * `precedence`, window names are unique and every window a rule names exists, and a rule after one
 * that matches everything is reported as never reached (a warning).
 */
export function checkArbitration(drafts: readonly ArbitrationDraft[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const byName = new Map<string, ArbitrationDraft>();
  let precedenceFrom: ArbitrationDraft | undefined;
  const windows = new Map<string, WindowDraft & { draft: ArbitrationDraft }>();
  for (const d of drafts) {
    if (d.name !== undefined) {
      const first = byName.get(d.name);
      if (first) {
        diagnostics.push(
          reportAt(
            d.doc,
            'arbitration.duplicate',
            `Arbitration \`${d.name}\` is already declared at ${at(first)}`,
            {
              path: ['name'],
              hint: 'rule ids are <document name>#<position>: give each Arbitration document its own name',
            },
          ),
        );
      } else byName.set(d.name, d);
    }
    if (d.precedence !== undefined) {
      if (precedenceFrom) {
        diagnostics.push(
          reportAt(
            d.doc,
            'arbitration.precedence_twice',
            `precedence is already set by Arbitration \`${precedenceFrom.name ?? '?'}\` at ${at(precedenceFrom)}`,
            {
              path: ['precedence'],
              target: 'key',
              hint: 'the workspace has one precedence: keep it in one document',
            },
          ),
        );
      } else precedenceFrom = d;
    }
    for (const w of d.windows) {
      const first = windows.get(w.window.name);
      if (first) {
        diagnostics.push(
          reportAt(
            d.doc,
            'arbitration.duplicate_window',
            `window \`${w.window.name}\` is already declared at ${first.draft.doc.file}:${first.window.source?.line ?? first.draft.source.line}`,
            {
              path: [...w.at, 'name'],
              hint: 'windows are shared by every Arbitration document: rename one',
            },
          ),
        );
      } else windows.set(w.window.name, { ...w, draft: d });
    }
  }
  const names = [...windows.keys()];
  for (const d of drafts) {
    for (const ref of d.windowRefs) {
      if (windows.has(ref.name)) continue;
      diagnostics.push(
        reportAt(
          d.doc,
          'arbitration.unknown_window',
          `no window is named \`${ref.name}\`; declared windows: ${listOf(names)}.${didYouMean(ref.name, names)}`,
          { path: ref.at, hint: 'declare it under `windows:` in an Arbitration document' },
        ),
      );
    }
  }
  // Rules are tried in load order across documents: after a catch-all, nothing is.
  let everything: { id: string; source: SourceLocation } | undefined;
  for (const d of drafts) {
    let first = everything === undefined ? undefined : 0;
    for (let i = 0; i < d.rules.length && everything === undefined; i++) {
      const rule = d.rules[i]!.rule;
      if (endsTheList(rule)) {
        everything = { id: rule.id, source: rule.source ?? d.source };
        first = i + 1;
      }
    }
    if (everything === undefined || first === undefined || first >= d.rules.length) continue;
    const unreachable = d.rules[first]!;
    const more = d.rules.length - first - 1;
    diagnostics.push(
      reportAt(
        d.doc,
        'arbitration.unreachable',
        `rule ${unreachable.rule.id}${more === 1 ? ' and the rule after it' : more > 1 ? ` and the ${more} rules after it` : ''} can never decide: rule ${everything.id} (${everything.source.file}:${everything.source.line}) comes before and matches every change`,
        {
          path: unreachable.at,
          severity: 'warning',
          hint: 'first match wins: put the catch-all rule last, or give it conditions',
        },
      ),
    );
  }
  return diagnostics;
}

/** The declaration of a document read without errors. */
export function arbitrationDecl(d: ArbitrationDraft): ArbitrationDecl {
  return {
    kind: 'Arbitration',
    name: d.name ?? '',
    rules: d.rules.map((x) => x.rule),
    ...(d.precedence !== undefined ? { precedence: d.precedence } : {}),
    windows: d.windows.map((x) => x.window),
    source: d.source,
  };
}
