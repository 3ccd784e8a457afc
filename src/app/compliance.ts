import type {
  Address,
  Change,
  ComplianceReport,
  Intent,
  ReportCatalogue,
  ResourceStatus,
  ViolationCause,
} from '../core/index.js';
import {
  causeOf,
  complianceEvents,
  openResults,
  policyReportView,
  sarifLog,
  TendError,
} from '../core/index.js';
import { isAbsolute, relative, sep } from 'node:path';
import type { SourceLocation } from '../core/index.js';
import type { Store } from '../store/index.js';
import { timeBound } from './change-filter.js';
import type { AppContext } from './context.js';
import { tendVersion } from './user-agent.js';
import type { OpenedWorkspace, WorkspaceSelection } from './workspace.js';
import { openWorkspace } from './workspace.js';

/** The history's default reach: a week. */
export const COMPLIANCE_DEFAULT_SINCE = '7d';
/** The history's default length. */
export const COMPLIANCE_DEFAULT_LIMIT = 50;

/** What `compliance` is asked. */
export interface ComplianceRequest extends WorkspaceSelection {
  /** The history's lower bound: an ISO time or a duration ago; default 7d. */
  readonly since?: string;
  /** At most this many history entries (the newest); default 50. */
  readonly limit?: number;
}

/** The report with what renders it as SARIF: the intent's policies and checks. */
export interface ComplianceAnswer {
  readonly report: ComplianceReport;
  readonly catalogue: ReportCatalogue;
}

/** The first window of ledger entries read back for the history. */
const FIRST_WINDOW = 256;

/** A place in the intent as the report gives it: the file relative to the intent directory, with `/`. */
function inIntent(dir: string, s: SourceLocation): SourceLocation {
  if (!isAbsolute(s.file)) return s;
  const file = relative(dir, s.file).split(sep).join('/');
  return { ...s, file: file.startsWith('..') ? s.file : file };
}

/**
 * The intent's policies and checks, as the report names them. Every rule of every policy, so that a
 * SARIF consumer knows the rules that pass too.
 */
export function reportCatalogue(intent: Intent): ReportCatalogue {
  return {
    policies: (intent.policies ?? []).map((p) => ({
      name: p.name,
      ...(p.description !== undefined ? { description: p.description } : {}),
      actions: p.actions,
      severity: p.severity,
      validations: p.validations.map((v) => ({ ...v, source: inIntent(intent.dir, v.source) })),
    })),
    resources: intent.resources.map((r) => ({
      address: r.address,
      type: r.type,
      checks: r.checks.map((c) => ({ name: c.name, source: inIntent(intent.dir, c.source) })),
    })),
  };
}

/**
 * The `verdict` entries at or after `since`, the newest `limit`, oldest first: the ledger read
 * backwards in growing windows until enough are found, an entry older than `since` is reached, or
 * the ledger is exhausted.
 */
export async function recentVerdicts(
  store: Pick<Store, 'changes'>,
  since: string,
  limit: number,
): Promise<Change[]> {
  if (limit <= 0) return [];
  for (let window = Math.max(FIRST_WINDOW, limit * 4); ; window *= 4) {
    const got = await store.changes({ limit: window });
    const matched = got.filter((c) => c.action === 'verdict' && c.compliance && c.time >= since);
    const reachedOlder = got.length > 0 && got[0]!.time < since;
    if (matched.length >= limit || got.length < window || reachedOlder) {
      return matched.slice(-limit);
    }
  }
}

/**
 * For each resource with a failing check: the last change to its object before the check began
 * failing (its status's time), as the cause the report names; none when the ledger has none.
 */
async function checkCauses(
  store: Pick<Store, 'changes'>,
  statuses: readonly ResourceStatus[],
): Promise<Map<Address, ViolationCause>> {
  const causes = new Map<Address, ViolationCause>();
  for (const s of statuses) {
    if (!s.checks.some((c) => !c.ok)) continue;
    const entries = await store.changes({ address: s.address, limit: 64 });
    const before = s.updatedAt ? entries.filter((c) => c.time <= s.updatedAt) : entries;
    const cause = causeOf(before, ['*']);
    if (cause) causes.set(s.address, cause);
  }
  return causes;
}

/** The request's history bound and limit, read; throws `compliance.bad_since` / `compliance.bad_limit`. */
export function readReportWindow(
  request: Pick<ComplianceRequest, 'since' | 'limit'>,
  now: Date,
): { readonly since: string; readonly limit: number } {
  let since: string;
  try {
    since = timeBound(request.since ?? COMPLIANCE_DEFAULT_SINCE, now, '--since');
  } catch (e) {
    throw new TendError('compliance.bad_since', (e as Error).message, {
      hint: 'write a time such as 2026-11-24T14:00:00Z or 2026-11-24, or a duration ago such as 2h or 7d',
    });
  }
  const limit = request.limit ?? COMPLIANCE_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 0) {
    throw new TendError(
      'compliance.bad_limit',
      `limit ${String(limit)} is not a whole number ≥ 0`,
      {
        hint: 'give the number of history entries to show, such as 50',
      },
    );
  }
  return { since, limit };
}

/**
 * The compliance report of a workspace already open (one `tend serve` holds): the declared
 * resources' open results from their statuses, and the ledger's recent verdicts.
 */
export async function readCompliance(
  ctx: AppContext,
  opened: Pick<OpenedWorkspace, 'ws'>,
  request: Pick<ComplianceRequest, 'since' | 'limit'>,
): Promise<ComplianceAnswer> {
  const { since, limit } = readReportWindow(request, ctx.clock.now());
  const { ws } = opened;
  const stored = new Map((await ws.store.listStatus()).map((s) => [s.address, s] as const));
  const statuses = ws.intent.resources
    .map((r) => stored.get(r.address))
    .filter((s): s is ResourceStatus => s !== undefined);
  const catalogue = reportCatalogue(ws.intent);
  const { results, summary } = openResults(
    statuses,
    catalogue,
    await checkCauses(ws.store, statuses),
  );
  const history = complianceEvents(await recentVerdicts(ws.store, since, limit));
  return {
    report: {
      workspace: ws.name,
      generatedAt: ctx.clock.now().toISOString(),
      summary,
      results: results.map((r) =>
        r.ruleSource ? { ...r, ruleSource: inIntent(ws.intent.dir, r.ruleSource) } : r,
      ),
      history,
      since,
    },
    catalogue,
  };
}

/** Reads the compliance report of a workspace; read-only. */
export async function compliance(
  ctx: AppContext,
  request: ComplianceRequest,
): Promise<ComplianceAnswer> {
  // A bad --since or --limit is reported before the intent is loaded or the store opened.
  readReportWindow(request, ctx.clock.now());
  const opened = await openWorkspace(ctx, request, 'read', { recorded: true });
  try {
    return await readCompliance(ctx, opened, request);
  } finally {
    await opened.ws.close();
  }
}

/** The report as the PolicyReport JSON document. */
export function complianceView(answer: ComplianceAnswer) {
  return policyReportView(answer.report);
}

/** The report as a SARIF 2.1.0 log. */
export function complianceSarif(answer: ComplianceAnswer) {
  return sarifLog(answer.report, answer.catalogue, tendVersion());
}
