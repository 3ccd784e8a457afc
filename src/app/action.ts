import { randomBytes } from 'node:crypto';
import type {
  ActionActor,
  ActionDefinition,
  ActionRun,
  ActionStepState,
  Address,
  ResourceDecl,
} from '../core/index.js';
import { nearMatches, readActionParams, TendError } from '../core/index.js';
import type { ActionCrashHook, ActionEvent, Workspace } from '../engine/index.js';
import { carryOutRun } from '../engine/index.js';
import type { AppContext } from './context.js';
import type { WorkspaceNameSource, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';
import type { UnderLease } from './with-workspace.js';
import { withWorkspace } from './with-workspace.js';

/** What `listActions` is asked: the resource whose type's actions to show. */
export interface ListActionsRequest extends WorkspaceSelection {
  readonly address: string;
}

/** An action as `tend action <address> --list` shows it. */
export interface ActionInfo {
  readonly name: string;
  readonly description: string;
  readonly params: readonly {
    readonly name: string;
    readonly description: string;
    readonly required: boolean;
    readonly default?: string;
  }[];
  readonly changes: readonly string[];
  readonly steps: readonly { readonly name: string; readonly description: string }[];
}

/** The actions a resource's type offers. */
export interface ActionList {
  readonly address: Address;
  readonly type: string;
  readonly actions: readonly ActionInfo[];
}

/** What `runAction` is asked. */
export interface ActionRequest extends WorkspaceSelection, UnderLease {
  readonly address: string;
  readonly action: string;
  /** `name=value` pairs, as `--param` gives them. */
  readonly params: readonly string[];
  /** Who runs it and why (the ledger records it); default actor `tend`. */
  readonly actor?: ActionActor;
  /** How long to wait for another writer's lease (0: fail at once). */
  readonly lockTimeoutMs: number;
  readonly report?: (event: ActionEvent) => void;
  /** Aborting lets the step in flight settle; the run stays resumable. */
  readonly signal?: AbortSignal;
  /** Test hook at every crash point of every step. */
  readonly crash?: ActionCrashHook;
  /** The command named in the lease (default `tend action`). */
  readonly command?: string;
}

/** One step as a run report shows it. */
export interface ActionStepReport {
  readonly name: string;
  /** `pending`: not started (the run failed or stopped before it). */
  readonly state: ActionStepState | 'pending';
  readonly attempts: number;
  readonly startedAt?: string;
  readonly settledAt?: string;
  /** From first start to settling, in milliseconds (across a resume, the wall time between). */
  readonly ms?: number;
  readonly message?: string;
}

/** What `runAction` did. */
export interface ActionReport {
  readonly workspace: { readonly name: string; readonly source: WorkspaceNameSource };
  readonly runId: string;
  readonly address: Address;
  readonly action: string;
  /** True when an interrupted run was carried on rather than a new one started. */
  readonly resumed: boolean;
  /** `interrupted`: stopped by a signal between steps; running the action again resumes it. */
  readonly state: 'done' | 'failed' | 'interrupted';
  readonly params: Readonly<Record<string, string>>;
  readonly steps: readonly ActionStepReport[];
  readonly error?: string;
  /** The ledger entry recording the run (done or failed). */
  readonly ledgerSeq?: number;
  readonly epoch: number;
}

/**
 * Thrown when the parameters of an action are invalid (every problem listed), the action is unknown
 * or the resource has no such action: nothing was run or recorded.
 */
export class ActionUsageError extends TendError {
  readonly errors: readonly string[];
  constructor(code: string, errors: readonly string[], hint: string) {
    super(code, errors.length === 1 ? errors[0]! : `${errors.length} problems with the action`, {
      phase: 'load',
      hint,
    });
    this.errors = errors;
  }
}

/** The action codes for which nothing ran (the CLI's usage exit code). */
export const ACTION_USAGE_CODES = [
  'action.unknown_resource',
  'action.none',
  'action.unknown',
  'action.invalid_params',
  'action.unfinished',
] as const;

/** The declared resource at `address`, its provider's actions for its type, or a usage error. */
function actionsOf(
  ws: Workspace,
  address: string,
): { decl: ResourceDecl; resourceType: string; actions: readonly ActionDefinition[] } {
  const decl = ws.intent.resources.find((r) => r.address === address);
  if (!decl) {
    const near = nearMatches(
      address,
      ws.intent.resources.map((r) => r.address),
    );
    throw new ActionUsageError(
      'action.unknown_resource',
      [
        `no resource ${address} in the intent${near.length > 0 ? `; did you mean ${near.join(' or ')}?` : ''}`,
      ],
      'actions run on declared resources: write the address as provider.type/name, as tend status lists it',
    );
  }
  const { provider, info } = ws.typeOf(decl.type);
  return { decl, resourceType: info.name, actions: provider.actions?.(info.name) ?? [] };
}

function infoOf(a: ActionDefinition): ActionInfo {
  return {
    name: a.name,
    description: a.description,
    params: a.params.map((p) => ({
      name: p.name,
      description: p.description,
      required: Boolean(p.required),
      ...(p.default !== undefined ? { default: p.default } : {}),
    })),
    changes: a.changes,
    steps: a.steps.map((s) => ({ name: s.name, description: s.description })),
  };
}

/** The actions the type of a declared resource offers. Read-only: takes no lease. */
export async function listActions(
  ctx: AppContext,
  request: ListActionsRequest,
): Promise<ActionList> {
  const { ws } = await openWorkspace(ctx, request, 'read');
  try {
    const { decl, actions } = actionsOf(ws, request.address);
    return { address: decl.address, type: decl.type, actions: actions.map(infoOf) };
  } finally {
    await ws.close();
  }
}

/** The steps of a run for a report: every step of the definition, started or not. */
function stepReports(run: ActionRun, definition: ActionDefinition): ActionStepReport[] {
  return definition.steps.map((s, i) => {
    const r = run.steps[i];
    if (!r) return { name: s.name, state: 'pending', attempts: 0 };
    const ms =
      r.settledAt !== undefined ? Date.parse(r.settledAt) - Date.parse(r.startedAt) : undefined;
    return {
      name: r.name,
      state: r.state,
      attempts: r.attempts,
      startedAt: r.startedAt,
      ...(r.settledAt !== undefined ? { settledAt: r.settledAt } : {}),
      ...(ms !== undefined ? { ms } : {}),
      ...(r.message !== undefined ? { message: r.message } : {}),
    };
  });
}

/** Same keys and values. */
function sameParams(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

/**
 * Runs a Day-2 action on a declared resource as a durable workflow (docs/actions.md): holds the
 * workspace lease for the whole run; records the run before its first step and each step as it is
 * journaled and settled (engine/actions); and appends one ledger entry with the actor, intent and
 * motivation once the run is over (done or failed). An unfinished run of the same action on the same
 * resource (a crash, a kill, a signal) is resumed instead of starting a new one: from its last settled
 * step, verifying first the step whose outcome is unknown. Parameters given then must be the run's
 * own (or none). Throws ActionUsageError (nothing run) for an unknown resource or action, or bad
 * parameters.
 */
export async function runAction(ctx: AppContext, request: ActionRequest): Promise<ActionReport> {
  const leaseOptions = {
    command: request.command ?? 'tend action',
    waitMs: request.lockTimeoutMs,
    ...(request.signal ? { signal: request.signal } : {}),
  };
  // The resource, the action and its parameters are checked before the lease is taken: a mistake is
  // reported at once, not after waiting for another writer.
  const prepare = (ws: Workspace) => {
    const { decl, resourceType, actions } = actionsOf(ws, request.address);
    const definition = actions.find((a) => a.name === request.action);
    if (!definition) {
      const names = actions.map((a) => a.name);
      const near = nearMatches(request.action, names);
      throw new ActionUsageError(
        actions.length === 0 ? 'action.none' : 'action.unknown',
        [
          actions.length === 0
            ? `${decl.type} offers no actions`
            : `${decl.type} has no action ${request.action}; ${near.length > 0 ? `did you mean ${near.join(' or ')}?` : `it offers ${names.join(', ')}`}`,
        ],
        `tend action ${decl.address} --list shows what it offers`,
      );
    }
    const read = readActionParams(definition.params, request.params);
    return { decl, resourceType, definition, read };
  };
  return withWorkspace(
    ctx,
    request,
    { lease: leaseOptions, prepare },
    async ({ ws, nameSource, lease, signal }, { decl, resourceType, definition, read }) => {
      // Under the lease: no other writer can be carrying the same run on.
      const [unfinished] = await ws.store.actionRuns({
        address: decl.address,
        action: definition.name,
        unfinished: true,
        limit: 1,
      });
      // Resuming with no parameters takes the run's own; anything given is checked as for a new run.
      const resumeAsIs = unfinished !== undefined && request.params.length === 0;
      if (!resumeAsIs && !read.ok) {
        throw new ActionUsageError(
          'action.invalid_params',
          read.problems.map((p) => p.message),
          'nothing was run; fix every parameter listed and run the action again',
        );
      }
      const given = read.ok ? read.params : {};
      if (unfinished && !resumeAsIs && !sameParams(unfinished.params, given)) {
        throw new ActionUsageError(
          'action.unfinished',
          [
            `run ${unfinished.id} of ${definition.name} on ${decl.address} (started ${unfinished.createdAt}) is unfinished, with other parameters: ${JSON.stringify(unfinished.params)}`,
          ],
          'an interrupted run is finished before another starts: run the action again with its parameters, or with none, to resume it',
        );
      }
      const actor: ActionActor = request.actor ?? { actor: 'tend', actorKind: 'tend' };
      const twin = await ws.store.getTwin(decl.address);
      const at = ctx.clock.now().toISOString();
      const run: ActionRun = unfinished ?? {
        id: `act-${randomBytes(8).toString('hex')}`,
        address: decl.address,
        type: decl.type,
        action: definition.name,
        params: given,
        actor,
        state: 'running',
        createdAt: at,
        steps: [],
      };
      // Recorded before its first step: a crash from here on leaves a run to resume.
      if (!unfinished) await ws.store.putActionRun(run);
      const { run: ended, interrupted } = await carryOutRun(run, {
        store: ws.store,
        definition,
        clock: ctx.clock,
        context: {
          address: decl.address,
          type: decl.type,
          resourceType,
          spec: decl.spec,
          ...(twin ? { objectId: twin.objectId } : {}),
          params: run.params,
          dir: ws.intent.dir,
          env: ctx.env,
          secrets: ctx.redactor,
          signal,
          fence: () => ws.fence.check(),
        },
        ...(request.report ? { report: request.report } : {}),
        signal,
        ...(request.crash ? { crash: request.crash } : {}),
      });
      let ledgerSeq: number | undefined;
      if (ended.state !== 'running') {
        // Who ran it and why: the run's own actor (a resumed run keeps the one that started it).
        const who = ended.actor;
        const change = await ws.store.appendChange({
          time: ended.finishedAt ?? ctx.clock.now().toISOString(),
          actor: who.actor,
          ...(who.actorKind ? { actorKind: who.actorKind } : {}),
          ...(who.intent ? { intent: who.intent } : {}),
          motivation: who.motivation ?? {
            kind: 'maintenance',
            ref: `action ${definition.name} (${ended.id})`,
          },
          source: 'tend',
          address: decl.address,
          type: decl.type,
          objectId: twin?.objectId ?? decl.name,
          action: 'update',
          fields: ended.state === 'done' ? definition.changes : [],
          after: {
            action: definition.name,
            run: ended.id,
            outcome: ended.state,
            ...(ended.error ? { error: ended.error } : {}),
          },
        });
        ledgerSeq = change.seq;
      }
      return {
        workspace: { name: ws.name, source: nameSource },
        runId: ended.id,
        address: decl.address,
        action: definition.name,
        resumed: unfinished !== undefined,
        state: ended.state === 'running' || interrupted ? 'interrupted' : ended.state,
        params: ended.params,
        steps: stepReports(ended, definition),
        ...(ended.error ? { error: ended.error } : {}),
        ...(ledgerSeq !== undefined ? { ledgerSeq } : {}),
        epoch: lease.lease.epoch,
      };
    },
  );
}
