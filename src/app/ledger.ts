import { existsSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { TendError, WORKSPACE_NAME } from '../core/index.js';
import { parseDocuments, readIntentFiles } from '../intent/index.js';
import type { LedgerVerification, Store } from '../store/index.js';
import { GENESIS_HASH } from '../store/index.js';
import type { AppContext } from './context.js';
import { requireKnownWorkspace } from './known-workspace.js';
import type { WorkspaceSelection } from './workspace.js';
import { chooseWorkspaceName, isSharedStore, localStateDir, storeLocation } from './workspace.js';

// `tend ledger`: anchoring the change ledger outside the database and verifying it with the key
// (docs/decisions/0010-keyed-ledger.md). Read-only: no lease, no intent validation, no platform — a
// ledger must be checkable while the intent is broken or the platform down.

/**
 * The head of a verified ledger, to keep outside the store (a commit, a ticket, another machine):
 * whoever rewrites the ledger later — even with the key — cannot make its entry at `seq` keep `hash`.
 */
export interface LedgerCheckpoint {
  readonly workspace: string;
  /** The number of entries; 0 for an empty ledger. */
  readonly seq: number;
  /** The hash of entry `seq` (64 zeros for an empty ledger). */
  readonly hash: string;
  /** The id of the key the ledger was verified with. */
  readonly keyId: string;
  /** When the checkpoint was made (ISO time). */
  readonly time: string;
}

/**
 * How a verification ended: `intact`; `tampered` (an entry is bad: exit 1); `wrong-key` (the
 * entries were written with another key than the one given: the check could not be made).
 */
export type LedgerVerdict = 'intact' | 'tampered' | 'wrong-key';

/** What `tend ledger verify` reports. */
export interface LedgerReport {
  readonly workspace: string;
  /** The id of the key the ledger was checked with. */
  readonly keyId: string;
  readonly verdict: LedgerVerdict;
  readonly ledger: LedgerVerification;
  /** The checkpoint verified against (`verify`), or the one made (`checkpoint`, when intact). */
  readonly checkpoint?: LedgerCheckpoint;
  /** Where the checkpoint was written (`checkpoint --out`). */
  readonly written?: string;
  /** What to do about a failure, in plain words. */
  readonly advice?: string;
}

/** What `tend ledger verify` is asked. */
export interface LedgerVerifyRequest extends WorkspaceSelection {
  /** A checkpoint file made by `tend ledger checkpoint`. */
  readonly checkpointFile?: string;
}

/** What `tend ledger checkpoint` is asked. */
export interface LedgerCheckpointRequest extends WorkspaceSelection {
  /** Write the checkpoint to this file (0600) as well as returning it. */
  readonly out?: string;
}

/** The largest checkpoint file read, in bytes. */
export const MAX_CHECKPOINT_BYTES = 64 * 1024;

/**
 * Verifies a workspace's change ledger with the ledger key (`ctx.ledgerKey('verify')`) and, when a
 * checkpoint file is given, against it. Problems with what was given — no key, an unreadable or
 * invalid checkpoint, a checkpoint of another workspace or made with another key, no store, a
 * workspace a shared store never saw (`ledger.no-workspace`, naming those it holds) — are
 * TendErrors with `ledger.*` codes; a bad ledger is a report with verdict `tampered`.
 */
export async function verifyLedger(
  ctx: AppContext,
  request: LedgerVerifyRequest,
): Promise<LedgerReport> {
  const checkpoint =
    request.checkpointFile === undefined ? undefined : readCheckpoint(request.checkpointFile);
  return withLedgerStore(ctx, request, async (store, workspace, keyId) => {
    if (checkpoint && checkpoint.keyId !== keyId) {
      throw new TendError(
        'ledger.checkpoint-key',
        `the checkpoint was made with key id ${checkpoint.keyId}; you gave key id ${keyId}`,
        { phase: 'store', hint: 'verify with the key the checkpoint names' },
      );
    }
    if (checkpoint && checkpoint.workspace !== workspace) {
      throw new TendError(
        'ledger.checkpoint-workspace',
        `the checkpoint is of workspace ${checkpoint.workspace}; this ledger is workspace ${workspace}`,
        {
          phase: 'store',
          hint: 'give the checkpoint of this workspace, or name the workspace with --workspace',
        },
      );
    }
    const ledger = await store.verifyLedger(
      checkpoint ? { checkpoint: { seq: checkpoint.seq, hash: checkpoint.hash } } : {},
    );
    return report(workspace, keyId, ledger, checkpoint);
  });
}

/**
 * Verifies the ledger with the key and, when it is intact, returns its head as a checkpoint (and
 * writes it to `out`, mode 0600, replacing the file whole). A ledger that fails verification gets no
 * checkpoint: anchoring a broken ledger would vouch for it.
 */
export async function checkpointLedger(
  ctx: AppContext,
  request: LedgerCheckpointRequest,
): Promise<LedgerReport> {
  return withLedgerStore(ctx, request, async (store, workspace, keyId) => {
    const ledger = await store.verifyLedger();
    if (!ledger.ok) return report(workspace, keyId, ledger);
    const checkpoint: LedgerCheckpoint = {
      workspace,
      seq: ledger.entries,
      hash: ledger.head,
      keyId,
      time: ctx.clock.now().toISOString(),
    };
    if (request.out === undefined) return report(workspace, keyId, ledger, checkpoint);
    const written = resolve(request.out);
    writeCheckpoint(written, checkpoint);
    return { ...report(workspace, keyId, ledger, checkpoint), written };
  });
}

/** Opens the selected workspace's store with the verify key, names the workspace, runs `body`. */
async function withLedgerStore(
  ctx: AppContext,
  selection: WorkspaceSelection,
  body: (store: Store, workspace: string, keyId: string) => Promise<LedgerReport>,
): Promise<LedgerReport> {
  const dir = resolve(selection.dir);
  const location = storeLocation(ctx, selection);
  const shared = isSharedStore(location);
  const path = location.replace(/^sqlite:(\/\/)?/i, '');
  if (!shared && path !== ':memory:' && !existsSync(path)) {
    throw new TendError('ledger.no-store', `there is no store at ${path}: no ledger to verify`, {
      phase: 'store',
      hint: 'give the intent directory the workspace was applied from, or --store',
    });
  }
  const key = ctx.ledgerKey('verify', localStateDir(location, dir));
  const declared = await declaredWorkspaceName(dir);
  // A database shared by many workspaces is opened for the one named before it is opened.
  const named = shared
    ? chooseWorkspaceName({
        flag: selection.workspace,
        env: ctx.env['TEND_WORKSPACE'],
        intent: declared,
        dir,
      })
    : undefined;
  const store = await ctx.openStore(location, {
    ledgerKey: key,
    ...(named !== undefined ? { workspace: named.name } : {}),
  });
  try {
    // A name the shared store never saw has no ledger to vouch for: "empty, intact" would mislead.
    if (named) await requireKnownWorkspace(store, named, 'ledger.no-workspace');
    const workspace =
      named?.name ??
      chooseWorkspaceName({
        flag: selection.workspace,
        env: ctx.env['TEND_WORKSPACE'],
        intent: declared,
        store: await store.getMeta('workspace'),
        dir,
      }).name;
    return await body(store, workspace, key.id);
  } finally {
    await store.close();
  }
}

/**
 * The name the intent's Workspace document gives, read without validating the rest of the intent
 * (or connecting a provider): undefined when there is none or it cannot be read.
 */
async function declaredWorkspaceName(dir: string): Promise<string | undefined> {
  const { files } = await readIntentFiles(dir);
  for (const file of files) {
    for (const doc of parseDocuments(file.path, file.text).documents) {
      const value = doc.value as { kind?: unknown; name?: unknown } | null;
      if (
        value !== null &&
        typeof value === 'object' &&
        value.kind === 'Workspace' &&
        typeof value.name === 'string' &&
        WORKSPACE_NAME.test(value.name)
      ) {
        return value.name;
      }
    }
  }
  return undefined;
}

const TAMPERED_ADVICE =
  'do not trust the ledger from that entry on. Copy the store (the .db file and its -wal) as evidence before anything else writes to it, compare it with a backup or your last checkpoint, and find out who could write to the file; later appends do not repair the break';

function report(
  workspace: string,
  keyId: string,
  ledger: LedgerVerification,
  checkpoint?: LedgerCheckpoint,
): LedgerReport {
  const base = { workspace, keyId, ledger, ...(checkpoint ? { checkpoint } : {}) };
  if (ledger.ok) return { ...base, verdict: 'intact' };
  if (ledger.problem === 'wrong-key') {
    return {
      ...base,
      verdict: 'wrong-key',
      advice:
        'verify with the key that wrote the ledger (TEND_LEDGER_KEY_FILE or TEND_LEDGER_KEY); if no key of yours has that id, the keyed entries were replaced',
    };
  }
  if (ledger.problem === 'key-changed') {
    return {
      ...base,
      verdict: 'tampered',
      advice: `if the ledger key was changed on purpose at entry ${ledger.brokenAt}, the entries from there on need the new key; otherwise ${TAMPERED_ADVICE}`,
    };
  }
  return { ...base, verdict: 'tampered', advice: TAMPERED_ADVICE };
}

/**
 * Reads a checkpoint file: a regular file of at most MAX_CHECKPOINT_BYTES holding the JSON of a
 * LedgerCheckpoint. Anything else is `ledger.checkpoint-unreadable` or `ledger.checkpoint-invalid`,
 * naming the file and the field.
 */
export function readCheckpoint(file: string): LedgerCheckpoint {
  const path = resolve(file);
  const unreadable = (why: string) =>
    new TendError('ledger.checkpoint-unreadable', `cannot read the checkpoint ${path}: ${why}`, {
      phase: 'store',
      hint: 'give the file `tend ledger checkpoint --out` wrote',
    });
  let text: string;
  try {
    const s = lstatSync(path);
    if (!s.isFile()) throw unreadable('it is not a regular file');
    if (s.size > MAX_CHECKPOINT_BYTES) {
      throw unreadable(`it is ${s.size} bytes; a checkpoint is at most ${MAX_CHECKPOINT_BYTES}`);
    }
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof TendError) throw e;
    const code = (e as { code?: unknown } | null)?.code;
    throw unreadable(code === 'ENOENT' ? 'it does not exist' : String(code ?? e));
  }
  const invalid = (why: string) =>
    new TendError('ledger.checkpoint-invalid', `the checkpoint ${path} is not valid: ${why}`, {
      phase: 'store',
      hint: 'make a new one with `tend ledger checkpoint --out <file>`',
    });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('it is not JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('it is not a JSON object');
  }
  const v = value as Record<string, unknown>;
  const shown = (x: unknown) => (x === undefined ? 'nothing' : JSON.stringify(x));
  if (typeof v['workspace'] !== 'string' || !WORKSPACE_NAME.test(v['workspace'])) {
    throw invalid(`workspace must be a workspace name, got ${shown(v['workspace'])}`);
  }
  const seq = v['seq'];
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
    throw invalid(`seq must be a non-negative integer, got ${shown(seq)}`);
  }
  const hash = v['hash'];
  if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
    throw invalid(`hash must be 64 lower-case hex digits, got ${shown(hash)}`);
  }
  if (seq === 0 && hash !== GENESIS_HASH) {
    throw invalid('the checkpoint of an empty ledger (seq 0) has the hash 64 zeros');
  }
  const keyId = v['keyId'];
  if (typeof keyId !== 'string' || !/^[0-9a-f]{16}$/.test(keyId)) {
    throw invalid(`keyId must be 16 lower-case hex digits, got ${shown(keyId)}`);
  }
  const time = v['time'];
  if (typeof time !== 'string' || Number.isNaN(Date.parse(time))) {
    throw invalid(`time must be an ISO time, got ${shown(time)}`);
  }
  return { workspace: v['workspace'], seq, hash, keyId, time };
}

/** Writes a checkpoint file, mode 0600, replacing any file there whole (never half-written). */
export function writeCheckpoint(path: string, checkpoint: LedgerCheckpoint): void {
  const temporary = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}`,
  );
  try {
    writeFileSync(temporary, `${JSON.stringify(checkpoint, null, 2)}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    renameSync(temporary, path);
  } catch (e) {
    rmSync(temporary, { force: true });
    const code = (e as { code?: unknown } | null)?.code;
    throw new TendError(
      'ledger.checkpoint-unwritable',
      `cannot write the checkpoint ${path} (${String(code ?? e)})`,
      { phase: 'store', hint: 'choose a writable place with --out' },
    );
  }
}
