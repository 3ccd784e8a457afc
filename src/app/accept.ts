import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { Address, ResourceDecl, ResourceTypeInfo } from '../core/index.js';
import {
  canonicalJson,
  defineKey,
  denies,
  isMarkerTag,
  policyMatches,
  verdictText,
  withoutMarkerIn,
  nearMatches,
  parseAddress,
  setKey,
  TendError,
  toTendError,
  valueAt,
} from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import type { PatchLocation } from '../intent/index.js';
import { fieldPosition, isSecretRef, parseFieldPath, patchResourceField } from '../intent/index.js';
import { evaluatePolicies } from '../policy/index.js';
import type { AppContext } from './context.js';
import { commitOnNewBranch } from './git-commit.js';
import { acceptInRepository, registeredGitSource } from './accept-git-workspace.js';
import type { WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';
import { writeFileAtomic } from './write-file-atomic.js';

/** What `accept` is asked: take a resource field's observed value into the intent. */
export interface AcceptRequest extends WorkspaceSelection {
  /** The resource, `provider.type/name`. */
  readonly address: string;
  /** The field below `spec`: `replicas`, `tags.team`, `ports[0]` (a `spec.` prefix is dropped). */
  readonly field: string;
  /**
   * The value to write, as observed by the caller (the engine passes what it saw; `--value` on the
   * command line). Absent: the object is read from the platform now.
   */
  readonly value?: unknown;
  /** Write the patched file in place (atomically). */
  readonly write?: boolean;
  /**
   * Commit the patch on a new branch `tend/accept-…` of the file's git work tree and return to the
   * branch checked out before (the working tree ends as it started).
   */
  readonly git?: boolean;
}

/** Where the value came from. */
export type AcceptValueSource = 'explicit' | 'platform' | 'twin';

/** The outcome of `accept`. */
export interface AcceptReport {
  readonly address: Address;
  /** The field, below `spec`, dotted. */
  readonly field: string;
  /**
   * `patched`: `diff` changes the file; `unchanged`: the intent already declares the value;
   * `elsewhere`: the value does not live in this field (a reference, a shared anchor, a merge key,
   * a secret reference): nothing was patched, `elsewhere` says where the change belongs.
   */
  readonly outcome: 'patched' | 'unchanged' | 'elsewhere';
  readonly value: unknown;
  readonly valueSource: AcceptValueSource;
  /** The intent file of the resource, relative to the intent directory. */
  readonly file: string;
  /** The first line the patch changes (1-based), when patched. */
  readonly line?: number;
  /** A unified diff, `a/<file>` → `b/<file>`; empty unless patched. */
  readonly diff: string;
  /** True when the patch was written: to the file in place, or in a commit on `branch`. */
  readonly written: boolean;
  /** With `git`: the new branch, its commit, and the branch checked out again. */
  readonly branch?: string;
  readonly commit?: string;
  readonly returnedTo?: string;
  /**
   * A git workspace registered in the fleet's store: the repository the branch was pushed to
   * (`git push origin <branch>`; never the ref the workspace follows).
   */
  readonly pushedTo?: string;
  readonly elsewhere?: { readonly reason: string; readonly where?: PatchLocation };
  /** Things the user should know (the platform could not be read, a value was normalised, …). */
  readonly notes: readonly string[];
}

/** Error codes of `accept` that are the caller's mistake (the CLI exits 2 for them). */
export const ACCEPT_USAGE_ERRORS: ReadonlySet<string> = new Set([
  'accept.unknown_address',
  'accept.unknown_field',
  'accept.invalid_field',
  'accept.output_only',
  'accept.invalid_value',
]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The observed value reduced to what the intent compares (core/diff.ts): for a declared mapping,
 * only its declared keys (a key the platform no longer has is left out, so accepting removes it);
 * anything else whole.
 */
function declaredPart(declared: unknown, observed: unknown): unknown {
  if (!isPlainObject(declared) || !isPlainObject(observed)) return observed;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(declared)) {
    if (!Object.prototype.hasOwnProperty.call(observed, key)) continue;
    setKey(out, key, declaredPart(declared[key], observed[key]));
  }
  return out;
}

/** Tend's marker tags removed from a value of the type's marker field. */
function withoutMarker(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!isMarkerTag(k)) setKey(out, k, v);
  return out;
}

/** The schema's top-level properties (without following composition: names for suggestions). */
function schemaProperties(info: ResourceTypeInfo): Record<string, unknown> {
  const props = info.schema['properties'];
  return isPlainObject(props) ? props : {};
}

/** Why a field must never be written into the intent, or undefined when it may. */
function secretReason(
  decl: ResourceDecl,
  info: ResourceTypeInfo,
  segments: readonly string[],
): string | undefined {
  const path = segments.join('.');
  const top = segments[0]!;
  const overlaps = (f: string) =>
    f === path || path.startsWith(`${f}.`) || f.startsWith(`${path}.`);
  if (info.sensitive.some(overlaps)) return `${info.name} marks it sensitive`;
  if ((info.writeOnly ?? []).some(overlaps))
    return 'it is write-only (the platform never returns it)';
  if (isSecretRef(decl.spec[top])) return 'the intent fills it from a secret reference';
  const prop = schemaProperties(info)[top];
  if (isPlainObject(prop) && (prop['format'] === 'password' || prop['writeOnly'] === true)) {
    return 'its schema marks it a password';
  }
  return undefined;
}

/** The declared resource at `address`, or a usage error naming the nearest declared ones. */
function findDeclared(ws: Workspace, address: string): ResourceDecl {
  const decl = ws.intent.resources.find((r) => r.address === address);
  if (decl) return decl;
  const known = ws.intent.resources.map((r) => r.address as string).sort();
  const near = parseAddress(address)
    ? nearMatches(address, known)
    : known.filter((a) => a.slice(a.indexOf('/') + 1) === address);
  const what = parseAddress(address) ? 'no resource' : 'not an address (provider.type/name):';
  throw new TendError(
    'accept.unknown_address',
    `${what} ${address}${parseAddress(address) ? ' in the intent' : ''}${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
    { hint: 'accept takes the address of a declared resource, as `tend plan` lists it' },
  );
}

/** How a value reads in a message and a commit subject. */
function display(value: unknown): string {
  return typeof value === 'string' ? value : canonicalJson(value);
}

/** Path relative to the intent directory, with forward slashes. */
function relativeTo(dir: string, file: string): string {
  return relative(dir, file).split(sep).join('/');
}

/** A branch name part: letters, digits, `.`, `_` and `-` only. */
function slug(text: string): string {
  return (
    text
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/\.{2,}/g, '.')
      .replace(/^[.-]+|[.-]+$/g, '') || 'field'
  );
}

interface Observed {
  readonly value: unknown;
  readonly source: AcceptValueSource;
}

/** Reads the object now; falls back to what Tend last observed when the platform cannot answer. */
async function observedFields(
  ws: Workspace,
  decl: ResourceDecl,
  notes: string[],
): Promise<{ fields: Readonly<Record<string, unknown>>; source: AcceptValueSource }> {
  const twin = await ws.store.getTwin(decl.address);
  if (!twin) {
    throw new TendError('accept.not_observed', `Tend has not observed ${decl.address} yet`, {
      address: decl.address,
      hint: 'run `tend apply` (or `tend plan`) first, or give the value with --value',
    });
  }
  const { provider, info } = ws.typeOf(decl.type);
  try {
    const object = await provider.read(info.name, twin.objectId);
    if (!object) {
      throw new TendError(
        'accept.object_gone',
        `${decl.address} (object ${twin.objectId}) no longer exists on the platform: there is no value to accept`,
        { address: decl.address, hint: '`tend apply` creates it again from the intent' },
      );
    }
    return { fields: object.fields, source: 'platform' };
  } catch (e) {
    const err = toTendError(e);
    if (err.code === 'accept.object_gone') throw err;
    notes.push(
      `the platform could not be read (${err.message}); using what Tend last observed, at ${twin.observedAt}`,
    );
    return { fields: twin.fields, source: 'twin' };
  }
}

/** The value to accept and where it came from; usage errors for fields that do not exist. */
async function valueToAccept(
  ws: Workspace,
  decl: ResourceDecl,
  info: ResourceTypeInfo,
  segments: readonly string[],
  request: Omit<AcceptRequest, keyof WorkspaceSelection>,
  notes: string[],
): Promise<Observed> {
  const declared = valueAt(decl.spec, segments);
  const top = segments[0]!;
  const inSchema = Object.prototype.hasOwnProperty.call(schemaProperties(info), top);
  const field = segments.join('.');
  const unknownField = (observedKeys: readonly string[]) => {
    const names = [
      ...new Set([
        ...Object.keys(decl.spec),
        ...observedKeys,
        ...Object.keys(schemaProperties(info)),
      ]),
    ].sort();
    const near = nearMatches(top, names);
    return new TendError(
      'accept.unknown_field',
      `${decl.address} has no field ${field}${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
      { address: decl.address, hint: `its fields: ${names.join(', ') || '(none)'}` },
    );
  };
  if (request.value !== undefined) {
    const schemaKnown = Object.keys(schemaProperties(info)).length === 0 || inSchema;
    if (declared === undefined && !schemaKnown) throw unknownField([]);
    return { value: request.value, source: 'explicit' };
  }
  const { fields, source } = await observedFields(ws, decl, notes);
  const observed = valueAt(fields, segments);
  if (observed === undefined) {
    if (declared === undefined && !inSchema) throw unknownField(Object.keys(fields));
    throw new TendError(
      'accept.no_value',
      `the platform reports no ${field} for ${decl.address}: there is no value to accept`,
      {
        address: decl.address,
        hint:
          declared === undefined
            ? 'nothing to do: the intent does not declare it either'
            : 'to stop declaring it, remove it from the intent by hand',
      },
    );
  }
  let value = declaredPart(declared, observed);
  if (info.markerField !== undefined && segments.length === 1 && top === info.markerField) {
    value =
      info.markerKind === undefined || info.markerKind === 'map'
        ? withoutMarker(value)
        : withoutMarkerIn(info.markerKind, value);
  }
  return { value, source };
}

/**
 * Accepts drift into code: the smallest patch to the intent file of `address` that makes `field`
 * declare the observed value (the value given, or the object read from the platform now, or what
 * Tend last observed when the platform cannot answer), as a unified diff; written in place with
 * `write`, committed on a new branch with `git`. Nothing is patched where the value lives elsewhere
 * (a `${…}` reference, an anchor shared with other nodes, a merge key, a secret reference): the
 * report says where the change belongs. Refuses an intent with errors (IntentError), and any field
 * that holds or may hold a secret: a secret is never written into the intent nor shown in a diff.
 * Read-only for the store, so it takes no workspace lease (a running `tend run` keeps it).
 */
export async function accept(ctx: AppContext, request: AcceptRequest): Promise<AcceptReport> {
  if (request.git) {
    // A git workspace of a fleet: the patch is committed in a clone of its repository and pushed.
    const source = await registeredGitSource(ctx, request);
    if (source) return acceptInRepository(ctx, request, source);
  }
  const { ws } = await openWorkspace(ctx, request);
  try {
    return await acceptIn(ctx, ws, request);
  } finally {
    await ws.close();
  }
}

/**
 * `accept` in a workspace that is already open (and stays open): for a caller that holds one, such
 * as the loop carrying out an `accept` arbitration decision with the value it observed.
 */
export async function acceptIn(
  ctx: AppContext,
  ws: Workspace,
  request: Omit<AcceptRequest, keyof WorkspaceSelection>,
): Promise<AcceptReport> {
  const decl = findDeclared(ws, request.address);
  const segments = parseFieldPath(request.field);
  if (!segments) {
    throw new TendError('accept.invalid_field', `\`${request.field}\` is not a field path`, {
      hint: 'name a field below spec: replicas, tags.team, ports[0]',
    });
  }
  const field = segments.join('.');
  const { info } = ws.typeOf(decl.type);
  const secret = secretReason(decl, info, segments);
  if (secret !== undefined) {
    throw new TendError(
      'accept.secret',
      `${decl.address} ${field} is a secret (${secret}): Tend never writes a secret into the intent, nor shows one`,
      {
        address: decl.address,
        hint: 'change the secret where it lives: the variable named by fromEnv, or the file named by fromFile',
      },
    );
  }
  const top = segments[0]!;
  if (info.outputOnly.includes(top) || info.outputOnly.includes(field)) {
    throw new TendError(
      'accept.output_only',
      `${decl.address} ${field} is set by the platform and cannot be declared`,
      { address: decl.address, hint: 'refer to it from other resources with ${type/name.field}' },
    );
  }
  const notes: string[] = [];
  const { value, source } = await valueToAccept(ws, decl, info, segments, request, notes);
  // A value that holds a secret Tend knows (a credential, a secret read for another field) is
  // never written: the redactor would find it.
  const text = canonicalJson(value);
  if (ctx.redactor.text(text) !== text) {
    throw new TendError(
      'accept.secret',
      `${decl.address} ${field} holds a secret Tend knows: it is never written into the intent`,
      { address: decl.address },
    );
  }
  refuseForbidden(ws, decl, segments, value);
  if (sameOnceNormalised(ws, decl, segments, value)) {
    notes.push(`the declared ${field} and the observed one are the same once normalised`);
    const file = relativeTo(ws.intent.dir, decl.source.file);
    return {
      address: decl.address,
      field,
      outcome: 'unchanged',
      value,
      valueSource: source,
      file,
      diff: '',
      written: false,
      notes,
    };
  }
  return await patchIntent(ctx, ws, decl, { field, value, source, notes }, request);
}

/**
 * A value a `deny` policy forbids is never written into the intent (docs/policies.md): the policies
 * are evaluated on the resource as it would be declared with the value, as `tend validate` would.
 */
function refuseForbidden(
  ws: Workspace,
  decl: ResourceDecl,
  segments: readonly string[],
  value: unknown,
): void {
  const subject = {
    address: decl.address,
    type: decl.type,
    name: decl.name,
    labels: decl.labels ?? {},
  };
  const policies = (ws.intent.policies ?? []).filter(
    (p) => p.actions.includes('deny') && policyMatches(p.match, subject),
  );
  if (policies.length === 0) return;
  const spec = withValueAt(decl.spec, segments, value);
  const broken = evaluatePolicies(policies, {
    subject,
    moment: 'declared',
    object: spec,
    onlyDeclaredKnown: true,
    declared: spec,
    observed: null,
  }).filter(denies);
  if (broken.length === 0) return;
  throw new TendError(
    'accept.policy_denied',
    `${decl.address} ${segments.join('.')} = ${canonicalJson(value)} is not written into the intent: ${broken.map(verdictText).join('; ')}`,
    {
      address: decl.address,
      hint: 'a deny policy outranks every motivation: Tend puts the declared value back; change the policy if the rule is wrong',
    },
  );
}

/** A copy of `spec` with `value` at `segments` (objects made on the way; an index sets an array's element). */
function withValueAt(
  spec: Readonly<Record<string, unknown>>,
  segments: readonly string[],
  value: unknown,
): Record<string, unknown> {
  const out = structuredClone(spec) as Record<string, unknown>;
  let at: Record<string, unknown> | unknown[] = out;
  segments.forEach((s, i) => {
    const last = i === segments.length - 1;
    if (Array.isArray(at) && /^\d+$/.test(s)) {
      const n = Number(s);
      if (last) at[n] = value;
      else {
        if (at[n] === null || typeof at[n] !== 'object') at[n] = {};
        at = at[n] as Record<string, unknown>;
      }
      return;
    }
    const obj = at as Record<string, unknown>;
    if (last) defineKey(obj, s, value);
    else {
      if (obj[s] === null || typeof obj[s] !== 'object') defineKey(obj, s, {});
      at = obj[s] as Record<string, unknown>;
    }
  });
  return out;
}

/**
 * True when the declared value differs from `value` only in what the provider normalises away
 * (trailing dots, case, set order): that is not drift, and accepting it would only churn the file.
 */
function sameOnceNormalised(
  ws: Workspace,
  decl: ResourceDecl,
  segments: readonly string[],
  value: unknown,
): boolean {
  const { provider, info } = ws.typeOf(decl.type);
  const declared = valueAt(decl.spec, segments);
  if (!provider.normalize || declared === undefined) return false;
  const a = canonicalJson(declared);
  if (a === canonicalJson(value) || a.includes('${')) return false;
  const path = segments.join('.');
  const norm = (v: unknown) => canonicalJson(provider.normalize!(info.name, path, v));
  return norm(declared) === norm(value);
}

/** Patches the resource's file and writes or commits the patch as asked. */
async function patchIntent(
  ctx: AppContext,
  ws: Workspace,
  decl: ResourceDecl,
  accepted: { field: string; value: unknown; source: AcceptValueSource; notes: string[] },
  request: Omit<AcceptRequest, keyof WorkspaceSelection>,
): Promise<AcceptReport> {
  const { field, value, source, notes } = accepted;
  const dir = ws.intent.dir;
  const path = decl.source.file;
  const file = relativeTo(dir, path);
  const original = await readFile(path, 'utf8');
  const result = patchResourceField(original, file, decl, field, value);
  const base = {
    address: decl.address,
    field,
    value,
    valueSource: source,
    file,
    diff: '',
    written: false,
    notes,
  };
  if (result.kind === 'not-found') {
    throw new TendError('accept.not_found', result.reason, { address: decl.address });
  }
  if (result.kind === 'unchanged') return { ...base, outcome: 'unchanged' };
  if (result.kind === 'elsewhere') {
    let where = result.where;
    const ref = result.reference;
    const target = ref && ws.intent.resources.find((r) => r.address === ref.address);
    if (ref && target) {
      // The referenced field where the target declares it, else the target's document.
      const targetFile = relativeTo(dir, target.source.file);
      const segments = parseFieldPath(ref.path);
      const declared = segments !== undefined && valueAt(target.spec, segments) !== undefined;
      where = declared
        ? fieldPosition(await readFile(target.source.file, 'utf8'), targetFile, target, ref.path)
        : undefined;
      where ??= { ...target.source, file: targetFile };
      const { info } = ws.typeOf(target.type);
      if (info.outputOnly.includes(ref.path.split('.')[0]!)) {
        notes.push(
          `${ref.path} of ${ref.address} is set by the platform: it changes only when that object is replaced`,
        );
      }
    }
    return {
      ...base,
      outcome: 'elsewhere',
      elsewhere: { reason: result.reason, ...(where ? { where } : {}) },
    };
  }
  // `diff` is loaded by the commands that write a patch (docs/decisions/0033-lazy-modules.md).
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import('diff');
  const diff = createTwoFilesPatch(
    `a/${file}`,
    `b/${file}`,
    original,
    result.text,
    undefined,
    undefined,
    {
      headerOptions: FILE_HEADERS_ONLY,
      // Three lines of context, as git shows.
      context: 3,
    },
  );
  const patched = { ...base, outcome: 'patched' as const, line: result.line, diff };
  if (request.git) {
    const hash = createHash('sha256').update(result.text).digest('hex').slice(0, 7);
    const committed = await commitOnNewBranch({
      file: path,
      text: result.text,
      branch: `tend/accept-${decl.name}-${slug(field)}-${hash}`,
      message: `accept ${decl.address} ${field}=${display(value)} (observed)`,
      write: (f, t) => writeFileAtomic(f, t, original),
      env: ctx.env,
    });
    return {
      ...patched,
      written: true,
      branch: committed.branch,
      commit: committed.commit,
      returnedTo: committed.returnedTo,
    };
  }
  if (request.write) {
    await writeFileAtomic(path, result.text, original);
    return { ...patched, written: true };
  }
  return patched;
}
