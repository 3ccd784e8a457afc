// What `tend import` writes: Resource documents for objects that already exist on a platform, with
// only the fields a user may declare, references where one object holds another's id, and names
// taken from natural keys. Pure: the command lists the objects and writes the files.
import { stringify } from 'yaml';
import type { Address, ObservedObject, ResourceTypeInfo } from '../core/index.js';
import {
  address,
  isMarkerTag,
  isValidName,
  setKey,
  valueAtKeyPath,
  withoutMarkerIn,
} from '../core/index.js';
import type { SpecValidator } from '../intent/index.js';

/** The objects of one resource type to import, with what the provider says about the type. */
export interface ImportType {
  /** `provider.resourceType`. */
  readonly type: string;
  readonly info: ResourceTypeInfo;
  readonly objects: readonly ObservedObject[];
}

/** An object already declared in the intent: something imported objects may reference. */
export interface KnownObject {
  readonly address: Address;
  readonly info: ResourceTypeInfo;
  readonly object: ObservedObject;
}

/** One imported object as a resource. */
export interface ImportedResource {
  readonly address: Address;
  readonly type: string;
  readonly name: string;
  readonly objectId: string;
  readonly spec: Record<string, unknown>;
  /** Addresses the spec references. */
  readonly dependsOn: readonly Address[];
  /** Environment variables named for required secrets (set them before `apply`). */
  readonly secrets: readonly string[];
  readonly object: ObservedObject;
}

/** Everything `buildImport` needs. */
export interface ImportInput {
  readonly types: readonly ImportType[];
  /** Addresses already used (declared or remembered): imported names avoid them. */
  readonly taken: ReadonlySet<string>;
  readonly known: readonly KnownObject[];
  readonly validator: SpecValidator;
  /** Names to use for some objects (by `objectKey`): an address Tend already remembers for them. */
  readonly names?: ReadonlyMap<string, string>;
  /**
   * Which named objects to write (`tend import --match`): asked after every object is named, so an
   * object gets the name a whole import would give it; objects left out are never referenced.
   */
  readonly keep?: (candidate: ImportCandidate) => boolean;
}

/** An object as `ImportInput.keep` sees it: named, not yet written. */
export interface ImportCandidate {
  readonly type: string;
  readonly info: ResourceTypeInfo;
  readonly object: ObservedObject;
  readonly name: string;
  readonly address: Address;
}

/**
 * A `--match` pattern as a test: `*` stands for any run of characters (dots and slashes included),
 * `?` for one character, `\\` takes the next character as it is; everything else matches itself, and
 * the pattern must match the whole text. Case-sensitive. Matching takes time proportional to the
 * pattern's length times the text's at worst (no regular expression, so no backtracking blow-up).
 */
export function globMatcher(pattern: string): (text: string) => boolean {
  // Tokens: null for *, '' for ?, else the literal character.
  const tokens: (string | null)[] = [];
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*') {
      if (tokens.at(-1) !== null || tokens.length === 0) tokens.push(null);
    } else if (c === '?') tokens.push('');
    else tokens.push(c === '\\' && i + 1 < chars.length ? chars[++i]! : c);
  }
  return (input) => {
    const text = [...input];
    let t = 0;
    let p = 0;
    let starP = -1;
    let starT = 0;
    while (t < text.length) {
      const tok = tokens[p];
      if (p < tokens.length && tok !== null && (tok === '' || tok === text[t])) {
        t++;
        p++;
      } else if (p < tokens.length && tok === null) {
        starP = p++;
        starT = t;
      } else if (starP >= 0) {
        p = starP + 1;
        t = ++starT;
      } else return false;
    }
    while (p < tokens.length && tokens[p] === null) p++;
    return p === tokens.length;
  };
}

/**
 * The texts a `--match` pattern is tried on for an object: its id, and its natural key and `name`
 * values as the platform reports them (numbers as text).
 */
export function matchTexts(info: ResourceTypeInfo, object: ObservedObject): string[] {
  const out = [object.id];
  const keys = [...(info.naturalKeyFields ?? []), info.naturalKey, 'name'];
  for (const k of keys) {
    if (k === undefined || k === info.parent?.field) continue;
    const v = valueAtKeyPath(object.fields, k);
    if ((typeof v === 'string' || typeof v === 'number') && !out.includes(String(v))) {
      out.push(String(v));
    }
  }
  return out;
}

/** The key of an object in `ImportInput.names`. */
export function objectKey(type: string, id: string): string {
  return `${type}\u0000${id}`;
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Top-level properties of a schema (its own and those of `allOf` members). */
function properties(schema: Json): Map<string, Json> {
  const out = new Map<string, Json>();
  const add = (s: unknown) => {
    if (!isRecord(s)) return;
    if (isRecord(s['properties'])) {
      for (const [k, v] of Object.entries(s['properties'])) if (isRecord(v)) out.set(k, v);
    }
    if (Array.isArray(s['allOf'])) for (const m of s['allOf'] as unknown[]) add(m);
  };
  add(schema);
  return out;
}

function required(schema: Json): Set<string> {
  const out = new Set<string>();
  const add = (s: unknown) => {
    if (!isRecord(s)) return;
    if (Array.isArray(s['required'])) {
      for (const r of s['required'] as unknown[]) if (typeof r === 'string') out.add(r);
    }
    if (Array.isArray(s['allOf'])) for (const m of s['allOf'] as unknown[]) add(m);
  };
  add(schema);
  return out;
}

/** Property annotations meaning "the platform sets this; never declare it". */
const SERVER_SET = ['readOnly', 'x-tend-output-only', 'x-tend-server-owned'];

function serverSet(prop: Json): boolean {
  return SERVER_SET.some((k) => prop[k] === true);
}

function deletePath(spec: Json, path: readonly (string | number)[]): void {
  let cur: unknown = spec;
  for (const seg of path.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isRecord(cur)) cur = cur[String(seg)];
    else return;
  }
  const last = path[path.length - 1];
  if (last === undefined) return;
  if (isRecord(cur)) delete cur[String(last)];
}

/** A resource name from a natural key: lower-case, runs of other characters become one `_`. */
export function sanitizeName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '');
}

/** An environment variable name for a secret: `PDNS_TSIGKEYS_KEY1_KEY`. */
function envName(...parts: string[]): string {
  return parts
    .join('_')
    .toUpperCase()
    .replace(/[^A-Z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Field names that hold another object's id: `network_id`, `zoneId`, `zone-id`, `serverID`. */
const ID_FIELD = /(?:^|[_-])id$|[a-z0-9]Id$|ID$/;
/** Field names that hold a list of ids: `master_tsig_key_ids`, `subnetIds`. */
const IDS_FIELD = /(?:^|[_-])ids$|[a-z0-9]Ids$|IDs$/;

/**
 * The declarable part of an observed object: fields the type's schema lists, minus output-only,
 * server-owned and sensitive fields, minus Tend's marker tags, minus whatever the schema then still
 * refuses as unknown (nested read-only fields). Required secrets become `{ fromEnv }` references.
 */
function declarable(
  t: ImportType,
  object: ObservedObject,
  secretEnv: (field: string) => string,
  validator: SpecValidator,
): { spec: Json; secrets: string[]; problems: string[] } {
  const { info } = t;
  const props = properties(info.schema);
  const needed = required(info.schema);
  const outputOnly = new Set([
    ...info.outputOnly,
    ...(info.serverOwned ?? []),
    ...(info.writeOnly ?? []),
  ]);
  const sensitive = new Set(info.sensitive);
  const spec: Json = {};
  const secrets: string[] = [];
  for (const [key, prop] of props) {
    if (outputOnly.has(key) || serverSet(prop)) continue;
    if (sensitive.has(key)) {
      // A secret is never read back; a required one is declared as where it will come from.
      if (needed.has(key)) {
        const name = secretEnv(key);
        setKey(spec, key, { fromEnv: name });
        secrets.push(name);
      }
      continue;
    }
    let value = object.fields[key];
    if (value === undefined || value === null) continue;
    if (key === info.markerField && info.markerKind !== undefined && info.markerKind !== 'map') {
      // A list without its marker entries, a text without its marker token: what a person wrote.
      const kept = withoutMarkerIn(info.markerKind, value);
      const emptied = (kept === '' && value !== '') || (Array.isArray(kept) && kept.length === 0);
      if (emptied && !needed.has(key)) continue;
      value = kept;
    } else if (key === info.markerField && isRecord(value)) {
      const kept = Object.fromEntries(Object.entries(value).filter(([k]) => !isMarkerTag(k)));
      if (Object.keys(kept).length === 0 && Object.keys(value).length > 0) continue;
      value = kept;
    }
    setKey(spec, key, structuredClone(value));
  }
  for (const field of [...info.outputOnly, ...info.sensitive]) {
    if (field.includes('.') && !needed.has(field)) deletePath(spec, field.split('.'));
  }
  // Nested fields the schema does not accept (read-only parts of sub-objects): drop them.
  const problems: string[] = [];
  for (let round = 0; round < 5; round++) {
    const result = validator.validate(info, spec);
    if (!Array.isArray(result)) break;
    const unknown = result.filter((p) => p.code === 'schema.unknown_field');
    if (unknown.length === 0) {
      for (const p of result) problems.push(p.message);
      break;
    }
    for (const p of unknown) deletePath(spec, p.path);
  }
  return { spec, secrets, problems };
}

/**
 * Why `tend import` leaves an object out, or undefined to import it. A type's schema may say which
 * objects the platform owns (`x-tend-import-exclude: [{field, values, reason?}]`, e.g. PowerDNS's SOA
 * rrsets): an object whose top-level field holds one of the values, as the platform reports it.
 */
export function importExclusion(
  info: ResourceTypeInfo,
  object: ObservedObject,
): string | undefined {
  const rules = info.schema['x-tend-import-exclude'];
  if (!Array.isArray(rules)) return undefined;
  for (const rule of rules as unknown[]) {
    if (!isRecord(rule) || typeof rule['field'] !== 'string' || !Array.isArray(rule['values'])) {
      continue;
    }
    const value = object.fields[rule['field']];
    // Rules compare scalars only (the provider refuses other values in them).
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      continue;
    }
    if (!rule['values'].includes(value)) continue;
    const what = `${rule['field']} = ${String(value)}`;
    return typeof rule['reason'] === 'string' ? `${what}: ${rule['reason']}` : what;
  }
  return undefined;
}

/**
 * The natural key of an object, for its name: the key fields without the parent's (an rrset's
 * `name` and `type`), else the key field, else `name`, else the id.
 */
function keyOf(info: ResourceTypeInfo, object: ObservedObject): string {
  const text = (k: string) => {
    const v = valueAtKeyPath(object.fields, k);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  };
  const own = (info.naturalKeyFields ?? []).filter((k) => k !== info.parent?.field);
  if (own.length > 1) {
    const parts = own.map(text);
    if (parts.every((p) => p !== undefined)) return parts.join(' ');
  }
  for (const k of [...own, info.naturalKey, 'name']) {
    const v = k === undefined ? undefined : text(k);
    if (v !== undefined) return v;
  }
  return object.id;
}

/**
 * Builds a resource per object: names from natural keys (made unique within the type: first the
 * sanitised id, then a number), specs of declarable fields, and `${type/name.<idField>}` references
 * where a field named like an id (`zone_id`, `networkId`) holds the id of another imported or
 * declared object. `problems` lists what will not validate, per address.
 */
export function buildImport(input: ImportInput): {
  resources: ImportedResource[];
  problems: { address: Address; message: string }[];
} {
  const taken = new Set(input.taken);
  const named: { t: ImportType; object: ObservedObject; name: string; address: Address }[] = [];
  for (const t of input.types) {
    const singular = t.info.name.replace(/s$/, '') || 'object';
    // Code-unit order (not the locale's): the same objects always get the same names.
    const order = (o: ObservedObject) => `${keyOf(t.info, o)}\u0000${o.id}`;
    const sorted = [...t.objects].sort((a, b) =>
      order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0,
    );
    for (const object of sorted) {
      const preferred = input.names?.get(objectKey(t.type, object.id));
      if (preferred !== undefined && isValidName(preferred)) {
        taken.add(address(t.type, preferred));
        named.push({ t, object, name: preferred, address: address(t.type, preferred) });
        continue;
      }
      const candidates = [sanitizeName(keyOf(t.info, object)), sanitizeName(object.id)].map((n) =>
        isValidName(n) ? n : sanitizeName(`${singular}-${n}`),
      );
      let name = candidates.find((n) => isValidName(n) && !taken.has(address(t.type, n)));
      for (let i = 2; name === undefined; i++) {
        const n = `${candidates[0] || singular}-${i}`;
        if (isValidName(n) && !taken.has(address(t.type, n))) name = n;
      }
      taken.add(address(t.type, name));
      named.push({ t, object, name, address: address(t.type, name) });
    }
  }

  const kept = input.keep
    ? named.filter((n) =>
        input.keep!({
          type: n.t.type,
          info: n.t.info,
          object: n.object,
          name: n.name,
          address: n.address,
        }),
      )
    : named;

  // Who holds which id: imported objects and declared ones, per id value.
  const byId = new Map<string, { address: Address; idField: string }[]>();
  const holder = (id: string, entry: { address: Address; idField: string }) =>
    byId.set(id, [...(byId.get(id) ?? []), entry]);
  for (const n of kept) holder(n.object.id, { address: n.address, idField: n.t.info.idField });
  for (const k of input.known) holder(k.object.id, { address: k.address, idField: k.info.idField });

  const resources: ImportedResource[] = [];
  const problems: { address: Address; message: string }[] = [];
  for (const n of kept) {
    const {
      spec,
      secrets,
      problems: p,
    } = declarable(n.t, n.object, (field) => envName(n.t.type, n.name, field), input.validator);
    for (const message of p) problems.push({ address: n.address, message });
    const dependsOn: Address[] = [];
    const provider = n.t.type.slice(0, n.t.type.indexOf('.'));
    const parent = n.t.info.parent;
    // The reference for an id held in `field`, when exactly one object holds it.
    const reference = (field: string, id: string): string | undefined => {
      let holders = (byId.get(id) ?? []).filter((h) => h.address !== n.address);
      if (parent?.field === field) {
        holders = holders.filter((h) => h.address.startsWith(`${provider}.${parent.type}/`));
      }
      if (holders.length !== 1) return undefined;
      const target = holders[0]!;
      if (!dependsOn.includes(target.address)) dependsOn.push(target.address);
      return `\${${target.address}.${target.idField}}`;
    };
    for (const [key, value] of Object.entries(spec)) {
      if (key === n.t.info.idField || key === n.t.info.naturalKey) continue;
      if (typeof value === 'string' && (ID_FIELD.test(key) || parent?.field === key)) {
        setKey(spec, key, reference(key, value) ?? value);
      } else if (Array.isArray(value) && IDS_FIELD.test(key)) {
        setKey(
          spec,
          key,
          value.map((v: unknown) => (typeof v === 'string' ? (reference(key, v) ?? v) : v)),
        );
      }
    }
    resources.push({
      address: n.address,
      type: n.t.type,
      name: n.name,
      objectId: n.object.id,
      spec,
      dependsOn,
      secrets,
      object: n.object,
    });
  }
  return { resources, problems };
}

/** The YAML text of imported resources: one document each, after a header comment. */
export function renderImport(resources: readonly ImportedResource[], header: string): string {
  const docs = resources.map((r) =>
    stringify(
      { kind: 'Resource', type: r.type, name: r.name, spec: r.spec },
      { lineWidth: 0, aliasDuplicateObjects: false },
    ),
  );
  const comment = header
    .split('\n')
    .map((l) => (l === '' ? '#' : `# ${l}`))
    .join('\n');
  return `${comment}\n${docs.join('---\n')}`;
}
