import type { IdentityStrategy } from '../../../core/index.js';
import { formatKeyPath, nullRecord, setKey } from '../../../core/index.js';
import { conflictKey, duplicateAnswers } from './conflict-answers.js';
import type { ObjectView } from './schema-view.js';
import {
  escapeRegExp,
  hasFlag,
  hasType,
  isObject,
  isWritableScalar,
  objectView,
  successSchema,
  viewHasKeyPath,
} from './schema-view.js';

/**
 * How a type's objects are told apart, so that a create is never sent twice (docs/onboard-rest-api.md,
 * "Without x-tend-identity"): an explicit `x-tend-identity`, else the first of natural key, marker and
 * idempotency key that the document shows. A natural key is taken only where the document shows it
 * unique: a wrong one would make Tend adopt someone else's object. When unsure, no identity and a
 * reason that says what to declare.
 */

export interface IdentityInput {
  readonly name: string;
  readonly collectionPath: string;
  readonly idParam: string;
  /** The item path parameter's description, if the document gives one. */
  readonly idParamDescription: string | undefined;
  readonly read: ObjectView;
  readonly create: ObjectView;
  readonly writableFields: readonly string[];
  readonly markerField: string | undefined;
  readonly idempotencyHeader: string | undefined;
  /** Where `x-tend-identity` may be written, in order: create schema, read schema, POST. */
  readonly explicit: readonly unknown[];
  /**
   * Fields only the `oneOf`/`anyOf` branches of the create body have (see `withBranchFields`): a key
   * among them must be required by every branch, as Tend cannot make a branch require it.
   */
  readonly branchFields?: readonly string[];
  /** The POST's summary and description: a sentence there may state a field unique. */
  readonly createText?: readonly unknown[];
  /** Paths reading one object by another value than its id (`/releases/tags/{tag}`): see `lookupParams`. */
  readonly lookups?: readonly Lookup[];
  /** The create operation: its answers may say a duplicate is refused (conflict-answers.ts). */
  readonly createOperation?: unknown;
  /**
   * The path parameters above the item (the parents'): the key's scope, never its only field, even
   * where the create body repeats one.
   */
  readonly parentParams?: readonly string[];
  readonly warnings: string[];
}

export interface Identity {
  readonly identity: IdentityStrategy | null;
  readonly reason?: string;
  /** The natural key: one field, or several that identify an object together. */
  readonly naturalKeys?: readonly string[];
  readonly idempotencyKey: boolean;
  /** Why, in words (for inspect). */
  readonly why?: string;
}

/** A GET path below the collection that answers one object for a value (`tags/{tag}`). */
export interface Lookup {
  readonly path: string;
  readonly param: string;
}

/**
 * Field names that may be an object's natural key when the document shows they are unique: the item
 * path parameter names one of them (`{zone_name}`, "The name of the repository"), or its
 * description says it is unique. A `name` alone is not enough: display names repeat.
 */
export const NAME_LIKE = [
  'name',
  'slug',
  'key',
  'username',
  'login',
  'handle',
  'code',
  'identifier',
  'label',
  'alias',
];

const UNIQUE = /\bunique\b/i;
const NOT_UNIQUE =
  /\b(not|non|need\s*n[o']t|needn't|doesn't|does not|don't|do not|isn't|is not)\b[^.]{0,30}\bunique\b|\bnon-unique\b|\bnot\s+necessarily\s+unique\b/i;

/** True when a description says the value is unique (and does not say it is not). */
export function saysUnique(description: unknown): boolean {
  return (
    typeof description === 'string' && UNIQUE.test(description) && !NOT_UNIQUE.test(description)
  );
}

/**
 * A uniqueness rule stated as a constraint ("must be unique", "unique per project", "unique across
 * configs"), not a noun phrase ("the unique identifier of the snapshot" names another object's id).
 * Any field may carry such a rule; only name-like fields are read from a mere "unique" (see above).
 */
const UNIQUE_RULE =
  /\b(must|should|has to|have to|needs? to|are|is)\s+(be\s+)?(globally\s+)?unique\b|\bunique\s+(per|across|within|among|in|on|for)\b/i;

/** True when a description states a uniqueness rule (and does not say the value is not unique). */
export function statesUniqueRule(description: unknown): boolean {
  return (
    typeof description === 'string' &&
    UNIQUE_RULE.test(description) &&
    !NOT_UNIQUE.test(description)
  );
}

/** A name that is an id the platform assigns: `id`, `uuid`, `zone_id`, `nodeBalancerId`. */
export function isIdLike(name: string): boolean {
  return (
    /^(id|uuid|guid)$/i.test(name) ||
    /[_\-.](id|uuid|guid)$/i.test(name) ||
    /[a-z0-9](Id|ID|Uuid|UUID|Guid|GUID)$/.test(name) ||
    /uuid$/i.test(name)
  );
}

const lookupIndexes = new WeakMap<object, Map<string, string[]>>();

/**
 * The paths of a document by what precedes their last two segments (`/c/` for `/c/tags/{tag}`),
 * built once per document: looking up every type's lookups by scanning every path was quadratic.
 */
function lookupIndex(paths: Readonly<Record<string, unknown>>): Map<string, string[]> {
  let index = lookupIndexes.get(paths);
  if (index) return index;
  index = new Map();
  for (const path of Object.keys(paths)) {
    const trimmed = path.replace(/\/$/, '');
    const cut = trimmed.lastIndexOf('/', trimmed.lastIndexOf('/') - 1);
    if (cut < 0) continue;
    const key = trimmed.slice(0, cut + 1);
    const list = index.get(key);
    if (list) list.push(path);
    else index.set(key, [path]);
  }
  lookupIndexes.set(paths, index);
  return index;
}

/**
 * The parameters of GET paths `<collection>/<segment>/{p}` that answer one object of the same schema
 * as the item GET: the platform finds at most one object by that value, so it is unique
 * (`GET /repos/{owner}/{repo}/releases/tags/{tag}`). A list answer (an array) proves nothing.
 */
export function lookupParams(
  paths: Readonly<Record<string, unknown>>,
  collectionPath: string,
  itemPath: string,
  getItem: unknown,
): Lookup[] {
  const read = successSchema(getItem);
  if (!isObject(read) || hasType(read, 'array')) return [];
  const readFields = Object.keys(objectView(read).properties).sort().join('\n');
  const prefix = collectionPath.endsWith('/') ? collectionPath : `${collectionPath}/`;
  const out: Lookup[] = [];
  for (const path of lookupIndex(paths).get(prefix) ?? []) {
    const item = paths[path];
    if (path === itemPath) continue;
    const rest = path.slice(prefix.length).replace(/\/$/, '').split('/');
    if (rest.length !== 2 || /[{}]/.test(rest[0]!) || !/^\{[^{}]+\}$/.test(rest[1]!)) continue;
    if (!isObject(item) || !isObject(item['get'])) continue;
    const answer = successSchema(item['get']);
    if (!isObject(answer) || hasType(answer, 'array')) continue;
    const same =
      answer === read ||
      (readFields !== '' &&
        Object.keys(objectView(answer).properties).sort().join('\n') === readFields);
    if (same) out.push({ path, param: rest[1]!.slice(1, -1) });
  }
  return out;
}

/**
 * The create body as identity reads it: its own fields, plus the fields every `oneOf`/`anyOf` branch
 * has (DigitalOcean's droplet body is one of a single and a multiple create, both with `tags`). A
 * field only some branches have is left out: the branch that applies is not known statically. A
 * field is required when every branch requires it; writable unless a branch marks it read-only.
 */
export function withBranchFields(
  schema: unknown,
  create: ObjectView,
  writableFields: readonly string[],
): {
  readonly view: ObjectView;
  readonly writable: readonly string[];
  readonly branchFields: readonly string[];
} {
  const branches = isObject(schema) ? (schema['oneOf'] ?? schema['anyOf']) : undefined;
  if (!Array.isArray(branches) || branches.length === 0 || !branches.every(isObject)) {
    return { view: create, writable: writableFields, branchFields: [] };
  }
  const views = branches.map((b) => objectView(b));
  const properties = nullRecord<Record<string, unknown>>();
  for (const [name, prop] of Object.entries(create.properties)) setKey(properties, name, prop);
  const added: string[] = [];
  for (const name of Object.keys(views[0]!.properties)) {
    if (name in properties || !views.every((v) => Object.hasOwn(v.properties, name))) continue;
    const props = views.map((v) => v.properties[name]!);
    const types = new Set(props.map((p) => JSON.stringify(p['type'] ?? null)));
    if (types.size !== 1) continue; // branches disagree on its shape: not one field
    setKey(properties, name, props[0]!);
    if (!props.some((p) => hasFlag(p, 'readOnly'))) added.push(name);
  }
  if (added.length === 0) return { view: create, writable: writableFields, branchFields: [] };
  const required = [
    ...create.required,
    ...added.filter((n) => views.every((v) => v.required.includes(n))),
  ];
  return {
    view: { properties, required },
    writable: [...writableFields, ...added],
    branchFields: added,
  };
}

/** A natural key field and why it is one. */
interface Found {
  readonly field: string;
  readonly why: string;
}

/**
 * The natural key field a document shows, with the reason; or a note saying which name-like field
 * might be one (required, but not shown unique), for the "no identity" reason.
 *
 * A field the document shows unique need not be required by the document: the natural key becomes
 * required in Tend's schema, so the creator always gives it and the platform never chooses it. The
 * item path parameter's own field is taken when optional only if it is not an id (`{id}`, `{zone_id}`):
 * a platform may ignore an id it is sent and assign its own, and Tend would then not find the object.
 */
export function naturalKeyOf(input: IdentityInput): { found?: Found; note?: string } {
  const { create, idParam } = input;
  const branchOnly = new Set(input.branchFields ?? []);
  const required = (f: string) => input.writableFields.includes(f) && create.required.includes(f);
  const writableSet = new Set(
    input.writableFields.filter((f) => !branchOnly.has(f) || required(f)),
  );
  const writable = (f: string) => writableSet.has(f);
  const optional = (f: string) =>
    required(f) ? '' : ' (optional in the document; Tend requires it)';
  const field = (f: string) => `${required(f) ? 'a required field' : 'a field'} of the create body`;
  // An object addressed by a value its creator must choose is found again by that value.
  if (required(idParam)) {
    return {
      found: {
        field: idParam,
        why: `natural key ${idParam}: the item path parameter {${idParam}} is a required field of the create body`,
      },
    };
  }
  const paramDescription = input.idParamDescription ?? '';
  const describedAs = (f: string) =>
    new RegExp(`^\\s*(the\\s+)?(\\w+\\s+){0,2}${escapeRegExp(f.toLowerCase())}\\b`, 'i').test(
      paramDescription,
    );
  // In the order of NAME_LIKE, whatever their case (`Name` in Docker's documents). A parent's path
  // parameter repeated in the body is the key's scope, not a key of its own.
  const parents = new Set(input.parentParams ?? []);
  const keyable = input.writableFields.filter((f) => writable(f) && !parents.has(f));
  const candidates = NAME_LIKE.flatMap((n) => keyable.filter((f) => f.toLowerCase() === n));
  for (const f of candidates) {
    if (namedAfter(idParam, f, !required(f)) && idParam.toLowerCase() !== 'id') {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)}, and the item path parameter {${idParam}} is named after it`,
        },
      };
    }
    // An optional field only from a description that is not about an id ("The SSH key's UUID").
    if (describedAs(f) && (required(f) || !/\b(id|uuid|identifier)\b/i.test(paramDescription))) {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)}, and the item path parameter {${idParam}} is described as its ${f} ("${paramDescription.slice(0, 60)}")`,
        },
      };
    }
  }
  // The item path addresses objects by a name their creator gives (`/{realm}`, "realm name").
  if (
    writable(idParam) &&
    !isIdLike(idParam) &&
    (NAME_LIKE.includes(idParam.toLowerCase()) || describedAs('name'))
  ) {
    return {
      found: {
        field: idParam,
        why: `natural key ${idParam}: the item path parameter {${idParam}} is ${NAME_LIKE.includes(idParam.toLowerCase()) ? 'a name-like' : 'described as a name, and a'} field of the create body${optional(idParam)}`,
      },
    };
  }
  // A path reading one object by a field's value: the platform holds at most one per value.
  for (const lookup of input.lookups ?? []) {
    const f = [lookup.param, `${lookup.param}_name`, `${lookup.param}Name`].find(
      (c) => writable(c) && !isIdLike(c) && isWritableScalar(create.properties[c]),
    );
    if (f !== undefined) {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)}, and GET ${lookup.path} reads one object by it`,
        },
      };
    }
  }
  for (const f of candidates) {
    const described = [
      create.properties[f]?.['description'],
      input.read.properties[f]?.['description'],
    ];
    // A field the document requires: its description anywhere (as before). An optional one, or any
    // other field: only its first paragraph (Linode's record `name` is "Must be unique" for CNAMEs
    // only, in a later paragraph), and not unique only together with another field.
    const says = required(f)
      ? described.some(saysUnique)
      : described.some((d) => saysUnique(lead(d)) && !scopedToField(lead(d), f, keyable));
    if (says) {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)} that its description says is unique`,
        },
      };
    }
  }
  // Any scalar field whose description states a uniqueness rule ("must be unique across configs").
  for (const f of keyable) {
    if (isIdLike(f) || !isWritableScalar(create.properties[f])) continue;
    const described = [
      create.properties[f]?.['description'],
      input.read.properties[f]?.['description'],
    ];
    if (described.some((d) => statesUniqueRule(lead(d)) && !scopedToField(lead(d), f, keyable))) {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)} whose description states it is unique`,
        },
      };
    }
  }
  // A sentence of the create operation's text that starts with the field: "Username must be unique."
  const sentences = (input.createText ?? [])
    .filter((t): t is string => typeof t === 'string')
    .flatMap((t) => t.split(/(?<=[.!?])\s+|\n+/));
  for (const f of keyable) {
    if (isIdLike(f) || !isWritableScalar(create.properties[f])) continue;
    const rule = new RegExp(
      `(^|[^\\w-])${escapeRegExp(f)}s?\\s+(must|should|has to|needs to|is|are)\\s+(be\\s+)?(globally\\s+)?unique\\b`,
      'i',
    );
    const sentence = sentences.find((s) => rule.test(s) && !NOT_UNIQUE.test(s));
    if (sentence !== undefined) {
      return {
        found: {
          field: f,
          why: `natural key ${f}: ${field(f)}${optional(f)}, and POST ${input.collectionPath} says "${sentence.trim().slice(0, 60)}"`,
        },
      };
    }
  }
  // The create refuses a second object with the same value (409 "already exists").
  const conflict = conflictKey({
    create,
    keyable,
    required,
    nameLike: NAME_LIKE,
    isIdLike,
    ...duplicateAnswers(input.createOperation),
    where: `POST ${input.collectionPath}`,
  });
  if (conflict.found !== undefined) return { found: conflict.found };
  const nested = nestedNaturalKey(input, required);
  if (nested.found !== undefined) return { found: nested.found };
  if (conflict.note !== undefined) return { note: conflict.note };
  const hinted = (note: string | undefined): { note?: string } => {
    const all = [note, conflict.hint].filter((n): n is string => n !== undefined);
    return all.length === 0 ? {} : { note: all.join('; ') };
  };
  if (nested.note !== undefined) return hinted(nested.note);
  if (writable(idParam)) {
    return hinted(
      `{${idParam}} is a field of the create body but optional, so the platform might choose it; if the platform requires it, declare x-tend-identity: natural-key and x-tend-natural-key: ${idParam}`,
    );
  }
  const first = candidates.find(required);
  return hinted(
    first === undefined
      ? undefined
      : `${first} is required on create but the document does not say it is unique (a display name may repeat); if the platform refuses a second object with the same ${first}, declare x-tend-identity: natural-key and x-tend-natural-key: ${first}`,
  );
}

/**
 * A natural key one level down: the create body has a single required object field (DigitalOcean's
 * app body is `{spec: {name, …}, project_id}`) and that object a single required name-like field
 * whose description says it is unique ("Must be unique across all apps in the same account"): the
 * key is the path `spec.name`, read from the objects at the same place. A required nested name the
 * document does not call unique gives a note saying what to declare, as a top-level one does.
 */
export function nestedNaturalKey(
  input: Pick<IdentityInput, 'create' | 'read' | 'writableFields'>,
  required: (field: string) => boolean,
): { found?: Found; note?: string } {
  const holders = Object.keys(input.create.properties).filter(
    (f) =>
      required(f) &&
      hasType(input.create.properties[f], 'object') &&
      Object.keys(objectView(input.create.properties[f]).properties).length > 0,
  );
  if (holders.length !== 1) return {};
  const holder = holders[0]!;
  const inner = objectView(input.create.properties[holder]);
  const readHolder = input.read.properties[holder];
  const readInner = isObject(readHolder) ? objectView(readHolder) : undefined;
  const names = NAME_LIKE.flatMap((n) =>
    inner.required.filter((f) => f.toLowerCase() === n && isWritableScalar(inner.properties[f])),
  );
  if (names.length !== 1) return {};
  const name = names[0]!;
  const path = formatKeyPath([holder, name]);
  // Objects read without the field cannot be matched by it.
  if (readInner !== undefined && Object.keys(readInner.properties).length > 0) {
    if (!Object.hasOwn(readInner.properties, name)) {
      return {
        note: `${path} is required on create but the read object has no ${path}, so objects cannot be found by it`,
      };
    }
  }
  const described = [
    inner.properties[name]?.['description'],
    readInner?.properties[name]?.['description'],
  ];
  if (described.some(saysUnique)) {
    return {
      found: {
        field: path,
        why: `natural key ${path}: the create body's one required object ${holder} has one required name-like field, ${name}, that its description says is unique`,
      },
    };
  }
  return {
    note: `${path} is required on create but the document does not say it is unique (a display name may repeat); if the platform refuses a second object with the same ${path}, declare x-tend-identity: natural-key and x-tend-natural-key: ${path}`,
  };
}

/**
 * `{zone_name}`, `{zoneName}` or `{name}` is named after `name`. For a field the document requires,
 * any ending will do (`{domainname}`); for an optional one, the field must be a word of its own at the
 * end (`{hostname}` is not named after an optional `name`).
 */
function namedAfter(param: string, field: string, strict: boolean): boolean {
  const p = param.toLowerCase().replace(/[^a-z0-9]/g, '');
  const f = field.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (p === f) return true;
  if (!p.endsWith(f)) return false;
  if (!strict) return true;
  const cut = param.length - field.length;
  const before = param.slice(0, cut);
  return /[_\-.]$/.test(before) || (/[a-z0-9]$/.test(before) && /[A-Z]/.test(param.charAt(cut)));
}

/** The first paragraph of a description (up to a blank line or a list). */
function lead(description: unknown): string | undefined {
  return typeof description === 'string' ? description.split(/\n\s*\n|\n\s*[*-]\s/)[0] : undefined;
}

/**
 * True when the description scopes the uniqueness to another field of the object ("unique to the
 * parent device" where `device` is a field): the key is the pair, which inference does not form.
 */
function scopedToField(
  description: string | undefined,
  field: string,
  fields: readonly string[],
): boolean {
  if (description === undefined) return false;
  const scope =
    /\bunique\s+(?:to|per|within|among|in|for|on|across)\s+(?:(?:the|its|a|an|each|every|one)\s+)?(?:(?:parent|same|given|single|assigned)\s+)?([A-Za-z_]+)/gi;
  const others = new Set(fields.filter((f) => f !== field).map((f) => f.toLowerCase()));
  for (const m of description.matchAll(scope)) {
    const word = m[1]!.toLowerCase();
    if (others.has(word) || others.has(word.replace(/s$/, ''))) return true;
  }
  return false;
}

const STRATEGIES: readonly IdentityStrategy[] = ['natural-key', 'marker', 'server-id'];

/**
 * How objects of a type are told apart so that a create is never sent twice: an explicit
 * `x-tend-identity`, else the first of natural key, marker, idempotency key that the API offers.
 */
export function inferIdentity(input: IdentityInput): Identity {
  const { create, idParam, markerField, idempotencyHeader } = input;
  const hasIdempotency = idempotencyHeader !== undefined;

  const explicitValue = input.explicit
    .map((s) => (isObject(s) ? s['x-tend-identity'] : undefined))
    .find((v) => v !== undefined);
  if (explicitValue !== undefined) {
    const strategy = STRATEGIES.find((s) => s === explicitValue);
    if (strategy === undefined) {
      input.warnings.push(
        `${input.name}: x-tend-identity must be one of ${STRATEGIES.join(', ')}, not ${JSON.stringify(explicitValue)}; inferring the identity instead`,
      );
    } else if (strategy === 'natural-key') {
      const named = input.explicit
        .map((s) => (isObject(s) ? stringList(s['x-tend-natural-key']) : []))
        .find((v) => v.length > 0);
      const keys = named ?? (idParam in create.properties ? [formatKeyPath([idParam])] : []);
      const missing = keys.filter((k) => !viewHasKeyPath(create, k));
      if (keys.length === 0 || missing.length > 0) {
        return {
          identity: null,
          reason:
            keys.length === 0
              ? `x-tend-identity is natural-key, but {${idParam}} is not a field of the create body; name the key field with x-tend-natural-key`
              : `x-tend-natural-key names ${missing.join(', ')}, which the create body does not have (a field below the top level is a dotted path, spec.name; a dot inside a field name is written \\.)`,
          idempotencyKey: hasIdempotency,
        };
      }
      return {
        identity: 'natural-key',
        naturalKeys: keys,
        idempotencyKey: hasIdempotency,
        why: `natural key ${keys.join(', ')}: declared with x-tend-identity`,
      };
    } else if (strategy === 'marker') {
      if (markerField === undefined) {
        return {
          identity: null,
          reason:
            'x-tend-identity is marker, but the create body has no place for the marker (a tags or labels map or list, a description or comment text); name one with x-tend-marker',
          idempotencyKey: hasIdempotency,
        };
      }
      return {
        identity: 'marker',
        idempotencyKey: hasIdempotency,
        why: `marker in ${markerField}: declared with x-tend-identity`,
      };
    } else {
      // The annotation asserts that the platform honours an idempotency key even if undeclared.
      return {
        identity: 'server-id',
        idempotencyKey: true,
        why: 'server-assigned id, creates made safe by an Idempotency-Key: declared with x-tend-identity',
      };
    }
  }

  const natural = naturalKeyOf(input);
  if (natural.found !== undefined) {
    return {
      identity: 'natural-key',
      // A top-level field by its own name, escaped as a key path (`a.b` → `a\.b`); a nested one is a path.
      naturalKeys: [
        Object.hasOwn(create.properties, natural.found.field)
          ? formatKeyPath([natural.found.field])
          : natural.found.field,
      ],
      idempotencyKey: hasIdempotency,
      why: natural.found.why,
    };
  }
  // A marker is preferred over an idempotency key: a marked object can be looked up after a crash.
  if (markerField !== undefined) {
    return {
      identity: 'marker',
      idempotencyKey: hasIdempotency,
      why: `marker: Tend's marker goes in ${markerField}, found again by listing after a crash`,
    };
  }
  if (hasIdempotency) {
    return {
      identity: 'server-id',
      idempotencyKey: true,
      why: `server-assigned id: POST ${input.collectionPath} takes an Idempotency-Key, so a retried create is not a second object`,
    };
  }
  const reason = `no natural key ({${idParam}} is not a required writable field of the create body${natural.note !== undefined ? `; ${natural.note}` : ''}), no place for a marker (a tags or labels map or list, a description or comment text; name another with x-tend-marker), and no Idempotency-Key header on POST ${input.collectionPath}; declare x-tend-identity in an overlay`;
  return { identity: null, reason, idempotencyKey: false, why: `none: ${reason}` };
}

/**
 * The field holding an object's id in what the platform answers: the one decided before the read
 * is looked at (a singleton's is the key it is read with, an item key's its last part, else
 * `x-tend-id-field` or the key field of an object created at its own address), else the item path
 * parameter's name when the read has that field, else `id` when it has that, else a natural key of
 * one field, else the parameter's name.
 */
export function idFieldOf(input: {
  readonly idParam: string;
  readonly read: ObjectView;
  readonly naturalKeys: readonly string[] | undefined;
  readonly decided: string | undefined;
}): string {
  const { idParam, read, naturalKeys } = input;
  return (
    input.decided ??
    (idParam in read.properties
      ? idParam
      : 'id' in read.properties
        ? 'id'
        : naturalKeys !== undefined && naturalKeys.length === 1
          ? naturalKeys[0]!
          : idParam)
  );
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
