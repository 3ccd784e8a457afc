import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type {
  Address,
  Announcement,
  AnnouncementProblem,
  Diagnostic,
  JsonSchema,
  ResourceDecl,
} from '../core/index.js';
import {
  isForbiddenKey,
  nearMatches,
  ownValue,
  parseAddress,
  readAnnouncement,
  specFieldPath,
  TendError,
  toTendError,
} from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { secretFields } from '../engine/index.js';
import type { PathSegment } from '../intent/index.js';
import { parseDocuments, positionOf } from '../intent/index.js';
import type { TwinEntry } from '../store/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace, rememberWorkspaceName } from './workspace.js';

/** The largest announcement file read. */
export const MAX_ANNOUNCEMENT_FILE_BYTES = 1024 * 1024;

/** What `announce` is asked: the announcements as plain data, or a file holding them. */
export interface AnnounceRequest extends WorkspaceSelection {
  /** One announcement or a list, as plain data (flags gathered into one mapping, a JSON body). */
  readonly input?: unknown;
  /** A JSON or YAML file with one announcement, a list, or (YAML) several documents. */
  readonly file?: string;
  /** How a key path is named in messages (the CLI names its flags); default: the key path. */
  readonly label?: (path: string) => string;
}

/** What `announce` stored, and what it has to say about it. */
export interface AnnounceReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  /** The announcements stored, in the order given. */
  readonly announcements: readonly Announcement[];
  /** Stored, but worth knowing: an undeclared field explains nothing to arbitrate. */
  readonly warnings: readonly string[];
}

/** What `listAnnouncements` is asked. */
export interface ListAnnouncementsRequest extends WorkspaceSelection {
  readonly address?: Address;
  /** Expired announcements too (default: only those active now). */
  readonly all?: boolean;
}

/** The announcements of a workspace, oldest first, and the time they were read at. */
export interface AnnouncementList {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly at: string;
  readonly announcements: readonly Announcement[];
}

/**
 * Thrown when announcements are invalid: carries every problem found, each naming where (a file's
 * line and column, or which announcement of a list), the key, what is wrong and what to write instead.
 * Nothing was stored.
 */
export class AnnouncementError extends TendError {
  readonly errors: readonly string[];
  constructor(errors: readonly string[]) {
    const n = errors.length;
    super('announce.invalid', `the announcement has ${n} problem${n === 1 ? '' : 's'}`, {
      phase: 'load',
      hint: 'nothing was stored; fix every problem listed and announce again',
    });
    this.errors = errors;
  }
}

/** One announcement as written, and how to say where a key of it is (a message prefix). */
export interface AnnouncementItem {
  readonly data: unknown;
  readonly where: (path: string, target: 'key' | 'value') => string;
}

/**
 * Records what an actor declared it sets (DESIGN.md §7): validates each announcement (every problem at
 * once), checks that its address is a declared resource or one Tend remembers (suggesting near
 * matches) and that its field is declared there or exists on the remembered object, then stores them
 * all. It does not take the workspace lease: an announcement is input from an actor, like an
 * audit-feed entry, and must reach a workspace that a running `tend run` holds (the pass reads it
 * from the store). A field that exists but is not declared is stored with a warning: Tend does not
 * manage it, so there is nothing to arbitrate. Throws AnnouncementError, storing nothing, when any
 * announcement is invalid.
 */
export async function announce(ctx: AppContext, request: AnnounceRequest): Promise<AnnounceReport> {
  const items = await itemsOf(request);
  const now = ctx.clock.now();
  const labelOf = request.label ?? ((p: string) => p);
  const reads = items.map((item) => ({
    item,
    read: readAnnouncement(item.data, now, request.label ? { label: request.label } : {}),
  }));
  const describe = (item: AnnouncementItem, p: AnnouncementProblem): string =>
    `${item.where(p.path, p.at ?? 'value')}${p.path === '' ? p.message : `${labelOf(p.path)}: ${p.message}`}`;
  let opened;
  try {
    opened = await openWorkspace(ctx, request);
  } catch (e) {
    // The announcement's own problems come first: they need no workspace to be reported.
    const errors = reads.flatMap(({ item, read }) =>
      read.ok ? [] : read.problems.map((p) => describe(item, p)),
    );
    if (errors.length === 0) throw e;
    errors.push(`(addresses and fields were not checked: ${toTendError(e).message})`);
    throw new AnnouncementError(errors);
  }
  const { ws, nameSource } = opened;
  try {
    const errors: string[] = [];
    const warnings: string[] = [];
    const announcements: Announcement[] = [];
    const known = await knownResources(ws);
    for (const { item, read } of reads) {
      const problems: AnnouncementProblem[] = read.ok ? [] : [...read.problems];
      const target = targetOf(item.data);
      if (target) {
        const found = checkTarget(ws, known, target.address, target.field);
        for (const p of found.problems) problems.push(p);
        for (const w of found.warnings) warnings.push(`${item.where('field', 'value')}${w}`);
      }
      for (const p of problems) errors.push(describe(item, p));
      if (read.ok && problems.length === 0) {
        announcements.push(read.value);
        for (const w of read.warnings) warnings.push(`${item.where('', 'value')}${w}`);
      }
    }
    if (errors.length > 0) throw new AnnouncementError(errors);

    await rememberWorkspaceName(ws, nameSource);
    for (const a of announcements) await ws.store.putAnnouncement(a);
    return { workspace: { name: ws.name, source: nameSource }, announcements, warnings };
  } finally {
    await ws.close();
  }
}

/** The announcements of a workspace: those active now, or all of them; oldest first. Read-only. */
export async function listAnnouncements(
  ctx: AppContext,
  request: ListAnnouncementsRequest,
): Promise<AnnouncementList> {
  const { ws, nameSource } = await openWorkspace(ctx, request, 'write', { recorded: true });
  try {
    const at = ctx.clock.now().toISOString();
    const announcements = await ws.store.announcements({
      ...(request.address ? { address: request.address } : {}),
      ...(request.all ? {} : { activeAt: at }),
    });
    return { workspace: { name: ws.name, source: nameSource }, at, announcements };
  } finally {
    await ws.close();
  }
}

/**
 * Reads a JSON or YAML file of announcements: one mapping, a list of them, or (YAML) several
 * documents. Each comes with where its keys are written, for messages. Throws AnnouncementError when
 * the file cannot be read or parsed.
 */
export async function readAnnouncementFile(file: string): Promise<AnnouncementItem[]> {
  const path = resolve(file);
  let text: string;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new AnnouncementError([`${file}: is not a file`]);
    if (info.size > MAX_ANNOUNCEMENT_FILE_BYTES) {
      throw new AnnouncementError([
        `${file}: is ${info.size} bytes, more than ${MAX_ANNOUNCEMENT_FILE_BYTES}; announce fewer changes per file`,
      ]);
    }
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof AnnouncementError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new AnnouncementError([
      `${file}: ${code === 'ENOENT' ? 'no such file' : `cannot be read (${e instanceof Error ? e.message : String(e)})`}`,
    ]);
  }
  const { documents, diagnostics } = parseDocuments(file, text);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new AnnouncementError(errors.map(formatDiagnosticLine));
  const items: AnnouncementItem[] = [];
  for (const doc of documents) {
    const at = (prefix: readonly PathSegment[]) => (path: string, target: 'key' | 'value') => {
      const segments = path === '' ? [] : splitPath(path);
      const pos = positionOf(doc, [...prefix, ...segments], path === '' ? 'value' : target);
      return `${doc.file}:${pos.line}:${pos.column}: `;
    };
    if (Array.isArray(doc.value)) {
      doc.value.forEach((data: unknown, i) => items.push({ data, where: at([i]) }));
    } else items.push({ data: doc.value, where: at([]) });
  }
  if (items.length === 0) {
    throw new AnnouncementError([
      `${file}: holds no announcement; write a mapping with address, field, value and actor, or a list of them`,
    ]);
  }
  return items;
}

/** The items of a request: its file's, or its input (a list gives one item per entry). */
async function itemsOf(request: AnnounceRequest): Promise<AnnouncementItem[]> {
  if (request.file !== undefined && request.input !== undefined) {
    throw new AnnouncementError([
      'give the announcement either as data or as a file, not both (the file gives every key)',
    ]);
  }
  if (request.file !== undefined) return readAnnouncementFile(request.file);
  if (Array.isArray(request.input)) {
    if (request.input.length === 0) {
      throw new AnnouncementError(['the list of announcements is empty; give at least one']);
    }
    const n = request.input.length;
    return request.input.map((data: unknown, i) => ({
      data,
      where: () => (n === 1 ? '' : `announcement ${i + 1}: `),
    }));
  }
  return [{ data: request.input, where: () => '' }];
}

/** A field path's segments for positionOf: `motivation.kind` → [motivation, kind]. */
function splitPath(path: string): PathSegment[] {
  return path.split('.');
}

/** `file:line:column: message; hint` — one line, like every other announcement problem. */
function formatDiagnosticLine(d: Diagnostic): string {
  return `${d.file ?? ''}:${d.line ?? 1}:${d.column ?? 1}: ${d.message}${d.hint ? `; ${d.hint}` : ''}`;
}

/** The resources an announcement may name: declared ones and those Tend remembers. */
interface KnownResources {
  readonly declared: ReadonlyMap<string, ResourceDecl>;
  readonly remembered: ReadonlyMap<string, TwinEntry>;
  /** Every address, sorted (for suggestions). */
  readonly addresses: readonly string[];
}

async function knownResources(ws: Workspace): Promise<KnownResources> {
  const declared = new Map(ws.intent.resources.map((r) => [r.address as string, r] as const));
  const remembered = new Map(
    (await ws.store.listTwin()).map((t) => [t.address as string, t] as const),
  );
  const addresses = [...new Set([...declared.keys(), ...remembered.keys()])].sort();
  return { declared, remembered, addresses };
}

/** The address and field an item names, when both are well formed (checked even if other keys fail). */
function targetOf(data: unknown): { address: Address; field: string } | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const address = ownValue(data, 'address');
  const field = ownValue(data, 'field');
  if (typeof address !== 'string' || !parseAddress(address)) return undefined;
  return {
    address: address as Address,
    field: typeof field === 'string' && field !== 'spec' ? specFieldPath(field) : '',
  };
}

/**
 * Whether `address` names a resource of the workspace, and `field` a field of it: declared (fine),
 * on the remembered object or in the type's schema (a warning: nothing to arbitrate), or neither (a
 * problem, with near matches). A secret field is refused: its value would have to be stored.
 */
function checkTarget(
  ws: Workspace,
  known: KnownResources,
  address: Address,
  field: string,
): { problems: AnnouncementProblem[]; warnings: string[] } {
  const decl = known.declared.get(address);
  const twin = known.remembered.get(address);
  if (!decl && !twin) {
    const near = nearMatches(address, known.addresses);
    return {
      problems: [
        {
          path: 'address',
          message:
            near.length > 0
              ? `no resource ${address} in the intent or among the objects Tend manages; did you mean ${near.join(' or ')}?`
              : `no resource ${address} in the intent or among the objects Tend manages; name one that \`tend status\` lists`,
        },
      ],
      warnings: [],
    };
  }
  const segments = field.split('.');
  if (field === '' || segments.some((s) => s === '' || isForbiddenKey(s))) {
    // The field itself is malformed: readAnnouncement says so.
    return { problems: [], warnings: [] };
  }
  const type = decl?.type ?? twin!.type;
  let schema: JsonSchema | undefined;
  let secrets: readonly string[] = [];
  try {
    schema = ws.typeOf(type).info.schema;
    secrets = secretFields(ws, type, address);
  } catch {
    // A remembered resource of a type no provider offers any more: only what is remembered counts.
  }
  if (secrets.includes(segments[0]!)) {
    return {
      problems: [
        {
          path: 'field',
          message: `${segments[0]} of ${address} is a secret: Tend never stores secret values and never compares them, so there is nothing to announce`,
        },
      ],
      warnings: [],
    };
  }
  if (decl && hasPath(decl.spec, segments)) return { problems: [], warnings: [] };
  const exists =
    (twin !== undefined && hasPath(twin.fields, segments)) ||
    (schema !== undefined && schemaHas(schema, segments));
  if (exists) {
    const why = decl
      ? `${field} is not declared for ${address} in the intent: Tend does not manage it, so a change to it is not drift and there is nothing to arbitrate`
      : `${address} is not declared in the intent (Tend only remembers it): there is nothing to arbitrate for it`;
    return {
      problems: [],
      warnings: [
        `${why}; the announcement is stored, and explains a change once the intent declares the field`,
      ],
    };
  }
  const candidates = [
    ...new Set([
      ...(decl ? leafPaths(decl.spec) : []),
      ...(twin ? leafPaths(twin.fields) : []),
      ...(schema ? schemaPaths(schema) : []),
    ]),
  ];
  const near = nearMatches(field, candidates);
  return {
    problems: [
      {
        path: 'field',
        message: `${address} has no field ${field}: it is not declared in the intent${twin ? ', not on the object Tend last observed' : ''}${schema ? ' and not in its type' : ''}; ${near.length > 0 ? `did you mean ${near.join(' or ')}?` : 'write the field as in the resource document, e.g. spec.replicas'}`,
      },
    ],
    warnings: [],
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** True when `path` leads to a value (null included) inside `root`. */
function hasPath(root: unknown, path: readonly string[]): boolean {
  let at: unknown = root;
  for (const seg of path) {
    if (Array.isArray(at) && /^\d+$/.test(seg)) {
      if (Number(seg) >= at.length) return false;
      at = at[Number(seg)];
    } else if (isRecord(at) && Object.prototype.hasOwnProperty.call(at, seg)) {
      at = at[seg];
    } else return false;
  }
  return true;
}

/** Every path to a field of a value, a mapping's own path included (`tags`, `tags.team`). */
function leafPaths(root: unknown, prefix = '', depth = 0): string[] {
  if (!isRecord(root) || depth > 8) return [];
  const out: string[] = [];
  for (const k of Object.keys(root)) {
    const p = prefix === '' ? k : `${prefix}.${k}`;
    out.push(p);
    for (const q of leafPaths(root[k], p, depth + 1)) out.push(q);
  }
  return out;
}

/** The schemas a schema combines with (allOf / anyOf / oneOf), itself first. */
function variants(schema: JsonSchema): JsonSchema[] {
  const out = [schema];
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) if (isRecord(s)) out.push(s);
  }
  return out;
}

/** True when the schema describes a field at `path` (a named property, a map entry, a list item). */
function schemaHas(schema: JsonSchema, path: readonly string[]): boolean {
  let level: JsonSchema[] = [schema];
  for (const seg of path) {
    const next: JsonSchema[] = [];
    for (const s of level.flatMap(variants)) {
      const props = s['properties'];
      if (isRecord(props) && isRecord(ownValue(props, seg))) next.push(props[seg] as JsonSchema);
      const extra = s['additionalProperties'];
      if (extra === true) return true;
      if (isRecord(extra)) next.push(extra);
      const items = s['items'];
      if (/^\d+$/.test(seg) && isRecord(items)) next.push(items);
    }
    if (next.length === 0) return false;
    level = next;
  }
  return true;
}

/** The named properties of a schema, two levels deep (for suggestions). */
function schemaPaths(schema: JsonSchema, prefix = '', depth = 0): string[] {
  const out: string[] = [];
  for (const s of variants(schema)) {
    const props = s['properties'];
    if (!isRecord(props)) continue;
    for (const k of Object.keys(props)) {
      const p = prefix === '' ? k : `${prefix}.${k}`;
      out.push(p);
      const sub = props[k];
      if (depth < 1 && isRecord(sub)) for (const q of schemaPaths(sub, p, depth + 1)) out.push(q);
    }
  }
  return out;
}
