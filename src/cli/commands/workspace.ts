import type { Command } from 'commander';

/** The flags of `tend workspace …` and `tend fleet status`: where the fleet's store is. */
export interface FleetOptions {
  store?: string;
  json?: boolean;
}

/** The flags of `tend workspace add`. */
export interface WorkspaceAddOptions extends FleetOptions {
  dir?: string;
  git?: string;
  ref?: string;
  path?: string;
}

const STORE_HELP =
  'the fleet’s store: a postgres:// URL (default $TEND_STORE_URL); a SQLite file has no registry';

/**
 * `tend workspace add|list|remove`: the workspaces a fleet of `tend worker`s runs, registered in
 * the shared store (docs/fleet.md).
 */
export function registerWorkspaceCommand(program: Command): void {
  const workspace = program
    .command('workspace')
    .description('the workspaces a fleet of `tend worker`s runs, registered in the shared store');
  workspace
    .command('add')
    .description(
      'register a workspace whose intent is in a directory every worker can read, or in a git repository the worker holding it fetches',
    )
    .argument('<name>', 'the workspace name (lower-case letters, digits, . _ -)')
    .option('--dir <path>', 'the intent directory (made absolute)')
    .option(
      '--git <url>',
      'the repository: https://, ssh://, git@host:path, file:// or an absolute path (no credentials in it)',
    )
    .option('--ref <name>', 'with --git: the branch or tag followed (default main)')
    .option(
      '--path <dir>',
      'with --git: the intent folder inside the repository (default its root)',
    )
    .option('--store <location>', STORE_HELP)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: WorkspaceAddOptions) =>
      (await import('../handlers/workspace.js')).workspaceAddHandler(name, o),
    );
  workspace
    .command('list')
    .description('the registered workspaces and where their intent is')
    .option('--store <location>', STORE_HELP)
    .option('--json', 'machine-readable output')
    .action(async (o: FleetOptions) =>
      (await import('../handlers/workspace.js')).workspaceListHandler(o),
    );
  workspace
    .command('remove')
    .description(
      'stop running a workspace in the fleet (its holder releases it at its next tick); its memory stays in the store',
    )
    .argument('<name>', 'the workspace name')
    .option('--store <location>', STORE_HELP)
    .option('--json', 'machine-readable output')
    .action(async (name: string, o: FleetOptions) =>
      (await import('../handlers/workspace.js')).workspaceRemoveHandler(name, o),
    );
}

/** `tend fleet status`: the fleet's workers and what each workspace is doing. */
export function registerFleetCommand(program: Command): void {
  const fleet = program
    .command('fleet')
    .description('a fleet of `tend worker`s on one shared store');
  fleet
    .command('status')
    .description(
      'each live worker (host, pid, version, last heartbeat) and each registered workspace (holder, epoch, last pass, state counts)',
    )
    .option('--store <location>', STORE_HELP)
    .option('--json', 'machine-readable output')
    .action(async (o: FleetOptions) =>
      (await import('../handlers/workspace.js')).fleetStatusHandler(o),
    );
}
