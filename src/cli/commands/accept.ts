import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';

/** The flags of `tend accept`. */
export interface AcceptOptions extends CommonOptions {
  write?: boolean;
  git?: boolean;
  value?: string;
}

/** `tend accept <address> <field> [dir]`: write a drifted field's observed value into the intent. */
export function registerAcceptCommand(program: Command): void {
  workspaceFlags(
    program
      .command('accept')
      .description(
        'take a field’s observed value into the intent: prints the smallest patch of the intent file (comments, order and quoting kept); --write writes it, --git commits it on a new branch',
      )
      .argument('<address>', 'the resource, provider.type/name')
      .argument('<field>', 'the field below spec: replicas, tags.team, ports[0]')
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--write', 'write the patched file in place')
    .option(
      '--git',
      'commit the patch on a new branch tend/accept-… and switch back (the file must be tracked and unmodified); on a git workspace of a fleet (--workspace, shared --store), commit it in a clone of its repository and push the branch',
    )
    .option('--value <json>', 'accept this value (JSON) instead of reading the platform')
    .action(async (address: string, field: string, dir: string, o: AcceptOptions) =>
      (await import('../handlers/accept.js')).acceptHandler(address, field, dir, o),
    );
}
