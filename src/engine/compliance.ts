import { isDeepStrictEqual } from 'node:util';
import type {
  Address,
  CheckResult,
  Change,
  ComplianceFinding,
  ComplianceRecord,
  ViolationCause,
  ComplianceState,
  NewChange,
  PolicyDecl,
  PolicyVerdict,
  ResourceDecl,
} from '../core/index.js';
import {
  causeOf,
  checkCauseOf,
  checkTransition,
  complianceTransition,
  defineKey,
  findingKey,
  hashValue,
  policyMatches,
} from '../core/index.js';
import { evaluatePolicies } from '../policy/index.js';
import type { Store } from '../store/index.js';
import { redact } from './operator.js';
import type { Workspace } from './workspace.js';
import { secretFields } from './workspace.js';

/**
 * Continuous compliance (docs/policies.md): each pass evaluates the policies on what the platform
 * holds. Cheap when nothing changed: a resource is evaluated again only when its observed fields or
 * the policies differ from the last evaluation (`ComplianceState.key`); otherwise its state is kept.
 * A violation found is recorded in the ledger (a `verdict` entry) with the change that introduced it,
 * and again when it is gone; the state goes into the resource's status.
 */

/** Per store, each resource's compliance as this process last knew it (read from statuses once). */
const known = new WeakMap<Store, Map<Address, ComplianceState>>();

/** The verdict entries to write and the states to keep, after evaluating some resources. */
export interface ComplianceStep {
  /** Per evaluated or kept resource, its state (recorded entries filled in by `settle`). */
  readonly states: Map<Address, ComplianceState>;
  /** Verdict entries to append, in order, each with the finding it records. */
  readonly entries: readonly {
    readonly address: Address;
    readonly key: string;
    readonly entry: NewChange;
  }[];
}

/** A digest of the policies: any change to them evaluates every resource again. */
const digests = new WeakMap<readonly PolicyDecl[], string>();
function policiesDigest(policies: readonly PolicyDecl[]): string {
  let d = digests.get(policies);
  if (d === undefined) digests.set(policies, (d = digestOf(policies)));
  return d;
}

function digestOf(policies: readonly PolicyDecl[]): string {
  return hashValue(
    policies.map((p) => ({
      n: p.name,
      m: p.match,
      v: p.variables.map((x) => [x.name, x.expression]),
      r: p.validations.map((x) => [x.expression, x.message, x.messageExpression, x.reason]),
      a: p.actions,
      s: p.severity,
    })),
  );
}

/**
 * Evaluates the policies on `objects` (address → observed fields) and works out what to record.
 * Reads the store (the statuses once per process, and the ledger of an address with a violation
 * found), writes nothing. `at`: the pass's time.
 */
export async function evaluateCompliance(
  ws: Workspace,
  objects: ReadonlyMap<
    Address,
    { readonly id: string; readonly fields: Readonly<Record<string, unknown>> }
  >,
  at: string,
): Promise<ComplianceStep> {
  const policies = ws.intent.policies ?? [];
  const states = new Map<Address, ComplianceState>();
  const entries: { address: Address; key: string; entry: NewChange }[] = [];
  if (policies.length === 0) return { states, entries };
  const memory = await memoryOf(ws.store);
  for (const r of ws.intent.resources) {
    const obj = objects.get(r.address);
    if (!obj) continue;
    const seen = observedVerdicts(ws, r, obj.fields);
    if (!seen) continue;
    const before = memory.get(r.address);
    if (before?.key === seen.key) {
      states.set(r.address, before);
      continue;
    }
    const t0 = complianceTransition(before, seen.verdicts, seen.key, at);
    // The failing checks it keeps are not the policies' to open or close (evaluateChecks).
    const t = before?.checks ? { ...t0, state: { ...t0.state, checks: before.checks } } : t0;
    if (t.opened.length === 0 && t.closed.length === 0) {
      states.set(r.address, t.state);
      continue;
    }
    // The address's ledger: the change that introduced each violation, and the verdicts already
    // written (a pass killed after writing one and before the status: not written twice).
    const history = await ws.store.changes({ address: r.address, limit: 500 });
    const hidden = secretFields(ws, r.type, r.address);
    const shown = redact(hidden, obj.fields, ws.secrets);
    const findings = new Map(t.state.findings.map((f) => [findingKey(f), f]));
    recordTransition(t, {
      address: r.address,
      history,
      findings,
      keyOf: findingKey,
      causeOf: (f) => causeOf(history, f.fields),
      entryOf: (f, record) => verdictEntry(r.address, r.type, obj.id, at, f, shown, record),
      gone: 'no longer broken',
      entries,
    });
    states.set(r.address, { ...t.state, findings: [...findings.values()] });
  }
  return { states, entries };
}

/**
 * Checks in the compliance record (docs/policies.md): after a pass ran resources' checks
 * (`outcomes`, address → the checks' results), a check that started failing — passing before, or
 * never run — gets a `verdict` entry (policy `check:<name>`, rule 0) whose cause is the newest
 * ledger entry of the resource or of a resource it depends on (a rotation of the password it logs in
 * with); one that passes again gets one with `result: pass` and the entry that found it. `current`:
 * the states the pass's policy evaluation left (else the statuses'). Reads the store, writes
 * nothing; a resource whose checks did not run (none in `outcomes`) keeps what it had.
 */
export async function evaluateChecks(
  ws: Workspace,
  outcomes: ReadonlyMap<
    Address,
    { readonly objectId?: string; readonly checks: readonly CheckResult[] }
  >,
  current: ReadonlyMap<Address, ComplianceState>,
  at: string,
): Promise<ComplianceStep> {
  const states = new Map<Address, ComplianceState>();
  const entries: { address: Address; key: string; entry: NewChange }[] = [];
  const memory = await memoryOf(ws.store);
  for (const r of ws.intent.resources) {
    const o = outcomes.get(r.address);
    if (!o || o.checks.length === 0) continue;
    const before = current.get(r.address) ?? memory.get(r.address);
    const sources = new Map(r.checks.map((c) => [c.name, c.source] as const));
    const t = checkTransition(before?.checks ?? [], o.checks, sources, at);
    const findings = new Map(t.findings.map((f) => [f.policy, f]));
    if (t.opened.length > 0 || t.closed.length > 0) {
      // The address's ledger and its dependencies': the entry that preceded the failure, and the
      // verdicts already written (a pass killed between the entry and the status: not written twice).
      const own = await ws.store.changes({ address: r.address, limit: 500 });
      const history = [...own];
      if (t.opened.length > 0) {
        for (const d of r.dependsOn) {
          for (const c of await ws.store.changes({ address: d, limit: 50 })) history.push(c);
        }
      }
      const objectId = o.objectId ?? r.name;
      recordTransition(t, {
        address: r.address,
        history: own,
        findings,
        keyOf: (f) => f.policy,
        causeOf: () => checkCauseOf(history, r.address),
        entryOf: (f, record) => verdictEntry(r.address, r.type, objectId, at, f, {}, record),
        gone: 'passes again',
        entries,
      });
    }
    if (!before && findings.size === 0) continue;
    const { checks: _was, ...rest } = before ?? {
      key: '',
      evaluatedAt: at,
      passed: 0,
      undecidable: 0,
      findings: [],
    };
    states.set(r.address, {
      ...rest,
      ...(findings.size > 0 ? { checks: [...findings.values()] } : {}),
    });
  }
  return { states, entries };
}

/**
 * After the verdict entries were appended (`appended[i]` for `step.entries[i]`): the states with
 * each violation found pointing at the entry that recorded it, remembered for the next pass.
 */
export function settleCompliance(
  ws: Workspace,
  step: ComplianceStep,
  appended: readonly Change[],
): Map<Address, ComplianceState> {
  const states = new Map(step.states);
  step.entries.forEach(({ address, key }, i) => {
    const entry = appended[i];
    const state = states.get(address);
    if (!entry || !state || entry.compliance?.result === 'pass') return;
    const mark = (f: ComplianceFinding) =>
      findingKey(f) === key ? { ...f, recorded: entry.seq } : f;
    states.set(address, {
      ...state,
      findings: state.findings.map(mark),
      ...(state.checks ? { checks: state.checks.map(mark) } : {}),
    });
  });
  // The memory is loaded (from the statuses) by whatever evaluated these states. A step that
  // evaluated nothing (no policies) has none to add, and must not leave an empty memory behind: the
  // next reader would take it for the statuses' (and lose every failing check they keep).
  const memory = known.get(ws.store);
  if (memory) for (const [address, state] of states) memory.set(address, state);
  return states;
}

/** What evaluating the policies on one observed object found (`verdicts`: every rule's). */
interface Evaluated {
  readonly digest: string;
  /** The declared and observed fields evaluated (the newest equal objects: compared by reference first). */
  spec: Readonly<Record<string, unknown>>;
  fields: Readonly<Record<string, unknown>>;
  /** A hash of the policies and the fields (`ComplianceState.key`). */
  readonly key: string;
  readonly verdicts: readonly PolicyVerdict[];
  /** False when no policy matches the resource. */
  readonly matched: boolean;
}

/** Per store, the last evaluation of each resource's observed object in this process. */
const evaluated = new WeakMap<Store, Map<Address, Evaluated>>();

/**
 * Every matching policy's verdicts on a resource's observed object (moment `observed`), or undefined
 * when no policy matches it. Evaluated again only when the policies, the declared fields or the
 * observed ones differ from the last time (compared as values: a no-drift pass evaluates nothing).
 */
export function observedVerdicts(
  ws: Workspace,
  r: ResourceDecl,
  fields: Readonly<Record<string, unknown>>,
): Evaluated | undefined {
  const policies = ws.intent.policies ?? [];
  if (policies.length === 0) return undefined;
  let memo = evaluated.get(ws.store);
  if (!memo) evaluated.set(ws.store, (memo = new Map<Address, Evaluated>()));
  const digest = policiesDigest(policies);
  const last = memo.get(r.address);
  if (
    last &&
    last.digest === digest &&
    (last.fields === fields || isDeepStrictEqual(last.fields, fields)) &&
    (last.spec === r.spec || isDeepStrictEqual(last.spec, r.spec))
  ) {
    last.fields = fields;
    last.spec = r.spec;
    return last.matched ? last : undefined;
  }
  const subject = { address: r.address, type: r.type, name: r.name, labels: r.labels ?? {} };
  const matching = policies.filter((p) => policyMatches(p.match, subject));
  if (matching.length === 0) {
    memo.set(r.address, { digest, spec: r.spec, fields, key: '', verdicts: [], matched: false });
    return undefined;
  }
  const verdicts = evaluatePolicies(matching, {
    subject,
    moment: 'observed',
    object: fields,
    declared: r.spec,
    observed: fields,
  });
  const e: Evaluated = {
    digest,
    spec: r.spec,
    fields,
    key: hashValue({ p: digest, f: fields }),
    verdicts,
    matched: true,
  };
  memo.set(r.address, e);
  return e;
}

/** The resources' compliance as this process knows it: the statuses' the first time. */
async function memoryOf(store: Store): Promise<Map<Address, ComplianceState>> {
  let m = known.get(store);
  if (!m) {
    m = new Map();
    for (const s of await store.listStatus()) if (s.compliance) m.set(s.address, s.compliance);
    known.set(store, m);
  }
  return m;
}

/**
 * The verdict entries of one resource's violations found and gone, and its findings told what the
 * ledger already holds: a violation whose `fail` verdict is the address's last one (a pass killed
 * after writing it and before the status) reuses that entry and its cause instead of a second one;
 * a violation gone whose last verdict is a `pass` is not written again.
 */
function recordTransition(
  t: {
    readonly opened: readonly ComplianceFinding[];
    readonly closed: readonly ComplianceFinding[];
  },
  o: {
    readonly address: Address;
    /** The address's own ledger entries (its last verdicts). */
    readonly history: readonly Change[];
    /** The findings to keep, by `keyOf`; a violation found gets its cause or its earlier entry. */
    readonly findings: Map<string, ComplianceFinding>;
    readonly keyOf: (f: ComplianceFinding) => string;
    readonly causeOf: (f: ComplianceFinding) => ViolationCause | undefined;
    readonly entryOf: (f: ComplianceFinding, record: ComplianceRecord) => NewChange;
    /** How a `pass` verdict's message begins (`no longer broken`, `passes again`). */
    readonly gone: string;
    readonly entries: { address: Address; key: string; entry: NewChange }[];
  },
): void {
  const last = lastVerdicts(o.history);
  const record = (f: ComplianceFinding) => ({
    policy: f.policy,
    rule: f.rule,
    message: f.message,
    actions: f.actions,
    severity: f.severity,
  });
  for (const f of t.opened) {
    const key = findingKey(f);
    const prior = last.get(key);
    if (prior && prior.compliance?.result !== 'pass') {
      o.findings.set(o.keyOf(f), {
        ...f,
        recorded: prior.seq,
        ...(prior.compliance?.cause ? { cause: prior.compliance.cause } : {}),
      });
      continue;
    }
    const cause = o.causeOf(f);
    o.findings.set(o.keyOf(f), { ...f, ...(cause ? { cause } : {}) });
    const entry = o.entryOf(f, { ...record(f), result: f.result, ...(cause ? { cause } : {}) });
    o.entries.push({ address: o.address, key, entry });
  }
  for (const f of t.closed) {
    const key = findingKey(f);
    if (last.get(key)?.compliance?.result === 'pass') continue;
    const entry = o.entryOf(f, {
      ...record(f),
      result: 'pass',
      message: `${o.gone}: ${f.message}`,
      ...(f.recorded !== undefined ? { found: f.recorded } : {}),
    });
    o.entries.push({ address: o.address, key, entry });
  }
}

/** Per `policy#rule`, the newest verdict entry of an address's history. */
function lastVerdicts(history: readonly Change[]): Map<string, Change> {
  const out = new Map<string, Change>();
  for (const c of history) {
    if (c.action === 'verdict' && c.compliance) out.set(findingKey(c.compliance), c);
  }
  return out;
}

/** A `verdict` ledger entry: Tend found a rule broken (or no longer) on the observed object. */
function verdictEntry(
  address: Address,
  type: string,
  objectId: string,
  at: string,
  f: ComplianceFinding,
  shown: Readonly<Record<string, unknown>>,
  compliance: ComplianceRecord,
): NewChange {
  const values: Record<string, unknown> = {};
  if (!f.fields.includes('*')) {
    for (const field of f.fields)
      if (Object.hasOwn(shown, field)) defineKey(values, field, shown[field]);
  }
  return {
    time: at,
    actor: 'tend',
    actorKind: 'tend',
    intent: 'compliance',
    source: 'tend',
    address,
    type,
    objectId,
    action: 'verdict',
    fields: [...f.fields],
    ...(Object.keys(values).length > 0 ? { after: values } : {}),
    compliance,
  };
}
