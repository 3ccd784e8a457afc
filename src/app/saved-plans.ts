import { randomBytes } from 'node:crypto';
import { chmod, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Address, ChangesetOptions, Plan } from '../core/index.js';
import { destructive, TendError } from '../core/index.js';
import { readChangeset } from '../engine/index.js';
import { ensurePrivateDir } from '../store/index.js';
import type { ApplyChangesetRequest, ApplyReport } from './apply.js';
import { applyChangeset } from './apply.js';
import type { AppContext } from './context.js';
import type { PlanReport, PlanRequest } from './plan.js';
import { plan } from './plan.js';
import type { WorkspaceSelection } from './workspace.js';

/**
 * Saved plans kept by the workspace (`tend serve`'s plans): changesets in `<dir>/.tend/plans/`, named
 * by an id that sorts by time, so "the last plan" is the greatest id. Applying one by id carries out
 * exactly that plan (or refuses), like `tend apply <file>`.
 */
const ID = /^\d{8}T\d{9}Z-[0-9a-f]{8}$/;

/** A saved plan as read back. */
export interface SavedPlan {
  readonly id: string;
  readonly workspace: string;
  readonly createdAt: string;
  readonly options: ChangesetOptions;
  readonly plan: Plan;
  /** Replaces and deletes in it: applying it needs an explicit approval (and the admin role). */
  readonly destructive: readonly Address[];
}

/** A plan made and saved, with its id. */
export interface SavedPlanReport extends PlanReport {
  readonly id: string;
}

/** Where a workspace's saved plans live. */
export function plansDir(selection: WorkspaceSelection): string {
  return join(resolve(selection.dir), '.tend', 'plans');
}

function checkId(id: string): void {
  if (!ID.test(id)) {
    throw new TendError('plan.bad_id', `"${id}" is not a saved plan id`, {
      hint: 'ids look like 20260101T120000000Z-0123abcd; GET /plans/last gives the latest',
    });
  }
}

/** Computes a plan (see `plan`) and saves it as a changeset under a new id. */
export async function savePlan(
  ctx: AppContext,
  request: Omit<PlanRequest, 'out'>,
): Promise<SavedPlanReport> {
  const dir = plansDir(request);
  ensurePrivateDir(dir, false);
  const stamp = ctx.clock.now().toISOString().replace(/[-:.]/g, '');
  const id = `${stamp}-${randomBytes(4).toString('hex')}`;
  const file = join(dir, `${id}.json`);
  const report = await plan(ctx, { ...request, out: file });
  // A plan names the workspace's objects: private like the rest of `.tend/`.
  await chmod(file, 0o600);
  return { ...report, id };
}

/** Reads a saved plan by id; `plan.not_found` when there is none. */
export async function readSavedPlan(selection: WorkspaceSelection, id: string): Promise<SavedPlan> {
  checkId(id);
  let changeset;
  try {
    changeset = await readChangeset(join(plansDir(selection), `${id}.json`));
  } catch (e) {
    if (e instanceof TendError && e.code !== 'changeset.unreadable') throw e;
    throw new TendError('plan.not_found', `no saved plan ${id}`, {
      hint: 'make one with POST /plan; GET /plans/last gives the latest',
    });
  }
  return {
    id,
    workspace: changeset.workspace,
    createdAt: changeset.createdAt,
    options: changeset.options,
    plan: changeset.plan,
    destructive: destructive(changeset.plan),
  };
}

/** The most recent saved plan, if any. */
export async function lastSavedPlan(selection: WorkspaceSelection): Promise<SavedPlan | undefined> {
  let names: string[];
  try {
    names = await readdir(plansDir(selection));
  } catch {
    return undefined;
  }
  const ids = names
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -5))
    .filter((id) => ID.test(id))
    .sort();
  const last = ids.at(-1);
  return last === undefined ? undefined : readSavedPlan(selection, last);
}

/** Carries out a saved plan by id, exactly (see `applyChangeset`). */
export async function applySavedPlan(
  ctx: AppContext,
  request: Omit<ApplyChangesetRequest, 'changeset'> & WorkspaceSelection & { readonly id: string },
): Promise<ApplyReport> {
  await readSavedPlan(request, request.id);
  const { id, dir, ...rest } = request;
  return applyChangeset(ctx, { ...rest, changeset: join(plansDir({ dir }), `${id}.json`) });
}
