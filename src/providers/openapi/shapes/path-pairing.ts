import { setKey } from '../../../core/index.js';
import { isObject } from '../fields/schema-view.js';

/**
 * Generic rules that put a resource's operations together when the document spreads them over
 * paths that are not the plain `/x` and `/x/{id}` (never a rule for one API). Each rule moves
 * operations onto the path where `deriveTypes` looks for them, through a `Placer` (irregular-ops.ts
 * keeps where each operation really is, and which document paths a working path stands for).
 *
 * Normalising (before anything else is looked at):
 * - a `.json` format suffix is dropped (`/tag_groups/{id}.json` is `/tag_groups/{id}`), when the path
 *   without it does not already have that operation;
 * - paths that differ only by a leading `/v<N>` segment are one resource at several API versions:
 *   every path of a family (`/v9/projects…`, `/v10/projects…`) is read without its version when the
 *   family spans more than one, each operation from the newest version that has it;
 * - a parameter name repeated in one path (`/{realm}/clients/{id}/mappers/{id}`) is renamed where it
 *   repeats (`{id2}`), or its values would go into both places.
 *
 * Pairing a collection `<c>` with no item path `<c>/{id}` of its own, each only with operations not
 * declared with `x-tend-op`:
 * - the same path with other parameter names (`/{realm}/clients/{id1}/models/{id2}` for
 *   `/{realm}/clients/{id}/models`): the URL is the same;
 * - the singular (`/silence/{silenceID}` for `/silences`; -s, -es, -ies → -y), when the singular is
 *   not a collection with a POST of its own;
 * - a top-level item path of the last segment (`/repos/{owner}/{repo}` for `/orgs/{org}/repos`,
 *   `/teams/{id}` for `/orgs/{org}/teams`, `/users/{username}` for `/admin/users`), when its GET
 *   answers with the schema the collection's POST answers with (the same object of the document,
 *   a shared `$ref`, or an equal one: equal in all but descriptions, examples, titles and `x-`
 *   extensions; not a look-alike with other fields), its parameters above the id are none or as many as the
 *   collection's (taken in order), and `/<last>` is not a collection with a POST of its own. It fills
 *   what the collection's item path lacks (a missing GET), or, with a DELETE, is the item path.
 */

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type Method = (typeof METHODS)[number];
const ITEM_METHODS: readonly Method[] = ['get', 'put', 'patch', 'delete'];

/** Moves operations between working paths; implemented by irregular-ops.ts. */
export interface Placer {
  /** The working paths (the document's, with operations moved in and normalised paths replaced). */
  readonly paths: Record<string, Record<string, unknown>>;
  /**
   * Moves the operation at `from`/`method` onto `target`/`slot`. `rename`: the request path takes
   * the target's parameter names, in order from the last (`/repos/{owner}/{repo}` under
   * `/orgs/{org}/repos/{repo}` is sent as `/repos/{org}/{repo}`). Returns false when it cannot.
   */
  move(
    from: string,
    method: Method,
    target: string,
    slot: Method,
    source: string,
    options?: { readonly rename?: boolean; readonly extra?: Record<string, unknown> },
  ): boolean;
  /**
   * Places a copy of the operation at `from`/`method` on `target`/`slot` with `extra` keys on the
   * copy, leaving the original where it is (an operation two types use: a parent's read that lists a
   * child's objects). Returns false when there is no such operation or the slot is taken.
   */
  lend(
    from: string,
    method: Method,
    target: string,
    slot: Method,
    source: string,
    extra: Record<string, unknown>,
  ): boolean;
  /** Records that `target` stands for `from` too (its operations were superseded, not moved). */
  absorb(target: string, from: string): void;
  /** Removes a working path whose operations have all moved to `now` (the path it is read as). */
  remove(path: string, now: string): void;
  /** Why a document path is not used, when a rule knows better than the generic reasons. */
  note(path: string, reason: string): void;
  /** The working path an operation was last moved onto. */
  placedAt(op: unknown): string | undefined;
  /** Whether an operation was declared with x-tend-op (inference leaves it alone). */
  declared(op: Record<string, unknown>): boolean;
}

// --- normalising ---------------------------------------------------------------------------------

const JSON_SUFFIX = /\.json$/i;

/** `/tag_groups/{id}.json` → `/tag_groups/{id}`: the format suffix is not part of the resource. */
export function dropJsonSuffixes(placer: Placer): void {
  for (const path of Object.keys(placer.paths)) {
    if (!JSON_SUFFIX.test(path)) continue;
    const target = path.replace(JSON_SUFFIX, '');
    if (target === '' || target.endsWith('/')) continue;
    const item = placer.paths[path]!;
    const have = placer.paths[target];
    let all = true;
    for (const m of METHODS) {
      if (!isObject(item[m])) continue;
      if (have !== undefined && isObject(have[m])) {
        all = false; // the plain path has it: keep both as they are
        continue;
      }
      placer.move(path, m, target, m, `inferred: ${path} is ${target} with a .json format suffix`, {
        extra: pathLevel(item),
      });
    }
    if (all) placer.remove(path, target);
    else placer.absorb(target, path);
  }
}

const VERSION = /^v(\d+)$/;

/**
 * Paths that differ only by a leading `/v<N>` segment, read as one resource: a family (the paths
 * whose first segment after the version is the same) spanning more than one version loses the
 * version segment, and each operation of each path comes from the newest version that has it.
 */
export function mergeVersions(placer: Placer): void {
  interface Versioned {
    readonly path: string;
    readonly version: number;
    readonly rest: string;
  }
  const families = new Map<string, Versioned[]>();
  for (const path of Object.keys(placer.paths)) {
    const s = split(path);
    const m = s.length >= 2 ? VERSION.exec(s[0]!) : null;
    if (m === null || isParam(s[1]!)) continue;
    const list = families.get(s[1]!) ?? [];
    list.push({ path, version: Number(m[1]), rest: join(s.slice(1)) });
    families.set(s[1]!, list);
  }
  for (const members of families.values()) {
    const versions = unique(members.map((v) => v.version)).sort((a, b) => a - b);
    if (versions.length < 2) continue;
    // The unversioned path must not be one the document has already.
    if (members.some((v) => placer.paths[v.rest] !== undefined && !isVersioned(v.rest))) continue;
    const spread = versions.map((v) => `v${v}`).join(', ');
    const byRest = new Map<string, Versioned[]>();
    for (const v of members) byRest.set(v.rest, [...(byRest.get(v.rest) ?? []), v]);
    for (const [rest, group] of byRest) {
      const newestFirst = [...group].sort((a, b) => b.version - a.version);
      for (const m of METHODS) {
        const from = newestFirst.find((v) => isObject(placer.paths[v.path]?.[m]));
        if (from === undefined) continue;
        const at = unique(group.map((v) => v.version))
          .sort((a, b) => a - b)
          .map((v) => `v${v}`)
          .join(', ');
        placer.move(
          from.path,
          m,
          rest,
          m,
          group.length > 1
            ? `inferred: API version v${from.version}, the newest with ${m.toUpperCase()} of ${rest} (at ${at})`
            : `inferred: API version v${from.version} (/${split(rest)[0]}… is spread over ${spread})`,
          { extra: pathLevel(placer.paths[from.path]!) },
        );
      }
      for (const v of group) {
        const item = placer.paths[v.path]!;
        const used = METHODS.some((m) => isObject(item[m]) && placer.placedAt(item[m]) === rest);
        if (used) placer.absorb(rest, v.path);
        else
          placer.note(
            v.path,
            `superseded: ${rest} takes each operation from the newest API version that has it (${newestFirst.map((x) => `v${x.version}`).join(', ')})`,
          );
        placer.remove(v.path, rest);
      }
    }
  }
}

function isVersioned(path: string): boolean {
  return VERSION.test(split(path)[0] ?? '');
}

/** `/{realm}/clients/{id}/mappers/{id}` → `/{realm}/clients/{id}/mappers/{id2}`. */
export function renameRepeatedParams(placer: Placer): void {
  for (const path of Object.keys(placer.paths)) {
    const params = paramsOf(path);
    if (new Set(params).size === params.length) continue;
    const used = new Set(params);
    const seen = new Set<string>();
    const names = params.map((p) => {
      if (!seen.has(p)) {
        seen.add(p);
        return p;
      }
      let k = 2;
      while (used.has(`${p}${k}`)) k++;
      used.add(`${p}${k}`);
      return `${p}${k}`;
    });
    const target = withParams(path, names)!;
    if (placer.paths[target] !== undefined) continue;
    const item = placer.paths[path]!;
    for (const m of METHODS) {
      if (!isObject(item[m])) continue;
      placer.move(
        path,
        m,
        target,
        m,
        `inferred: a path parameter repeats in ${path}; where it repeats it is named ${names
          .filter((n, i) => n !== params[i])
          .map((n) => `{${n}}`)
          .join(', ')}`,
        { rename: true, extra: pathLevel(item) },
      );
    }
    placer.remove(path, target);
  }
}

// --- pairing --------------------------------------------------------------------------------------

/** Pairs collections that have no item path of their own with item paths elsewhere (see above). */
export function pairItemPaths(placer: Placer, document: ReadonlySet<string>): void {
  const paths = placer.paths;
  // Item paths by their collection's shape (`/a/{}/b`), indexed once: a scan per collection would be
  // quadratic in the number of paths.
  const itemsByShape = new Map<string, string[]>();
  for (const p of Object.keys(paths)) {
    const s = split(p);
    if (s.length === 0 || !isParam(s.at(-1)!)) continue;
    const key = shape(join(s.slice(0, -1)));
    itemsByShape.set(key, [...(itemsByShape.get(key) ?? []), p]);
  }
  const used = new Set<string>();
  // Shallow collections first, each in document order.
  const collections = Object.keys(paths)
    .filter((p) => {
      const last = split(p).at(-1);
      if (last === undefined || isParam(last)) return false;
      const item = paths[p]!;
      return isObject(item['post']) || isObject(item['get']);
    })
    .map((p, i) => ({ p, i, depth: split(p).length }))
    .sort((a, b) => a.depth - b.depth || a.i - b.i)
    .map((x) => x.p);
  for (const c of collections) {
    const own = (itemsByShape.get(shape(c)) ?? []).filter((i) => split(i).length > 0);
    // Compared by segments: `/dcim/sites/` and `/dcim/sites/{id}/` are a plain pair.
    const literal = own.filter((i) => join(split(i).slice(0, -1)) === join(split(c)));
    // An item path the document itself has under <c> (not one a rule made) is <c>'s own.
    const documented = literal.filter((i) => document.has(i));
    if (documented.length > 0) {
      topLevelTwin(placer, c, documented[0], used);
      continue;
    }
    // The same path with other parameter names: one URL.
    const renamed = own.filter((i) => !literal.includes(i) && !used.has(i));
    if (renamed.length === 1) {
      const i = renamed[0]!;
      used.add(i);
      moveItem(
        placer,
        i,
        `${c}/{${paramsOf(i).at(-1)!}}`,
        () => `inferred: ${i} is the item path of ${c} (other parameter names)`,
      );
      continue;
    }
    const s = split(c);
    const last = s.at(-1)!;
    const prefix = s.slice(0, -1);
    let paired = false;
    for (const singular of singulars(last)) {
      const base = join([...prefix, singular]);
      if (isObject(paths[base]?.['post'])) continue; // a collection of its own
      const candidates = (itemsByShape.get(shape(base)) ?? []).filter((i) => !used.has(i));
      if (candidates.length !== 1) continue;
      const i = candidates[0]!;
      if (!ITEM_METHODS.some((m) => isObject(paths[i]![m]) && !placer.declared(paths[i]![m])))
        continue;
      used.add(i);
      const target = literal[0] ?? `${c}/{${paramsOf(i).at(-1)!}}`;
      moveItem(placer, i, target, () => `inferred: ${i} (singular) is the item path of ${c}`);
      paired = true;
      break;
    }
    if (!paired) topLevelTwin(placer, c, literal[0], used);
  }
}

/**
 * The top-level item path of a collection's last segment (`/teams/{id}` for `/orgs/{org}/teams`),
 * proven the same kind of object by the schema: its GET answers with what the collection's POST
 * answers with. It supplies what `item` (the collection's own item path, if any) lacks.
 */
function topLevelTwin(
  placer: Placer,
  c: string,
  item: string | undefined,
  used: Set<string>,
): void {
  const paths = placer.paths;
  const s = split(c);
  if (s.length < 2) return; // already top-level
  const last = s.at(-1)!;
  const post = paths[c]!['post'];
  // Only for a collection Tend could manage: it creates (and, without an item path, lists).
  if (!isObject(post) || (item === undefined && !isObject(paths[c]!['get']))) return;
  const created = successSchema(post);
  if (created === undefined) return;
  if (isObject(paths[`/${last}`]?.['post'])) return; // its items belong to /<last>
  const parents = paramsOf(c).length;
  const own = item === undefined ? undefined : paths[item];
  // With an item path of its own, only a missing read is borrowed; else the whole item path.
  const missing: readonly Method[] =
    own === undefined ? ITEM_METHODS : isObject(own['get']) ? [] : ['get'];
  if (missing.length === 0) return;
  const twins = Object.keys(paths).filter((p) => {
    const t = split(p);
    if (t[0] !== last || t.length < 2 || !t.slice(1).every(isParam)) return false;
    const above = t.length - 2;
    return (above === 0 || above === parents) && !used.has(p);
  });
  for (const twin of twins) {
    const get = paths[twin]!['get'];
    if (!isObject(get) || placer.declared(get)) continue;
    const same = sameSchema(successSchema(get), created);
    if (same === undefined) continue;
    if (own === undefined && !isObject(paths[twin]!['delete'])) continue;
    if (own !== undefined && paramsOf(twin).at(-1) !== paramsOf(item!).at(-1)) continue;
    used.add(twin);
    const target = item ?? `${c}/{${paramsOf(twin).at(-1)!}}`;
    const names = paramsOf(target);
    const mapped = paramsOf(twin)
      .map((p, i, all) => ({ p, to: names[names.length - all.length + i]! }))
      .filter((x) => x.p !== x.to)
      .map((x) => `{${x.p}} = {${x.to}}`);
    const note = mapped.length > 0 ? ` (with ${mapped.join(', ')})` : '';
    for (const m of missing) {
      const op = paths[twin]![m];
      if (!isObject(op) || placer.declared(op)) continue;
      placer.move(
        twin,
        m,
        target,
        m,
        `inferred: ${twin}${note} reads what POST ${c} creates (${same})`,
        { rename: true },
      );
    }
    placer.absorb(target, twin);
    return;
  }
}

/** Keywords that document a schema without changing what it accepts. */
const DOCUMENTING = new Set(['description', 'example', 'examples', 'title', 'externalDocs']);

/** How many schema nodes one comparison looks at before it gives up (not the same). */
const COMPARED_NODES = 4000;

/**
 * How two answer schemas are one kind of object: `the same schema` (one object of the document, a
 * shared `$ref`), `an equal schema` (two objects equal in everything but their documentation:
 * descriptions, examples, titles, `x-` extensions), else undefined. Cycles of a dereferenced
 * document are compared once per pair.
 */
export function sameSchema(a: unknown, b: unknown): string | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === b) return 'the same schema';
  const budget = { nodes: COMPARED_NODES };
  return equalSchemas(a, b, new Map(), budget) ? 'an equal schema' : undefined;
}

function equalSchemas(
  a: unknown,
  b: unknown,
  seen: Map<object, Set<object>>,
  budget: { nodes: number },
): boolean {
  if (a === b) return true;
  if (--budget.nodes < 0) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => equalSchemas(x, b[i], seen, budget));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const pairs = seen.get(a) ?? new Set<object>();
  if (pairs.has(b)) return true; // a cycle: equal so far
  pairs.add(b);
  seen.set(a, pairs);
  const keys = (o: Record<string, unknown>) =>
    Object.keys(o)
      .filter((k) => !DOCUMENTING.has(k) && !k.startsWith('x-'))
      .sort();
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => equalSchemas(a[k], b[k], seen, budget));
}

function moveItem(placer: Placer, from: string, target: string, source: () => string): void {
  const have = placer.paths[target];
  for (const m of ITEM_METHODS) {
    const op = placer.paths[from]![m];
    if (!isObject(op) || placer.declared(op) || isObject(have?.[m])) continue;
    placer.move(from, m, target, m, source(), { rename: true });
  }
}

/** The singulars a plural segment may have, most likely first (`-ies` → `-y`, `-es`, `-s`). */
export function singulars(plural: string): string[] {
  const out: string[] = [];
  if (/[^aeiou]ies$/i.test(plural)) out.push(plural.slice(0, -3) + 'y');
  if (/(s|x|z|ch|sh)es$/i.test(plural)) out.push(plural.slice(0, -2));
  if (/[^s]s$/i.test(plural) && plural.length > 2) out.push(plural.slice(0, -1));
  return out.filter((s) => s.length > 0 && s !== plural && !isParam(s));
}

/** The 2xx JSON answer schema of an operation (the same object for a shared `$ref`). */
function successSchema(op: Record<string, unknown>): unknown {
  const responses = op['responses'];
  if (!isObject(responses)) return undefined;
  for (const [code, r] of Object.entries(responses)) {
    if (!/^2\d\d$/.test(code) || !isObject(r) || !isObject(r['content'])) continue;
    for (const [type, media] of Object.entries(r['content'])) {
      if (!/json/i.test(type) || !isObject(media)) continue;
      const schema = media['schema'];
      if (isObject(schema) && Object.keys(schema).length > 0) return schema;
    }
  }
  return undefined;
}

/** The path item's own keys that are not operations (`parameters`, `x-tend-*`), to go along. */
function pathLevel(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(item)) {
    if (!(METHODS as readonly string[]).includes(k)) setKey(out, k, v);
  }
  return out;
}

// --- paths ----------------------------------------------------------------------------------------

export function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

export function join(segments: readonly string[]): string {
  return '/' + segments.join('/');
}

export function isParam(segment: string): boolean {
  return /^\{[^{}]+\}$/.test(segment);
}

/** The path with its parameters written `{}` (`/a/{x}/b` → `/a/{}/b`). */
export function shape(path: string): string {
  return join(split(path).map((s) => (isParam(s) ? '{}' : s)));
}

/**
 * The first path one parameter below `collection` (`/widgets/{widgetId}` for `/widgets`), or
 * undefined when there is none.
 */
export function itemPathBelow(
  paths: Readonly<Record<string, unknown>>,
  collection: string,
): string | undefined {
  const s = split(collection);
  return Object.keys(paths).find((p) => {
    const t = split(p);
    return t.length === s.length + 1 && isParam(t.at(-1)!) && join(t.slice(0, -1)) === collection;
  });
}

/** The names of a path template's parameters, in order (`{id}` inside a segment included). */
export function paramsOf(path: string): string[] {
  return [...path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!);
}

/**
 * The template with its parameters named `names`, aligned from the last (a template with fewer
 * parameters takes the last names); undefined when it has more parameters than names.
 */
export function withParams(template: string, names: readonly string[]): string | undefined {
  const n = paramsOf(template).length;
  if (n > names.length) return undefined;
  let i = names.length - n;
  return template.replace(/\{([^{}]+)\}/g, () => `{${names[i++]!}}`);
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

// --- names and reasons ----------------------------------------------------------------------------

/**
 * A name for a type whose name is taken: the last segment qualified by more of the static segments
 * above it, nearest first (`repositories-pipelines_config-variables` next to
 * `pipelines_config-variables`), skipping version segments; undefined when every one is taken.
 * Deterministic: the same paths in the same order give the same names.
 */
export function longerName(
  collectionPath: string,
  taken: (name: string) => boolean,
): string | undefined {
  const s = split(collectionPath);
  const last = s.at(-1);
  if (last === undefined) return undefined;
  const statics = s.slice(0, -1).filter((seg) => !isParam(seg) && !VERSION.test(seg));
  for (let k = statics.length - 1; k >= 0; k--) {
    const name = [...statics.slice(k), last].join('-');
    if (!taken(name)) return name;
  }
  return undefined;
}

/**
 * Why a collection has no item path: none at `<c>/{id}`; and when the objects sit below two or more
 * parameters (`/autoprimaries/{ip}/{nameserver}`) with no DELETE there (with one, item-key.ts makes
 * them a type), that nothing removes one.
 */
export function noItemPathReason(
  collectionPath: string,
  paths: Readonly<Record<string, Record<string, unknown>>>,
  shown: (path: string) => string,
): string {
  const base = `no item path ${shown(collectionPath)}/{id}: Tend cannot read or delete one object`;
  const prefix = collectionPath === '/' ? '' : collectionPath;
  const deeper = Object.keys(paths).find((p) => {
    if (!p.startsWith(`${prefix}/`)) return false;
    const rest = split(p.slice(prefix.length));
    return rest.length >= 2 && rest.every(isParam);
  });
  if (deeper === undefined) return base;
  const methods = METHODS.filter((m) => isObject(paths[deeper]![m])).map((m) => m.toUpperCase());
  const keys = split(deeper.slice(prefix.length)).join(' and ');
  return `${base}; its objects are addressed by ${keys} together (${shown(deeper)}: ${methods.join(', ') || 'no operations'}), with no DELETE there: Tend could not remove one; if the platform removes them another way, declare it with x-tend-type and x-tend-op: delete`;
}
