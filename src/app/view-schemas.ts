// The schemas of the views the adapters answer with (zod): the MCP tools' output schemas and, turned
// into JSON Schema by `jsonSchemaOf`, the answers of the HTTP route table. One source, so an agent and
// an HTTP client are told the same shape. Not in src/app/index.ts: only `tend serve` and `tend mcp`
// load zod (the CLI's other commands do not pay for it).
import * as z from 'zod';
import { ADDRESS_PATTERN, NOT_AN_ADDRESS, STEP_KINDS } from '../core/index.js';

/**
 * Any JSON value, said so in a way strict clients accept: one branch per JSON type (a bare `{}`
 * carries no validation keyword; a `type` list is not portable). Each branch is described, which
 * also keeps zod from folding the branches into a `type` list.
 */
export const jsonValue = z.unknown().meta({
  description: 'any JSON value',
  anyOf: [
    { type: 'string', description: 'text' },
    { type: 'number', description: 'a number' },
    { type: 'boolean', description: 'true or false' },
    { type: 'null', description: 'null' },
    { type: 'array', description: 'a list' },
    { type: 'object', description: 'a mapping' },
  ],
});

/** An object with these keys that may carry more (each any JSON value). */
export function open<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).catchall(jsonValue);
}

/** A resource address, `provider.type/name`, in the core's grammar (a name holds no `/`). */
export const address = z
  .string({ error: `must be text: a resource address, provider.type/name` })
  .regex(new RegExp(ADDRESS_PATTERN), { error: NOT_AN_ADDRESS })
  .describe('a resource address, provider.type/name');

export const workspace = z
  .object({ name: z.string(), source: z.string().optional() })
  .describe('the workspace and where its name came from');

export const liveFindings = {
  orphans: z
    .array(z.object({ type: z.string(), id: z.string(), address: z.string().optional() }))
    .optional()
    .describe("objects with this workspace's marker that nothing declares, by type and id"),
  duplicates: z.array(z.object({ address: z.string(), objectIds: z.array(z.string()) })).optional(),
  replacing: z.array(z.object({ address: z.string(), oldObjectId: z.string() })).optional(),
  unlisted: z.array(z.object({ type: z.string(), message: z.string() })).optional(),
};

/** The steps part of a plan (app/plan-view.ts `PlanStepsView`). */
export const planStepsShape = {
  changes: z.boolean().describe('true when any step is not a noop'),
  counts: z.record(z.enum(STEP_KINDS), z.number().int()).describe('steps per kind'),
  gated: z.array(z.string()).describe('destructive steps waiting for approval'),
  blocked: z
    .array(z.object({ address: z.string(), reason: z.string() }))
    .describe('steps that cannot happen'),
  blastRadius: z.array(z.string()).describe('everything downstream of a replace or delete'),
  destructive: z
    .array(z.string())
    .describe('replaces and deletes: applying them needs an explicit approval'),
  steps: z
    .array(
      open({
        kind: z.enum(STEP_KINDS),
        address: z.string(),
        type: z.string(),
        dependsOn: z.array(z.string()),
      }),
    )
    .describe('one step per resource, in reference order'),
};

/** What the arbitration policy decides about one drifted field. */
export const decision = open({
  address: z.string(),
  field: z.string(),
  observed: jsonValue,
  declared: jsonValue,
  fresh: z.boolean(),
});

/** The commit an intent was read from (core `IntentOrigin`). */
const intentOrigin = open({
  kind: z.literal('git'),
  url: z.string(),
  ref: z.string(),
  commit: z.string(),
  path: z.string().optional(),
});

/** A policy rule's verdict on one resource (core `PolicyVerdict`, docs/policies.md). */
export const policyVerdict = open({
  policy: z.string(),
  rule: z.number().int(),
  address: z.string(),
  moment: z.enum(['declared', 'predicted', 'observed']),
  result: z.enum(['pass', 'fail', 'undecidable', 'error']),
  message: z.string(),
  reason: z.string(),
  actions: z.array(z.enum(['deny', 'warn', 'audit'])),
  severity: z.enum(['low', 'medium', 'high', 'critical']),
  fields: z.array(z.string()),
  source: open({ file: z.string(), line: z.number().int(), column: z.number().int() }),
});

/** A plan as `tend plan --json`, `POST /plan` and the MCP `plan` tool give it (`PlanView`). */
export const planViewShape = {
  workspace,
  ...planStepsShape,
  decisions: z.array(decision).describe('what the arbitration policy decides about drifted fields'),
  policies: z
    .array(policyVerdict)
    .describe(
      "every policy rule that is not passed on the plan's predicted result: violated (fail), failed to evaluate (error) or undecidable before apply; a deny violation refuses the plan",
    ),
  origin: intentOrigin
    .optional()
    .describe('the commit the intent was read from (a git workspace): what the plan planned from'),
  ...liveFindings,
};

/** `status` (`tend status --json`, `GET /status`, the MCP `status` tool). */
export const statusViewShape = {
  workspace,
  resources: z
    .array(
      open({
        address: z.string(),
        state: z.string(),
        objectId: z.string().optional(),
        message: z.string().optional(),
        compliance: open({
          evaluatedAt: z.string(),
          passed: z.number().int(),
          undecidable: z.number().int(),
          findings: z.array(
            open({
              policy: z.string(),
              rule: z.number().int().describe('0-based index of the rule in the policy'),
              result: z.enum(['fail', 'error']),
              message: z.string(),
              severity: z.string(),
              since: z.string(),
            }),
          ),
        })
          .optional()
          .describe(
            'the policies on the observed object as the last pass found them: the rules it breaks, each with the change that introduced it (cause)',
          ),
      }),
    )
    .describe("each declared resource's state after the last pass, by address"),
  providers: z
    .array(open({ name: z.string(), state: z.string(), message: z.string().optional() }))
    .describe('how each provider answered the last pass, by name'),
  lease: open({
    holder: open({ command: z.string(), pid: z.number().int(), host: z.string() }),
    epoch: z.number().int(),
  })
    .nullable()
    .optional()
    .describe('who holds the workspace now (a tend run, an apply), or null'),
  paused: z
    .array(open({ address: z.string() }))
    .optional()
    .describe('resources whose reconciling is stopped'),
  platformError: z.string().optional(),
  gitSource: open({
    kind: z.literal('git'),
    url: z.string(),
    ref: z.string(),
    path: z.string().optional(),
    commit: z.string().optional(),
    lastPassAt: z.string().optional(),
  })
    .optional()
    .describe("a git workspace: its repository, ref, and the commit of its holder's last pass"),
  ...liveFindings,
};

/** `explain` (`tend explain --json`, `GET /resources/{address}`, the MCP `explain` tool). */
export const explainViewShape = {
  workspace,
  address: z.string(),
  type: z.string(),
  field: z.string().optional(),
  observedFrom: z.enum(['platform', 'store', 'none']),
  objectId: z.string().optional(),
  recordedAt: z.string().optional(),
  status: open({ state: z.string() }).optional(),
  policy: z.enum(['intent', 'default']),
  fields: z
    .array(
      open({
        field: z.string(),
        state: z.string(),
        secret: z.boolean(),
        owner: open({ kind: z.string() }),
        entries: z.array(open({ seq: z.number().int() })),
      }),
    )
    .describe('declared, observed, owner, decision now and latest ledger entries, per field'),
  notes: z.array(z.string()),
};

/** One ledger entry. */
export const change = open({
  seq: z.number().int(),
  time: z.string(),
  actor: z.string(),
  source: z.string(),
  type: z.string(),
  objectId: z.string(),
  action: z.string(),
  fields: z.array(z.string()),
});

/** `history` (`tend history --json`, `GET /history`, the MCP `history` tool). */
export const historyViewShape = {
  changes: z.array(change).describe('ledger entries, oldest first'),
  ledger: open({ ok: z.boolean() }).describe('whether the hash chain holds'),
};

/** The change that introduced a violation (core `ViolationCause`). */
const violationCause = open({
  seq: z.number().int().describe('the ledger entry of the change'),
  time: z.string(),
  actor: z.string(),
  actorKind: z.string().optional(),
  intent: z.string().optional(),
  motivation: open({ kind: z.string(), ref: z.string().optional() }).optional(),
  source: z.string(),
});

const reportCounts = z
  .object({
    pass: z.number().int(),
    fail: z.number().int(),
    warn: z.number().int(),
    error: z.number().int(),
    skip: z.number().int(),
  })
  .describe('results per kind, as the Kubernetes PolicyReport counts them');

/**
 * `compliance` (`tend compliance --json`, `GET /compliance`, the MCP `compliance` tool): a
 * Kubernetes-style PolicyReport of the open results (core `policyReportView`).
 */
export const complianceViewShape = {
  apiVersion: z.string(),
  kind: z.literal('PolicyReport'),
  metadata: open({ name: z.string(), creationTimestamp: z.string().optional() }),
  scope: open({ kind: z.string(), name: z.string() }),
  summary: reportCounts,
  results: z
    .array(
      open({
        source: z.literal('tend'),
        policy: z.string().describe('the policy, or check:<name> for a failing check'),
        rule: z.string().describe("the rule's 1-based index in the policy"),
        category: z.enum(['policy', 'check']),
        result: z.enum(['fail', 'warn', 'error']),
        severity: z.enum(['low', 'medium', 'high', 'critical']),
        scored: z.boolean(),
        resources: z.array(
          open({ kind: z.string(), name: z.string(), uid: z.string().optional() }),
        ),
        message: z.string(),
        timestamp: z.object({ seconds: z.number().int(), nanos: z.number().int() }),
        properties: z
          .record(z.string(), z.string())
          .describe(
            'location (file:line:column of the rule), address, since, introducedBy, and the cause: causeSeq, actor, actorKind, intent, motivation',
          ),
        cause: violationCause
          .optional()
          .describe(
            'the change that introduced it; absent: present when Tend first saw the object',
          ),
      }),
    )
    .describe('every open result: broken policy rules and failing checks, deny first'),
  history: z
    .array(
      open({
        seq: z.number().int(),
        time: z.string(),
        event: z.enum(['found', 'gone']),
        address: z.string().optional(),
        policy: z.string(),
        rule: z.number().int(),
        result: z.enum(['fail', 'error', 'pass']),
        message: z.string(),
        cause: violationCause.optional(),
      }),
    )
    .describe("the ledger's verdict entries since `since`, newest last"),
  since: z
    .string()
    .optional()
    .describe(
      "the history's lower bound (absent in the MCP tool, whose results carry no time of the call)",
    ),
};

/** `announce` (`tend announce --json`, `POST /announcements`, the MCP `announce` tool). */
export const announceViewShape = {
  workspace,
  announcements: z.array(
    open({
      id: z.string(),
      address: z.string(),
      field: z.string(),
      actor: z.string(),
      expiresAt: z.string(),
    }),
  ),
  warnings: z.array(z.string()),
};

/**
 * A view's JSON Schema (2020-12, as OpenAPI 3.1 uses it), for the HTTP route table: for a shape, its
 * object, which may carry more keys than it names (`open`); else the schema as it is.
 */
export function jsonSchemaOf(schema: z.ZodType | z.ZodRawShape): Record<string, unknown> {
  const { $schema: _, ...json } = z.toJSONSchema(
    schema instanceof z.ZodType ? schema : open(schema),
    { target: 'draft-2020-12', io: 'output' },
  );
  return json;
}
