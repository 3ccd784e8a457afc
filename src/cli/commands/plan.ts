import type { Command } from 'commander';
import { plan } from '../../app/index.js';
import type { Address } from '../../core/index.js';
import { hasChanges } from '../../core/index.js';
import type { CommonOptions } from '../common.js';
import {
  cliContext,
  collectList,
  fail,
  output,
  workspaceFlags,
  workspaceOptions,
} from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderDecisions } from '../render/drift.js';
import { renderLiveFindings } from '../render/live.js';
import { planJson, renderPlan } from '../render/plan.js';

interface PlanOptions extends CommonOptions {
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
    .action(async (dir: string, o: PlanOptions) => {
      const out = output(o.json);
      try {
        const report = await plan(cliContext(), {
          ...workspaceOptions(dir, o),
          approveDestroy: Boolean(o.approveDestroy),
          prune: o.prune !== false,
          ...(o.target ? { targets: o.target as Address[] } : {}),
          ...(o.out !== undefined ? { out: o.out } : {}),
        });
        if (out.json) {
          out.data({
            ...(planJson(report.plan) as Record<string, unknown>),
            workspace: report.workspace,
            decisions: report.decisions,
            orphans: report.orphans,
            duplicates: report.duplicates,
            replacing: report.replacing,
            ...(report.changeset ? { changeset: report.changeset } : {}),
          });
        } else {
          const decided = renderDecisions(report.decisions, out.style);
          if (decided) out.line(decided);
          out.line(renderPlan(report.plan, out.style));
          const live = renderLiveFindings(report, out.style);
          if (live) out.line(live);
          if (report.changeset) {
            out.line(
              out.style.dim(
                `Saved to ${report.changeset}: tend apply ${report.changeset} carries out exactly this plan, or refuses if anything it was computed from has changed.`,
              ),
            );
          }
        }
        process.exitCode = hasChanges(report.plan) ? EXIT.changes : EXIT.ok;
      } catch (e) {
        fail(out, e);
      }
    });
}
