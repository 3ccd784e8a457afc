// The MCP server: one tool per use case of src/app, each a thin adapter (parse the arguments, call
// the use case, shape its report). Results are deterministic: the same call on the same state gives
// the same result (lists sorted, no time of the call in any result).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { AppContext, FleetWorkspaces, WorkspaceSelection } from '../app/index.js';
import {
  announce,
  AnnouncementError,
  compliance,
  complianceView,
  explain,
  history,
  IntentError,
  plan,
  planStepsView,
  planView,
  propose,
  SERVED_STATUS_OFFLINE,
  status,
} from '../app/index.js';
import type { Address, Redactor } from '../core/index.js';
import { formatDiagnostic, sortDiagnostics, TendError, toTendError } from '../core/index.js';
import {
  announceInput,
  announceOutput,
  complianceInput,
  complianceOutput,
  explainInput,
  explainOutput,
  historyInput,
  historyOutput,
  listWorkspacesInput,
  listWorkspacesOutput,
  planInput,
  planOutput,
  proposeInput,
  proposeOutput,
  statusInput,
  statusOutput,
  workspaceInput,
} from './schemas.js';

/** How the server was started: the workspace (or the fleet) it serves and what it may do. */
export type McpServerOptions = McpServing &
  (
    | { readonly selection: WorkspaceSelection; readonly fleet?: undefined }
    | {
        /**
         * `tend mcp --fleet`: every registered workspace of the fleet's store; every tool takes a
         * `workspace` argument, and `list_workspaces` lists them (docs/mcp.md "A fleet").
         */
        readonly fleet: FleetWorkspaces;
        readonly selection?: undefined;
      }
  );

/** What the server may do, in either mode. */
export interface McpServing {
  /**
   * `propose_change` with `apply: true` carries out a proposal without destructive steps. Off by
   * default: an agent then only writes saved plans and patches for a human.
   */
  readonly allowApply: boolean;
  /** The server's version, as `initialize` reports it. */
  readonly version: string;
  /** How long an applying call waits for another writer's lease (ms; default 0). */
  readonly lockTimeoutMs?: number;
}

/** The tools' names, in the order `tools/list` gives them. */
export const TOOL_NAMES = [
  'status',
  'plan',
  'explain',
  'history',
  'compliance',
  'announce',
  'propose_change',
] as const;

/** The tools of `tend mcp --fleet`, in the order `tools/list` gives them. */
export const FLEET_TOOL_NAMES = ['list_workspaces', ...TOOL_NAMES] as const;

const INSTRUCTIONS =
  'Tend keeps infrastructure as the intent declares it. Read with status, plan, explain, history and compliance (the policy violations and failing checks open now, with the change that introduced each); plan and propose_change return the policy verdicts on their result. Before changing a managed field yourself, announce it (actor, intent and motivation are required) so Tend attributes the drift to you. To change the intent, use propose_change: it writes a saved plan and a patch for a human to review.';
const FLEET_INSTRUCTIONS = `${INSTRUCTIONS} This server serves a fleet of workspaces: list_workspaces lists them, and every other tool takes the workspace it is about (workspace, required).`;

/** The default number of ledger entries `history` returns. */
const HISTORY_LIMIT = 50;

const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T): number => {
    const x = key(a);
    const y = key(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };

/**
 * Builds the MCP server of one workspace. Every result passes through the context's redactor; every
 * failure is a tool error (`isError`) whose text says what went wrong and what to do.
 */
export function createMcpServer(ctx: AppContext, options: McpServerOptions): McpServer {
  const server = new McpServer(
    { name: 'tend', version: options.version },
    {
      capabilities: { tools: {} },
      instructions: options.fleet ? FLEET_INSTRUCTIONS : INSTRUCTIONS,
    },
  );
  const { fleet } = options;
  /** A tool's input: in a fleet, with the workspace it is about (required). */
  const input = <S extends z.ZodRawShape>(shape: S) =>
    (fleet
      ? z.strictObject({ ...workspaceInput, ...shape })
      : z.strictObject(shape)) as z.ZodObject<S>;
  /** The workspace a call is about: the one served, or in a fleet the registered one it names. */
  const where = async (a: object): Promise<WorkspaceSelection> =>
    fleet ? fleet.selection(String((a as { workspace?: unknown }).workspace)) : options.selection;
  const redact = (value: Record<string, unknown>): Record<string, unknown> =>
    redactResult(value, ctx.redactor);
  const result = (value: Record<string, unknown>): CallToolResult => {
    const clean = redact(value);
    return {
      structuredContent: clean,
      content: [{ type: 'text', text: JSON.stringify(clean, null, 2) }],
    };
  };
  const failure = (e: unknown, writes: boolean): CallToolResult => ({
    isError: true,
    content: [{ type: 'text', text: ctx.redactor.text(describeError(e, writes)) }],
  });
  const run =
    <A>(body: (args: A) => Promise<Record<string, unknown>>, writes = false) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        return result(await body(args));
      } catch (e) {
        return failure(e, writes);
      }
    };
  const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: true };

  if (fleet) {
    server.registerTool(
      'list_workspaces',
      {
        title: 'Workspaces of the fleet',
        description:
          'Every workspace registered in the fleet (its name, the worker holding it, its epoch, its last pass, how many resources are in each state) and the live workers, as tend fleet status --json. Give a name as workspace to the other tools.',
        inputSchema: z.strictObject(listWorkspacesInput),
        outputSchema: z.object(listWorkspacesOutput),
        annotations: { ...readOnly, openWorldHint: false },
      },
      run(async () => {
        const s = await fleet.status();
        return {
          workers: [...s.workers].sort(byKey((w) => w.id)),
          workspaces: [...s.workspaces].sort(byKey((w) => w.name)),
        };
      }),
    );
  }

  server.registerTool(
    'status',
    {
      title: 'Workspace status',
      description:
        "Each declared resource's state after the last pass (converged, drifted, pending, failing, blocked, error), each provider's, who holds the workspace, and (unless offline) orphans and duplicates found live.",
      inputSchema: input(statusInput),
      outputSchema: z.object(statusOutput),
      annotations: readOnly,
    },
    run(async (a: { offline?: boolean | undefined }) => {
      const r = await status(ctx, {
        ...(await where(a)),
        offline: a.offline ?? SERVED_STATUS_OFFLINE,
      });
      return {
        workspace: r.workspace,
        resources: [...r.resources].sort(byKey((x) => x.address)),
        providers: [...r.providers].sort(byKey((x) => x.name)),
        lease: r.lease ?? null,
        ...(r.platformError !== undefined ? { platformError: r.platformError } : {}),
        ...(r.orphans
          ? { orphans: [...r.orphans].sort(byKey((o) => `${o.type}\u0000${o.id}`)) }
          : {}),
        ...(r.duplicates ? { duplicates: r.duplicates } : {}),
        ...(r.replacing ? { replacing: r.replacing } : {}),
        ...(r.unlisted ? { unlisted: r.unlisted } : {}),
      };
    }),
  );

  server.registerTool(
    'plan',
    {
      title: 'Plan',
      description:
        'Observes the platform and returns what an apply would do, step by step, with the blast radius (everything downstream of a replace or delete), gated and blocked steps, what the arbitration policy decides about drifted fields, and the policy verdicts on the predicted result (policies: a deny violation means apply refuses the plan). Read-only.',
      inputSchema: input(planInput),
      outputSchema: z.object(planOutput),
      annotations: readOnly,
    },
    run(async (a: { targets?: string[] | undefined; prune?: boolean | undefined }) => {
      const r = await plan(ctx, {
        ...(await where(a)),
        approveDestroy: false,
        prune: a.prune ?? true,
        ...(a.targets ? { targets: a.targets as Address[] } : {}),
      });
      return { ...planView(r) };
    }),
  );

  server.registerTool(
    'explain',
    {
      title: 'Explain a resource or field',
      description:
        'One resource (sb.services/api) or one field (sb.services/api.replicas): declared and observed values, the owner of each field, who changed it and why (latest ledger entries), and what the policy decides now.',
      inputSchema: input(explainInput),
      outputSchema: z.object(explainOutput),
      annotations: readOnly,
    },
    run(async (a: { target: string; limit?: number | undefined }) => {
      const r = await explain(ctx, {
        ...(await where(a)),
        target: a.target,
        ...(a.limit !== undefined ? { limit: a.limit } : {}),
      });
      return { ...r };
    }),
  );

  server.registerTool(
    'history',
    {
      title: 'Change history',
      description:
        'The change ledger, oldest first: who changed what, with which intent and motivation, and what Tend decided. Filters combine (and); a filter given a list matches any of its values.',
      inputSchema: input(historyInput),
      outputSchema: z.object(historyOutput),
      annotations: readOnly,
    },
    run(async (a: Record<string, string | string[] | number | undefined>) => {
      const list = (v: unknown) =>
        v === undefined ? undefined : typeof v === 'string' ? [v] : (v as string[]);
      const filters = [
        'actor',
        'actorKind',
        'intent',
        'motivation',
        'address',
        'field',
        'source',
        'decision',
      ] as const;
      const r = await history(ctx, {
        ...(await where(a)),
        limit: typeof a['limit'] === 'number' ? a['limit'] : HISTORY_LIMIT,
        ...Object.fromEntries(
          filters.flatMap((k) => {
            const v = list(a[k]);
            return v ? [[k, v]] : [];
          }),
        ),
        ...(typeof a['since'] === 'string' ? { since: a['since'] } : {}),
        ...(typeof a['until'] === 'string' ? { until: a['until'] } : {}),
      });
      return { changes: r.changes, ledger: r.ledger };
    }),
  );

  server.registerTool(
    'compliance',
    {
      title: 'Compliance report',
      description:
        "A PolicyReport of what is open now on the platform: every policy rule a resource breaks (fail: deny, warn: warn or audit, error: not evaluable) and every failing check, each with the rule (policy, 1-based rule, file:line:column in properties.location), the resource, the message and the change that introduced it (cause: actor, actor kind, intent, motivation, ledger entry; absent when the object was so when Tend first saw it); summary counts; and the ledger's recent verdicts (found, gone). Read-only.",
      inputSchema: input(complianceInput),
      outputSchema: z.object(complianceOutput),
      annotations: readOnly,
    },
    run(async (a: { since?: string | undefined; limit?: number | undefined }) => {
      const view = complianceView(
        await compliance(ctx, {
          ...(await where(a)),
          ...(a.since !== undefined ? { since: a.since } : {}),
          ...(a.limit !== undefined ? { limit: a.limit } : {}),
        }),
      );
      // Deterministic: no time of the call (the report's creation, the history's bound from now).
      const { creationTimestamp: _, ...metadata } = view.metadata;
      const { since: _since, ...rest } = view;
      return { ...rest, metadata };
    }),
  );

  server.registerTool(
    'announce',
    {
      title: 'Announce a change',
      description:
        'Declare a change you make to a managed field yourself (who, intent, motivation, how long), so Tend attributes the drift it then observes to you and its arbitration policy decides with your reason. actor, intent and motivation are required.',
      inputSchema: input(announceInput),
      outputSchema: z.object(announceOutput),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    run(async (a: Record<string, unknown>) => {
      const input = Object.fromEntries(
        Object.entries(a).filter(([k, v]) => v !== undefined && !(fleet && k === 'workspace')),
      );
      const r = await announce(ctx, {
        ...(await where(a)),
        input: { actorKind: 'agent', ...input },
      });
      return { ...r };
    }),
  );

  server.registerTool(
    'propose_change',
    {
      title: 'Propose a change to the intent',
      description:
        "Sets fields of the intent (set) and/or applies a unified diff (patch) to a copy of the intent, plans it, and writes a saved plan and the patch for a human to review; policies lists the policy verdicts on the plan's predicted result (a deny violation: apply refuses it). The intent and the platform are not touched. apply: true carries it out, only on a server started with --allow-apply and never with a destructive step.",
      inputSchema: input(proposeInput),
      outputSchema: z.object(proposeOutput),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    run(
      async (a: {
        set?: { address: string; field: string; value?: unknown }[] | undefined;
        patch?: string | undefined;
        targets?: string[] | undefined;
        apply?: boolean | undefined;
        actor?: string | undefined;
        intent?: string | undefined;
        motivation?: string | undefined;
      }) => {
        if ((a.set === undefined || a.set.length === 0) && a.patch === undefined) {
          throw new TendError('propose.empty', 'the proposal changes nothing: give set or patch', {
            hint: 'e.g. {"set": [{"address": "sb.services/api", "field": "replicas", "value": 3}]}, or a unified diff in patch',
          });
        }
        if (a.apply && fleet) {
          throw new TendError(
            'propose.apply_not_in_fleet',
            'tend mcp --fleet does not apply proposals: the worker holding the workspace carries out its intent; nothing was written',
            {
              hint: 'call propose_change without apply: a human reviews the patch and applies it in the intent directory, and the holder carries it out on its next pass',
            },
          );
        }
        if (a.apply && !options.allowApply) {
          throw new TendError(
            'propose.apply_not_allowed',
            'this server does not apply proposals: it was started without --allow-apply; nothing was written',
            {
              hint: 'call propose_change without apply: a human reviews the patch and runs tend apply <planFile>',
            },
          );
        }
        const actor = a.actor ?? server.server.getClientVersion()?.name ?? 'mcp-agent';
        const r = await propose(ctx, {
          ...(await where(a)),
          ...(a.set
            ? { set: a.set.map((s) => ({ address: s.address, field: s.field, value: s.value })) }
            : {}),
          ...(a.patch !== undefined ? { patch: a.patch } : {}),
          ...(a.targets ? { targets: a.targets as Address[] } : {}),
          ...(a.apply
            ? {
                apply: {
                  actor: {
                    actor,
                    actorKind: 'agent' as const,
                    ...(a.intent !== undefined ? { intent: a.intent } : {}),
                    ...(a.motivation !== undefined ? { motivation: a.motivation } : {}),
                  },
                  lockTimeoutMs: options.lockTimeoutMs ?? 0,
                  verifyTimeoutMs: 30_000,
                },
              }
            : {}),
        });
        const review = r.applied
          ? `applied (${r.applied.verdict}); the intent files ${r.files.join(', ')} were patched in place`
          : r.patchFile
            ? `a human reviews ${r.patchFile}, applies it in the intent directory (git apply or patch -p1), then runs tend apply ${r.planFile}`
            : `the intent is unchanged: tend apply ${r.planFile} carries out the saved plan`;
        return {
          workspace: r.workspace,
          id: r.id,
          files: r.files,
          diff: r.diff,
          patchFile: r.patchFile ?? null,
          planFile: r.planFile,
          ...planStepsView(r.plan),
          decisions: r.decisions,
          policies: r.policies,
          applied: r.applied
            ? {
                verdict: r.applied.verdict,
                applied: r.applied.applied,
                epoch: r.applied.epoch,
                outcomes: r.applied.outcomes,
                ...(r.applied.refused ? { refused: r.applied.refused } : {}),
              }
            : null,
          review,
        };
      },
      true,
    ),
  );
  return server;
}

/**
 * A result with every secret the redactor knows replaced value by value (`Redactor.json`: strings,
 * keys, and numbers whose digits are a secret): a secret that spans a quote would otherwise cut
 * through the result's structure.
 */
export function redactResult(
  value: Record<string, unknown>,
  redactor: Pick<Redactor, 'json'>,
): Record<string, unknown> {
  return JSON.parse(redactor.json(value)) as Record<string, unknown>;
}

/**
 * An error as one text for the agent: what went wrong, every problem, and what to do. `writes`: the
 * tool would have written something (a proposal), and says that nothing was.
 */
export function describeError(e: unknown, writes = false): string {
  if (e instanceof IntentError) {
    const lines = sortDiagnostics(e.diagnostics)
      .filter((d) => d.severity === 'error')
      .map((d) => `  ${formatDiagnostic(d)}`);
    return `${e.code}: ${e.message}\n${lines.join('\n')}\n${writes ? 'nothing was written; fix the proposed change (or the intent files) and call again' : 'fix the intent files and call again'}`;
  }
  if (e instanceof AnnouncementError) {
    return `${e.code}: ${e.message}\n${e.errors.map((x) => `  ${x}`).join('\n')}${e.hint ? `\nhint: ${e.hint}` : ''}`;
  }
  const err = toTendError(e);
  return `${err.code}${err.address ? ` ${err.address}` : ''}: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`;
}
