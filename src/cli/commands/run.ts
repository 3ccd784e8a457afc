import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { intOption, lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend run`. */
export interface RunOptions extends WriterOptions {
  interval: number;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  maxPasses?: number;
  quiet?: boolean;
}

/** `tend run [dir]`: the continuous loop. SIGINT/SIGTERM stop it cleanly; a second signal exits at once. */
export function registerRunCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('run')
        .description(
          'keep the platform matching the intent: reconcile on audit-feed events and every interval; follows edits of the intent',
        )
        .argument('[dir]', 'intent directory', '.')
        .option('--json', 'JSON lines of events, then a summary'),
    ),
  )
    .option('--interval <seconds>', 'full pass at least this often', intOption('--interval'), 30)
    .option(
      '--approve-destroy',
      'allow destructive steps on stateful resources (otherwise they are blocked)',
    )
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .option(
      '--max-passes <n>',
      'stop after n passes and exit with the last pass’s code',
      intOption('--max-passes'),
    )
    .option('-q, --quiet', 'print changes and problems only, not every pass')
    .action(async (dir: string, o: RunOptions) =>
      (await import('../handlers/run.js')).runHandler(dir, o),
    );
}
