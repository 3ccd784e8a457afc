import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { resolve } from 'node:path';
import { intentContentHash, readIntentFiles } from '../intent/index.js';
import type { AppContext } from './context.js';
import type { OpenedWorkspace, WorkspaceSelection } from './workspace.js';
import { IntentError, openWorkspace } from './workspace.js';

/**
 * A workspace loaded once and kept open for the reads of a long-running process (`tend serve`):
 * its intent validated, its providers connected, its store open for reading. It is loaded again
 * when the intent files change — a watch of the intent directory says so at once, and the files'
 * content hash is compared at most every `recheckMs` besides (a file system without watch events) —
 * and never otherwise: a read costs what it reads from the store, not a load of the workspace.
 *
 * Reads are served from the store, which the loop writes (statuses, the twin, the lease): what the
 * loop already knows. A new load replaces the old one for the reads that start after it; reads in
 * flight finish on the one they started with, which is closed after the last of them. An intent
 * that does not load is remembered with its content hash: every read fails with its IntentError
 * until the files change, without loading them again each time.
 */
export interface HeldWorkspace {
  /** Runs `read` on the workspace as the intent files are now (loaded again first if they changed). */
  read<T>(read: (opened: OpenedWorkspace) => Promise<T>): Promise<T>;
  /** Stops watching and closes the workspace once the reads in flight are done. */
  close(): Promise<void>;
}

/** Options of `holdWorkspace`. */
export interface HoldOptions {
  /** Compare the intent files' content hash at least this often even without a watch event (ms). */
  readonly recheckMs?: number;
  /** Watch the intent directory (default true). */
  readonly watch?: boolean;
}

interface Held {
  readonly opened: OpenedWorkspace;
  users: number;
  retired: boolean;
  closing?: Promise<void>;
}

type State =
  | { readonly kind: 'loaded'; readonly held: Held }
  | { readonly kind: 'invalid'; readonly hash: string; readonly error: IntentError };

const YAML_FILE = /\.ya?ml$/i;

/** Holds `selection`'s workspace for reads (see HeldWorkspace); loaded at the first read. */
export function holdWorkspace(
  ctx: AppContext,
  selection: WorkspaceSelection,
  options: HoldOptions = {},
): HeldWorkspace {
  const dir = resolve(selection.dir);
  const recheckMs = options.recheckMs ?? 500;
  let state: State | undefined;
  let dirty = true;
  let checkedAt = 0;
  let refreshing: Promise<Held> | undefined;
  let closed = false;

  let watcher: FSWatcher | undefined;
  if (options.watch !== false) {
    try {
      // Only intent files (*.yaml, *.yml directly in the directory) matter; a name the platform
      // does not give is taken as a change.
      watcher = watch(dir, (_, name) => {
        if (name === null || YAML_FILE.test(name)) dirty = true;
      });
      watcher.on('error', () => watcher?.close());
    } catch {
      // No watch (some file systems): the content hash is compared every recheckMs.
    }
  }

  const closeHeld = (held: Held): Promise<void> =>
    (held.closing ??= held.opened.ws.close().catch(() => undefined));

  const retire = (held: Held | undefined) => {
    if (!held) return;
    held.retired = true;
    if (held.users === 0) void closeHeld(held);
  };

  /** The workspace for the files as they are now: the one held, or a new load. */
  const refresh = async (): Promise<Held> => {
    dirty = false;
    checkedAt = ctx.clock.now().getTime();
    // A directory that cannot be read has no hash: the load below says what is wrong.
    const read = await readIntentFiles(dir).catch(() => undefined);
    const hash = read && read.diagnostics.length === 0 ? intentContentHash(read.files) : undefined;
    if (hash !== undefined) {
      if (state?.kind === 'loaded' && state.held.opened.ws.intent.contentHash === hash) {
        return state.held;
      }
      if (state?.kind === 'invalid' && state.hash === hash) throw state.error;
    }
    try {
      const opened = await openWorkspace(ctx, selection, 'read');
      const held: Held = { opened, users: 0, retired: false };
      if (closed) {
        await closeHeld(held);
        throw new Error('the workspace is no longer held');
      }
      if (state?.kind === 'loaded') retire(state.held);
      state = { kind: 'loaded', held };
      return held;
    } catch (e) {
      if (e instanceof IntentError && hash !== undefined) {
        if (state?.kind === 'loaded') retire(state.held);
        state = { kind: 'invalid', hash, error: e };
      } else {
        // Not the intent's fault (the platform down with no cached document, the store): the next
        // read tries again.
        dirty = true;
      }
      throw e;
    }
  };

  const current = (): Promise<Held> => {
    const fresh = !dirty && ctx.clock.now().getTime() - checkedAt < recheckMs;
    if (fresh && state?.kind === 'loaded') return Promise.resolve(state.held);
    if (fresh && state?.kind === 'invalid') return Promise.reject(state.error);
    // One check (and load) at a time, shared by every read that arrives meanwhile.
    refreshing ??= refresh().finally(() => (refreshing = undefined));
    return refreshing;
  };

  return {
    async read<T>(read: (opened: OpenedWorkspace) => Promise<T>): Promise<T> {
      if (closed) throw new Error('the workspace is no longer held');
      const held = await current();
      held.users++;
      try {
        return await read(held.opened);
      } finally {
        held.users--;
        if (held.retired && held.users === 0) void closeHeld(held);
      }
    },
    async close() {
      closed = true;
      watcher?.close();
      await refreshing?.catch(() => undefined);
      if (state?.kind === 'loaded') {
        const held = state.held;
        retire(held);
        if (held.users === 0) await closeHeld(held);
      }
      state = undefined;
    },
  };
}
