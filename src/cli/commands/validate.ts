import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';

/** `tend validate [dir]`: checks intent without sending anything to any API (providers' documents are read). */
export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'check intent files: syntax, kinds, types, schemas, references, secrets (sends nothing to any API)',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'machine-readable output')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .action(async (dir: string, o: CommonOptions) =>
      (await import('../handlers/validate.js')).validateHandler(dir, o),
    );
}
