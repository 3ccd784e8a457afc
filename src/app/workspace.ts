import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Diagnostic, Intent, IntentOrigin, Provider, ProviderDecl } from '../core/index.js';
import { hasErrors, TendError, toTendError, WORKSPACE_NAME } from '../core/index.js';
import type { Workspace } from '../engine/index.js';
import { closeProviders, createWorkspace } from '../engine/index.js';
import type { ParseCache } from '../intent/index.js';
import { directoryParseCache, loadIntent } from '../intent/index.js';
import type { Store } from '../store/index.js';
import { ensurePrivateDir, storeKind, tightenTree, withTwinCache } from '../store/index.js';
import type { AppContext } from './context.js';
import { defaultContext } from './context.js';
import { requireKnownWorkspace } from './known-workspace.js';
import { keyChangeNotice } from './ledger-key.js';
import { connectProvider } from './providers.js';
import { processUserAgent } from './user-agent.js';
import { sqlRunner } from './sql-runner.js';

/** Which workspace a command works on: an intent directory, and optionally where its store is. */
export interface WorkspaceSelection {
  readonly dir: string;
  /**
   * Store location: a SQLite path or a `postgres://` URL; default `TEND_STORE_URL`, else
   * `<dir>/.tend/tend.db` (see `storeLocation`).
   */
  readonly store?: string;
  /** An explicit workspace name (`--workspace`); wins over everything else. */
  readonly workspace?: string;
}

/** Thrown when intent has errors; carries every diagnostic. */
export class IntentError extends TendError {
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[]) {
    const n = diagnostics.filter((d) => d.severity === 'error').length;
    super('intent.invalid', `intent has ${n} error${n === 1 ? '' : 's'}`, { phase: 'load' });
    this.diagnostics = diagnostics;
  }
}

/**
 * Where a command's store is: `--store`, else `TEND_STORE_URL` (a database shared by a fleet, or a
 * path), else `<dir>/.tend/tend.db`.
 */
export function storeLocation(
  ctx: Pick<AppContext, 'env'>,
  selection: Pick<WorkspaceSelection, 'dir' | 'store'>,
): string {
  const fromEnv = ctx.env['TEND_STORE_URL'];
  return (
    selection.store ??
    (fromEnv !== undefined && fromEnv.trim() !== ''
      ? fromEnv
      : defaultStorePath(resolve(selection.dir)))
  );
}

/** Whether a store location is a database shared by many workspaces (PostgreSQL). */
export function isSharedStore(location: string): boolean {
  return storeKind(location) === 'postgres';
}

/**
 * The directory of Tend's own local files for a store (the intent cache, a warning about a ledger
 * key beside the store): the store file's directory, or `<dir>/.tend` for a database store.
 */
export function localStateDir(location: string, dir: string): string {
  return isSharedStore(location) ? join(resolve(dir), '.tend') : dirname(location);
}

/**
 * A `--store` value as given on the command line: a path is made absolute, a database URL is kept
 * as it is.
 */
export function storeFlag(value: string): string {
  return isSharedStore(value) ? value : resolve(value);
}

/**
 * The cache of intent files' fast reading that goes with a store (`<store dir>/cache/intent/`, or
 * `<dir>/.tend/cache/intent/` beside a database store; private like the store): commands that open a
 * store use it, so an unchanged file is not parsed again (src/intent/parse-cache.ts). `tend validate`
 * opens no store and uses none.
 */
export function intentCacheFor(storeLocation: string, intentDir: string): ParseCache {
  const cache = join(localStateDir(storeLocation, intentDir), 'cache');
  const dir = join(cache, 'intent');
  return directoryParseCache(dir, () => {
    ensurePrivateDir(cache, true);
    ensurePrivateDir(dir, true);
  });
}

/** The default store location for an intent directory. */
export function defaultStorePath(dir: string): string {
  return join(dir, '.tend', 'tend.db');
}

/**
 * The workspace name a directory gets when nothing names it: the folder's name plus a short hash of
 * its real path, so that two folders (two checkouts both called `infra`) never share one by accident.
 */
export function derivedWorkspaceName(dir: string): string {
  let real = resolve(dir);
  try {
    real = realpathSync(real);
  } catch {
    // A missing directory is reported by the intent loader; the name does not matter then.
  }
  const base =
    basename(real)
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
      .slice(0, 48) || 'workspace';
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 6);
  return `${base}-${hash}`;
}

/** Where a workspace's name came from, most explicit first. */
export type WorkspaceNameSource = 'flag' | 'env' | 'intent' | 'store' | 'folder';

/**
 * Decides a workspace's name: `--workspace`, else `TEND_WORKSPACE`, else the intent's Workspace
 * document, else the name this store was first used with (so a moved folder keeps its objects), else
 * one derived from the folder. A name given explicitly must be valid.
 */
export function chooseWorkspaceName(input: {
  readonly flag?: string | undefined;
  readonly env?: string | undefined;
  readonly intent?: string | undefined;
  readonly store?: string | undefined;
  readonly dir: string;
}): { name: string; source: WorkspaceNameSource } {
  const explicit: [string | undefined, WorkspaceNameSource][] = [
    [input.flag, 'flag'],
    [input.env, 'env'],
  ];
  for (const [value, source] of explicit) {
    if (value === undefined || value === '') continue;
    if (!WORKSPACE_NAME.test(value)) {
      throw new TendError(
        'workspace.invalid_name',
        `workspace name ${JSON.stringify(value)} (from ${source === 'flag' ? '--workspace' : 'TEND_WORKSPACE'}) is not valid`,
        {
          hint: "use lower-case letters, digits, '.', '_' or '-', at most 64, starting and ending with a letter or digit",
        },
      );
    }
    return { name: value, source };
  }
  if (input.intent) return { name: input.intent, source: 'intent' };
  if (input.store) return { name: input.store, source: 'store' };
  return { name: derivedWorkspaceName(input.dir), source: 'folder' };
}

/**
 * Remembers the name a folder-derived workspace was first used with, so that moving the folder (its
 * store moves along) keeps recognising the objects it created. Done by writers only.
 */
export async function rememberWorkspaceName(
  ws: Workspace,
  source: WorkspaceNameSource,
): Promise<void> {
  if (source !== 'folder') return;
  if ((await ws.store.getMeta('workspace')) === undefined)
    await ws.store.setMeta('workspace', ws.name);
}

/** The intent of a directory with its providers connected, or every diagnostic. */
export interface LoadedIntent {
  readonly intent?: Intent;
  readonly providers: Map<string, Provider>;
  readonly diagnostics: Diagnostic[];
}

/**
 * Loads and validates a directory's intent, connecting each declared provider (its document is read;
 * nothing is sent to manage anything). Providers connected for an intent with errors are closed.
 */
export async function loadIntentWithProviders(
  ctx: AppContext,
  dir: string,
  workspaceHint: string,
  cache?: ParseCache,
): Promise<LoadedIntent> {
  // Tend's own directory is private (0700, files 0600): one left open by an older Tend is tightened
  // before anything (a cached document, the store) is written into it, and the user is told.
  for (const note of tightenTree(join(dir, '.tend'))) ctx.notice?.(note);
  const providers = new Map<string, Provider>();
  const describe = async (decl: ProviderDecl) => {
    try {
      const provider = await connectProvider(ctx.providers, {
        decl,
        workspace: workspaceHint,
        env: ctx.env,
        dir,
        redactor: ctx.redactor,
        ...(ctx.apiCalls ? { apiCalls: ctx.apiCalls } : {}),
        userAgent: processUserAgent(ctx.env, ctx.process.pid),
      });
      providers.set(decl.name, provider);
      return provider.describe();
    } catch (e) {
      const err = toTendError(e, 'provider.load');
      const d: Diagnostic = {
        code: err.code,
        severity: 'error',
        message: `provider ${decl.name}: ${err.message}`,
        file: decl.source.file,
        line: decl.source.line,
        column: decl.source.column,
        ...(err.hint ? { hint: err.hint } : {}),
      };
      return d;
    }
  };
  const { intent, diagnostics } = await loadIntent(dir, {
    describe,
    env: ctx.env,
    ...(cache ? { cache } : {}),
  });
  // All or nothing: an intent with any error (a file that could not be read included) is no intent,
  // so nothing is planned, and nothing pruned, from part of it.
  if (!intent || hasErrors(diagnostics)) {
    await closeProviders(providers.values());
    return { providers: new Map(), diagnostics };
  }
  return { intent, providers, diagnostics };
}

/**
 * What a command does with the workspace's store: `write` records changes (its store signs the
 * change ledger with the ledger key, resolved before anything else), `read` only reads (no key: the
 * ledger can be read and its links checked, not appended to).
 */
export type WorkspaceAccess = 'read' | 'write';

/** How `openWorkspace` opens a workspace besides its access. */
export interface OpenWorkspaceOptions {
  /**
   * The command reports what Tend recorded of the workspace (status, history, explain, drift): on a
   * store shared by many workspaces, one the store has never seen is refused with
   * `workspace.not_found`, naming the workspaces it holds (known-workspace.ts). No effect on SQLite.
   */
  readonly recorded?: boolean;
  /** The commit the intent directory holds (a git workspace's): `Workspace.origin`. */
  readonly origin?: IntentOrigin;
}

/** An open workspace and where its name came from. */
export interface OpenedWorkspace {
  readonly ws: Workspace;
  readonly nameSource: WorkspaceNameSource;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * The composition root of a command: validates the intent (throws IntentError with every diagnostic),
 * connects providers through the registry, opens the store (with the ledger key for `write`) and
 * decides the workspace name.
 */
export async function openWorkspace(
  ctx: AppContext,
  selection: WorkspaceSelection,
  access: WorkspaceAccess = 'write',
  options: OpenWorkspaceOptions = {},
): Promise<OpenedWorkspace> {
  const dir = resolve(selection.dir);
  const location = storeLocation(ctx, selection);
  const shared = isSharedStore(location);
  // A writer that cannot sign its ledger fails here, before anything is read or sent.
  const ledgerKey =
    access === 'write' ? ctx.ledgerKey('sign', localStateDir(location, dir)) : undefined;
  const hint = chooseWorkspaceName({
    flag: selection.workspace,
    env: ctx.env['TEND_WORKSPACE'],
    dir,
  }).name;
  const loaded = await loadIntentWithProviders(ctx, dir, hint, intentCacheFor(location, dir));
  if (!loaded.intent) throw new IntentError(loaded.diagnostics);
  // A database shared by many workspaces is opened for one, named before it is opened (the flag, the
  // environment, the intent, else the folder): it has no "name this store was first used with".
  const named = shared
    ? chooseWorkspaceName({
        flag: selection.workspace,
        env: ctx.env['TEND_WORKSPACE'],
        intent: loaded.intent.workspace?.name,
        dir,
      })
    : undefined;
  let opened: Store;
  let store: Store;
  try {
    opened = await ctx.openStore(location, {
      ...(ledgerKey ? { ledgerKey } : {}),
      ...(named ? { workspace: named.name } : {}),
    });
    // The twin is kept in memory between passes (and reads of the audit feed); see twin-cache.ts.
    store = withTwinCache(opened);
  } catch (e) {
    await closeProviders(loaded.providers.values());
    throw e;
  }
  try {
    if (named && options.recorded) await requireKnownWorkspace(opened, named);
    if (ledgerKey) {
      // Best effort: a last entry that cannot be read is for `tend ledger verify` to report.
      const last = await store.changes({ limit: 1 }).then(
        ([entry]) => entry,
        () => undefined,
      );
      const changed = keyChangeNotice(last, ledgerKey);
      if (changed) ctx.notice?.(changed);
    }
    const chosen =
      named ??
      chooseWorkspaceName({
        flag: selection.workspace,
        env: ctx.env['TEND_WORKSPACE'],
        intent: loaded.intent.workspace?.name,
        store: await store.getMeta('workspace'),
        dir,
      });
    const ws = createWorkspace({
      name: chosen.name,
      intent: loaded.intent,
      providers: loaded.providers,
      store,
      env: ctx.env,
      secrets: ctx.redactor,
      sql: sqlRunner({ env: ctx.env, dir: loaded.intent.dir, secrets: ctx.redactor }),
      userAgent: processUserAgent(ctx.env, ctx.process.pid),
      ...(options.origin ? { origin: options.origin } : {}),
    });
    return { ws, nameSource: chosen.source, diagnostics: loaded.diagnostics };
  } catch (e) {
    await closeProviders(loaded.providers.values());
    await store.close();
    throw e;
  }
}

/** Options of `openWorkspaceAt`, the short form for tests, benchmarks and scripts. */
export interface OpenWorkspaceAtOptions {
  readonly dir: string;
  readonly store?: string;
  /** The workspace name (default: chosen as for any command). */
  readonly name?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Opens a workspace with the default context (SQLite, built-in providers), or with `ctx`. */
export async function openWorkspaceAt(
  options: OpenWorkspaceAtOptions,
  ctx?: AppContext,
): Promise<Workspace> {
  const context = ctx ?? defaultContext(options.env ? { env: options.env } : {});
  const opened = await openWorkspace(context, {
    dir: options.dir,
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.name !== undefined ? { workspace: options.name } : {}),
  });
  return opened.ws;
}
