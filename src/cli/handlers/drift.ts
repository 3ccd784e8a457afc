import type { CommonOptions } from '../flags.js';
import { drift } from '../../app/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { DRIFT_EXIT } from '../exit-codes.js';
import { renderDrift } from '../render/drift.js';

/** `tend drift [dir]`, run: exit 0 nothing drifted, 1 drifted, 2 error. */
export async function driftHandler(dir: string, o: CommonOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await drift(cliContext(), workspaceOptions(dir, o));
    if (out.json) out.data(r);
    else for (const line of renderDrift(r, out.style)) out.line(line);
    process.exitCode = r.drifted ? DRIFT_EXIT.drifted : DRIFT_EXIT.none;
  } catch (e) {
    fail(out, e);
    // 1 means drift here: an error is 2.
    process.exitCode = DRIFT_EXIT.error;
  }
}
