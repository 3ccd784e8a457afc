import type { Command } from 'commander';
import type { Address } from '../../core/index.js';
import { openWorkspace } from '../../engine/index.js';
import type { CommonOptions } from '../common.js';
import { fail, intOption, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { describeFieldChanges } from '../render/field-changes.js';

interface HistoryOptions extends CommonOptions {
  limit: number;
  address?: string;
}

/** `tend history [dir]`: the change ledger: who changed what, with intent and motivation. */
export function registerHistoryCommand(program: Command): void {
  program
    .command('history')
    .description(
      'show the change ledger: every change Tend made or observed, with actor, intent and motivation',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'machine-readable output')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .option('--address <address>', 'only changes to this resource')
    .option('--limit <n>', 'most recent n entries', intOption('--limit'), 50)
    .action(async (dir: string, o: HistoryOptions) => {
      const out = output(o.json);
      try {
        const ws = await openWorkspace(workspaceOptions(dir, o));
        try {
          const changes = await ws.store.changes({
            limit: o.limit,
            ...(o.address ? { address: o.address as Address } : {}),
          });
          const verification = await ws.store.verifyLedger();
          if (out.json) out.data({ changes, ledger: verification });
          else {
            for (const c of changes) {
              const why = [c.intent, c.motivation].filter(Boolean).join('/');
              const fields = describeFieldChanges(c);
              out.line(
                `${c.seq.toString().padStart(4)} ${c.time}  ${c.actor.padEnd(10)} ${c.source.padEnd(6)} ${c.action.padEnd(6)} ${c.address ?? c.objectId}${why ? `  (${why})` : ''}${fields ? `  ${fields}` : ''}`,
              );
            }
            out.line(
              verification.ok
                ? out.style.dim(
                    `ledger intact (${verification.entries} entries, hash chain verified)`,
                  )
                : out.style.red(
                    `ledger TAMPERED at entry ${verification.brokenAt}: ${verification.reason}`,
                  ),
            );
          }
          process.exitCode = verification.ok ? EXIT.ok : EXIT.error;
        } finally {
          await ws.close();
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
