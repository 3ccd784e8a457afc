import type { ExplainOptions } from '../commands/explain.js';
import { explain, UNKNOWN_TARGET_CODES } from '../../app/index.js';
import { toTendError } from '../../core/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderExplain } from '../render/explain.js';

/** `tend explain`, run: exit 2 when the address or field names nothing. */
export async function explainHandler(
  target: string,
  dir: string,
  o: ExplainOptions,
): Promise<void> {
  const out = output(o.json);
  try {
    const r = await explain(cliContext(), {
      ...workspaceOptions(dir, o),
      target,
      limit: o.limit,
    });
    if (out.json) out.data(r);
    else for (const line of renderExplain(r, out.style)) out.line(line);
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
    if (UNKNOWN_TARGET_CODES.includes(toTendError(e).code)) {
      process.exitCode = EXIT.unknownTarget;
    }
  }
}
