import { isIPv6 } from 'node:net';
import { canonicalIp } from '../fields/dns-values.js';
import { DUPLICATE } from '../fields/conflict-answers.js';

// Deciding what the platform showed, from what the probe sent and what came back. Pure: every
// function here takes the values and answers and returns the fact with its evidence; the requests
// are made by the app (src/app/probe.ts).

/** A platform's answer to one request, as evidence: its status and its own words. */
export interface ProbeAnswer {
  /** `POST /servers/localhost/zones`. */
  readonly request: string;
  readonly status: number;
  /** The platform's message (or code), verbatim and cut short; absent when it said nothing. */
  readonly message?: string;
}

/** One thing the probe learned about a type, with the evidence it rests on. */
export type ProbeFact =
  | {
      readonly kind: 'identity';
      readonly type: string;
      readonly field: string;
      /** True: a second object with the same value was refused (a natural key). */
      readonly unique: boolean;
      readonly evidence: string;
    }
  | {
      readonly kind: 'marker';
      readonly type: string;
      readonly field: string;
      readonly markerKind: MarkerPlaceKind;
      /** True: the marker came back as written. */
      readonly kept: boolean;
      readonly evidence: string;
    }
  | {
      readonly kind: 'field';
      readonly type: string;
      readonly field: string;
      readonly outcome: FieldOutcome;
      readonly evidence: string;
    }
  | {
      readonly kind: 'normalize';
      readonly type: string;
      /** `name`, or a nested path such as `records[].content`. */
      readonly path: string;
      readonly ops: readonly NormalizeStep[];
      readonly evidence: string;
    }
  | {
      readonly kind: 'default';
      readonly type: string;
      readonly path: string;
      readonly value: unknown;
      readonly evidence: string;
    }
  | {
      readonly kind: 'write-only';
      readonly type: string;
      readonly field: string;
      readonly evidence: string;
    }
  | {
      readonly kind: 'consistent-reads';
      readonly type: string;
      /** True: the new object was in the list read right after its create. */
      readonly listedAtOnce: boolean;
      readonly evidence: string;
    };

/** Where a marker may go: a map of strings, a list of strings, or a text. */
export type MarkerPlaceKind = 'map' | 'list' | 'text';

/** What a change of one field in place came to. */
export type FieldOutcome = 'updatable' | 'refused' | 'invalid' | 'ignored' | 'changed-otherwise';

/** The normalisations the probe can name (the `x-tend-normalize` steps of the same names). */
export type NormalizeStep = 'lowercase' | 'uppercase' | 'trailing-dot' | 'no-trailing-dot' | 'ip';

const MAX_MESSAGE = 160;

/** An answer as the evidence quotes it: `409 "Conflict: zone exists"`, or the status alone. */
export function quoteAnswer(answer: Pick<ProbeAnswer, 'status' | 'message'>): string {
  return answer.message !== undefined
    ? `${answer.status} ${JSON.stringify(oneLine(answer.message))}`
    : `${answer.status}`;
}

/** Text fit for one line of evidence: no control characters, at most 160 characters. */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE)}…` : flat;
}

/** What the probe saw of an accepted second create: the object it answered and the list after it. */
export interface DuplicateAnswered {
  /** The id of the object the second create answered equals the first object's id. */
  readonly sameId: boolean;
  /** How many objects the list showed with that value right after (the first one included). */
  readonly listed: number;
}

/**
 * The identity fact from the answer to a second create with the same value of `field`: a 409, or
 * any refusal whose words say the object exists (Podman answers a duplicate network with a 500
 * "network already exists"), means it is a natural key; so does a create that answers with the
 * object that exists (`answered.sameId`, and the list holds one object with that value: Podman's
 * volumes): the field is the identity and the create idempotent. An accepted create that made a
 * second object (another id, or a second entry in the list) means the field is not unique. Any other
 * refusal decides nothing (undefined): the platform may have refused the copy for another reason.
 */
export function identityFromDuplicate(
  type: string,
  field: string,
  answer: ProbeAnswer,
  answered?: DuplicateAnswered,
): ProbeFact | undefined {
  const what = `second ${answer.request} with the same ${field} → ${quoteAnswer(answer)}`;
  if (answer.status >= 200 && answer.status < 300) {
    if (answered?.sameId === true && answered.listed <= 1) {
      return {
        kind: 'identity',
        type,
        field,
        unique: true,
        evidence: `${what} with the object that exists, and the list still shows one: ${field} is the identity, the create idempotent (no second object was made)`,
      };
    }
    const seen =
      answered?.sameId === true
        ? ` with the first object's id, but the list shows ${answered.listed} objects with that ${field}`
        : '';
    return {
      kind: 'identity',
      type,
      field,
      unique: false,
      evidence: `${what}${seen}: accepted, so ${field} is not unique (the copy was removed)`,
    };
  }
  if (answer.status === 409 || (answer.message !== undefined && DUPLICATE.test(answer.message))) {
    return { kind: 'identity', type, field, unique: true, evidence: what };
  }
  return undefined;
}

/**
 * Whether a marker written into a place was kept, from the item read and (when the probe looked)
 * the list: kept only when both show it, since the list is where Tend finds its objects again
 * (Podman keeps a secret's `Labels` in the read and lists them as `null`).
 */
export function markerFact(input: {
  readonly type: string;
  readonly field: string;
  readonly kind: MarkerPlaceKind;
  readonly run: string;
  readonly wrote: unknown;
  /** The field as the item read answered it, with the request (`GET /secrets/{id}`). */
  readonly read: { readonly at: string; readonly value: unknown };
  readonly listed?: { readonly at: string; readonly value: unknown };
}): ProbeFact {
  const wrote = `${input.field} written ${JSON.stringify(input.wrote)} on create`;
  const inRead = markerKept(input.kind, input.read.value, input.run);
  const inList =
    input.listed === undefined || markerKept(input.kind, input.listed.value, input.run);
  const evidence = !inRead
    ? `${wrote}, ${input.read.at} answered ${JSON.stringify(input.read.value ?? null)}`
    : !inList
      ? `${wrote}, read back unchanged by ${input.read.at}, but ${input.listed.at} listed ${JSON.stringify(input.listed.value ?? null)}: not where Tend finds its objects`
      : `${wrote}, read back unchanged${input.listed !== undefined ? ' and listed' : ''}`;
  return {
    kind: 'marker',
    type: input.type,
    field: input.field,
    markerKind: input.kind,
    kept: inRead && inList,
    evidence,
  };
}

/** Whether a value holds the marker of run `run` as written into a place of that kind. */
export function markerKept(kind: MarkerPlaceKind, got: unknown, run: string): boolean {
  if (kind === 'map')
    return (
      typeof got === 'object' &&
      got !== null &&
      !Array.isArray(got) &&
      (got as Record<string, unknown>)['tend.probe'] === run
    );
  if (kind === 'list') return Array.isArray(got) && got.includes(`tend:probe=${run}`);
  return typeof got === 'string' && got.includes(run);
}

/** The words of a refusal of the value itself (not of changing it): the probe's value was wrong. */
const INVALID_VALUE =
  /\b(unknown|invalid|not\s+(a\s+)?valid|must\s+(match|be\s+one\s+of)|malformed|unsupported|not\s+supported|bad)\b/i;

/** The words of a refused change ("Cannot change name of feature flag"): never a wrong value. */
const CHANGE_REFUSED =
  /\b(cannot|can't|can\s+not|not\s+allowed\s+to|may\s+not|unable\s+to)\s+(be\s+)?(chang|updat|modif|renam|edit)/i;

/**
 * What a change of one field in place came to: refused (the update failed, and not because the new
 * value itself was invalid or the platform failed: `invalid` then, which decides nothing), accepted and read back as sent
 * (updatable; a normalised spelling of it counts), read back unchanged (silently ignored:
 * create-only), or something else.
 */
export function fieldOutcome(input: {
  readonly before: unknown;
  readonly sent: unknown;
  readonly after: unknown;
  readonly refusal?: ProbeAnswer;
}): FieldOutcome {
  if (input.refusal !== undefined) {
    const said = input.refusal.message ?? '';
    if (CHANGE_REFUSED.test(said)) return 'refused';
    // A failure of the platform says nothing of the field; nor does a value refused as wrong.
    if (input.refusal.status >= 500) return 'invalid';
    return INVALID_VALUE.test(said) && !DUPLICATE.test(said) ? 'invalid' : 'refused';
  }
  if (sameValue(input.sent, input.after)) return 'updatable';
  if (sameValue(input.before, input.after)) return 'ignored';
  return 'changed-otherwise';
}

/** Equal as JSON, or strings equal after a normalisation the probe can name. */
function sameValue(a: unknown, b: unknown): boolean {
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  return typeof a === 'string' && typeof b === 'string' && normalisationOf(a, b) !== undefined;
}

/**
 * The steps that turn `sent` into `read`: `[]` when equal, the named steps when they explain the
 * change (case, a trailing dot added or removed, an IP address in its canonical text), undefined
 * when the platform changed the value some other way.
 */
export function normalisationOf(sent: string, read: string): NormalizeStep[] | undefined {
  if (sent === read) return [];
  if (isIPv6(sent) && canonicalIp(sent) === read) return ['ip'];
  const cases: [NormalizeStep[], (s: string) => string][] = [
    [['lowercase'], (s) => s.toLowerCase()],
    [['uppercase'], (s) => s.toUpperCase()],
    [['trailing-dot'], (s) => `${s}.`],
    [['no-trailing-dot'], (s) => s.replace(/\.$/, '')],
    [['lowercase', 'trailing-dot'], (s) => `${s.toLowerCase()}.`],
    [['lowercase', 'no-trailing-dot'], (s) => s.toLowerCase().replace(/\.$/, '')],
    [['uppercase', 'trailing-dot'], (s) => `${s.toUpperCase()}.`],
  ];
  for (const [steps, apply] of cases) if (apply(sent) === read) return steps;
  return undefined;
}

/** One difference between what was sent and what was read back, at a path. */
export type SentVsRead =
  | {
      readonly kind: 'changed';
      readonly path: string;
      readonly sent: string;
      readonly read: string;
    }
  | { readonly kind: 'missing'; readonly path: string; readonly sent: unknown }
  | { readonly kind: 'filled'; readonly path: string; readonly read: unknown };

/**
 * Compares a sent body with the object read back, field by field: strings that came back
 * different, top-level fields that did not come back at all (write-only candidates), and fields of
 * nested objects the probe left out that came back with a value (defaults the platform fills in).
 * Arrays are compared item by item in order; top-level fields the probe did not send are not
 * reported (the platform's own fields: ids, serials, timestamps).
 */
export function compareSentRead(
  sent: Readonly<Record<string, unknown>>,
  read: Readonly<Record<string, unknown>>,
): SentVsRead[] {
  const out: SentVsRead[] = [];
  for (const [k, v] of Object.entries(sent)) {
    if (!Object.hasOwn(read, k) || read[k] === null) {
      if (v !== null && v !== undefined) out.push({ kind: 'missing', path: k, sent: v });
      continue;
    }
    walk(k, v, read[k], out);
  }
  return out;
}

function walk(path: string, sent: unknown, read: unknown, out: SentVsRead[]): void {
  if (typeof sent === 'string' && typeof read === 'string') {
    if (sent !== read) out.push({ kind: 'changed', path, sent, read });
    return;
  }
  if (Array.isArray(sent) && Array.isArray(read)) {
    sent.forEach((s, i) => {
      if (i < read.length) walk(`${path}[]`, s, read[i], out);
    });
    return;
  }
  if (isRecord(sent) && isRecord(read)) {
    for (const [k, v] of Object.entries(sent)) walk(`${path}.${k}`, v, read[k], out);
    // Only inside an object the probe wrote: a field it left out that came back is a default.
    if (path.includes('[]')) {
      for (const [k, v] of Object.entries(read)) {
        if (!Object.hasOwn(sent, k) && v !== null && typeof v !== 'object') {
          out.push({ kind: 'filled', path: `${path}.${k}`, read: v });
        }
      }
    }
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The spelling the probe sends to see what the platform changes: mixed case for a name, and
 * (unless `keepDot`) no final dot for a dotted name that had one; an IPv6 address written out in
 * upper case with its zeros. Undefined when the probe has no other spelling of the value.
 */
export function probeSpelling(value: string, isName: boolean, keepDot = false): string | undefined {
  if (isIPv6(value) && !value.includes('%')) {
    const expanded = expandIpv6(canonicalIp(value));
    return expanded === value ? undefined : expanded.toUpperCase();
  }
  if (!isName) return undefined;
  const mixed = value.replace(/^([a-z])/, (c) => c.toUpperCase());
  const undotted =
    !keepDot && value.includes('.') && mixed.endsWith('.') ? mixed.slice(0, -1) : mixed;
  return undotted === value ? undefined : undotted;
}

/** An IPv6 address with every group written, `::` expanded (`2001:db8::1` → `2001:db8:0:0:0:0:0:1`). */
export function expandIpv6(address: string): string {
  if (address.includes('.')) return address; // IPv4-mapped: left as it is
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => g.replace(/^0+(?=.)/, '')).join(':');
}

/**
 * A different value of the same kind, for changing one field in place: another enum value, the
 * boolean flipped, a number one higher (one lower at the schema's maximum), a string with `-b`
 * (before a dotted name's first dot), another IPv4 block or address; undefined when the probe has none (arrays, objects, a
 * one-value enum).
 */
export function changedValue(value: unknown, schema: Readonly<Record<string, unknown>>): unknown {
  const choices = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
  if (choices !== undefined)
    return choices.find((c) => JSON.stringify(c) !== JSON.stringify(value));
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') {
    const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
    return max !== undefined && value + 1 > max ? value - 1 : value + 1;
  }
  if (typeof value === 'string') {
    const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(\/\d+)?$/.exec(value);
    // Another block of the same size (`10.0.0.0/16` → `10.1.0.0/16`), another host address.
    if (v4 !== null) {
      const [, a, b, c, d, bits = ''] = v4;
      return bits !== ''
        ? `${a}.${(Number(b) + 1) % 256}.${c}.${d}${bits}`
        : `${a}.${b}.${c}.${(Number(d) % 254) + 1}`;
    }
    if (value === '' || isIPv6(value)) return undefined;
    const dot = value.indexOf('.');
    return dot > 0 ? `${value.slice(0, dot)}-b${value.slice(dot)}` : `${value}-b`;
  }
  return undefined;
}

/**
 * The probe's name for an object of run `run`, shaped like the example's: a dotted name keeps its
 * domain, its first label replaced when it has three or more (`www.example.org.` →
 * `tend-probe-1a2b.example.org.`), else the probe's label put in front (`example.org.` →
 * `tend-probe-1a2b.example.org.`).
 */
export function probeName(run: string, example: unknown): string {
  const label = `${PROBE_PREFIX}${run}`;
  if (typeof example !== 'string' || !example.includes('.')) return label;
  const labels = example.split('.').filter((l) => l !== '');
  if (labels.length === 0) return label;
  return labels.length >= 3
    ? `${label}${example.slice(example.indexOf('.'))}`
    : `${label}.${example}`;
}

/** The start of every probe object's name: what a later run looks for to remove leftovers. */
export const PROBE_PREFIX = 'tend-probe-';

/** True when a value names an object some probe made (any run). */
export function isProbeName(value: unknown): boolean {
  return typeof value === 'string' && value.toLowerCase().startsWith(PROBE_PREFIX);
}
