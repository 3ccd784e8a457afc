import type { Command } from 'commander';
import type { WriterOptions } from '../flags.js';
import { lockFlag, workspaceFlags } from '../flags.js';

/** The flags of `tend action`. */
export interface ActionOptions extends WriterOptions {
  list?: boolean;
  param?: string[];
  actor?: string;
  actorKind?: string;
  intent?: string;
  motivation?: string;
}

/**
 * `tend action <address> <name> [dir]`: runs a Day-2 action on a resource as a durable workflow;
 * `tend action <address> --list [dir]`: what the resource's type offers (docs/actions.md).
 */
export function registerActionCommand(program: Command): void {
  lockFlag(
    workspaceFlags(
      program
        .command('action')
        .description(
          'run a Day-2 action on a resource (e.g. rotate-password), journaled step by step and resumed after a crash by running it again; --list shows what a resource offers (exit 0 done, 1 a step failed, 2 bad action or parameters, 130 interrupted)',
        )
        .argument('<address>', 'the resource, provider.type/name')
        .argument('[name]', 'the action (omit with --list)')
        .argument('[dir]', 'intent directory (default .)')
        .option('--list', "show the actions the resource's type offers, with their parameters")
        .option(
          '--param <name=value>',
          'a parameter of the action (repeatable); a resumed run keeps its own',
          (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
        )
        .option('--actor <name>', 'who runs it, for the ledger (default tend)')
        .option('--actor-kind <kind>', 'human, controller, agent, pipeline or tend')
        .option('--intent <word>', 'the goal: security, compliance, availability, …')
        .option(
          '--motivation <text>',
          'why now: kind[:ref], e.g. scheduled:quarterly or incident:INC-7',
        )
        .option(
          '--json',
          'machine-readable output (JSON lines of progress on stderr, the result on stdout)',
        ),
    ),
  ).action(
    async (address: string, name: string | undefined, dir: string | undefined, o: ActionOptions) =>
      (await import('../handlers/action.js')).actionHandler(address, name, dir, o),
  );
}
