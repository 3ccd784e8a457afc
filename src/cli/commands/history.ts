import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { collectList, intOption, workspaceFlags } from '../flags.js';

/** The flags of `tend history`. */
export interface HistoryOptions extends CommonOptions {
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
    .action(async (dir: string, o: HistoryOptions) =>
      (await import('../handlers/history.js')).historyHandler(dir, o),
    );
}
