import type { Address } from './address.js';
import type { ActorKind, Motivation } from './attribution.js';
import type { ChangeSource } from './change.js';
import type { SourceLocation } from './intent.js';
import type { PolicyAction, PolicySeverity, PolicyVerdict } from './policy.js';

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

/**
 * The change that introduced a violation of a rule reading `fields`: the newest of `history` (one
 * address's ledger entries, oldest first) that created the object or changed one of those fields
 * (`*`: any field). Verdict entries are not changes. Undefined when none did: the object was
 * already so when Tend first saw it.
 */
export function causeOf(
  history: readonly {
    readonly seq: number;
    readonly time: string;
    readonly actor: string;
    readonly actorKind?: ActorKind;
    readonly intent?: string;
    readonly motivation?: Motivation;
    readonly source: ChangeSource;
    readonly action: string;
    readonly fields: readonly string[];
  }[],
  fields: readonly string[],
): ViolationCause | undefined {
  const any = fields.includes('*');
  const reads = (f: string): boolean =>
    any || fields.some((r) => f === r || f.startsWith(`${r}.`) || r.startsWith(`${f}.`));
  for (let i = history.length - 1; i >= 0; i--) {
    const c = history[i]!;
    if (c.action === 'verdict' || c.action === 'delete') continue;
    if (c.action === 'create' || c.fields.some(reads)) {
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
  }
  return undefined;
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
  return `${cause.actor}${why.length > 0 ? ` (${why.join(', ')})` : ''}, ledger entry ${cause.seq}`;
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
