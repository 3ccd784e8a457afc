import { plan, planView } from '../../app/index.js';
import type { Address } from '../../core/index.js';
import { denies, hasChanges } from '../../core/index.js';
import type { PlanOptions } from '../commands/plan.js';
import { cliContext, fail, output, workspaceOptions } from '../common.js';
import { EXIT } from '../exit-codes.js';
import { renderDecisions } from '../render/drift.js';
import { renderLiveFindings } from '../render/live.js';
import { renderPlan } from '../render/plan.js';
import { renderPolicyVerdicts } from '../render/policies.js';

/** `tend plan [dir]`, run: exit 0 = no changes, 2 = changes, 1 = error (or a deny policy violated). */
export async function planHandler(dir: string, o: PlanOptions): Promise<void> {
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
        ...planView(report),
        ...(report.changeset ? { changeset: report.changeset } : {}),
      });
    } else {
      const decided = renderDecisions(report.decisions, out.style);
      if (decided) out.line(decided);
      out.line(renderPlan(report.plan, out.style));
      const live = renderLiveFindings(report, out.style);
      if (live) out.line(live);
      const policies = renderPolicyVerdicts(report.policies, out.style);
      if (policies) out.line(policies);
      if (report.changeset) {
        out.line(
          out.style.dim(
            `Saved to ${report.changeset}: tend apply ${report.changeset} carries out exactly this plan, or refuses if anything it was computed from has changed.`,
          ),
        );
      }
    }
    // A deny violation on the plan's predicted result is an error: apply would refuse the plan.
    process.exitCode = report.policies.some(denies)
      ? EXIT.error
      : hasChanges(report.plan)
        ? EXIT.changes
        : EXIT.ok;
  } catch (e) {
    fail(out, e);
  }
}
