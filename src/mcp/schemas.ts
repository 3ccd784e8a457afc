// The input and output schemas of every tool (zod, which the MCP SDK turns into the JSON Schemas
// `tools/list` gives and validates calls and results against). Inputs are strict: an unknown key is
// an error naming it. Outputs are the views of src/app/view-schemas.ts — the same the HTTP API
// documents — which name the keys an agent relies on and allow more (the plan's steps, ledger entries
// and explained fields carry what the CLI's --json carries; docs/mcp.md).
import * as z from 'zod';
import {
  address,
  announceViewShape,
  complianceViewShape,
  explainViewShape,
  historyViewShape,
  jsonValue,
  open,
  planStepsShape,
  planViewShape,
  policyVerdict,
  statusViewShape,
  workspace,
  decision,
} from '../app/view-schemas.js';

/** A required text argument whose absence is an error saying what it is and giving an example. */
function required(name: string, what: string, example: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined
          ? `${name} is missing: ${what}, e.g. "${name}": ${example}`
          : `${name} must be text: ${what}, e.g. "${name}": ${example}`,
    })
    .min(1, { error: `${name} is empty: ${what}, e.g. "${name}": ${example}` })
    .describe(what);
}

/** A text argument, optional. */
function text(description: string) {
  return z.string({ error: 'must be text' }).min(1, { error: 'is empty' }).describe(description);
}

/** One or more texts (a single text is a list of one). */
function texts(description: string) {
  return z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
      error: 'must be a text or a list of texts',
    })
    .optional()
    .describe(description);
}

// ——— status ———

export const statusInput = {
  offline: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe(
      'true (the default): what Tend knows, without contacting the platform; false: also read the platform (orphans, duplicates, replaces in progress)',
    ),
};

export const statusOutput = statusViewShape;

// ——— plan ———

export const planInput = {
  targets: z.array(address).optional().describe('only these resources and what they depend on'),
  prune: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('plan deletes of managed objects removed from the intent (default true)'),
};

export const planOutput = planViewShape;

// ——— explain ———

export const explainInput = {
  target: required(
    'target',
    'a resource address, or an address and a field below spec',
    '"sb.services/api.replicas"',
  ),
  limit: z
    .number({ error: 'must be a whole number from 1 to 100' })
    .int({ error: 'must be a whole number from 1 to 100' })
    .min(1, { error: 'must be at least 1' })
    .max(100, { error: 'must be at most 100' })
    .optional()
    .describe('most ledger entries per field (default 5)'),
};

export const explainOutput = explainViewShape;

// ——— history ———

export const historyInput = {
  actor: texts('who made the change (hpa, alice, tend)'),
  actorKind: texts('human, controller, agent, pipeline, tend or unknown'),
  intent: texts('the goal: availability, cost, security, …'),
  motivation: texts('why now: incident, cve, traffic, scheduled, …'),
  address: texts('a resource address, or a pattern with * (sb.services/*)'),
  field: texts('a field the change touched'),
  source: texts('tend, audit, announcement or unknown'),
  decision: texts('enforce, accept, yield, hold or escalate'),
  since: text('an ISO time, or a duration ago (2h, 7d)').optional(),
  until: text('an ISO time, or a duration ago').optional(),
  limit: z
    .number({ error: 'must be a whole number from 1 to 1000' })
    .int({ error: 'must be a whole number from 1 to 1000' })
    .min(1, { error: 'must be at least 1' })
    .max(1000, { error: 'must be at most 1000' })
    .optional()
    .describe('the latest N matching entries (default 50)'),
};

export const historyOutput = historyViewShape;

// ——— announce ———

const motivationObject = open({ kind: z.string() });

export const announceInput = {
  address: address.describe('the resource, provider.type/name'),
  field: required('field', 'the field the actor sets, below spec', '"replicas"'),
  value: jsonValue.describe('the value the actor sets (any JSON value)'),
  actor: required('actor', 'who makes the change', '"deploy-agent"'),
  actorKind: text('human, controller, agent, pipeline (default agent)').optional(),
  intent: required(
    'intent',
    'the goal the change serves (availability, cost, security, compliance, performance, consistency, or a word of your own)',
    '"availability"',
  ),
  motivation: z
    .union([required('motivation', 'why now', '"incident"'), motivationObject], {
      error: (issue) =>
        issue.input === undefined
          ? 'motivation is missing: why now (incident, cve, traffic, scheduled, …), e.g. "motivation": "incident" or {"kind": "incident", "ref": "INC-42"}'
          : 'motivation must be text or a mapping with kind, e.g. "motivation": "incident"',
    })
    .describe(
      'why now: incident, cve, traffic, scheduled, … (text kind:ref, or {kind, ref, urgency})',
    ),
  ref: text('a reference for the motivation: a ticket, an incident, a CVE id').optional(),
  urgency: text('low, normal, high or critical').optional(),
  ttl: text('how long the announcement holds, 1s to 30d (default 1h)').optional(),
  expiresAt: text('or until when (an ISO time, at most 30d ahead)').optional(),
  note: text('a sentence for whoever reads it later').optional(),
};

export const announceOutput = announceViewShape;

// ——— propose_change ———

export const proposeInput = {
  set: z
    .array(
      z.strictObject({
        address: address.describe('the resource, provider.type/name'),
        field: required('field', 'the field below spec', '"replicas"'),
        value: jsonValue.describe('the value the intent should declare'),
      }),
    )
    .optional()
    .describe('fields the intent should declare with these values (comments and layout are kept)'),
  patch: text(
    'a unified diff of intent files, paths relative to the intent directory (--- a/app.yaml, +++ b/app.yaml); a new file comes from /dev/null',
  ).optional(),
  targets: z
    .array(address)
    .optional()
    .describe('limit the saved plan to these resources and what they depend on'),
  apply: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe(
      'carry the proposal out now: only on a server started with --allow-apply, and never with a destructive step',
    ),
  actor: text('who proposes (default: the MCP client name)').optional(),
  intent: text(
    'the goal of the change (availability, cost, …), recorded when it is applied',
  ).optional(),
  motivation: text('why now (incident, scheduled, …), recorded when it is applied').optional(),
};

export const proposeOutput = {
  workspace,
  id: z.string().describe('the same proposal on the same intent gets the same id'),
  files: z.array(z.string()).describe('intent files the patch changes'),
  diff: z.string().describe('the unified diff of the intent (empty when it changes no file)'),
  patchFile: z
    .string()
    .min(1)
    .nullable()
    .describe('the diff as a file, for git apply or patch -p1'),
  planFile: z.string().describe('the saved plan: tend apply <planFile> once the patch is applied'),
  ...planStepsShape,
  decisions: z.array(decision),
  policies: z
    .array(policyVerdict)
    .describe(
      "every policy rule not passed on the proposed plan's predicted result: a deny violation (fail or error) means apply refuses the plan",
    ),
  applied: open({ verdict: z.string(), applied: z.boolean() })
    .nullable()
    .describe('the outcome, when the proposal was applied (else null)'),
  review: z.string().describe('what a human does next'),
};

// ——— a fleet (tend mcp --fleet) ———

/** The argument every tool takes in a fleet: which registered workspace. */
export const workspaceInput = {
  workspace: required(
    'workspace',
    'the registered workspace the call is about (list_workspaces lists them)',
    '"shop"',
  ),
};

export const listWorkspacesInput = {};

/**
 * A text (never empty) or null: zod writes each as its own branch (`anyOf`), not the type list
 * (`["string", "null"]`) that the inspector's --strict finds less portable.
 */
const nullableText = z.string().min(1).nullable();

/** `tend fleet status --json` (docs/fleet.md), as GET /workspaces of `tend serve --fleet` answers. */
export const listWorkspacesOutput = {
  workers: z
    .array(
      open({
        id: z.string(),
        host: z.string(),
        pid: z.number().int(),
        version: z.string(),
        heartbeatAt: z.string(),
      }),
    )
    .describe('the live workers'),
  workspaces: z
    .array(
      open({
        name: z.string(),
        holder: open({ worker: nullableText, host: z.string(), pid: z.number().int() })
          .nullable()
          .describe('the worker holding its lease, null when nobody holds it'),
        epoch: z.number().int().nullable(),
        lastPassAt: nullableText.describe('when its holder last finished a pass'),
        states: z.record(z.string(), z.number().int()).describe('how many resources per state'),
      }),
    )
    .describe('every registered workspace, by name'),
};

// ——— compliance ———

export const complianceInput = {
  since: text('verdicts at or after this ISO time, or this long ago (default 7d)').optional(),
  limit: z
    .number({ error: 'must be a whole number from 0 to 1000' })
    .int({ error: 'must be a whole number from 0 to 1000' })
    .min(0, { error: 'must be a whole number from 0 to 1000' })
    .max(1000, { error: 'must be a whole number from 0 to 1000' })
    .optional()
    .describe('at most this many history entries, the newest (default 50)'),
};

export const complianceOutput = complianceViewShape;
