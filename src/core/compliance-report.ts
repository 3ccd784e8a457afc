import type { Address } from './address.js';
import type { Change } from './change.js';
import type { ComplianceCounts, ViolationCause } from './compliance.js';
import { causeText, countCompliance, findingDenies } from './compliance.js';
import type { SourceLocation } from './intent.js';
import type { PolicyAction, PolicySeverity } from './policy.js';
import type { CheckResult, ResourceStatus } from './status.js';

/**
 * The compliance report (docs/policies.md, "The report"): every open result — a policy rule the
 * observed object breaks, a failing check — with the change that introduced it, counted as the
 * Kubernetes policy working group's PolicyReport counts, and rendered as that PolicyReport or as
 * SARIF 2.1.0. Pure: the application layer reads the statuses and the ledger.
 */

/** What an open result does: `fail` refuses (deny, a failing check), `warn` warns, `error` could not be evaluated. */
export type OpenResultKind = 'fail' | 'warn' | 'error';

/** One open result: a broken policy rule, or a failing check, on one resource. */
export interface OpenResult {
  /** The policy's name, or `check:<name>` for a check. */
  readonly policy: string;
  readonly kind: 'policy' | 'check';
  /** 1-based: the rule's index in the policy (1 for a check). */
  readonly rule: number;
  /** Where the rule (or the check) is written, when the intent still has it. */
  readonly ruleSource?: SourceLocation;
  readonly result: OpenResultKind;
  /** The policy's severity; a check's: `high` when failing, `medium` when only a warning. */
  readonly severity: PolicySeverity;
  /** The policy's actions (a check: none). */
  readonly actions: readonly PolicyAction[];
  readonly resource: {
    readonly address: Address;
    readonly type: string;
    readonly objectId?: string;
  };
  readonly message: string;
  /** Since when it is open (ISO). */
  readonly since: string;
  /** The change that introduced it; absent: present when Tend first saw the object. */
  readonly cause?: ViolationCause;
  /** `causeText(cause)`. */
  readonly introducedBy: string;
  /** The ledger entry that recorded finding it. */
  readonly recorded?: number;
}

/** One `verdict` entry of the ledger: a violation found or gone. */
export interface ComplianceEvent {
  readonly seq: number;
  readonly time: string;
  readonly event: 'found' | 'gone';
  readonly address?: Address;
  readonly type: string;
  readonly objectId: string;
  readonly policy: string;
  /** 1-based. */
  readonly rule: number;
  readonly result: 'fail' | 'error' | 'pass';
  readonly severity: PolicySeverity;
  readonly actions: readonly PolicyAction[];
  readonly message: string;
  readonly cause?: ViolationCause;
  /** For a found violation: `causeText(cause)`. */
  readonly introducedBy?: string;
  /** For a violation gone: the entry that recorded finding it. */
  readonly found?: number;
}

/** The report of one workspace. */
export interface ComplianceReport {
  readonly workspace: string;
  readonly generatedAt: string;
  readonly summary: ComplianceCounts;
  /** Open results: deny/fail first, then warn, then error; by address, policy and rule. */
  readonly results: readonly OpenResult[];
  /** `verdict` entries at or after `since`, newest last. */
  readonly history: readonly ComplianceEvent[];
  /** The history's lower bound (ISO). */
  readonly since: string;
}

/** What the report needs to know of the intent: the policies' rules and the resources' checks. */
export interface ReportCatalogue {
  readonly policies: readonly {
    readonly name: string;
    readonly description?: string;
    readonly actions: readonly PolicyAction[];
    readonly severity: PolicySeverity;
    readonly validations: readonly {
      readonly message?: string;
      readonly expression: string;
      readonly source: SourceLocation;
    }[];
  }[];
  readonly resources: readonly {
    readonly address: Address;
    readonly type: string;
    readonly checks: readonly { readonly name: string; readonly source: SourceLocation }[];
  }[];
}

/** A check's result as a report reads it: `warning` severity (when the check carries one) is a warning. */
export function checkResultKind(c: CheckResult): 'pass' | 'warn' | 'fail' {
  if (c.ok) return 'pass';
  return c.severity === 'warning' ? 'warn' : 'fail';
}

const ORDER: Readonly<Record<OpenResultKind, number>> = { fail: 0, warn: 1, error: 2 };

/**
 * The open results and the summary of `statuses` (the declared resources' statuses). `causes` gives,
 * for a failing check, the change that preceded it (by address), when the caller found one.
 */
export function openResults(
  statuses: readonly ResourceStatus[],
  catalogue: ReportCatalogue,
  causes: ReadonlyMap<Address, ViolationCause> = new Map(),
): { readonly results: OpenResult[]; readonly summary: ComplianceCounts } {
  const types = new Map(catalogue.resources.map((r) => [r.address, r] as const));
  const policies = new Map(catalogue.policies.map((p) => [p.name, p] as const));
  const results: OpenResult[] = [];
  const policyCounts = countCompliance(statuses);
  let pass = policyCounts.pass;
  let fail = policyCounts.fail;
  let warn = policyCounts.warn;
  for (const s of statuses) {
    const decl = types.get(s.address);
    const resource = {
      address: s.address,
      type: decl?.type ?? s.address.slice(0, s.address.indexOf('/')),
      ...(s.objectId !== undefined ? { objectId: s.objectId } : {}),
    };
    for (const f of s.compliance?.findings ?? []) {
      const source = policies.get(f.policy)?.validations[f.rule]?.source ?? f.source;
      results.push({
        policy: f.policy,
        kind: 'policy',
        rule: f.rule + 1,
        ruleSource: source,
        result: f.result === 'error' ? 'error' : findingDenies(f) ? 'fail' : 'warn',
        severity: f.severity,
        actions: f.actions,
        resource,
        message: f.message,
        since: f.since,
        ...(f.cause ? { cause: f.cause } : {}),
        introducedBy: causeText(f.cause),
        ...(f.recorded !== undefined ? { recorded: f.recorded } : {}),
      });
    }
    for (const c of s.checks) {
      const kind = checkResultKind(c);
      if (kind === 'pass') {
        pass++;
        continue;
      }
      if (kind === 'warn') warn++;
      else fail++;
      const source = decl?.checks.find((d) => d.name === c.name)?.source;
      // What the engine recorded when this check started failing (since, and the change before it:
      // of the resource or of one it references, such as a rotation); else the report's own guess.
      const kept = s.compliance?.checks?.find((f) => f.policy === `check:${c.name}`);
      const cause = kept ? kept.cause : causes.get(s.address);
      results.push({
        policy: `check:${c.name}`,
        kind: 'check',
        rule: 1,
        ...(source ? { ruleSource: source } : {}),
        result: kind,
        severity: kind === 'warn' ? 'medium' : 'high',
        actions: [],
        resource,
        message: c.message,
        since: kept?.since ?? (s.updatedAt || c.at),
        ...(cause ? { cause } : {}),
        introducedBy: causeText(cause),
      });
    }
  }
  results.sort(
    (a, b) =>
      ORDER[a.result] - ORDER[b.result] ||
      a.resource.address.localeCompare(b.resource.address) ||
      a.policy.localeCompare(b.policy) ||
      a.rule - b.rule,
  );
  return { results, summary: { ...policyCounts, pass, fail, warn } };
}

/** The `verdict` entries of `changes` as report events, in the ledger's order. */
export function complianceEvents(changes: readonly Change[]): ComplianceEvent[] {
  const events: ComplianceEvent[] = [];
  for (const c of changes) {
    const r = c.compliance;
    if (c.action !== 'verdict' || !r) continue;
    const found = r.result !== 'pass';
    events.push({
      seq: c.seq,
      time: c.time,
      event: found ? 'found' : 'gone',
      ...(c.address !== undefined ? { address: c.address } : {}),
      type: c.type,
      objectId: c.objectId,
      policy: r.policy,
      rule: r.rule + 1,
      result: r.result,
      severity: r.severity,
      actions: r.actions,
      message: r.message,
      ...(r.cause ? { cause: r.cause } : {}),
      ...(found ? { introducedBy: causeText(r.cause) } : {}),
      ...(r.found !== undefined ? { found: r.found } : {}),
    });
  }
  return events;
}

/**
 * True when the report should fail a pipeline: a deny (or failing check) or warn result is open.
 * An `audit`-only rule (counted as `warn` in the summary, as the PolicyReport does) only records, and
 * a rule that could not be evaluated (`error`) fails only through a deny policy, which reports it as
 * `error`: neither fails the report on its own.
 */
export function reportFails(report: Pick<ComplianceReport, 'results'>): boolean {
  return report.results.some(
    (r) =>
      r.result === 'fail' ||
      (r.result === 'warn' && (r.kind === 'check' || r.actions.includes('warn'))) ||
      (r.result === 'error' && r.actions.includes('deny')),
  );
}

/** `file:line:column`. */
export function sourceText(s: SourceLocation): string {
  return `${s.file}:${s.line}:${s.column}`;
}

/** The Kubernetes PolicyReport's API version the JSON form follows. */
export const POLICY_REPORT_API_VERSION = 'wgpolicyk8s.io/v1alpha2';

/** A time as the PolicyReport writes it. */
function timestamp(iso: string): { seconds: number; nanos: number } {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return { seconds: 0, nanos: 0 };
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

/** The properties of a result: strings only, as the PolicyReport has them. */
function resultProperties(r: OpenResult): Record<string, string> {
  const c = r.cause;
  return {
    kind: r.kind,
    address: r.resource.address,
    ...(r.ruleSource ? { location: sourceText(r.ruleSource) } : {}),
    ...(r.actions.length > 0 ? { actions: r.actions.join(',') } : {}),
    since: r.since,
    introducedBy: r.introducedBy,
    ...(c
      ? {
          causeSeq: String(c.seq),
          causeTime: c.time,
          actor: c.actor,
          ...(c.actorKind ? { actorKind: c.actorKind } : {}),
          ...(c.intent ? { intent: c.intent } : {}),
          ...(c.motivation
            ? {
                motivation: `${c.motivation.kind}${c.motivation.ref ? `:${c.motivation.ref}` : ''}`,
              }
            : {}),
          causeSource: c.source,
        }
      : {}),
    ...(r.recorded !== undefined ? { recorded: String(r.recorded) } : {}),
  };
}

/**
 * The report as a PolicyReport (`tend compliance --json`, `GET /compliance`, the MCP `compliance`
 * tool): `summary`, and `results[]` with `policy`, `rule` (1-based, as text), `result`, `severity`,
 * `resources`, `message`, `timestamp`, `source` and string `properties`; with Tend's structured
 * `cause` of each result and the ledger's recent `history` beside them.
 */
export function policyReportView(report: ComplianceReport) {
  return {
    apiVersion: POLICY_REPORT_API_VERSION,
    kind: 'PolicyReport' as const,
    metadata: { name: `tend-${report.workspace}`, creationTimestamp: report.generatedAt },
    scope: { kind: 'Workspace', name: report.workspace },
    summary: report.summary,
    results: report.results.map((r) => ({
      source: 'tend',
      policy: r.policy,
      rule: String(r.rule),
      category: r.kind === 'check' ? 'check' : 'policy',
      result: r.result,
      severity: r.severity,
      scored: true,
      resources: [
        {
          kind: r.resource.type,
          name: r.resource.address,
          ...(r.resource.objectId !== undefined ? { uid: r.resource.objectId } : {}),
        },
      ],
      message: r.message,
      timestamp: timestamp(r.since),
      properties: resultProperties(r),
      ...(r.cause ? { cause: r.cause } : {}),
    })),
    history: report.history,
    since: report.since,
  };
}

/** The PolicyReport document (`policyReportView`). */
export type PolicyReportView = ReturnType<typeof policyReportView>;

/** SARIF levels: deny (and failing checks) error, warn warning, audit-only note. */
function sarifLevel(
  actions: readonly PolicyAction[],
  result: OpenResultKind,
): 'error' | 'warning' | 'note' {
  if (actions.length === 0) return result === 'warn' ? 'warning' : 'error';
  if (actions.includes('deny')) return 'error';
  if (actions.includes('warn')) return 'warning';
  return 'note';
}

/** The URI of a file of the intent directory in SARIF: relative, with `/`. */
function sarifUri(file: string): string {
  return file.replaceAll('\\', '/').replace(/^\.\//, '');
}

function region(s: SourceLocation) {
  return {
    artifactLocation: { uri: sarifUri(s.file) },
    region: { startLine: Math.max(1, s.line), startColumn: Math.max(1, s.column) },
  };
}

/**
 * The report as SARIF 2.1.0 (`tend compliance --format sarif`), for a CI job to upload to code
 * scanning: one rule per policy rule (`<policy>/<n>`, every rule of every policy) and per failing
 * check (`check/<name>`), one result per open result pointing at where the rule (or check) is
 * written, with the resource as its logical location.
 */
export function sarifLog(report: ComplianceReport, catalogue: ReportCatalogue, version: string) {
  interface Rule {
    id: string;
    name: string;
    shortDescription: { text: string };
    fullDescription?: { text: string };
    defaultConfiguration: { level: 'error' | 'warning' | 'note' };
    properties: { tags: string[]; severity?: string; location?: string };
  }
  const rules: Rule[] = [];
  const index = new Map<string, number>();
  const add = (rule: Rule): void => {
    if (index.has(rule.id)) return;
    index.set(rule.id, rules.length);
    rules.push(rule);
  };
  for (const p of catalogue.policies) {
    p.validations.forEach((v, i) => {
      add({
        id: `${p.name}/${i + 1}`,
        name: `${p.name} rule ${i + 1}`,
        shortDescription: { text: v.message ?? p.description ?? v.expression },
        fullDescription: {
          text: `${p.description ? `${p.description}: ` : ''}${v.expression} (${p.actions.join(', ')})`,
        },
        defaultConfiguration: { level: sarifLevel(p.actions, 'fail') },
        properties: {
          tags: ['policy', ...p.actions],
          severity: p.severity,
          location: sourceText(v.source),
        },
      });
    });
  }
  const ruleId = (r: OpenResult): string =>
    r.kind === 'check' ? `check/${r.policy.slice('check:'.length)}` : `${r.policy}/${r.rule}`;
  for (const r of report.results) {
    add({
      id: ruleId(r),
      name:
        r.kind === 'check'
          ? `check ${r.policy.slice('check:'.length)}`
          : `${r.policy} rule ${r.rule}`,
      shortDescription: {
        text: r.kind === 'check' ? `check ${r.policy.slice('check:'.length)} passes` : r.message,
      },
      defaultConfiguration: { level: sarifLevel(r.actions, r.result) },
      properties: { tags: [r.kind], severity: r.severity },
    });
  }
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0' as const,
    runs: [
      {
        tool: { driver: { name: 'tend', version, rules } },
        results: report.results.map((r) => {
          const id = ruleId(r);
          return {
            ruleId: id,
            ruleIndex: index.get(id)!,
            level: sarifLevel(r.actions, r.result),
            message: {
              text: `${r.resource.address}: ${r.message} — introduced by ${r.introducedBy}`,
            },
            locations: [
              {
                ...(r.ruleSource ? { physicalLocation: region(r.ruleSource) } : {}),
                logicalLocations: [
                  {
                    name: r.resource.address,
                    fullyQualifiedName: r.resource.address,
                    kind: 'resource',
                  },
                ],
              },
            ],
            partialFingerprints: { tendResult: `${r.resource.address}#${id}` },
            properties: resultProperties(r),
          };
        }),
      },
    ],
  };
}

/**
 * Open policy findings per policy and severity (the `tend_policy_violations` gauge): every policy
 * of `policies` (0 when nothing breaks it, so a violation that is gone reads 0, not absent) and
 * every one a status names.
 */
export function violationCounts(
  statuses: Iterable<Pick<ResourceStatus, 'compliance'>>,
  policies: readonly { readonly name: string; readonly severity: PolicySeverity }[],
): { readonly policy: string; readonly severity: PolicySeverity; readonly count: number }[] {
  const counts = new Map<string, { policy: string; severity: PolicySeverity; count: number }>();
  const key = (policy: string, severity: string): string => `${policy}\u0000${severity}`;
  for (const p of policies) {
    counts.set(key(p.name, p.severity), { policy: p.name, severity: p.severity, count: 0 });
  }
  for (const s of statuses) {
    for (const f of s.compliance?.findings ?? []) {
      const k = key(f.policy, f.severity);
      const c = counts.get(k) ?? { policy: f.policy, severity: f.severity, count: 0 };
      c.count++;
      counts.set(k, c);
    }
  }
  return [...counts.values()].sort(
    (a, b) => a.policy.localeCompare(b.policy) || a.severity.localeCompare(b.severity),
  );
}
