import { hasFlag, isObject } from './schema-view.js';

/**
 * What field-level annotations say about a property, whoever wrote them: Tend's own `x-tend-*`
 * vocabulary (usually added by an overlay) and the annotations other tools already put in published
 * documents (Terraform, Speakeasy, Azure, Google). Pure readers over one property schema.
 */

/** Annotations meaning "changing this field requires a new object". */
export const CREATE_ONLY_ANNOTATIONS = [
  'x-tend-immutable',
  'x-immutable',
  'x-terraform-force-new',
  'x-terraform-immutable',
  'x-speakeasy-param-force-new',
] as const;

/** Annotations marking a field as secret (besides `writeOnly` with `format: password`). */
export const SENSITIVE_ANNOTATIONS = ['x-tend-sensitive', 'x-sensitive', 'x-ms-secret'] as const;

/** The normalisations `x-tend-normalize` offers. */
export const NORMALIZE_OPS = [
  'lowercase',
  'uppercase',
  'trailing-dot',
  'no-trailing-dot',
  'sort',
  // A time at or before now compares as now (instants.ts).
  'past-is-now',
  'ip',
] as const;

/** One normalisation step. */
export type NormalizeOp = (typeof NORMALIZE_OPS)[number];

/** Every `x-tend-*` key Tend reads, wherever it may stand; any other `x-tend-*` key is a warning. */
export const TEND_EXTENSIONS = [
  'x-tend-lifecycle',
  'x-tend-audit',
  // The API's reads see its writes at once: no visibility window (docs/decisions/0034).
  'x-tend-consistent-reads',
  'x-tend-parent-values',
  'x-tend-type',
  'x-tend-ignore',
  'x-tend-embedded',
  'x-tend-identity',
  'x-tend-natural-key',
  'x-tend-absent-when-empty',
  'x-tend-partial-update',
  'x-tend-immutable',
  'x-tend-output-only',
  'x-tend-server-owned',
  'x-tend-sensitive',
  'x-tend-write-only',
  'x-tend-normalize',
  'x-tend-import-exclude',
  'x-tend-version-field',
  // Where objects carry the marker, when they are absent, where their id is (issue 12, alertmanager).
  'x-tend-marker',
  'x-tend-absent-when',
  'x-tend-id-field',
  'x-tend-key-fields',
  // An operation's path parameters that always take one value (Discourse's users list, issue 12).
  'x-tend-path-values',
  'x-tend-envelope',
  'x-tend-pagination',
  'x-tend-op',
  // Creates whose fields travel in the query string or whose body is an array (create-query.ts).
  'x-tend-query-fields',
  'x-tend-body-field',
  // Declared by request-envelope.ts; missing here before, so declaring it gave a false warning.
  'x-tend-request-envelope',
] as const;

/** Strings of a string-or-list annotation value. */
function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The value of an annotation on a property or on one of its `allOf` members. */
function annotation(prop: unknown, key: string): unknown {
  if (!isObject(prop)) return undefined;
  if (prop[key] !== undefined) return prop[key];
  const allOf = prop['allOf'];
  if (!Array.isArray(allOf)) return undefined;
  for (const m of allOf) if (isObject(m) && m[key] !== undefined) return m[key];
  return undefined;
}

/** Google's field behaviours (`x-google-field-behavior` or `x-field-behavior`), upper-cased. */
function googleBehaviours(prop: unknown): string[] {
  return [
    ...stringList(annotation(prop, 'x-google-field-behavior')),
    ...stringList(annotation(prop, 'x-field-behavior')),
  ].map((b) => b.toUpperCase());
}

/** Azure's `x-ms-mutability` list (`create`, `read`, `update`), lower-cased; undefined when absent. */
function msMutability(prop: unknown): string[] | undefined {
  const v = annotation(prop, 'x-ms-mutability');
  return v === undefined ? undefined : stringList(v).map((m) => m.toLowerCase());
}

function description(prop: unknown): string {
  const d = isObject(prop) ? prop['description'] : undefined;
  return typeof d === 'string' ? d : '';
}

/**
 * True when the field cannot change without replacing the object: one of CREATE_ONLY_ANNOTATIONS,
 * `x-ms-mutability` that allows create but not update, Google's IMMUTABLE field behaviour, or a
 * Google-style description (`Immutable. …`, or the word IMMUTABLE in capitals).
 */
export function isCreateOnly(prop: unknown): boolean {
  if (CREATE_ONLY_ANNOTATIONS.some((a) => hasFlag(prop, a))) return true;
  const ms = msMutability(prop);
  if (ms !== undefined && ms.includes('create') && !ms.includes('update')) return true;
  if (googleBehaviours(prop).includes('IMMUTABLE')) return true;
  const d = description(prop);
  return /^\s*Immutable\./.test(d) || /\bIMMUTABLE\b/.test(d);
}

/**
 * True when the platform sets the field and a client never writes it: `readOnly`, `x-tend-output-only`,
 * `x-tend-server-owned`, `x-ms-mutability` with neither create nor update, Google's OUTPUT_ONLY, or a
 * Google-style description starting `Output only.`.
 */
export function isOutputOnly(prop: unknown): boolean {
  if (hasFlag(prop, 'readOnly') || hasFlag(prop, 'x-tend-output-only')) return true;
  if (isServerOwned(prop)) return true;
  const ms = msMutability(prop);
  if (ms !== undefined && ms.length > 0 && !ms.includes('create') && !ms.includes('update')) {
    return true;
  }
  if (googleBehaviours(prop).includes('OUTPUT_ONLY')) return true;
  return /^\s*Output only\./.test(description(prop));
}

/** True for a field the platform changes on its own (serials, counters): never compared, never sent. */
export function isServerOwned(prop: unknown): boolean {
  return hasFlag(prop, 'x-tend-server-owned');
}

/** True for a secret: `writeOnly` with `format: password`, or one of SENSITIVE_ANNOTATIONS. */
export function isSensitive(prop: unknown): boolean {
  if (!isObject(prop)) return false;
  return (
    (hasFlag(prop, 'writeOnly') && prop['format'] === 'password') ||
    SENSITIVE_ANNOTATIONS.some((a) => hasFlag(prop, a))
  );
}

/** True for a field sent on create that the platform never reads back (not a secret): never compared. */
export function isWriteOnly(prop: unknown): boolean {
  return (hasFlag(prop, 'writeOnly') || hasFlag(prop, 'x-tend-write-only')) && !isSensitive(prop);
}

/**
 * The normalisations declared on a schema with `x-tend-normalize` (a name or a list), and the names
 * it does not know (reported as warnings by the caller). Keyed entries (objects, see
 * `keyedNormalizers`) are not names: a malformed one is reported here too, described.
 */
export function normalizeOps(schema: unknown): { ops: NormalizeOp[]; unknown: string[] } {
  const declared = stringList(annotation(schema, 'x-tend-normalize'));
  const ops: NormalizeOp[] = [];
  const unknown: string[] = [];
  for (const d of declared) {
    const op = NORMALIZE_OPS.find((o) => o === d);
    if (op === undefined) unknown.push(d);
    else if (!ops.includes(op)) ops.push(op);
  }
  for (const p of keyedNormalizers(schema).problems) unknown.push(p);
  return { ops, unknown };
}

/** Value formats a keyed normalisation may name (`format:`), parameterised by the key's value. */
export const KEYED_FORMATS = ['dns-rdata'] as const;

/** A format of a keyed normalisation. */
export type KeyedFormat = (typeof KEYED_FORMATS)[number];

/**
 * A normalisation chosen by the value of a sibling field: `{by: type, at: content, format: dns-rdata}`
 * on an rrset's `records` normalises each record's `content` as DNS data of the rrset's `type`;
 * `{by: kind, cases: {ipv4: [ip], name: [lowercase]}}` applies the string steps of the case the
 * sibling's value names. `at` is a dotted path below the value (below each item of an array).
 */
export interface KeyedNormalizer {
  /** The field next to the annotated one (in the same object) whose value is the key. */
  readonly by: string;
  /** Where the strings are, below the value or each of its items; empty for the value itself. */
  readonly at: readonly string[];
  readonly format?: KeyedFormat;
  /** The string steps per value of the key (a value not listed: no step). */
  readonly cases?: ReadonlyMap<string, readonly NormalizeOp[]>;
}

/** Steps a keyed case may take: those of one string (not `sort`; not `past-is-now`, which needs the clock). */
const STRING_STEP = (o: NormalizeOp) => o !== 'sort' && o !== 'past-is-now';

/**
 * The keyed entries (objects) of a schema's `x-tend-normalize`, and a description of each malformed
 * one (left out). An entry is `{by, at?, format}` or `{by, at?, cases: {<value>: [steps]}}`.
 */
export function keyedNormalizers(schema: unknown): {
  entries: KeyedNormalizer[];
  problems: string[];
} {
  const raw = annotation(schema, 'x-tend-normalize');
  const list: unknown[] = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  const entries: KeyedNormalizer[] = [];
  const problems: string[] = [];
  const shape = `{by: <sibling field>, at?: <dotted path>, format: ${KEYED_FORMATS.join('|')}} or {by, at?, cases: {<value>: [steps]}}`;
  for (const e of list) {
    if (typeof e === 'string') continue;
    if (!isObject(e)) {
      problems.push(`${JSON.stringify(e) ?? String(e)} (an entry is a step name or ${shape})`);
      continue;
    }
    const by = e['by'];
    const at = e['at'];
    const format = e['format'];
    const cases = e['cases'];
    const text = JSON.stringify(e);
    const bad = (why: string) => problems.push(`${text} (${why}; write ${shape})`);
    if (typeof by !== 'string' || by === '') {
      bad('by must name a field');
      continue;
    }
    if (at !== undefined && (typeof at !== 'string' || at === '')) {
      bad('at must be a dotted path');
      continue;
    }
    const known = KEYED_FORMATS.find((f) => f === format);
    if ((format === undefined) === (cases === undefined)) {
      bad('give format or cases, one of them');
      continue;
    }
    if (format !== undefined && known === undefined) {
      bad(`format must be one of ${KEYED_FORMATS.join(', ')}`);
      continue;
    }
    let steps: Map<string, NormalizeOp[]> | undefined;
    if (cases !== undefined) {
      if (!isObject(cases)) {
        bad('cases must map values to lists of steps');
        continue;
      }
      steps = new Map();
      let ok = true;
      for (const [k, v] of Object.entries(cases)) {
        const names = stringList(v);
        const ops = names.map((n) => NORMALIZE_OPS.find((o) => o === n));
        if (ops.some((o) => o === undefined || !STRING_STEP(o)) || names.length === 0) {
          bad(
            `cases.${k} must list string steps (${NORMALIZE_OPS.filter(STRING_STEP).join(', ')})`,
          );
          ok = false;
          break;
        }
        steps.set(k, ops as NormalizeOp[]);
      }
      if (!ok) continue;
    }
    entries.push({
      by,
      at: typeof at === 'string' ? at.split('.') : [],
      ...(known !== undefined ? { format: known } : {}),
      ...(steps !== undefined ? { cases: steps } : {}),
    });
  }
  return { entries, problems };
}

/**
 * Finds `x-tend-*` keys Tend does not know anywhere in a document (typos in an overlay are otherwise
 * silent). Cycle-safe; reports each unknown key once with the first place it was seen.
 */
export function unknownTendExtensions(root: unknown): string[] {
  const known = new Set<string>(TEND_EXTENSIONS);
  const found = new Map<string, string>();
  const seen = new Set<unknown>();
  const walk = (value: unknown, at: string, depth: number): void => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 64) return;
    seen.add(value);
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${at}/${i}`, depth + 1));
      return;
    }
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k.startsWith('x-tend-') && !known.has(k) && !found.has(k)) found.set(k, at);
      // The value of an extension is data, not document structure: do not look for keys in it.
      if (!k.startsWith('x-'))
        walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
    }
  };
  walk(root, '#', 0);
  return [...found].map(
    ([k, at]) =>
      `unknown extension ${k} (at ${at}); Tend reads ${TEND_EXTENSIONS.join(', ')} — see docs/onboard-rest-api.md`,
  );
}

/** A value an `x-tend-import-exclude` rule compares a field with. */
export type ImportExcludeValue = string | number | boolean;

/**
 * One `x-tend-import-exclude` rule of a type: objects whose top-level `field` holds one of `values`
 * (as the platform reports it) belong to the platform, and `tend import` leaves them out.
 */
export interface ImportExclusion {
  readonly field: string;
  readonly values: readonly ImportExcludeValue[];
  readonly reason?: string;
}

function isExcludeValue(v: unknown): v is ImportExcludeValue {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/**
 * Reads an `x-tend-import-exclude` value (one rule `{field, values, reason?}` or a list of them).
 * Malformed rules are left out, each with a warning naming `where` and what to write instead.
 */
export function importExclusions(
  value: unknown,
  where: string,
): { rules: ImportExclusion[]; warnings: string[] } {
  if (value === undefined) return { rules: [], warnings: [] };
  const rules: ImportExclusion[] = [];
  const warnings: string[] = [];
  const list: unknown[] = Array.isArray(value) ? value : [value];
  list.forEach((r, i) => {
    const at = Array.isArray(value)
      ? `${where}: x-tend-import-exclude[${i}]`
      : `${where}: x-tend-import-exclude`;
    const field = isObject(r) ? r['field'] : undefined;
    const raw = isObject(r) ? r['values'] : undefined;
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    const reason = isObject(r) ? r['reason'] : undefined;
    if (
      typeof field !== 'string' ||
      field === '' ||
      values.length === 0 ||
      !values.every(isExcludeValue) ||
      (reason !== undefined && typeof reason !== 'string')
    ) {
      warnings.push(
        `${at} must be {field, values, reason?}: a field name, the values (strings, numbers or booleans) that mark an object the platform owns, and why; ignored`,
      );
      return;
    }
    rules.push({
      field,
      values,
      ...(reason !== undefined && reason.trim() !== '' ? { reason } : {}),
    });
  });
  return { rules, warnings };
}
