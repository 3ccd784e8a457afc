import type { CheckpointOptions, VerifyOptions } from '../commands/ledger.js';
import type { LedgerReport } from '../../app/index.js';
import { checkpointLedger, verifyLedger } from '../../app/index.js';
import { toTendError } from '../../core/index.js';
import type { Output } from '../common.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';

function exitCodeOf(r: LedgerReport): number {
  return r.verdict === 'intact' ? EXIT.ok : r.verdict === 'wrong-key' ? EXIT.usage : EXIT.error;
}

function renderWarnings(out: Output, r: LedgerReport, to: 'line' | 'err'): void {
  if (!r.ledger.ok) return;
  for (const w of r.ledger.warnings) out[to](out.style.yellow(`note: ${w}`));
}

function renderFailure(out: Output, r: LedgerReport): void {
  if (r.ledger.ok) return;
  out.line(
    r.verdict === 'wrong-key'
      ? out.style.red(`cannot verify the ledger: ${r.ledger.reason}`)
      : out.style.red(`ledger TAMPERED at entry ${r.ledger.brokenAt}: ${r.ledger.reason}`),
  );
  if (r.advice) out.err(`  what to do: ${r.advice}`);
}

/** Reports an error; a problem with what was given (`ledger.*`: key, checkpoint, store) exits 2. */
function failLedger(out: Output, e: unknown): void {
  fail(out, e);
  if (toTendError(e).code.startsWith('ledger.')) process.exitCode = EXIT.usage;
}

/** `tend ledger checkpoint [dir]`, run. */
export async function checkpointHandler(dir: string, o: CheckpointOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await checkpointLedger(cliContext(), {
      ...workspaceOptions(dir, o),
      ...(o.out !== undefined ? { out: o.out } : {}),
    });
    if (out.json) out.data({ ok: r.verdict === 'intact', ...r });
    else if (r.checkpoint && r.written === undefined) {
      // The checkpoint itself is the output, so that `> file` keeps it; the rest goes to stderr.
      out.data(r.checkpoint);
      renderWarnings(out, r, 'err');
    } else if (r.checkpoint) {
      out.line(
        `checkpoint of workspace ${r.workspace} at entry ${r.checkpoint.seq} (key id ${r.keyId}) written to ${r.written}`,
      );
      renderWarnings(out, r, 'line');
    } else {
      renderFailure(out, r);
      out.err('no checkpoint was made: a checkpoint of a broken ledger would vouch for it');
    }
    process.exitCode = exitCodeOf(r);
  } catch (e) {
    failLedger(out, e);
  }
}

/** `tend ledger verify [dir]`, run. */
export async function verifyHandler(dir: string, o: VerifyOptions): Promise<void> {
  const out = output(o.json);
  try {
    const r = await verifyLedger(cliContext(), {
      ...workspaceOptions(dir, o),
      ...(o.checkpoint !== undefined ? { checkpointFile: o.checkpoint } : {}),
    });
    if (out.json) out.data({ ok: r.verdict === 'intact', ...r });
    else if (r.ledger.ok) {
      const anchored = r.checkpoint
        ? `; entry ${r.checkpoint.seq} matches the checkpoint of ${r.checkpoint.time}`
        : '';
      out.line(
        out.style.green(
          `ledger intact: ${r.ledger.entries} entries of workspace ${r.workspace}, verified with key id ${r.keyId}${anchored}`,
        ),
      );
      renderWarnings(out, r, 'line');
    } else renderFailure(out, r);
    process.exitCode = exitCodeOf(r);
  } catch (e) {
    failLedger(out, e);
  }
}
