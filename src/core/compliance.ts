import type { Address } from './address.js';
import type { ActorKind, Motivation } from './attribution.js';
import type { ChangeSource } from './change.js';
import type { SourceLocation } from './intent.js';
import type { PolicyAction, PolicySeverity, PolicyVerdict } from './policy.js';
import type { CheckResult } from './status.js';

/**
 * Continuous compliance (docs/policies.md): every pass evaluates the policies on what the platform
 * holds, keeps the rules each resource breaks in its status, and records in the ledger when a
 * violation is found — with the change that introduced it — and when it is gone. Pure: what is
 * evaluated and where it is written is the engine's.
 */

/** The ledger entry of the change that introduced a violation. */
export interface ViolationCause {
  /** The entry's position in the ledger. */
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: Motivation;
  readonly source: ChangeSource;
  /** The resource the entry is of, when it is not the one found failing (a check's dependency). */
  readonly address?: Address;
  /** When the entry records a Day-2 action run (`tend action`): the action and the run's id. */
  readonly run?: { readonly action: string; readonly id: string };
}

/** A rule a resource's observed state breaks, as its status keeps it while it holds. */
export interface ComplianceFinding {
  readonly policy: string;
  /** 0-based index of the validation in the policy. */
  readonly rule: number;
  /** `fail`: the rule is false; `error`: it could not be evaluated (a `deny` treats it as false). */
  readonly result: 'fail' | 'error';
  readonly message: string;
  readonly reason: string;
  readonly actions: readonly PolicyAction[];
  readonly severity: PolicySeverity;
  /** The fields of the resource the rule reads. */
  readonly fields: readonly string[];
  /** Where the rule is written. */
  readonly source: SourceLocation;
  /** When a pass first found it. */
  readonly since: string;
  /**
   * The change that introduced it (the last ledger entry that changed a field the rule reads, or
   * created the object); absent when the object already broke the rule when Tend first saw it.
   */
  readonly cause?: ViolationCause;
  /** The ledger entry that recorded finding it. */
  readonly recorded?: number;
}

/** A resource's compliance after the last pass that evaluated it. */
export interface ComplianceState {
  /**
   * What it was evaluated on: a hash of the observed fields and of the policies that match it. A
   * pass finding the same key evaluates nothing again.
   */
  readonly key: string;
  readonly evaluatedAt: string;
  /** Rules that passed. */
  readonly passed: number;
  /** Rules whose value was not known (never counted as passed). */
  readonly undecidable: number;
  readonly findings: readonly ComplianceFinding[];
  /**
   * The resource's checks failing when they last ran, as findings (`policy: 'check:<name>'`, rule 0;
   * see `checkTransition`): since when, the change that preceded it, the entry that recorded it.
   * Absent: none fails. Not counted by `countCompliance` (a report counts checks from the status's
   * `checks`, passing ones included).
   */
  readonly checks?: readonly ComplianceFinding[];
}

/**
 * What a ledger entry of action `verdict` records: a violation found (`fail`/`error`, with the
 * change that introduced it) or gone (`pass`).
 */
export interface ComplianceRecord {
  readonly policy: string;
  readonly rule: number;
  readonly result: 'fail' | 'error' | 'pass';
  readonly message: string;
  readonly actions: readonly PolicyAction[];
  readonly severity: PolicySeverity;
  /** For a violation found: the change that introduced it; absent when it was there when Tend first saw the object. */
  readonly cause?: ViolationCause;
  /** For a violation gone: the ledger entry that recorded finding it. */
  readonly found?: number;
}

/** The identity of a rule on a resource: `policy#rule`. */
export function findingKey(f: { readonly policy: string; readonly rule: number }): string {
  return `${f.policy}#${f.rule + 1}`;
}

/** What changed between two evaluations of one resource. */
export interface ComplianceTransition {
  readonly state: ComplianceState;
  /** Violations found this time (not in the state before). */
  readonly opened: readonly ComplianceFinding[];
  /** Violations of the state before that are gone. */
  readonly closed: readonly ComplianceFinding[];
}

/**
 * The state after evaluating a resource's observed fields (`verdicts`, moment `observed`), from the
 * state before: a violation still there keeps its `since`, cause and ledger entry; one that is new
 * is `opened` (its cause and entry are filled in by whoever records it); one that is gone is
 * `closed`. A rule whose message changed but that still fails is the same violation.
 */
export function complianceTransition(
  before: ComplianceState | undefined,
  verdicts: readonly PolicyVerdict[],
  key: string,
  at: string,
): ComplianceTransition {
  const previous = new Map((before?.findings ?? []).map((f) => [findingKey(f), f]));
  const findings: ComplianceFinding[] = [];
  const opened: ComplianceFinding[] = [];
  let passed = 0;
  let undecidable = 0;
  const open = new Set<string>();
  for (const v of verdicts) {
    if (v.result === 'pass') {
      passed++;
      continue;
    }
    if (v.result === 'undecidable') {
      undecidable++;
      continue;
    }
    const k = findingKey(v);
    open.add(k);
    const was = previous.get(k);
    const finding: ComplianceFinding = {
      policy: v.policy,
      rule: v.rule,
      result: v.result,
      message: v.message,
      reason: v.reason,
      actions: v.actions,
      severity: v.severity,
      fields: v.fields,
      source: v.source,
      since: was?.since ?? at,
      ...(was?.cause ? { cause: was.cause } : {}),
      ...(was?.recorded !== undefined ? { recorded: was.recorded } : {}),
    };
    findings.push(finding);
    if (!was) opened.push(finding);
  }
  const closed = [...previous].filter(([k]) => !open.has(k)).map(([, f]) => f);
  findings.sort((a, b) => findingKey(a).localeCompare(findingKey(b)));
  return {
    state: { key, evaluatedAt: at, passed, undecidable, findings },
    opened,
    closed,
  };
}

/** What a cause is read from: a ledger entry's who, why and what (`Change` has them all). */
export interface LedgerFacts {
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  readonly actorKind?: ActorKind;
  readonly intent?: string;
  readonly motivation?: Motivation;
  readonly source: ChangeSource;
  readonly action: string;
}

/**
 * The change that introduced a violation of a rule reading `fields`: the newest of `history` (one
 * address's ledger entries, oldest first) that created the object or changed one of those fields
 * (`*`: any field). Verdict entries are not changes. Undefined when none did: the object was
 * already so when Tend first saw it.
 */
export function causeOf(
  history: readonly (LedgerFacts & { readonly fields: readonly string[] })[],
  fields: readonly string[],
): ViolationCause | undefined {
  const any = fields.includes('*');
  const reads = (f: string): boolean =>
    any || fields.some((r) => f === r || f.startsWith(`${r}.`) || r.startsWith(`${f}.`));
  for (let i = history.length - 1; i >= 0; i--) {
    const c = history[i]!;
    if (c.action === 'verdict' || c.action === 'delete') continue;
    if (c.action === 'create' || c.fields.some(reads)) return causeFrom(c);
  }
  return undefined;
}

/** The cause a ledger entry is: its position, who and why. */
function causeFrom(c: LedgerFacts): ViolationCause {
  return {
    seq: c.seq,
    time: c.time,
    actor: c.actor,
    ...(c.actorKind ? { actorKind: c.actorKind } : {}),
    ...(c.intent ? { intent: c.intent } : {}),
    ...(c.motivation ? { motivation: c.motivation } : {}),
    source: c.source,
  };
}

/** How a violation's cause reads: `alice (human, incident:INC-9), ledger entry 12`. */
export function causeText(cause: ViolationCause | undefined): string {
  if (!cause) return 'present when Tend first saw the object';
  const why = [
    cause.actorKind,
    cause.motivation
      ? `${cause.motivation.kind}${cause.motivation.ref ? `:${cause.motivation.ref}` : ''}`
      : undefined,
    cause.intent,
  ].filter((x): x is string => x !== undefined);
  const what = [
    cause.run ? cause.run.action : undefined,
    cause.address ? `on ${cause.address}` : undefined,
  ].filter((x): x is string => x !== undefined);
  return `${cause.actor}${why.length > 0 ? ` (${why.join(', ')})` : ''}, ledger entry ${cause.seq}${what.length > 0 ? ` (${what.join(' ')})` : ''}`;
}

/** True when a finding refuses: a broken `deny` rule. */
export function findingDenies(f: ComplianceFinding): boolean {
  return f.actions.includes('deny');
}

/** The compliance results of many resources, counted as a report's summary shows them. */
export interface ComplianceCounts {
  readonly pass: number;
  readonly fail: number;
  readonly warn: number;
  readonly error: number;
  readonly skip: number;
}

/**
 * Counts as the Kubernetes PolicyReport does: a broken `deny` rule is `fail`, a broken `warn` (or
 * `audit`-only) rule `warn`, a rule that could not be evaluated `error`, an undecidable one `skip`.
 * Policy rules only: checks are counted from the statuses' `checks`.
 */
export function countCompliance(
  states: Iterable<{ readonly address: Address; readonly compliance?: ComplianceState }>,
): ComplianceCounts {
  let pass = 0;
  let fail = 0;
  let warn = 0;
  let error = 0;
  let skip = 0;
  for (const s of states) {
    if (!s.compliance) continue;
    pass += s.compliance.passed;
    skip += s.compliance.undecidable;
    for (const f of s.compliance.findings) {
      if (f.result === 'error') error++;
      else if (findingDenies(f)) fail++;
      else warn++;
    }
  }
  return { pass, fail, warn, error, skip };
}

/**
 * A failing check is a compliance result like a broken rule (docs/policies.md, _Checks in the
 * compliance record_): it is kept in `ComplianceState.checks` as a finding of policy `check:<name>`,
 * rule 0 — a Policy's name cannot hold a colon, so its verdict entries never meet a rule's.
 */
export const CHECK_POLICY_PREFIX = 'check:';

/** True for a finding that is a failing check, not a broken rule. */
export function isCheckFinding(f: { readonly policy: string }): boolean {
  return f.policy.startsWith(CHECK_POLICY_PREFIX);
}

/** What changed between a resource's checks as last recorded and as they ran now. */
export interface CheckTransition {
  /** The failing checks now, sorted by name. */
  readonly findings: readonly ComplianceFinding[];
  /** Checks that started failing (passing before, or never run). */
  readonly opened: readonly ComplianceFinding[];
  /** Checks that failed before and pass now (or are no longer declared). */
  readonly closed: readonly ComplianceFinding[];
  /** Checks that passed. */
  readonly passed: number;
}

/**
 * A resource's failing checks after its checks ran (`results`), from its failing checks before
 * (`ComplianceState.checks`; anything not a `check:` finding is ignored): a check still failing keeps its `since`, cause and ledger entry (its
 * message is the new one); one failing that did not before is `opened` (cause and entry filled in by
 * whoever records it); one that failed before and passes — or ran no more because it is no longer
 * declared (`sources` has the declared checks' locations) — is `closed`. A check with `severity:
 * 'warning'` is a `warn`, medium; any other failure a `deny`, high.
 */
export function checkTransition(
  before: readonly ComplianceFinding[],
  results: readonly CheckResult[],
  sources: ReadonlyMap<string, SourceLocation>,
  at: string,
): CheckTransition {
  const previous = new Map(before.filter(isCheckFinding).map((f) => [f.policy, f] as const));
  const findings: ComplianceFinding[] = [];
  const opened: ComplianceFinding[] = [];
  const failing = new Set<string>();
  let passed = 0;
  for (const c of results) {
    if (c.ok) {
      passed++;
      continue;
    }
    const policy = `${CHECK_POLICY_PREFIX}${c.name}`;
    const source = sources.get(c.name);
    const was = previous.get(policy);
    if (!source && !was) continue;
    failing.add(policy);
    const warning = c.severity === 'warning';
    const finding: ComplianceFinding = {
      policy,
      rule: 0,
      result: 'fail',
      message: c.message,
      reason: `${c.kind} check`,
      actions: [warning ? 'warn' : 'deny'],
      severity: warning ? 'medium' : 'high',
      fields: [],
      source: source ?? was!.source,
      since: was?.since ?? at,
      ...(was?.cause ? { cause: was.cause } : {}),
      ...(was?.recorded !== undefined ? { recorded: was.recorded } : {}),
    };
    findings.push(finding);
    if (!was) opened.push(finding);
  }
  const closed = [...previous.values()].filter((f) => !failing.has(f.policy));
  findings.sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
  return { findings, opened, closed, passed };
}

/**
 * The cause of a check that started failing: the newest entry of `history` (the ledger entries of
 * the resource `address` and of the resources it depends on) that is not a verdict — a change Tend
 * made, one someone else made, or a Day-2 action run (a password rotated; the cause names the
 * action). The cause names the resource when it is a dependency's entry. Undefined when there is
 * none.
 */
export function checkCauseOf(
  history: readonly (LedgerFacts & {
    readonly address?: Address;
    readonly after?: Readonly<Record<string, unknown>>;
  })[],
  address: Address,
): ViolationCause | undefined {
  let newest: (typeof history)[number] | undefined;
  for (const c of history) {
    if (c.action === 'verdict') continue;
    if (!newest || c.seq > newest.seq) newest = c;
  }
  if (!newest) return undefined;
  const run = actionRunOf(newest.after);
  return {
    ...causeFrom(newest),
    ...(newest.address !== undefined && newest.address !== address
      ? { address: newest.address }
      : {}),
    ...(run ? { run } : {}),
  };
}

/** The action run a ledger entry records (`tend action` writes `after: { action, run, outcome }`). */
function actionRunOf(
  after: Readonly<Record<string, unknown>> | undefined,
): { readonly action: string; readonly id: string } | undefined {
  const action = after?.['action'];
  const id = after?.['run'];
  return typeof action === 'string' && typeof id === 'string' && id.startsWith('act-')
    ? { action, id }
    : undefined;
}
