import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { workspaceFlags } from '../flags.js';

/** The flags of `tend announce`. */
export interface AnnounceOptions extends CommonOptions {
  field?: string;
  value?: string;
  actor?: string;
  actorKind?: string;
  intent?: string;
  motivation?: string;
  ref?: string;
  urgency?: string;
  ttl?: string;
  expiresAt?: string;
  note?: string;
  file?: string;
  list?: boolean;
  all?: boolean;
}

/**
 * `tend announce <address> --field … --value … --actor … [dir]`, `tend announce -f file [dir]`,
 * `tend announce --list [--all] [dir]`: an actor declares a change it makes, with intent, motivation
 * and how long it holds, so that Tend attributes the drift it then observes (docs/announcements.md).
 */
export function registerAnnounceCommand(program: Command): void {
  workspaceFlags(
    program
      .command('announce')
      .description(
        'declare a change an actor makes to a field (who, intent, motivation, until when), so Tend attributes the drift to it; --list shows announcements',
      )
      .argument('[address]', 'the resource, provider.type/name (omit with -f or --list)')
      .argument('[dir]', 'intent directory (default .)')
      .option('--field <path>', 'the field, as in the resource document (replicas, spec.tags.team)')
      .option(
        '--value <value>',
        'the value the actor sets: JSON when it parses (5, true, "5"), else text',
      )
      .option('--actor <name>', 'who makes the change (hpa, alice, deploy-bot)')
      .option('--actor-kind <kind>', 'human, controller, agent, pipeline or tend')
      .option(
        '--intent <word>',
        'the goal: availability, cost, security, compliance, performance, consistency, or a word of your own',
      )
      .option(
        '--motivation <kind>',
        'why now: incident, cve, traffic, scheduled, … (or the text form kind:ref; urgency=high)',
      )
      .option('--ref <text>', 'a reference for the motivation: a ticket, an incident, a CVE id')
      .option('--urgency <level>', 'low, normal, high or critical')
      .option('--ttl <duration>', 'how long the announcement holds, 1s to 30d (default 1h)')
      .option('--expires-at <time>', 'or until when (an ISO time, at most 30d ahead)')
      .option('--note <text>', 'a sentence for whoever reads it later')
      .option('-f, --file <file>', 'announcements from a JSON or YAML file (one, or a list)')
      .option('--list', 'show the active announcements')
      .option('--all', 'with --list: expired ones too')
      .option('--json', 'machine-readable output'),
  ).action(async (address: string | undefined, dir: string | undefined, o: AnnounceOptions) =>
    (await import('../handlers/announce.js')).announceHandler(address, dir, o),
  );
}
