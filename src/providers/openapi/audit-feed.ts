// The platform's audit feed (`x-tend-audit`) as declared in an overlay: where it is, how to ask it
// for what is new, and how its entries read as Tend's ObservedChange. A feed in Tend's own shape
// (`{entries: [{cursor, time, actor, action, type, id, before, after, …}], cursor}`, with `after` and
// `wait` query parameters) needs only a path; an event log of another shape (Unleash's
// `{events: [{id, type: "feature-strategy-update", createdBy, createdAt, data, preData, …}]}`) is
// mapped declaratively — which fields hold the cursor, time, actor and the object before and after,
// and which event kinds are changes of which type, with which action, on which object id.
import type { ChangesPage, ObservedChange } from '../../core/index.js';
import { FORBIDDEN_KEYS, checkActorKind } from '../../core/index.js';
import { isObject } from './fields/schema-view.js';

/** The fields of Tend's view of an entry that a declaration can say where to find. */
export const ENTRY_FIELDS = [
  'cursor',
  'time',
  'actor',
  'actorKind',
  'intent',
  'motivation',
  'action',
  'type',
  'id',
  'before',
  'after',
] as const;

/** One of `ENTRY_FIELDS`. */
export type EntryField = (typeof ENTRY_FIELDS)[number];

/** A dotted path into a JSON value, split (`data.id` → `['data', 'id']`). */
export type FieldPath = readonly string[];

/** What one kind of event means to Tend. */
export interface EventMapping {
  /** The resource type the event is about (a type of this provider). */
  readonly type: string;
  readonly action: 'create' | 'update' | 'delete';
  /**
   * Where the object id's parts are in the entry: one part is the id as it is; several are each
   * URI-encoded and joined by `/`, like the ids of nested objects (parent ids first).
   */
  readonly id: readonly FieldPath[];
}

/** A parsed `x-tend-audit` declaration. */
export interface AuditFeed {
  /** The GET path of the feed. */
  readonly path: string;
  /** Where the array of entries is in the answer. */
  readonly entries: FieldPath;
  /**
   * The query parameter carrying the cursor Tend read up to; undefined when the feed takes none
   * (Tend then reads the latest entries and keeps those whose cursor is above its own).
   */
  readonly cursorParam?: string;
  /** The query parameter asking the feed to wait (long poll, ms); undefined: Tend polls instead. */
  readonly waitParam?: string;
  /** Per field of Tend's view, the places in an entry to look, first found wins. */
  readonly fields: Readonly<Record<EntryField, readonly FieldPath[]>>;
  /** Where an entry says what kind of event it is, when the declaration maps events. */
  readonly event?: FieldPath;
  /** Event kinds that are changes of managed types; entries of other kinds are skipped. */
  readonly events?: ReadonlyMap<string, EventMapping>;
}

const KEYS = ['path', 'entries', 'query', 'fields', 'event', 'events'] as const;
const MAPPING_KEYS = ['type', 'action', 'id'] as const;
const ACTIONS = ['create', 'update', 'delete'] as const;

/** Where Tend's own feed shape keeps each field (what a bare `{path}` declaration means). */
const NATIVE_FIELDS: Readonly<Record<EntryField, readonly FieldPath[]>> = {
  cursor: [['cursor'], ['seq']],
  time: [['time']],
  actor: [['actor']],
  actorKind: [['actorKind']],
  intent: [['intent']],
  motivation: [['motivation']],
  action: [['action']],
  type: [['type']],
  id: [['id']],
  before: [['before']],
  after: [['after']],
};

/** A declaration that cannot be used: the message says what is wrong and what to write. */
class BadDeclaration extends Error {}

/**
 * Reads an `x-tend-audit` value. A declaration that cannot be used is ignored whole (a feed read
 * half right would attribute changes to the wrong objects): `feed` is then undefined and `warnings`
 * says why and what to write instead. Undefined input (no declaration) gives neither.
 */
export function parseAuditFeed(value: unknown): {
  readonly feed?: AuditFeed;
  readonly warnings: readonly string[];
} {
  if (value === undefined) return { warnings: [] };
  try {
    return { feed: parse(value), warnings: [] };
  } catch (e) {
    if (!(e instanceof BadDeclaration)) throw e;
    return { warnings: [`${e.message}; ignored`] };
  }
}

/** `x-tend-audit` on a document's root, its problems added to `warnings` (see `parseAuditFeed`). */
export function readAuditFeed(
  document: Record<string, unknown>,
  warnings: string[],
): AuditFeed | undefined {
  const { feed, warnings: problems } = parseAuditFeed(document['x-tend-audit']);
  for (const p of problems) warnings.push(p);
  return feed;
}

/** A warning per `events` mapping naming a type the provider does not have (its entries are skipped). */
export function auditTypeWarnings(feed: AuditFeed, types: ReadonlyMap<string, unknown>): string[] {
  const out: string[] = [];
  for (const [kind, m] of feed.events ?? []) {
    if (!types.has(m.type)) {
      out.push(
        `x-tend-audit.events.${kind}.type: ${m.type} is not a resource type of this provider; its entries are skipped`,
      );
    }
  }
  return out;
}

function parse(value: unknown): AuditFeed {
  if (!isObject(value) || typeof value['path'] !== 'string' || !value['path'].startsWith('/')) {
    throw new BadDeclaration('x-tend-audit must be an object with a path starting with /');
  }
  for (const k of Object.keys(value)) {
    if (!(KEYS as readonly string[]).includes(k)) {
      throw new BadDeclaration(`x-tend-audit.${k} is not known; it offers ${KEYS.join(', ')}`);
    }
  }
  const entries =
    value['entries'] === undefined ? ['entries'] : fieldPath(value['entries'], 'entries');

  let cursorParam: string | undefined = 'after';
  let waitParam: string | undefined = 'wait';
  const query = value['query'];
  if (query !== undefined) {
    if (!isObject(query)) {
      throw new BadDeclaration(
        'x-tend-audit.query must be an object: {cursor: <parameter> | false, wait: <parameter> | false}',
      );
    }
    for (const [k, v] of Object.entries(query)) {
      if (k !== 'cursor' && k !== 'wait') {
        throw new BadDeclaration(`x-tend-audit.query.${k} is not known; it offers cursor, wait`);
      }
      if (v !== false && (typeof v !== 'string' || v === '')) {
        throw new BadDeclaration(
          `x-tend-audit.query.${k} must be the name of a query parameter, or false when the feed takes none`,
        );
      }
      const param = v === false ? undefined : v;
      if (k === 'cursor') cursorParam = param;
      else waitParam = param;
    }
  }

  const fields: Record<EntryField, readonly FieldPath[]> = { ...NATIVE_FIELDS };
  const declaredFields = value['fields'];
  if (declaredFields !== undefined) {
    if (!isObject(declaredFields)) {
      throw new BadDeclaration(
        `x-tend-audit.fields must map fields of an entry (${ENTRY_FIELDS.join(', ')}) to dotted paths`,
      );
    }
    for (const [k, v] of Object.entries(declaredFields)) {
      if (!(ENTRY_FIELDS as readonly string[]).includes(k)) {
        throw new BadDeclaration(
          `x-tend-audit.fields.${k} is not known; it offers ${ENTRY_FIELDS.join(', ')}`,
        );
      }
      fields[k as EntryField] = [fieldPath(v, `fields.${k}`)];
    }
  }

  const eventValue = value['event'];
  const eventsValue = value['events'];
  if ((eventValue === undefined) !== (eventsValue === undefined)) {
    throw new BadDeclaration(
      'x-tend-audit.event and x-tend-audit.events go together: event names the field saying what happened, events maps its values to {type, action, id}',
    );
  }
  if (eventsValue === undefined) {
    return {
      path: value['path'],
      entries,
      ...(cursorParam !== undefined ? { cursorParam } : {}),
      ...(waitParam !== undefined ? { waitParam } : {}),
      fields,
    };
  }
  const event = fieldPath(eventValue, 'event');
  for (const k of ['action', 'type', 'id'] as const) {
    if (isObject(declaredFields) && declaredFields[k] !== undefined) {
      throw new BadDeclaration(
        `x-tend-audit.fields.${k} is not used with events: each entry of events says its own type, action and id`,
      );
    }
  }
  if (!isObject(eventsValue) || Object.keys(eventsValue).length === 0) {
    throw new BadDeclaration(
      'x-tend-audit.events must map event kinds to {type, action, id}, e.g. feature-created: {type: features, action: create, id: featureName}',
    );
  }
  const events = new Map<string, EventMapping>();
  for (const [kind, m] of Object.entries(eventsValue)) {
    events.set(kind, eventMapping(kind, m));
  }
  return {
    path: value['path'],
    entries,
    ...(cursorParam !== undefined ? { cursorParam } : {}),
    ...(waitParam !== undefined ? { waitParam } : {}),
    fields,
    event,
    events,
  };
}

function eventMapping(kind: string, m: unknown): EventMapping {
  const at = `x-tend-audit.events.${kind}`;
  if (!isObject(m)) {
    throw new BadDeclaration(`${at} must be an object {type, action, id}`);
  }
  for (const k of Object.keys(m)) {
    if (!(MAPPING_KEYS as readonly string[]).includes(k)) {
      throw new BadDeclaration(`${at}.${k} is not known; it offers ${MAPPING_KEYS.join(', ')}`);
    }
  }
  const type = m['type'];
  if (typeof type !== 'string' || type === '') {
    throw new BadDeclaration(`${at}.type must name a resource type of this provider`);
  }
  const action = m['action'];
  if (!(ACTIONS as readonly unknown[]).includes(action)) {
    throw new BadDeclaration(`${at}.action must be one of ${ACTIONS.join(', ')}`);
  }
  const idValue = m['id'];
  const parts = typeof idValue === 'string' ? [idValue] : idValue;
  if (!Array.isArray(parts) || parts.length === 0) {
    throw new BadDeclaration(
      `${at}.id must be a dotted path, or a list of them (parent ids first), to the fields of an entry holding the object's id`,
    );
  }
  const id = parts.map((p, i) =>
    fieldPath(p, Array.isArray(idValue) ? `events.${kind}.id[${i}]` : `events.${kind}.id`),
  );
  return { type, action: action as EventMapping['action'], id };
}

function fieldPath(value: unknown, at: string): FieldPath {
  if (typeof value !== 'string') {
    throw new BadDeclaration(
      `x-tend-audit.${at} must be a dotted path to a field (e.g. data.id), not ${describe(value)}`,
    );
  }
  const parts = value.split('.');
  if (parts.some((p) => p === '')) {
    throw new BadDeclaration(
      `x-tend-audit.${at}: "${value}" is not a dotted path (an empty name between dots, or none at all)`,
    );
  }
  const forbidden = parts.find((p) => FORBIDDEN_KEYS.has(p));
  if (forbidden !== undefined) {
    throw new BadDeclaration(
      `x-tend-audit.${at}: "${value}" names ${forbidden}, a key Tend never reads (docs/decisions/0009)`,
    );
  }
  return parts;
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v;
}

/** The value at a path, through the JSON value's own properties only. */
export function valueAt(value: unknown, path: FieldPath): unknown {
  let cur = value;
  for (const part of path) {
    if (!isObject(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function firstAt(entry: unknown, paths: readonly FieldPath[]): unknown {
  for (const p of paths) {
    const v = valueAt(entry, p);
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The entry's position in the feed, when it has a usable one. */
export function cursorOf(feed: AuditFeed, entry: unknown): string | undefined {
  const c = scalar(firstAt(entry, feed.fields.cursor));
  return c === undefined || c === '' ? undefined : c;
}

/**
 * Whether cursor `a` comes after `b`: as whole numbers when both are (`10` after `9`), else as text
 * (ISO times order as text).
 */
export function cursorAfter(a: string, b: string): boolean {
  const digits = /^\d+$/;
  if (digits.test(a) && digits.test(b)) {
    const x = a.replace(/^0+(?=\d)/, '');
    const y = b.replace(/^0+(?=\d)/, '');
    return x.length !== y.length ? x.length > y.length : x > y;
  }
  return a > b;
}

/**
 * One entry as Tend's ObservedChange, or undefined when it does not say what changed (no usable
 * cursor, an event kind the declaration does not map, an action Tend does not know, no type or id).
 * Hostile entries are tolerated: a value of the wrong type counts as missing; `before`/`after` are
 * kept only when they are objects. (Answers holding `__proto__`, `constructor` or `prototype` keys
 * are refused before they get here.)
 */
export function toChange(feed: AuditFeed, entry: unknown): ObservedChange | undefined {
  if (!isObject(entry)) return undefined;
  const cursor = cursorOf(feed, entry);
  if (cursor === undefined) return undefined;
  const f = feed.fields;
  let action: unknown;
  let type: unknown;
  let id: string | undefined;
  if (feed.events && feed.event) {
    const kind = scalar(valueAt(entry, feed.event));
    const m = kind === undefined ? undefined : feed.events.get(kind);
    if (!m) return undefined;
    action = m.action;
    type = m.type;
    const parts = m.id.map((p) => scalar(valueAt(entry, p)));
    if (parts.some((p) => p === undefined || p === '')) return undefined;
    id = parts.length === 1 ? parts[0]! : parts.map((p) => encodeURIComponent(p!)).join('/');
  } else {
    action = firstAt(entry, f.action);
    type = firstAt(entry, f.type);
    id = scalar(firstAt(entry, f.id));
  }
  if (action !== 'create' && action !== 'update' && action !== 'delete') return undefined;
  if (typeof type !== 'string' || type === '' || id === undefined || id === '') return undefined;
  const intent = text(firstAt(entry, f.intent));
  const motivation = text(firstAt(entry, f.motivation));
  // Platforms record the kind header as sent; a kind Tend does not know says nothing it can use.
  const kindText = text(firstAt(entry, f.actorKind));
  const actorKind = kindText === undefined ? undefined : checkActorKind(kindText);
  const before = firstAt(entry, f.before);
  const after = firstAt(entry, f.after);
  return {
    cursor,
    time: text(firstAt(entry, f.time)) ?? '',
    actor: text(firstAt(entry, f.actor)) ?? 'unknown',
    ...(actorKind?.ok ? { actorKind: actorKind.value } : {}),
    ...(intent !== undefined ? { intent } : {}),
    ...(motivation !== undefined ? { motivation } : {}),
    action,
    type,
    id,
    ...(isObject(before) ? { before } : {}),
    ...(isObject(after) ? { after } : {}),
  };
}

/**
 * A page of the feed from one answer. `entries` undefined means the answer holds no array where the
 * declaration says (the caller reports it). A feed that takes no cursor answers with its latest
 * entries in any order: those after `cursor` are kept, oldest first. The next cursor is the answer's
 * own `cursor` when it has one, else the last entry's — of every entry with a cursor, mapped or not,
 * so that entries about nothing Tend manages are not read again.
 */
export function pageOf(
  feed: AuditFeed,
  body: unknown,
  cursor: string | undefined,
): ChangesPage | undefined {
  const list = valueAt(body, feed.entries);
  if (!Array.isArray(list)) return undefined;
  let positioned = list
    .map((entry: unknown) => ({ entry, at: cursorOf(feed, entry) }))
    .filter((e): e is { entry: unknown; at: string } => e.at !== undefined);
  if (feed.cursorParam === undefined) {
    positioned = positioned
      .filter((e) => cursor === undefined || cursor === '' || cursorAfter(e.at, cursor))
      .sort((x, y) => (cursorAfter(x.at, y.at) ? 1 : cursorAfter(y.at, x.at) ? -1 : 0));
  }
  const changes: ObservedChange[] = [];
  for (const { entry } of positioned) {
    const change = toChange(feed, entry);
    if (change) changes.push(change);
  }
  const own = isObject(body) ? scalar(body['cursor']) : undefined;
  const next = own ?? positioned.at(-1)?.at ?? cursor ?? '';
  return { changes, cursor: next };
}
