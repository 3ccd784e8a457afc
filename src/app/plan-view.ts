import type { Address, IntentOrigin, Plan, PlanStep, PolicyVerdict } from '../core/index.js';
import { blockedReason, destructive } from '../core/index.js';
import type { FieldDecision } from '../engine/index.js';
import type { LiveFindings, Orphan, PlanReport } from './plan.js';

/**
 * A plan as JSON: what `tend plan --json`, `POST /plan` and the MCP `plan` and `propose_change`
 * tools give, and the `plan` of `tend apply --json`. One definition, so that the three adapters
 * cannot drift apart (test/e2e/plan-view.test.ts compares them). Unknowns stay `{ "$unknown": … }`.
 */
export interface PlanStepsView {
  /** True when any step is not a noop. */
  readonly changes: boolean;
  readonly counts: Plan['counts'];
  /** Destructive steps waiting for --approve-destroy. */
  readonly gated: readonly Address[];
  /** Steps that can never be carried out, with why. */
  readonly blocked: readonly { readonly address: Address; readonly reason: string }[];
  /** Everything downstream of a replace or delete. */
  readonly blastRadius: readonly Address[];
  /** Replaces and deletes (core `destructive`): applying them needs an explicit approval. */
  readonly destructive: readonly Address[];
  /** One step per resource, in reference order. */
  readonly steps: readonly PlanStep[];
}

/** The plan of a workspace with what the policy decides and what was found live beside it. */
export interface PlanView extends PlanStepsView, LiveFindings {
  readonly workspace: PlanReport['workspace'];
  readonly decisions: readonly FieldDecision[];
  /** The policy rules not passed on the plan's predicted result (docs/policies.md). */
  readonly policies: readonly PolicyVerdict[];
  /** The commit the intent was read from (a git workspace): what the plan was planned from. */
  readonly origin?: IntentOrigin;
}

/** The steps part of the view (see `PlanStepsView`). */
export function planStepsView(plan: Plan): PlanStepsView {
  // One loop, no array per step: a plan may have 100,000 steps, few of them blocked.
  const blocked: { address: Address; reason: string }[] = [];
  for (const st of plan.steps) {
    const reason = blockedReason(st);
    if (reason !== undefined) blocked.push({ address: st.address, reason });
  }
  return {
    changes: plan.steps.some((st) => st.kind !== 'noop'),
    counts: plan.counts,
    gated: plan.gated,
    blocked,
    blastRadius: plan.blastRadius,
    destructive: destructive(plan),
    steps: plan.steps,
  };
}

const orphanKey = (o: Orphan) => `${o.type}\u0000${o.id}`;

/**
 * The whole view of a plan report: the steps part, the workspace, the decisions and the live
 * findings (orphans sorted by type and id, so the same state gives the same document).
 */
export function planView(report: Omit<PlanReport, 'changeset'>): PlanView {
  return {
    workspace: report.workspace,
    ...planStepsView(report.plan),
    decisions: report.decisions,
    policies: report.policies.filter((v) => v.result !== 'pass'),
    orphans: [...report.orphans].sort((a, b) =>
      orphanKey(a) < orphanKey(b) ? -1 : orphanKey(a) > orphanKey(b) ? 1 : 0,
    ),
    duplicates: report.duplicates,
    replacing: report.replacing,
    unlisted: report.unlisted,
    ...(report.origin ? { origin: report.origin } : {}),
  };
}
