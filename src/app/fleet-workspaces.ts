import { TendError } from '../core/index.js';
import type { FleetRegistry, RegisteredWorkspace } from '../store/index.js';
import { openRegistry } from '../store/index.js';
import type { AppContext } from './context.js';
import type { FleetSelection, FleetStatus } from './fleet.js';
import { readFleetStatus } from './fleet.js';
import { KNOWN_WORKSPACES_SHOWN } from './known-workspace.js';
import type { WorkspaceSelection } from './workspace.js';
import { storeLocation } from './workspace.js';

// The workspaces of a fleet as a client that serves several of them picks one (`tend mcp --fleet`,
// docs/mcp.md "A fleet", decision 0047): the registry of the fleet's store, read on every call, and
// the selection of one registered directory workspace. Reads go to the shared store; nothing here
// takes a lease.

/** The registered workspaces of a fleet, open for as long as a server runs. */
export interface FleetWorkspaces {
  /** The store's location (its password known to the redactor). */
  readonly location: string;
  /** `tend fleet status --json`: the live workers and every registered workspace. */
  status(): Promise<FleetStatus>;
  /**
   * The selection of the registered workspace `name`: `workspace.not_found` (naming the registered
   * ones) for any other name; `workspace.git_not_served` for a git workspace.
   */
  selection(name: string): Promise<WorkspaceSelection>;
  close(): Promise<void>;
}

/** Where the served workspaces are listed, for the errors' hints (`list_workspaces`, `GET /workspaces`). */
export interface FleetWorkspacesOptions {
  /** How the caller lists the registered workspaces, in words. */
  readonly listHint: string;
  /** The command that serves the fleet (`tend mcp --fleet`), named in a refusal. */
  readonly server: string;
}

/**
 * Opens the registry of the fleet's store (`--store`, else TEND_STORE_URL). Any store other than
 * PostgreSQL is refused (`fleet.shared-store-required`, what to give instead), as `tend serve
 * --fleet` and `tend workspace add` refuse it.
 */
export async function openFleetWorkspaces(
  ctx: AppContext,
  request: FleetSelection,
  options: FleetWorkspacesOptions,
): Promise<FleetWorkspaces> {
  const location = storeLocation(ctx, { dir: '.', ...request });
  ctx.redactor.addUrlCredentials(location);
  const registry = await openRegistry(location, { env: ctx.env, redactor: ctx.redactor });
  return fleetWorkspacesOf(registry, location, options);
}

/** The selection of `name` among the registered workspaces (see `FleetWorkspaces.selection`). */
export function selectRegistered(
  registered: readonly RegisteredWorkspace[],
  name: string,
  location: string,
  options: FleetWorkspacesOptions,
): WorkspaceSelection {
  const found = registered.find((w) => w.name === name);
  if (!found) {
    const names = registered.map((w) => w.name).sort();
    const shown = names.slice(0, KNOWN_WORKSPACES_SHOWN);
    const more = names.length - shown.length;
    const listed =
      names.length === 0
        ? 'the fleet has no registered workspace yet'
        : `the fleet has ${names.length}: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    throw new TendError(
      'workspace.not_found',
      `no workspace ${JSON.stringify(name)} is registered in this fleet; ${listed}`,
      {
        hint:
          names.length === 0
            ? 'register one with tend workspace add <name> --dir <path>'
            : `name one of them (${options.listHint} lists them)`,
      },
    );
  }
  if (found.source.kind !== 'dir') {
    // Its intent is a commit the holder fetched into its own cache: nothing this process can read.
    throw new TendError(
      'workspace.git_not_served',
      `workspace ${name} follows a git repository (${found.source.url}); ${options.server} serves directory workspaces only`,
      {
        hint: 'read it with tend status/history --workspace on a checkout of the repository; serving git workspaces is not built yet (docs/fleet.md)',
      },
    );
  }
  return { dir: found.source.dir, store: location, workspace: name };
}

/** The workspaces of an open registry (closing them closes it). */
export function fleetWorkspacesOf(
  registry: FleetRegistry,
  location: string,
  options: FleetWorkspacesOptions,
): FleetWorkspaces {
  return {
    location,
    status: () => readFleetStatus(registry),
    selection: async (name) =>
      selectRegistered(await registry.listWorkspaces(), name, location, options),
    close: () => registry.close(),
  };
}
