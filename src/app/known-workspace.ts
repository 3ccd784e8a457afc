import { TendError } from '../core/index.js';
import type { Store } from '../store/index.js';
import { isWorkspaceDirectory } from '../store/index.js';
import type { WorkspaceNameSource } from './workspace.js';

/** How many of the workspaces a shared store holds an error names. */
export const KNOWN_WORKSPACES_SHOWN = 10;

/** Where a workspace name came from, in words, for messages. */
const FROM: Readonly<Record<WorkspaceNameSource, string>> = {
  flag: 'from --workspace',
  env: 'from TEND_WORKSPACE',
  intent: "from the intent's Workspace document",
  store: 'remembered by the store',
  folder: 'derived from the folder',
};

/**
 * Refuses to report on a workspace a shared store (PostgreSQL) has never seen. A command that only
 * reports what Tend recorded — status, history, explain, drift, announcements listed, the ledger
 * verified or anchored — would otherwise answer a mistyped name with an empty workspace ("empty
 * ledger, verified"). The error names the workspace and up to KNOWN_WORKSPACES_SHOWN workspaces the
 * store holds. A SQLite store (one workspace per file) is left alone, and so is every writer: the
 * first apply is what puts a workspace in the store. `code` lets a command keep its own family of
 * errors (`tend ledger` exits 2 on its `ledger.*` ones).
 */
export async function requireKnownWorkspace(
  store: Store,
  workspace: { readonly name: string; readonly source: WorkspaceNameSource },
  code = 'workspace.not_found',
): Promise<void> {
  if (!isWorkspaceDirectory(store) || (await store.workspaceKnown())) return;
  const known = await store.knownWorkspaces(KNOWN_WORKSPACES_SHOWN);
  const more = known.total - known.names.length;
  const listed =
    known.total === 0
      ? 'the store holds no workspace yet'
      : `the store holds ${known.total} workspace${known.total === 1 ? '' : 's'}: ${known.names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  throw new TendError(
    code,
    `workspace ${workspace.name} (${FROM[workspace.source]}) is not in the store: nothing was ever recorded for it; ${listed}`,
    {
      phase: 'store',
      hint:
        known.total === 0
          ? 'apply the intent first (tend apply), or give the store that holds the workspace (--store or TEND_STORE_URL)'
          : 'name one of them with --workspace <name> (or TEND_WORKSPACE); a new workspace is put in the store by its first tend apply',
    },
  );
}
