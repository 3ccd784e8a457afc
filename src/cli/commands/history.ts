import type { Command } from 'commander';
import { history } from '../../app/index.js';
import type { CommonOptions } from '../common.js';
import {
  cliContext,
  collectList,
  fail,
  intOption,
  output,
  workspaceFlags,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderChange } from '../render/history.js';

interface HistoryOptions extends CommonOptions {
  limit: number;
  actor?: string[];
  actorKind?: string[];
  intent?: string[];
  motivation?: string[];
  address?: string[];
  field?: string[];
  source?: string[];
  decision?: string[];
  since?: string;
  until?: string;
}

/** `tend history [dir]`: the change ledger, filtered: who changed what, why, and what Tend decided. */
export function registerHistoryCommand(program: Command): void {
  workspaceFlags(
    program
      .command('history')
      .description(
        'show the change ledger: every change Tend made or observed, with actor, intent, motivation and what Tend decided',
      )
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output: the entries as stored'),
  )
    .option('--actor <name>', 'only changes by this actor (repeatable, or a,b)', collectList)
    .option(
      '--actor-kind <kind>',
      'only changes by actors of this kind: human, controller, agent, pipeline, tend',
      collectList,
    )
    .option(
      '--intent <word>',
      'only changes serving this intent (availability, cost, …)',
      collectList,
    )
    .option(
      '--motivation <kind>',
      'only changes with this motivation kind (incident, traffic, …)',
      collectList,
    )
    .option(
      '--address <address>',
      'only changes to this resource, a type (sb.services) or a glob (sb.services/*)',
      collectList,
    )
    .option(
      '--field <path>',
      'only changes touching this field (replicas, spec.tags.team)',
      collectList,
    )
    .option(
      '--source <source>',
      'only changes learned this way: tend, audit, announcement, unknown',
      collectList,
    )
    .option(
      '--decision <decision>',
      'only changes Tend decided this way: enforce, accept, yield, hold, escalate',
      collectList,
    )
    .option('--since <time>', 'only changes at or after this ISO time, or this long ago (2h, 7d)')
    .option('--until <time>', 'only changes before this ISO time, or this long ago')
    .option('--limit <n>', 'most recent n matching entries', intOption('--limit'), 50)
    .action(async (dir: string, o: HistoryOptions) => {
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
    });
}
