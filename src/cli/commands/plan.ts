import type { Command } from 'commander';
import { hasChanges } from '../../core/index.js';
import { openWorkspace, reconcilePass, systemClock, tendActor } from '../../engine/index.js';
import type { CommonOptions } from '../common.js';
import { fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { planJson, renderPlan } from '../render/plan.js';

interface PlanOptions extends CommonOptions {
  approveDestroy?: boolean;
  prune?: boolean;
}

/** `tend plan [dir]`: what apply would do. Exit 0 = no changes, 2 = changes, 1 = error. */
export function registerPlanCommand(program: Command): void {
  program
    .command('plan')
    .description(
      'observe the platform and show what apply would change (exit 0: nothing, 2: changes, 1: error)',
    )
    .argument('[dir]', 'intent directory', '.')
    .option('--json', 'machine-readable output')
    .option('--store <path>', 'store location (default <dir>/.tend/tend.db)')
    .option('--workspace <name>', 'workspace name carried in ownership markers')
    .option('--approve-destroy', 'plan destructive steps on stateful resources as approved')
    .option('--no-prune', 'do not plan deletes of managed objects removed from the intent')
    .action(async (dir: string, o: PlanOptions) => {
      const out = output(o.json);
      try {
        const ws = await openWorkspace(workspaceOptions(dir, o));
        try {
          const result = await reconcilePass(ws, {
            mode: 'plan',
            approveDestroy: Boolean(o.approveDestroy),
            prune: o.prune !== false,
            actor: tendActor('plan'),
            clock: systemClock,
            report: () => {},
            verifyTimeoutMs: 0,
            visibilityWindowMs: 10_000,
            runChecks: false,
          });
          if (out.json) out.data(planJson(result.plan));
          else out.line(renderPlan(result.plan, out.style));
          process.exitCode = hasChanges(result.plan) ? EXIT.changes : EXIT.ok;
        } finally {
          await ws.close();
        }
      } catch (e) {
        fail(out, e);
      }
    });
}
