import type { Command } from 'commander';
import { validate } from '../../app/index.js';
import type { CommonOptions } from '../common.js';
import { cliContext, fail, output, printDiagnostics } from '../common.js';
import { EXIT } from '../exit-codes.js';

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
    .action(async (dir: string, o: CommonOptions) => {
      const out = output(o.json);
      try {
        const r = await validate(cliContext(), {
          dir,
          ...(o.workspace ? { workspace: o.workspace } : {}),
        });
        if (!r.ok) {
          printDiagnostics(out, r.diagnostics);
          process.exitCode = EXIT.error;
          return;
        }
        if (out.json) out.data(r);
        else {
          printDiagnostics(out, r.diagnostics);
          out.line(
            out.style.green(
              `✓ ${dir}: ${r.providers.length} provider${r.providers.length === 1 ? '' : 's'}, ${r.resources.length} resource${r.resources.length === 1 ? '' : 's'}, no errors (workspace ${r.workspace?.name})`,
            ),
          );
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
