import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend prune`. */
export interface PruneOptions extends WriterOptions {
  yes?: boolean;
  approveDestroy?: boolean;
}

/** `tend prune [dir]`: delete orphans (objects with this workspace's marker that nothing declares). */
export function registerPruneCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('prune')
        .description(
          'delete objects carrying this workspace’s marker that the intent does not declare (orphans); lists them and asks first',
        )
        .argument('[dir]', 'intent directory', '.')
        .option('--json', 'machine-readable output'),
    ),
  )
    .option('-y, --yes', 'delete without asking')
    .option('--approve-destroy', 'also delete orphans known to be stateful')
    .action(async (dir: string, o: PruneOptions) =>
      (await import('../handlers/prune.js')).pruneHandler(dir, o),
    );
}
