import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';

/** The flags of `tend pause`. */
export interface PauseOptions extends CommonOptions {
  reason?: string;
}

/** `tend pause <address> [dir]` and `tend resume <address> [dir]`: stop and resume reconciling. */
export function registerPauseCommands(program: Command): void {
  workspaceFlags(
    program
      .command('pause')
      .description(
        'stop reconciling one resource: every pass (run, serve, apply) leaves it alone, its status pending with who and why, until tend resume',
      )
      .argument('<address>', 'the resource, provider.type/name')
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--reason <text>', 'why, shown by tend status')
    .action(async (address: string, dir: string, o: PauseOptions) =>
      (await import('../handlers/pause.js')).pauseHandler(address, dir, o, true),
    );
  workspaceFlags(
    program
      .command('resume')
      .description('let Tend reconcile a paused resource again (at the next pass)')
      .argument('<address>', 'the resource, provider.type/name')
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  ).action(async (address: string, dir: string, o: PauseOptions) =>
    (await import('../handlers/pause.js')).pauseHandler(address, dir, o, false),
  );
}
