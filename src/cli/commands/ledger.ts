import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';

/** The flags of `tend ledger checkpoint`. */
export interface CheckpointOptions extends CommonOptions {
  out?: string;
}

/** The flags of `tend ledger verify`. */
export interface VerifyOptions extends CommonOptions {
  checkpoint?: string;
}

/**
 * `tend ledger checkpoint|verify [dir]`: anchor the change ledger's head outside the store, and
 * verify the ledger with its key (and against a checkpoint). Exit 0 intact, 1 an entry is bad, 2 the
 * check could not be made (no key, another key, an unreadable checkpoint).
 */
export function registerLedgerCommand(program: Command): void {
  const ledger = program
    .command('ledger')
    .description(
      'the change ledger: verify it with the ledger key, and keep its head (a checkpoint) outside the store',
    );

  workspaceFlags(
    ledger
      .command('checkpoint')
      .description(
        'verify the ledger, then print its head { workspace, seq, hash, keyId, time } to keep elsewhere (a commit, a ticket)',
      )
      .argument('[dir]', 'intent directory', '.')
      .option(
        '--out <file>',
        'write the checkpoint to this file (mode 0600) instead of printing it',
      )
      .option('--json', 'machine-readable output'),
  ).action(async (dir: string, o: CheckpointOptions) =>
    (await import('../handlers/ledger.js')).checkpointHandler(dir, o),
  );

  workspaceFlags(
    ledger
      .command('verify')
      .description(
        'verify every entry of the ledger with the ledger key, and against a checkpoint: exit 0 intact, 1 an entry is bad, 2 the check could not be made',
      )
      .argument('[dir]', 'intent directory', '.')
      .option(
        '--checkpoint <file>',
        'a checkpoint from `tend ledger checkpoint`: its entry must be unchanged',
      )
      .option('--json', 'machine-readable output'),
  ).action(async (dir: string, o: VerifyOptions) =>
    (await import('../handlers/ledger.js')).verifyHandler(dir, o),
  );
}
