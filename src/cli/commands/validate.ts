import type { Command } from 'commander';
import { resolve } from 'node:path';
import { loadWorkspaceIntent } from '../../engine/index.js';
import type { CommonOptions } from '../common.js';
import { fail, output, printDiagnostics } from '../common.js';
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
        const { intent, diagnostics } = await loadWorkspaceIntent(
          resolve(dir),
          o.workspace ?? process.env['TEND_WORKSPACE'] ?? 'default',
          process.env,
        );
        if (!intent) {
          printDiagnostics(out, diagnostics);
          process.exitCode = EXIT.error;
          return;
        }
        if (out.json) {
          out.data({
            ok: true,
            diagnostics,
            providers: intent.providers.map((p) => p.name),
            resources: intent.resources.map((r) => ({
              address: r.address,
              dependsOn: r.dependsOn,
            })),
          });
        } else {
          printDiagnostics(out, diagnostics);
          out.line(
            out.style.green(
              `✓ ${dir}: ${intent.providers.length} provider${intent.providers.length === 1 ? '' : 's'}, ${intent.resources.length} resource${intent.resources.length === 1 ? '' : 's'}, no errors`,
            ),
          );
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
