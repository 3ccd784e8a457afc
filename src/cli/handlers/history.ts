import type { HistoryOptions } from '../commands/history.js';
import { history } from '../../app/index.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderChange } from '../render/history.js';

/** `tend history [dir]`, run: the filtered ledger and whether its chain holds. */
export async function historyHandler(dir: string, o: HistoryOptions): Promise<void> {
  const out = output(o.json);
  try {
    const { changes, ledger, filter } = await history(cliContext(), {
      ...workspaceOptions(dir, o),
      limit: o.limit,
      ...(o.actor ? { actor: o.actor } : {}),
      ...(o.actorKind ? { actorKind: o.actorKind } : {}),
      ...(o.intent ? { intent: o.intent } : {}),
      ...(o.motivation ? { motivation: o.motivation } : {}),
      ...(o.address ? { address: o.address } : {}),
      ...(o.field ? { field: o.field } : {}),
      ...(o.source ? { source: o.source } : {}),
      ...(o.decision ? { decision: o.decision } : {}),
      ...(o.since !== undefined ? { since: o.since } : {}),
      ...(o.until !== undefined ? { until: o.until } : {}),
    });
    if (out.json) out.data({ changes, ledger, filter });
    else {
      for (const c of changes) for (const line of renderChange(c, out.style)) out.line(line);
      if (changes.length === 0) {
        out.line(
          Object.keys(filter).length > 0
            ? 'no entry matches the filter'
            : 'the ledger is empty: nothing was changed yet',
        );
      }
      // history opens the store without the ledger key: it follows the chain's links and checks
      // the head; `tend ledger verify` checks every signature with the key.
      out.line(
        !ledger.ok
          ? out.style.red(`ledger TAMPERED at entry ${ledger.brokenAt}: ${ledger.reason}`)
          : ledger.unchecked > 0
            ? out.style.dim(
                `ledger links intact (${ledger.entries} entries); signatures not checked: run tend ledger verify`,
              )
            : out.style.dim(`ledger intact (${ledger.entries} entries, hash chain verified)`),
      );
    }
    process.exitCode = ledger.ok ? EXIT.ok : EXIT.error;
  } catch (e) {
    fail(out, e);
  }
}
