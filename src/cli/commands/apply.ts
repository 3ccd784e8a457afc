import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { collectList, intOption, lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend apply`. */
export interface ApplyOptions extends WriterOptions {
  yes?: boolean;
  approveDestroy?: boolean;
  prune?: boolean;
  verifyTimeout: number;
  checks?: boolean;
  target?: string[];
}

/** `tend apply [dir]`: one pass of the loop: plan, execute (journaled), verify, check. */
export function registerApplyCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('apply')
        .description(
          'make the platform match the intent once: plan, execute (journaled), verify, run checks (exit 0 done, 1 anything failed, 3 waiting for --approve-destroy)',
        )
        .argument(
          '[dir]',
          'intent directory, or a changeset file written by tend plan --out (carried out exactly)',
          '.',
        )
        .option('--json', 'machine-readable output (JSON lines of events, then a summary)'),
    ),
  )
    .option('-y, --yes', 'do not ask before destructive steps (replace, delete)')
    .option('--approve-destroy', 'allow destructive steps on resources marked lifecycle.stateful')
    .option('--no-prune', 'do not delete managed objects removed from the intent')
    .option('--no-checks', 'skip checks after verification')
    .option(
      '--target <address>',
      'only this resource and what it depends on (repeatable)',
      collectList,
    )
    .option(
      '--verify-timeout <ms>',
      'how long to wait for observed to match declared',
      intOption('--verify-timeout'),
      15_000,
    )
    .action(async (dir: string, o: ApplyOptions) =>
      (await import('../handlers/apply.js')).applyHandler(dir, o),
    );
}
