import type { Command } from 'commander';
import type { CommonOptions } from '../flags.js';
import { collectList, workspaceFlags } from '../flags.js';

/** The flags of `tend plan`. */
export interface PlanOptions extends CommonOptions {
  approveDestroy?: boolean;
  prune?: boolean;
  target?: string[];
  out?: string;
}

/** `tend plan [dir]`: what apply would do. Exit 0 = no changes, 2 = changes, 1 = error. */
export function registerPlanCommand(program: Command): void {
  workspaceFlags(
    program
      .command('plan')
      .description(
        'observe the platform and show what apply would change (exit 0: nothing, 2: changes, 1: error); never waits for a writer',
      )
      .argument('[dir]', 'intent directory', '.')
      .option('--json', 'machine-readable output'),
  )
    .option('--approve-destroy', 'plan destructive steps on stateful resources as approved')
    .option('--no-prune', 'do not plan deletes of managed objects removed from the intent')
    .option(
      '--target <address>',
      'only this resource and what it depends on (repeatable)',
      collectList,
    )
    .option(
      '--out <file>',
      'write the plan as a changeset that tend apply <file> carries out exactly (or refuses)',
    )
    .action(async (dir: string, o: PlanOptions) =>
      (await import('../handlers/plan.js')).planHandler(dir, o),
    );
}
