import type { Command } from 'commander';
import { history } from '../../app/index.js';
import type { Address } from '../../core/index.js';
import { formatMotivation } from '../../core/index.js';
import type { CommonOptions } from '../common.js';
import {
  cliContext,
  fail,
  intOption,
  output,
  workspaceFlags,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { describeFieldChanges } from '../render/field-changes.js';

interface HistoryOptions extends CommonOptions {
  limit: number;
  address?: string;
}

/** `tend history [dir]`: the change ledger: who changed what, with intent and motivation. */
export function registerHistoryCommand(program: Command): void {
  workspaceFlags(
    program
      .command('history')
      .description(
        'show the change ledger: every change Tend made or observed, with actor, intent and motivation',
      )
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--address <address>', 'only changes to this resource')
    .option('--limit <n>', 'most recent n entries', intOption('--limit'), 50)
    .action(async (dir: string, o: HistoryOptions) => {
      const out = output(o.json);
      try {
        const { changes, ledger } = await history(cliContext(), {
          ...workspaceOptions(dir, o),
          limit: o.limit,
          ...(o.address ? { address: o.address as Address } : {}),
        });
        if (out.json) out.data({ changes, ledger });
        else {
          for (const c of changes) {
            const why = [c.intent, c.motivation && formatMotivation(c.motivation)]
              .filter(Boolean)
              .join('/');
            const fields = describeFieldChanges(c);
            out.line(
              `${c.seq.toString().padStart(4)} ${c.time}  ${c.actor.padEnd(10)} ${c.source.padEnd(6)} ${c.action.padEnd(6)} ${c.address ?? c.objectId}${why ? `  (${why})` : ''}${fields ? `  ${fields}` : ''}`,
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
    });
}
