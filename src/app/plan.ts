import { resolve } from 'node:path';
import type { Address, IntentOrigin, ObservedObject, Plan, PolicyVerdict } from '../core/index.js';
import type { FieldDecision, Observation, Reporter } from '../engine/index.js';
import { makeChangeset, reconcilePass, tendActor, writeChangeset } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** What `plan` is asked. */
export interface PlanRequest extends WorkspaceSelection {
  readonly approveDestroy: boolean;
  /** Plan deletes of managed objects removed from the intent. */
  readonly prune: boolean;
  /** Limit the plan to these resources and what they depend on. */
  readonly targets?: readonly Address[];
  /** Write the plan as a changeset (a saved plan `apply` carries out exactly) to this file. */
  readonly out?: string;
  /**
   * The intent directory the changeset names, when the plan is made from a copy of it (a proposal):
   * `tend apply <changeset>` then loads this one. Default: `dir`.
   */
  readonly intentDir?: string;
  readonly report?: Reporter;
}

/** An object carrying this workspace's marker that the intent does not declare. */
export interface Orphan {
  readonly type: string;
  readonly id: string;
  /** The address its marker names. */
  readonly address?: Address;
}

/** What is live but outside the plan: orphans, duplicates, replaces in progress. */
export interface LiveFindings {
  readonly orphans: readonly Orphan[];
  readonly duplicates: readonly { address: Address; objectIds: readonly string[] }[];
  readonly replacing: readonly { address: Address; oldObjectId: string }[];
  /** Types that could not be listed (not fatal: nothing declares them). */
  readonly unlisted: readonly { type: string; message: string }[];
}

/** The plan of a workspace and what was found live beside it. */
export interface PlanReport extends LiveFindings {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly plan: Plan;
  /**
   * What the arbitration policy decides about each drifted field a pass would act on (nothing is
   * recorded by a plan): who changed it, the decision, its rule and reason; `fresh` false for a
   * field held to an earlier decision.
   */
  readonly decisions: readonly FieldDecision[];
  /** Every policy rule's verdict on the plan's predicted result (docs/policies.md). */
  readonly policies: readonly PolicyVerdict[];
  /** The changeset file written (absolute), when asked for. */
  readonly changeset?: string;
  /** The commit the intent was read from (a git workspace). */
  readonly origin?: IntentOrigin;
}

/** What observe found besides the declared resources, as plain data. */
export function liveFindings(observation: Observation): LiveFindings {
  const orphan = (type: string, o: ObservedObject): Orphan => ({
    type,
    id: o.id,
    ...(o.marker?.address ? { address: o.marker.address } : {}),
  });
  return {
    orphans: observation.orphans.map((x) => orphan(x.type, x.object)),
    duplicates: observation.duplicates,
    replacing: observation.leftovers.map((l) => ({ address: l.address, oldObjectId: l.old.id })),
    unlisted: observation.failures,
  };
}

/**
 * Observes the platform and computes what apply would do. Read-only: it takes no lease (it never
 * waits for a writer) and writes nothing.
 */
export async function plan(ctx: AppContext, request: PlanRequest): Promise<PlanReport> {
  const { ws, nameSource } = await openWorkspace(ctx, request, 'read');
  try {
    const result = await reconcilePass(ws, {
      mode: 'plan',
      approveDestroy: request.approveDestroy,
      prune: request.prune,
      actor: tendActor('plan'),
      clock: ctx.clock,
      report: request.report ?? (() => {}),
      verifyTimeoutMs: 0,
      runChecks: false,
      ...(request.targets && request.targets.length > 0 ? { targets: request.targets } : {}),
    });
    let changeset: string | undefined;
    if (request.out !== undefined) {
      changeset = resolve(request.out);
      const saved = makeChangeset(
        ws,
        { plan: result.plan, observation: result.observation, waiting: [] },
        {
          approveDestroy: request.approveDestroy,
          prune: request.prune,
          targets: request.targets ?? [],
          ...(request.intentDir !== undefined ? { intentDir: resolve(request.intentDir) } : {}),
        },
        ctx.clock.now(),
      );
      await writeChangeset(changeset, saved, ctx.redactor);
    }
    return {
      workspace: { name: ws.name, source: nameSource },
      plan: result.plan,
      decisions: result.arbitration?.decisions ?? [],
      policies: result.policies ?? [],
      ...(changeset ? { changeset } : {}),
      ...(ws.origin ? { origin: ws.origin } : {}),
      ...liveFindings(result.observation),
    };
  } finally {
    await ws.close();
  }
}
