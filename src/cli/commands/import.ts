import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { collectList, lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend import`. */
export interface ImportOptions extends WriterOptions {
  provider: string;
  type?: string[];
  match?: string[];
  under?: string;
  out?: string;
}

/**
 * `tend import <dir> --provider <name>`: writes Resource documents for the provider's objects that
 * the intent does not declare yet, checks that the directory still validates, and adopts the
 * objects (records them in the store, as if Tend had created them) so that `tend plan` is empty.
 */
export function registerImportCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('import')
        .description(
          'write intent for objects that already exist on a platform and adopt them (plan is then empty)',
        )
        .argument('<dir>', 'intent directory holding the Provider document')
        .requiredOption('--provider <name>', 'the provider whose objects to import')
        .option(
          '--type <type>',
          'only this resource type (repeatable, or comma-separated; default: all)',
          collectList,
        )
        .option(
          '--match <glob>',
          'only objects whose address, name, id or natural key the glob matches (* any characters, ? one; repeatable)',
          (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
        )
        .option(
          '--under <address>',
          'only objects that live under this declared resource (e.g. pdns.zones/example): its children, and theirs',
        )
        .option(
          '--out <file>',
          'file to write (default <dir>/<provider>-import.yaml); never overwritten',
        )
        .option('--json', 'machine-readable output'),
    ),
  ).action(async (dir: string, o: ImportOptions) =>
    (await import('../handlers/import.js')).importHandler(dir, o),
  );
}
