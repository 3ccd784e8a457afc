import { validate } from '../../app/index.js';
import type { CommonOptions } from '../flags.js';
import { cliContext, fail, output, printDiagnostics } from '../common.js';
import { EXIT } from '../exit-codes.js';

/** `tend validate [dir]`, run: checks the intent, prints every diagnostic. */
export async function validateHandler(dir: string, o: CommonOptions): Promise<void> {
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
}
