import { existsSync } from 'node:fs';
import { displayUrl, TendError, WORKSPACE_NAME } from '../core/index.js';
import type {
  ImportTarget,
  Lease,
  LedgerKey,
  LedgerVerification,
  MemoryCounts,
  MemoryTransfer,
  Store,
  StoreKind,
} from '../store/index.js';
import {
  countMemory,
  isEmptyMemory,
  isMemoryTransfer,
  storeKind,
  targetNotEmptyError,
} from '../store/index.js';
import type { AppContext } from './context.js';

// `tend store copy <from> <to>`: one workspace's whole memory moved from one store to another
// (docs/store.md, docs/decisions/0038-store-copy.md).

/** What `tend store copy` is asked. */
export interface StoreCopyRequest {
  /** The store read: a SQLite path (`sqlite:` too) or a `postgres://` URL. */
  readonly from: string;
  /** The store written. */
  readonly to: string;
  /** The workspace's name (`--workspace`): needed for a PostgreSQL side unless SQLite remembers it. */
  readonly workspace?: string;
  /** Replace the workspace's memory in the target (`--force`). */
  readonly force?: boolean;
}

/** One side of a copy, as it may be shown (no password). */
export interface StoreSide {
  readonly kind: StoreKind;
  readonly store: string;
}

/** The copy's ledger checked on the target. */
export interface CopiedLedger {
  readonly ok: boolean;
  readonly entries: number;
  /** The key the keyed entries were checked with; absent when no ledger key was found. */
  readonly keyId?: string;
  /** Why it does not verify (when not ok). */
  readonly reason?: string;
}

/** What `tend store copy` did. */
export interface StoreCopyReport {
  /** The workspace copied; undefined for two SQLite files when neither remembers a name. */
  readonly workspace: string | undefined;
  readonly from: StoreSide;
  readonly to: StoreSide;
  /** The records written, per kind (equal to those read). */
  readonly copied: MemoryCounts;
  /** What the target held and `--force` replaced; absent when it was empty. */
  readonly replaced?: MemoryCounts;
  readonly ledger: CopiedLedger;
}

/**
 * Copies one workspace's whole memory (twin, journal, ledger with its chain as stored, claims,
 * announcements, cursors, statuses, settings, action runs; never the lease) from one store to
 * another, in one transaction on the target. Refuses a source whose lease a live writer holds, a
 * target workspace that holds memory (unless `force`, which replaces it) or is held by a live writer,
 * and a PostgreSQL side whose workspace is not named. The copy's ledger is then verified on the
 * target with this process's ledger key, when there is one.
 */
export async function copyStore(
  ctx: AppContext,
  request: StoreCopyRequest,
): Promise<StoreCopyReport> {
  // A database URL may carry a password: registered before anything can print it.
  ctx.redactor.addUrlCredentials(request.from);
  ctx.redactor.addUrlCredentials(request.to);
  const from = side(request.from, 'source');
  const to = side(request.to, 'target');
  if (request.workspace !== undefined && !WORKSPACE_NAME.test(request.workspace)) {
    throw copyError(
      'workspace.invalid_name',
      `workspace name ${JSON.stringify(request.workspace)} (from --workspace) is not valid`,
      "use lower-case letters, digits, '.', '_' or '-', at most 64, starting and ending with a letter or digit",
    );
  }
  const sqlitePath = sqliteFile(request.from);
  if (sqlitePath !== undefined && sqlitePath !== ':memory:' && !existsSync(sqlitePath)) {
    throw copyError(
      'store.copy-source-missing',
      `the source store ${from.store} does not exist`,
      'give the store a workspace uses (e.g. <dir>/.tend/tend.db) or a postgres:// URL',
    );
  }
  if (sameStore(request, { from, to })) {
    throw copyError('store.copy-same', 'the source and the target are the same store');
  }
  const opened: Store[] = [];
  try {
    return await copyBetween(ctx, request, { from, to }, opened);
  } finally {
    for (const store of opened) await store.close().catch(() => undefined);
  }
}

async function copyBetween(
  ctx: AppContext,
  request: StoreCopyRequest,
  sides: { readonly from: StoreSide; readonly to: StoreSide },
  opened: Store[],
): Promise<StoreCopyReport> {
  const open = async (location: string, workspace: string | undefined, key?: LedgerKey) => {
    const store = await ctx.openStore(location, {
      ...(workspace !== undefined ? { workspace } : {}),
      ...(key ? { ledgerKey: key } : {}),
    });
    opened.push(store);
    if (!isMemoryTransfer(store)) {
      throw copyError('store.unsupported', `the store ${displayUrl(location)} cannot be copied`);
    }
    return store;
  };
  let workspace = request.workspace;
  let source: (Store & MemoryTransfer) | undefined;
  if (sides.from.kind === 'sqlite') {
    source = await open(request.from, undefined);
    const remembered = await source.getMeta('workspace');
    if (workspace !== undefined && remembered !== undefined && remembered !== workspace) {
      throw copyError(
        'store.copy-workspace-mismatch',
        `the source store remembers workspace ${remembered}, but --workspace names ${workspace}`,
        `the objects it manages are marked with ${remembered}: copy it as ${remembered} (a workspace is not renamed by a copy)`,
      );
    }
    workspace ??= remembered;
  }
  const key = ledgerKeyIfAny(ctx);
  let target: (Store & MemoryTransfer) | undefined;
  const targetFile = sqliteFile(request.to);
  // A SQLite target that exists may remember the name; a new one is made only to be written.
  if (targetFile !== undefined && existsSync(targetFile)) {
    target = await open(request.to, undefined, key);
    workspace ??= await target.getMeta('workspace');
  }
  if (workspace === undefined && (sides.from.kind === 'postgres' || sides.to.kind === 'postgres')) {
    throw copyError(
      'store.copy-workspace-required',
      'a PostgreSQL store holds many workspaces, and no workspace was named: pass --workspace <name>',
      'the name is the one the workspace is used with (its Workspace document, TEND_WORKSPACE, or the name a SQLite store remembers)',
    );
  }
  source ??= await open(request.from, workspace);
  target ??= await open(request.to, workspace, key);
  const memory = await source.exportMemory({
    check: (leases) => refuseLive(ctx, leases, 'source'),
  });
  let replaced: MemoryCounts | undefined;
  const copied = await target.importMemory(memory, {
    replace: request.force === true,
    check: (t: ImportTarget) => {
      refuseLive(ctx, t.leases, 'target');
      if (isEmptyMemory(t.counts)) return;
      if (request.force !== true) throw targetNotEmptyError(workspace, t.counts);
      replaced = t.counts;
    },
  });
  checkCopied(countMemory(memory), copied);
  const verified = await target.verifyLedger();
  return {
    workspace,
    from: sides.from,
    to: sides.to,
    copied,
    ...(replaced ? { replaced } : {}),
    ledger: copiedLedger(verified, copied.ledger, key),
  };
}

/** The kind and shown form of a location; an unknown scheme is refused here, before opening. */
function side(location: string, which: 'source' | 'target'): StoreSide {
  const kind = storeKind(location);
  if (kind === undefined || location.trim() === '') {
    throw copyError(
      'store.invalid-location',
      `the ${which} is not a store location`,
      'give a SQLite file path (e.g. .tend/tend.db or sqlite:.tend/tend.db) or a postgres:// URL',
    );
  }
  return { kind, store: displayUrl(location) };
}

/** The file a SQLite location names (undefined for a database URL). */
function sqliteFile(location: string): string | undefined {
  if (storeKind(location) !== 'sqlite') return undefined;
  return location.replace(/^sqlite:(\/\/)?/i, '');
}

function sameStore(
  request: StoreCopyRequest,
  sides: { readonly from: StoreSide; readonly to: StoreSide },
): boolean {
  if (sides.from.kind === 'sqlite' && sides.to.kind === 'sqlite') {
    return sqliteFile(request.from) === sqliteFile(request.to);
  }
  return request.from === request.to;
}

/** This process's ledger key, or undefined when none is set up (the copy then checks links only). */
function ledgerKeyIfAny(ctx: AppContext): LedgerKey | undefined {
  try {
    return ctx.ledgerKey('verify');
  } catch {
    return undefined;
  }
}

/**
 * Whether a lease's holder may be writing now: unexpired, and not a process of this host that no
 * longer runs (whose lease any writer would take over).
 */
function liveLease(ctx: AppContext, lease: Lease): boolean {
  if (Date.parse(lease.expiresAt) <= ctx.clock.now().getTime()) return false;
  const h = lease.holder;
  return !(h.host === ctx.process.host && !ctx.process.isAlive(h.pid));
}

/** Refuses a side whose workspace a live writer holds: a copy of a memory being written is torn. */
function refuseLive(ctx: AppContext, leases: readonly Lease[], which: 'source' | 'target'): void {
  const live = leases.find((l) => liveLease(ctx, l));
  if (!live) return;
  const h = live.holder;
  throw new TendError(
    'store.copy-workspace-held',
    `the ${which}'s workspace ${live.workspace} is held by \`${h.command}\` (pid ${h.pid} on ${h.host}, lease until ${live.expiresAt}): a copy of a memory being written would be torn`,
    {
      phase: 'store',
      retryable: true,
      hint: `stop ${h.command} (pid ${h.pid} on ${h.host}) or wait until it is done, then copy again`,
    },
  );
}

/** A copy must write what it read; anything else is a bug, said before anyone relies on the copy. */
function checkCopied(read: MemoryCounts, written: MemoryCounts): void {
  const differ = (Object.keys(read) as (keyof MemoryCounts)[]).filter(
    (k) => read[k] !== written[k],
  );
  if (differ.length === 0) return;
  throw copyError(
    'store.copy-incomplete',
    `the target holds other counts than the source after the copy (${differ.map((k) => `${k}: ${read[k]} read, ${written[k]} stored`).join('; ')})`,
  );
}

function copiedLedger(
  v: LedgerVerification,
  entries: number,
  key: LedgerKey | undefined,
): CopiedLedger {
  if (!v.ok) return { ok: false, entries, reason: `entry ${v.brokenAt}: ${v.reason}` };
  return { ok: true, entries, ...(key ? { keyId: key.id } : {}) };
}

function copyError(code: string, message: string, hint?: string): TendError {
  return new TendError(code, message, { phase: 'store', ...(hint ? { hint } : {}) });
}
