import { resolve } from 'node:path';
import type { JsonSchema, ResourceTypeInfo } from '../core/index.js';
import { valueAt } from '../core/index.js';
import { allowedProperties } from './close-schema.js';
import type { TrustedDirs } from './confine.js';
import { fileKind, locate, trustedDirsHint } from './confine.js';
import type { FieldReader } from './fields.js';
import { isRecord, typeName } from './fields.js';
import type { PathSegment } from './positions.js';
import { formatPath } from './positions.js';
import { didYouMean, listOf } from './suggest.js';

// Secrets in intent are references to where a secret lives: `{ fromEnv: NAME }` or
// `{ fromFile: PATH }`. Whoever can change the intent chooses them, so where they may stand and what
// they may read is confined: a reference is read only into a field that is a secret (the provider
// says so, or the resource lists it in `secrets:`), and a file only from the intent directory or a
// directory the operator of Tend names in TEND_SECRET_DIRS.

/** What checking secret references needs from the outside. */
export interface SecretContext {
  /** The intent directory: relative `fromFile` paths start there. */
  readonly dir: string;
  /** Where `fromFile` may read from. */
  readonly secretDirs: TrustedDirs;
  /** When given, `fromEnv` variables missing from it are reported as warnings. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** True for a secret reference: exactly `{ fromEnv: NAME }` or `{ fromFile: PATH }`. */
export function isSecretRef(v: unknown): v is { fromEnv: string } | { fromFile: string } {
  if (!isRecord(v)) return false;
  const keys = Object.keys(v);
  if (keys.length !== 1) return false;
  const key = keys[0]!;
  return (key === 'fromEnv' || key === 'fromFile') && typeof v[key] === 'string' && v[key] !== '';
}

const SECRET_HINT = 'use { fromEnv: VAR } or { fromFile: path }';

/** One entry of a Resource document's `secrets:` list. */
export interface ListedSecret {
  readonly field: string;
  readonly index: number;
}

/**
 * Reads `secrets:`, the top-level spec fields a Resource declares as secrets although its provider
 * does not mark them: a list of field names. Wrong shapes are reported; the good entries returned.
 */
export function readSecretsList(r: FieldReader, value: Record<string, unknown>): ListedSecret[] {
  const list = value['secrets'];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    r.report(
      'field.type',
      `\`secrets\` must be a list of spec field names, got ${typeName(list)}`,
      ['secrets'],
    );
    return [];
  }
  const out: ListedSecret[] = [];
  list.forEach((item: unknown, index) => {
    if (typeof item !== 'string' || item === '') {
      r.report(
        'field.type',
        `\`secrets[${index}]\` must be the name of a spec field, got ${typeName(item)}`,
        ['secrets', index],
      );
    } else if (!out.some((s) => s.field === item)) out.push({ field: item, index });
  });
  return out;
}

/** What is derived from a type's schema, computed once per schema (not once per resource). */
const perSchema = new WeakMap<
  JsonSchema,
  { props: Map<string, unknown>; names?: string[]; capable?: readonly string[] }
>();

function derived(schema: JsonSchema) {
  let entry = perSchema.get(schema);
  if (!entry) {
    entry = { props: computePropertySchemas(schema) };
    perSchema.set(schema, entry);
  }
  return entry;
}

/** The schema of each top-level property (following composition branches and local refs). */
function propertySchemas(schema: JsonSchema): Map<string, unknown> {
  return derived(schema).props;
}

/** The names of the fields a schema allows, sorted. */
function fieldNames(schema: JsonSchema): string[] {
  const entry = derived(schema);
  entry.names ??= allowedProperties(schema, schema).sort();
  return entry.names;
}

function computePropertySchemas(schema: JsonSchema): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const visit = (node: unknown, depth: number): void => {
    if (!isRecord(node) || depth > 8) return;
    const props = node['properties'];
    if (isRecord(props)) {
      for (const [k, v] of Object.entries(props)) if (!out.has(k)) out.set(k, v);
    }
    for (const key of ['allOf', 'anyOf', 'oneOf']) {
      const branches = node[key];
      if (Array.isArray(branches)) for (const b of branches) visit(b, depth + 1);
    }
  };
  visit(schema, 0);
  return out;
}

function hasFlag(node: unknown, key: string, value: unknown = true): boolean {
  if (!isRecord(node)) return false;
  if (node[key] === value) return true;
  const allOf = node['allOf'];
  return Array.isArray(allOf) && allOf.some((m) => isRecord(m) && m[key] === value);
}

/** True when a property's schema may hold text (no `type`, or one that includes string). */
function acceptsText(prop: unknown): boolean {
  if (!isRecord(prop)) return true;
  const type = prop['type'];
  if (type === undefined) return true;
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}

/**
 * The top-level fields of a type that may hold a secret reference: sensitive ones (`x-tend-sensitive`,
 * `writeOnly` with `format: password`, …), write-only ones (`writeOnly`, `x-tend-write-only`),
 * `format: password` ones, and those the resource lists in `secrets:`.
 */
function secretCapable(info: ResourceTypeInfo, listed: readonly ListedSecret[]): Set<string> {
  const out = new Set<string>([
    ...info.sensitive,
    ...(info.writeOnly ?? []),
    ...listed.map((s) => s.field),
  ]);
  const entry = derived(info.schema);
  entry.capable ??= [...entry.props]
    .filter(([, prop]) => hasFlag(prop, 'format', 'password') || hasFlag(prop, 'writeOnly'))
    .map(([name]) => name);
  for (const name of entry.capable) out.add(name);
  return out;
}

/** Checks `secrets:` against the type: each entry must be a field of its schema that holds text. */
function checkListed(r: FieldReader, info: ResourceTypeInfo, listed: readonly ListedSecret[]) {
  if (listed.length === 0) return;
  const props = propertySchemas(info.schema);
  const names = fieldNames(info.schema);
  for (const { field, index } of listed) {
    const at: PathSegment[] = ['secrets', index];
    if (names.length > 0 && !names.includes(field)) {
      r.report(
        'secret.unknown_field',
        `\`secrets\` names \`${field}\`, which is not a field of ${info.name}; its fields: ${listOf(names)}.${didYouMean(field, names)}`,
        at,
        { hint: 'list the top-level spec fields that hold a secret reference' },
      );
    } else if (!acceptsText(props.get(field))) {
      const type = (props.get(field) as Record<string, unknown>)['type'];
      r.report(
        'secret.not_text',
        `\`secrets\` names \`${field}\`, a field of type ${Array.isArray(type) ? type.join(' or ') : String(type)}: a secret is read as text`,
        at,
        { hint: 'only a text field can take a secret; write this field as a value' },
      );
    }
  }
}

/**
 * Checks where a `fromFile` path leads, without reading it: into the intent directory or one named
 * in TEND_SECRET_DIRS (symbolic links followed), to a regular file. `at` is the reference's path.
 */
export function checkSecretFile(
  r: FieldReader,
  file: string,
  at: readonly PathSegment[],
  ctx: SecretContext,
): void {
  const path = [...at, 'fromFile'];
  const abs = resolve(ctx.dir, file);
  const where = locate(abs, ctx.secretDirs.roots);
  const variable = ctx.secretDirs.variable;
  if (!where.inside) {
    const via = where.real === abs ? '' : `, which leads to ${where.real}`;
    const trusted = ctx.secretDirs.roots.length > 1 ? ` and the directories in ${variable}` : '';
    r.report(
      'secret.outside',
      `\`${formatPath(path)}\` names ${file}${via}: outside the intent directory${trusted}`,
      path,
      {
        hint: `keep secret files inside the intent directory, or have whoever runs tend name their directory in ${variable} (${trustedDirsHint(variable)})`,
      },
    );
    return;
  }
  if (!where.exists) {
    const why = where.code === 'ELOOP' ? 'is a loop of symbolic links' : 'does not exist';
    r.report('secret.unavailable', `secret file ${file} ${why} (looked at ${abs})`, path, {
      severity: 'warning',
      hint: 'create the file before applying (paths are relative to the intent directory)',
    });
    return;
  }
  if (!where.stats.isFile()) {
    r.report(
      'secret.not_file',
      `\`${formatPath(path)}\` names ${file}, which is ${fileKind(where.stats)}: a secret file must be a regular file`,
      path,
      { hint: 'name the file that holds the secret' },
    );
  }
}

/** Checks where one accepted reference reads from. */
function checkSource(
  r: FieldReader,
  ref: { fromEnv: string } | { fromFile: string },
  at: readonly PathSegment[],
  ctx: SecretContext,
): void {
  if ('fromFile' in ref) {
    checkSecretFile(r, ref.fromFile, at, ctx);
  } else if (ctx.env !== undefined && ctx.env[ref.fromEnv] === undefined) {
    r.report(
      'secret.unavailable',
      `environment variable ${ref.fromEnv} is not set`,
      [...at, 'fromEnv'],
      { severity: 'warning', hint: `export ${ref.fromEnv} before applying` },
    );
  }
}

function refKey(ref: { fromEnv: string } | { fromFile: string }): 'fromEnv' | 'fromFile' {
  return 'fromFile' in ref ? 'fromFile' : 'fromEnv';
}

/**
 * Judges every secret reference of a spec and every field that must hold one:
 * - a field that is a secret (sensitive, or listed in `secrets:`) must be a reference, never a
 *   value (`secret.inline`; the value is never printed);
 * - a reference is accepted only in a top-level field that may hold a secret (see secretCapable);
 *   anywhere else it is `secret.not_allowed`, so a pull request cannot send a file or a variable to
 *   a platform as, say, a tag;
 * - a `fromFile` must lead to a regular file inside the trusted directories (checkSecretFile).
 * Returns the spec paths (below `spec`) that schema validation must leave to these rules.
 */
export function checkSecrets(
  r: FieldReader,
  info: ResourceTypeInfo,
  spec: Readonly<Record<string, unknown>>,
  listed: readonly ListedSecret[],
  ctx: SecretContext,
): PathSegment[][] {
  checkListed(r, info, listed);
  const mustBe = new Set<string>([...info.sensitive, ...listed.map((s) => s.field)]);
  const mayBe = secretCapable(info, listed);
  const exempt: PathSegment[][] = [];
  for (const [field, value] of Object.entries(spec)) {
    const at: PathSegment[] = ['spec', field];
    if (isSecretRef(value)) {
      exempt.push([field]);
      if (mayBe.has(field)) {
        checkSource(r, value, at, ctx);
        if (info.sentInUrl?.includes(field) === true) inUrl(r, info, at);
      } else notAllowed(r, info, at, refKey(value), true);
    } else if (mustBe.has(field)) {
      exempt.push([field]);
      // Never print the value: it may be the secret itself.
      const message = isRecord(value)
        ? `\`${formatPath(at)}\` is a secret: write exactly one of fromEnv or fromFile`
        : `\`${formatPath(at)}\` is a secret and must not be written in the intent`;
      r.report('secret.inline', message, at, { hint: SECRET_HINT });
    } else {
      for (const nested of nestedRefs(value, at)) {
        exempt.push(nested.path.slice(1));
        notAllowed(r, info, nested.path, nested.key, false);
      }
    }
  }
  // Sensitive fields written below the top level (a provider may name `a.b`): never as values.
  for (const field of info.sensitive) {
    if (!field.includes('.')) continue;
    const path = field.split('.');
    const v = valueAt(spec, path);
    if (v === undefined || isSecretRef(v)) continue;
    exempt.push(path);
    r.report(
      'secret.inline',
      `\`${formatPath(['spec', ...path])}\` is a secret and must not be written in the intent`,
      ['spec', ...path],
      { hint: SECRET_HINT },
    );
  }
  return exempt;
}

/**
 * A secret the create sends in its URL's query string (`POST /users?password=…`): allowed — the
 * platform takes it nowhere else — but the URL is what access logs and proxies keep, so it is said.
 */
function inUrl(r: FieldReader, info: ResourceTypeInfo, at: PathSegment[]): void {
  r.report(
    'secret.in_url',
    `\`${formatPath(at)}\` is a secret, and ${info.name} objects are created with it in the URL's query string, which the platform's access logs and any proxy may keep`,
    at,
    {
      severity: 'warning',
      hint: 'rotate it after the create, or keep it out of the intent if the API takes it another way (`tend providers inspect` shows the create)',
    },
  );
}

/** Secret references below a top-level field (iteratively: specs may be deep). */
function nestedRefs(
  value: unknown,
  at: readonly PathSegment[],
): { path: PathSegment[]; key: 'fromEnv' | 'fromFile' }[] {
  const out: { path: PathSegment[]; key: 'fromEnv' | 'fromFile' }[] = [];
  const stack: { v: unknown; path: PathSegment[] }[] = [{ v: value, path: [...at] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ v: item, path: [...path, i] }));
    } else if (isRecord(v)) {
      for (const [k, item] of Object.entries(v)) {
        const p = [...path, k];
        if (isSecretRef(item)) out.push({ path: p, key: refKey(item) });
        else stack.push({ v: item, path: p });
      }
    }
  }
  return out.reverse();
}

function notAllowed(
  r: FieldReader,
  info: ResourceTypeInfo,
  at: readonly PathSegment[],
  key: 'fromEnv' | 'fromFile',
  topLevel: boolean,
): void {
  const field = String(at[1]);
  const where = formatPath(at);
  const message = topLevel
    ? `\`${where}\` is not a secret field of ${info.name}: { ${key} } is read only into a field the provider marks sensitive, write-only or password, or one listed in \`secrets:\``
    : `\`${where}\` is inside \`spec.${field}\`: { ${key} } is read only into a top-level spec field that holds a secret`;
  r.report('secret.not_allowed', message, [...at, key], {
    target: 'key',
    hint: topLevel
      ? `if \`${field}\` really holds a secret, mark it in the provider's overlay (x-tend-sensitive: true) or add \`secrets: [${field}]\` to this Resource document; otherwise write the value itself`
      : 'write the value itself; a secret goes in a top-level field the provider marks sensitive, or one listed in `secrets:`',
  });
}
