import type { Command } from 'commander';
import { CommanderError } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';
import { DRIFT_EXIT } from '../exit-codes.js';

/** `tend drift [dir]`: every drifted declared field, who changed it and what the policy decides. */
export function registerDriftCommand(program: Command): void {
  workspaceFlags(
    program
      .command('drift')
      .description(
        'observe (read-only, no lock) and list every declared field that differs from the platform: declared and observed values, who changed it, and what the arbitration policy decides; exit 0 when nothing drifted, 1 when something did, 2 on errors',
      )
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      '\nExit codes (like git diff --exit-code):\n  0  nothing drifted (fields yielded to actors do not count)\n  1  a declared field differs, or a declared resource has no object\n  2  an error: invalid intent, unreadable store or platform',
    )
    .exitOverride((err) => {
      // 1 means drift here: a usage error (an unknown flag) is an error like any other, 2.
      throw err.exitCode === 0 ? err : new CommanderError(DRIFT_EXIT.error, err.code, err.message);
    })
    .action(async (dir: string, o: CommonOptions) =>
      (await import('../handlers/drift.js')).driftHandler(dir, o),
    );
}
