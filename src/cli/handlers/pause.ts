import { userInfo } from 'node:os';
import { pauseResource, resumeResource } from '../../app/index.js';
import type { PauseOptions } from '../commands/pause.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

function whoAmI(): string {
  try {
    return userInfo().username;
  } catch {
    return 'cli';
  }
}

/** `tend pause|resume <address> [dir]`, run: exit 0 done (or already so), 1 an error. */
export async function pauseHandler(
  address: string,
  dir: string,
  o: PauseOptions,
  pause: boolean,
): Promise<void> {
  const out = output(o.json);
  try {
    const ws = workspaceOptions(dir, o);
    const r = pause
      ? await pauseResource(cliContext(), {
          ...ws,
          address,
          by: whoAmI(),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        })
      : await resumeResource(cliContext(), { ...ws, address });
    if (out.json) out.data(r);
    else if (!r.changed) out.line(`${address} was already ${pause ? 'paused' : 'reconciled'}.`);
    else {
      out.line(
        pause
          ? `${address}: reconciling stopped; passes leave it alone until tend resume ${address}.`
          : `${address}: reconciled again from the next pass.`,
      );
    }
    process.exitCode = EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}
