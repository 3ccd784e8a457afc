import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { ActorContext, Address, Plan, PolicyVerdict, ResourceDecl } from '../core/index.js';
import { nearMatches, parseAddress, TendError } from '../core/index.js';
import type { FieldDecision } from '../engine/index.js';
import { parseFieldPath, patchResourceField } from '../intent/index.js';
import type { ApplyReport } from './apply.js';
import { applyChangeset } from './apply.js';
import type { AppContext } from './context.js';
import { plan } from './plan.js';
import { planStepsView } from './plan-view.js';
import type { WorkspaceSelection } from './workspace.js';
import { IntentError, openWorkspace, storeLocation } from './workspace.js';
import { writeFileAtomic } from './write-file-atomic.js';

/** One field a proposal sets: `value` becomes what the resource at `address` declares at `field`. */
export interface ProposedField {
  readonly address: string;
  /** Below `spec`: `replicas`, `tags.team`, `ports[0]` (a `spec.` prefix is dropped). */
  readonly field: string;
  readonly value: unknown;
}

/** What `propose` is asked: changes to the intent, as field values and/or a unified diff. */
export interface ProposeRequest extends WorkspaceSelection {
  /** Fields to set, in order (several on one file are applied one after the other). */
  readonly set?: readonly ProposedField[];
  /**
   * A unified diff of intent files, paths relative to the intent directory (`a/app.yaml`,
   * `b/app.yaml`, as `git diff` writes them); applied after `set`. A new file comes from /dev/null.
   */
  readonly patch?: string;
  /** Limit the saved plan to these resources and what they depend on. */
  readonly targets?: readonly Address[];
  /** Where the saved plan and the patch are written; default `<dir>/.tend/proposals`. */
  readonly outDir?: string;
  /**
   * Carry the proposal out now: write the patched files into the intent directory and apply the
   * saved plan (holding the workspace lease). Refused when the plan has a destructive step. The
   * caller decides whether its user allowed this (the MCP server's `--allow-apply`).
   */
  readonly apply?: {
    readonly actor: ActorContext;
    readonly lockTimeoutMs: number;
    readonly verifyTimeoutMs: number;
  };
}

/** A proposal as written for a human to review, and what it would do. */
export interface ProposeReport {
  readonly workspace: { readonly name: string };
  /** A hash of the patch and the targets: the same proposal gets the same id (and files). */
  readonly id: string;
  /** The unified diff of the intent files (empty when the proposal changes no file). */
  readonly diff: string;
  /** The intent files the diff changes, relative to the intent directory, sorted. */
  readonly files: readonly string[];
  /** The diff as a file (`git apply` / `patch -p1` in the intent directory), when there is one. */
  readonly patchFile?: string;
  /** The saved plan of the intent with the diff applied: `tend apply <planFile>` carries it out. */
  readonly planFile: string;
  readonly plan: Plan;
  readonly decisions: readonly FieldDecision[];
  /**
   * The policy rules not passed on the proposed plan's predicted result (docs/policies.md): a deny
   * violation means apply would refuse the plan, so an agent learns it before it acts.
   */
  readonly policies: readonly PolicyVerdict[];
  /** Replaces, deletes and gated steps: such a plan is never applied by a proposal. */
  readonly destructive: readonly Address[];
  /** Steps that cannot happen (apply leaves them as they are). */
  readonly blocked: readonly { readonly address: Address; readonly reason: string }[];
  /** The outcome when the proposal was applied. */
  readonly applied?: ApplyReport;
}

/** Error codes of `propose` that are the caller's mistake. */
export const PROPOSE_USAGE_ERRORS: ReadonlySet<string> = new Set([
  'propose.unknown_address',
  'propose.invalid_field',
  'propose.field_elsewhere',
  'propose.bad_patch',
  'propose.destructive',
]);

/** Directories of an intent folder that are not intent and are not copied to plan a proposal. */
const NOT_INTENT = new Set(['.tend', '.git', 'node_modules']);

/**
 * Proposes a change to the intent without touching it: sets fields (patched in the YAML, keeping
 * comments and layout, as `accept` does) and/or applies a unified diff, to a copy of the intent
 * directory; plans the copy against the workspace's store and platform (read-only, no lease); and
 * writes the saved plan — named for the real intent directory, so `tend apply <plan>` carries it
 * out once the patch is applied there, and refuses before — and the patch, for a human to review.
 * With `apply`, and only when the plan has no destructive step, writes the patched files into the
 * intent directory and applies the saved plan as `apply.actor`; when the apply cannot start (the
 * workspace is held, the saved plan is refused) the files are put back as they were.
 */
export async function propose(ctx: AppContext, request: ProposeRequest): Promise<ProposeReport> {
  const dir = resolve(request.dir);
  const { name, changed } = await patchIntent(ctx, request, dir);
  const diff = await unifiedDiff(changed);
  const id = createHash('sha256')
    .update(JSON.stringify({ diff, targets: [...(request.targets ?? [])].sort() }))
    .digest('hex')
    .slice(0, 12);
  const outDir = resolve(request.outDir ?? join(dir, '.tend', 'proposals'));
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  const planFile = join(outDir, `${id}.plan.json`);
  const patchFile = diff === '' ? undefined : join(outDir, `${id}.patch`);
  const planned = await planPatchedCopy(ctx, dir, changed, {
    store: storeLocation(ctx, request),
    workspace: name,
    approveDestroy: false,
    prune: true,
    out: planFile,
    intentDir: dir,
    ...(request.targets && request.targets.length > 0 ? { targets: request.targets } : {}),
  });
  // Private like everything under .tend/ (a plan names objects and values).
  await chmod(planFile, 0o600);
  if (patchFile) await writeFile(patchFile, ctx.redactor.text(diff), { mode: 0o600 });

  const view = planStepsView(planned.plan);
  const report: ProposeReport = {
    workspace: { name },
    id,
    diff,
    files: changed.map(([file]) => file),
    ...(patchFile ? { patchFile } : {}),
    planFile,
    plan: planned.plan,
    decisions: planned.decisions,
    policies: planned.policies.filter((v) => v.result !== 'pass'),
    destructive: view.destructive,
    blocked: view.blocked,
  };
  if (!request.apply) return report;
  if (report.destructive.length > 0) {
    throw new TendError(
      'propose.destructive',
      `the proposal replaces or deletes ${report.destructive.join(', ')}: a proposal is never applied with a destructive step`,
      {
        hint: `a human reviews ${patchFile ?? 'the intent'} and runs tend apply ${planFile} --approve-destroy`,
      },
    );
  }
  return {
    ...report,
    applied: await applyProposal(ctx, request, request.apply, dir, changed, planFile),
  };
}

/** An intent file's text as read (`original`, undefined for a new file) and as proposed. */
interface FileText {
  readonly original: string | undefined;
  readonly text: string;
}

/**
 * Step 1: the proposed texts of the intent files — `set` patched into the YAML of each resource's
 * file, then the unified diff — and the workspace's name. Only the files that change, sorted.
 */
async function patchIntent(
  ctx: AppContext,
  request: ProposeRequest,
  dir: string,
): Promise<{ name: string; changed: [string, FileText][] }> {
  const { ws } = await openWorkspace(ctx, request, 'read');
  const texts = new Map<string, FileText>();
  const textOf = async (file: string): Promise<string | undefined> => {
    const known = texts.get(file);
    if (known) return known.text;
    try {
      const original = await readFile(join(dir, file), 'utf8');
      texts.set(file, { original, text: original });
      return original;
    } catch {
      return undefined;
    }
  };
  try {
    const set = request.set ?? [];
    for (const [i, change] of set.entries()) {
      const where = set.length > 1 ? `set[${i}]: ` : '';
      const { file, text } = await setField(ws.intent.resources, dir, change, where, textOf);
      if (text !== undefined) texts.set(file, { original: texts.get(file)?.original, text });
    }
    if (request.patch !== undefined) await applyDiff(dir, request.patch, textOf, texts);
  } finally {
    await ws.close();
  }
  const changed = [...texts.entries()]
    .filter(([, t]) => t.text !== t.original)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { name: ws.name, changed };
}

/**
 * One field of `set` patched into the text of its resource's file (`text` undefined when the file
 * already declares that value). Throws the caller's mistakes: an unknown address, a bad field path,
 * a field whose value lives elsewhere (a reference, an anchor, a secret reference).
 */
async function setField(
  resources: readonly ResourceDecl[],
  dir: string,
  change: ProposedField,
  where: string,
  textOf: (file: string) => Promise<string | undefined>,
): Promise<{ file: string; text: string | undefined }> {
  const decl = resources.find((r) => r.address === change.address);
  if (!decl) {
    const near = nearMatches(
      change.address,
      resources.map((r) => r.address),
    );
    throw new TendError(
      'propose.unknown_address',
      `${where}${change.address} is not a resource of the intent${parseAddress(change.address) ? '' : ' (write provider.type/name)'}`,
      { hint: near.length > 0 ? `did you mean ${near.join(', ')}?` : 'tend status lists them' },
    );
  }
  if (!parseFieldPath(change.field)) {
    throw new TendError(
      'propose.invalid_field',
      `${where}\`${change.field}\` is not a field path`,
      {
        hint: 'name a field below spec: replicas, tags.team, ports[0]',
      },
    );
  }
  const file = relativeTo(dir, decl.source.file);
  const result = patchResourceField(
    (await textOf(file)) ?? '',
    file,
    decl,
    change.field,
    change.value,
  );
  if (result.kind === 'not-found') {
    throw new TendError('propose.invalid_field', `${where}${result.reason}`, {
      address: decl.address,
    });
  }
  if (result.kind === 'elsewhere') {
    throw new TendError(
      'propose.field_elsewhere',
      `${where}${decl.address} ${change.field}: ${result.reason}`,
      {
        address: decl.address,
        hint: 'propose the change where the value lives, or give it as a patch',
      },
    );
  }
  return { file, text: result.kind === 'patched' ? result.text : undefined };
}

/** Step 2: the unified diff of the changed files, as `git diff` writes it. */
async function unifiedDiff(changed: readonly [string, FileText][]): Promise<string> {
  // `diff` is loaded by the commands that write or read a patch (docs/decisions/0033-lazy-modules.md).
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import('diff');
  return changed
    .map(([file, t]) =>
      createTwoFilesPatch(
        t.original === undefined ? '/dev/null' : `a/${file}`,
        `b/${file}`,
        t.original ?? '',
        t.text,
        undefined,
        undefined,
        { headerOptions: FILE_HEADERS_ONLY, context: 3 },
      ),
    )
    .join('');
}

/**
 * Step 3: plans a copy of the intent directory with the changed files written into it, against the
 * workspace's store and platform (read-only), saving the plan to `request.out`.
 */
async function planPatchedCopy(
  ctx: AppContext,
  dir: string,
  changed: readonly [string, FileText][],
  request: Omit<Parameters<typeof plan>[1], 'dir'>,
): Promise<Awaited<ReturnType<typeof plan>>> {
  const copy = await mkdtemp(join(tmpdir(), 'tend-proposal-'));
  try {
    const intentCopy = join(copy, basename(dir));
    await cp(dir, intentCopy, {
      recursive: true,
      filter: (src) => src === dir || !NOT_INTENT.has(relative(dir, src).split(sep)[0]!),
    });
    for (const [file, t] of changed) {
      await mkdir(dirname(join(intentCopy, file)), { recursive: true });
      await writeFile(join(intentCopy, file), t.text);
    }
    return await planCopy(ctx, intentCopy, dir, { ...request, dir: intentCopy });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/**
 * Step 4 (with `apply`): writes the changed files into the intent directory and applies the saved
 * plan. A proposal that was not carried out leaves the intent as it was: a running `tend run` would
 * otherwise apply the patched intent itself.
 */
async function applyProposal(
  ctx: AppContext,
  request: ProposeRequest,
  apply: NonNullable<ProposeRequest['apply']>,
  dir: string,
  changed: readonly [string, FileText][],
  planFile: string,
): Promise<ApplyReport> {
  for (const [file, t] of changed) {
    const path = join(dir, file);
    if (t.original === undefined) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, t.text, { flag: 'wx' });
    } else await writeFileAtomic(path, t.text, t.original);
  }
  const restore = async () => {
    for (const [file, t] of changed) {
      const path = join(dir, file);
      if (t.original === undefined) await rm(path, { force: true });
      else await writeFileAtomic(path, t.original, t.text);
    }
  };
  let applied: ApplyReport;
  try {
    applied = await applyChangeset(ctx, {
      changeset: planFile,
      ...(request.store !== undefined ? { store: request.store } : {}),
      ...(request.workspace !== undefined ? { workspace: request.workspace } : {}),
      actor: apply.actor,
      command: `tend mcp (${apply.actor.actor})`,
      lockTimeoutMs: apply.lockTimeoutMs,
      verifyTimeoutMs: apply.verifyTimeoutMs,
      runChecks: true,
    });
  } catch (e) {
    await restore();
    throw e;
  }
  if (applied.verdict === 'refused') await restore();
  return applied;
}

/**
 * Plans the patched copy; an intent error names the files of the real intent directory (the
 * problem is in the proposal, as it would be written there).
 */
async function planCopy(
  ctx: AppContext,
  copy: string,
  dir: string,
  request: Parameters<typeof plan>[1],
): Promise<Awaited<ReturnType<typeof plan>>> {
  try {
    return await plan(ctx, request);
  } catch (e) {
    if (!(e instanceof IntentError)) throw e;
    const inCopy = `${copy}${sep}`;
    throw new IntentError(
      e.diagnostics.map((d) =>
        d.file?.startsWith(inCopy) ? { ...d, file: join(dir, d.file.slice(inCopy.length)) } : d,
      ),
    );
  }
}

/** `file` relative to `dir`, with forward slashes (as a diff names it). */
function relativeTo(dir: string, file: string): string {
  return relative(dir, file).split(sep).join('/');
}

/**
 * Applies a unified diff to the texts of the intent files it names (read on first use). Throws
 * `propose.bad_patch` when it cannot be parsed, names a file outside the intent directory or one
 * that does not exist (other than a new file from /dev/null), or does not apply.
 */
async function applyDiff(
  dir: string,
  patch: string,
  textOf: (file: string) => Promise<string | undefined>,
  texts: Map<string, FileText>,
): Promise<void> {
  const bad = (message: string) =>
    new TendError('propose.bad_patch', message, {
      hint: 'give a unified diff of intent files as git diff writes it, paths relative to the intent directory (--- a/app.yaml, +++ b/app.yaml)',
    });
  const { applyPatch, parsePatch } = await import('diff');
  let parsed;
  try {
    parsed = parsePatch(patch);
  } catch (e) {
    throw bad(`the patch cannot be read: ${(e as Error).message}`);
  }
  const files = parsed.filter((p) => p.hunks.length > 0);
  if (files.length === 0) throw bad('the patch changes nothing (it has no hunk)');
  for (const p of files) {
    const created = p.oldFileName === '/dev/null';
    const name = stripPrefix(created ? p.newFileName : p.oldFileName);
    if (name === undefined) throw bad('a file of the patch has no name');
    const path = resolve(dir, name);
    const rel = relativeTo(dir, path);
    if (
      rel.startsWith('../') ||
      rel === '..' ||
      rel.startsWith('/') ||
      rel.split('/').some((s) => NOT_INTENT.has(s))
    ) {
      throw bad(`${name}: is outside the intent directory`);
    }
    if (!/\.ya?ml$/.test(rel)) throw bad(`${name}: is not an intent file (.yaml or .yml)`);
    let current: string;
    if (created) {
      if ((await textOf(rel)) !== undefined)
        throw bad(`${name}: already exists (the patch creates it)`);
      current = '';
    } else {
      const text = await textOf(rel);
      if (text === undefined) throw bad(`${name}: no such intent file`);
      current = text;
    }
    const result = applyPatch(current, p);
    if (result === false) {
      throw bad(`${name}: the patch does not apply (its context lines differ from the file)`);
    }
    texts.set(rel, { original: texts.get(rel)?.original, text: result });
  }
}

/** `a/app.yaml` → `app.yaml`; a name without the git prefix as it is. */
function stripPrefix(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  return /^[ab]\//.test(name) ? name.slice(2) : name;
}
