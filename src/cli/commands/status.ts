import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';

/** The flags of `tend status`. */
export interface StatusOptions extends CommonOptions {
  offline?: boolean;
}

/** `tend status [dir]`: each resource's state after the last pass, plus orphans found live. */
export function registerStatusCommand(program: Command): void {
  workspaceFlags(
    program
      .command('status')
      .description(
        'show each resource’s state after the last pass, each provider’s, who holds the workspace, and objects carrying its marker that no intent declares',
      )
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--offline', 'do not contact the platform (no orphan listing)')
    .action(async (dir: string, o: StatusOptions) =>
      (await import('../handlers/status.js')).statusHandler(dir, o),
    );
}
