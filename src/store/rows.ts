import type {
  ActionActor,
  ActionRun,
  ActionStepRecord,
  ActorKind,
  Address,
  Announcement,
  Change,
  ChangeSource,
  CheckResult,
  ComplianceRecord,
  ComplianceState,
  DecisionKind,
  FieldClaim,
  IntentOrigin,
  Marker,
  Motivation,
  Operation,
  OperationAction,
  RecordedDecision,
  ResourceState,
  ResourceStatus,
} from '../core/index.js';
import { TendError } from '../core/index.js';
import { LEDGER_FORMAT } from './ledger-chain.js';
import type { LedgerRecord } from './ledger-chain.js';
import type { AnnouncementQuery, Lease, TwinEntry } from './store.js';

// Rows as the tables of both stores hold them (sqlite/migrations.ts, postgres/postgres-migrations.ts):
// snake_case columns, JSON as TEXT, absent as NULL, and no driver known here. SQLite and PostgreSQL
// read and write every row through these converters, so a value reads back on either store exactly
// as it was written, and `tend store copy` moves it unchanged. Reading a row builds an object without
// the absent optional members, so a value read back is exactly the value written (`toStrictEqual`
// holds). What PostgreSQL types otherwise (the twin's boolean) is converted in postgres-rows.ts.

/** A `twin` row. */
export interface TwinRow {
  readonly address: string;
  readonly type: string;
  readonly object_id: string;
  readonly fields: string;
  readonly stateful: number;
  readonly depends_on: string;
  readonly observed_at: string;
  readonly sent: string | null;
}

/** An `operations` row (without the insertion-order `seq`). */
export interface OperationRow {
  readonly id: string;
  readonly address: string;
  readonly type: string;
  readonly action: string;
  readonly object_id: string | null;
  readonly desired_hash: string;
  readonly marker: string;
  readonly group_id: string | null;
  readonly step: number | null;
  readonly replaces: string | null;
  /** Null for operations journaled without a lease (and for rows from before schema version 3). */
  readonly epoch?: number | null;
  readonly state: string;
  readonly created_at: string;
  readonly settled_at: string | null;
  readonly error: string | null;
}

/**
 * A `changes` row (without `recorded_at`, which is not part of the entry). `actor_kind`, `decision`,
 * `key_id` and `format` came with schema version 4; rows written before are format 1.
 */
export interface ChangeRow {
  readonly seq: number;
  readonly time: string;
  readonly actor: string;
  readonly actor_kind?: string | null;
  readonly intent: string | null;
  /** JSON in format 2; free text in format 1. */
  readonly motivation: string | null;
  readonly source: string;
  readonly address: string | null;
  readonly type: string;
  readonly object_id: string;
  readonly action: string;
  readonly fields: string;
  readonly before: string | null;
  readonly after: string | null;
  readonly decision?: string | null;
  /** The commit a git workspace's pass planned from (JSON); SQLite version 8, PostgreSQL version 4. */
  readonly origin?: string | null;
  /** JSON ComplianceRecord of a `verdict` entry (schema version 9; PostgreSQL 7); NULL otherwise. */
  readonly compliance?: string | null;
  readonly key_id?: string | null;
  readonly format?: number;
  readonly prev_hash: string;
  readonly hash: string;
}

/** A `statuses` row. */
export interface StatusRow {
  readonly address: string;
  readonly state: string;
  readonly object_id: string | null;
  readonly message: string | null;
  readonly checks: string;
  /** JSON ComplianceState (schema version 9; PostgreSQL 7); NULL when no policy was evaluated. */
  readonly compliance?: string | null;
  readonly updated_at: string;
}

/** The row holding a twin entry. */
export function twinToRow(entry: TwinEntry): TwinRow {
  return {
    address: entry.address,
    type: entry.type,
    object_id: entry.objectId,
    fields: JSON.stringify(entry.fields),
    stateful: entry.stateful ? 1 : 0,
    depends_on: JSON.stringify(entry.dependsOn),
    observed_at: entry.observedAt,
    sent: entry.sent === undefined ? null : JSON.stringify(entry.sent),
  };
}

/** The twin entry a row holds. */
export function twinFromRow(row: TwinRow): TwinEntry {
  return {
    address: row.address as Address,
    type: row.type,
    objectId: row.object_id,
    fields: JSON.parse(row.fields) as Record<string, unknown>,
    stateful: row.stateful !== 0,
    dependsOn: JSON.parse(row.depends_on) as Address[],
    observedAt: row.observed_at,
    ...(row.sent === null || row.sent === undefined
      ? {}
      : { sent: JSON.parse(row.sent) as Record<string, string> }),
  };
}

/** The row holding an operation. */
export function operationToRow(op: Operation): OperationRow {
  return {
    id: op.id,
    address: op.address,
    type: op.type,
    action: op.action,
    object_id: op.objectId ?? null,
    desired_hash: op.desiredHash,
    marker: JSON.stringify(op.marker),
    group_id: op.group ?? null,
    step: op.step ?? null,
    replaces: op.replaces ?? null,
    epoch: op.epoch ?? null,
    state: op.state,
    created_at: op.createdAt,
    settled_at: op.settledAt ?? null,
    error: op.error ?? null,
  };
}

/** The operation a row holds. */
export function operationFromRow(row: OperationRow): Operation {
  return {
    id: row.id,
    address: row.address as Address,
    type: row.type,
    action: row.action as OperationAction,
    ...(row.object_id === null ? {} : { objectId: row.object_id }),
    desiredHash: row.desired_hash,
    marker: JSON.parse(row.marker) as Marker,
    ...(row.group_id === null ? {} : { group: row.group_id }),
    ...(row.step === null ? {} : { step: row.step }),
    ...(row.replaces === null ? {} : { replaces: row.replaces }),
    ...(row.epoch === null || row.epoch === undefined ? {} : { epoch: row.epoch }),
    state: row.state as Operation['state'],
    createdAt: row.created_at,
    ...(row.settled_at === null ? {} : { settledAt: row.settled_at }),
    ...(row.error === null ? {} : { error: row.error }),
  };
}

/** The row holding a keyed ledger entry (the store writes no other format). */
export function changeToRow(entry: Change): ChangeRow {
  return {
    seq: entry.seq,
    time: entry.time,
    actor: entry.actor,
    actor_kind: entry.actorKind ?? null,
    intent: entry.intent ?? null,
    motivation: entry.motivation === undefined ? null : JSON.stringify(entry.motivation),
    source: entry.source,
    address: entry.address ?? null,
    type: entry.type,
    object_id: entry.objectId,
    action: entry.action,
    fields: JSON.stringify(entry.fields),
    before: entry.before === undefined ? null : JSON.stringify(entry.before),
    after: entry.after === undefined ? null : JSON.stringify(entry.after),
    decision: entry.decision === undefined ? null : JSON.stringify(entry.decision),
    origin: entry.origin === undefined ? null : JSON.stringify(entry.origin),
    compliance: entry.compliance === undefined ? null : JSON.stringify(entry.compliance),
    key_id: entry.keyId ?? null,
    format: LEDGER_FORMAT,
    prev_hash: entry.prevHash,
    hash: entry.hash,
  };
}

/**
 * The ledger entry a row holds, in the format it was written in. A format-1 row keeps its
 * motivation as the free text it was (its hash covers that text) and ignores the columns format 1
 * did not have. With `lenient`, a JSON column that does not parse is returned as its raw text instead
 * of throwing, so that verifying a damaged ledger reports the entry as edited.
 */
export function recordFromRow(row: ChangeRow, lenient = false): LedgerRecord {
  const parse = (text: string): unknown => {
    if (!lenient) return JSON.parse(text);
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  const format = row.format ?? 1;
  if (format !== 1 && format !== LEDGER_FORMAT) {
    return {
      format: 'foreign',
      stored: format,
      seq: row.seq,
      prevHash: row.prev_hash,
      hash: row.hash,
    };
  }
  const common = {
    seq: row.seq,
    time: row.time,
    actor: row.actor,
    ...(row.intent === null ? {} : { intent: row.intent }),
    source: row.source as ChangeSource,
    ...(row.address === null ? {} : { address: row.address as Address }),
    type: row.type,
    objectId: row.object_id,
    fields: parse(row.fields) as string[],
    ...(row.before === null ? {} : { before: parse(row.before) as Record<string, unknown> }),
    ...(row.after === null ? {} : { after: parse(row.after) as Record<string, unknown> }),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
  if (format === 1) {
    return {
      format: 1,
      ...common,
      ...(row.motivation === null ? {} : { motivation: row.motivation }),
      action: row.action,
    };
  }
  const actorKind = row.actor_kind ?? null;
  const decision = row.decision ?? null;
  const origin = row.origin ?? null;
  const compliance = row.compliance ?? null;
  return {
    format: LEDGER_FORMAT,
    ...common,
    ...(actorKind === null ? {} : { actorKind: actorKind as ActorKind }),
    ...(row.motivation === null ? {} : { motivation: parse(row.motivation) as Motivation }),
    action: row.action as Change['action'],
    ...(decision === null ? {} : { decision: parse(decision) as RecordedDecision }),
    ...(origin === null ? {} : { origin: parse(origin) as IntentOrigin }),
    ...(compliance === null ? {} : { compliance: parse(compliance) as ComplianceRecord }),
    keyId: row.key_id ?? '',
  };
}

/**
 * The ledger entry a record presents: a format-1 entry's free-text motivation becomes
 * `{ kind: <text> }`; a record of an unknown format cannot be read.
 */
export function changeFromRecord(record: LedgerRecord): Change {
  if (record.format === 'foreign') {
    throw new TendError(
      'store.ledger-format',
      `ledger entry ${record.seq} has format ${JSON.stringify(record.stored)}, which no Tend writes`,
      { phase: 'store', hint: 'verify the ledger: the entry was edited' },
    );
  }
  if (record.format === 1) {
    const { format: _, motivation, action, ...rest } = record;
    return {
      ...rest,
      ...(motivation === undefined ? {} : { motivation: { kind: motivation } }),
      action: action as Change['action'],
    };
  }
  const { format: _, ...change } = record;
  return change;
}

/**
 * The ledger entry a row holds, as read (see `recordFromRow` and `changeFromRecord`). A row of a
 * format no Tend writes (only an edit makes one) is read as the current format, so that history
 * still shows it; verifying the ledger reports it.
 */
export function changeFromRow(row: ChangeRow): Change {
  const format = row.format ?? 1;
  const known = format === 1 || format === LEDGER_FORMAT;
  return changeFromRecord(recordFromRow(known ? row : { ...row, format: LEDGER_FORMAT }));
}

/** The row holding a resource status. */
export function statusToRow(status: ResourceStatus): StatusRow {
  return {
    address: status.address,
    state: status.state,
    object_id: status.objectId ?? null,
    message: status.message ?? null,
    checks: JSON.stringify(status.checks),
    compliance: status.compliance === undefined ? null : JSON.stringify(status.compliance),
    updated_at: status.updatedAt,
  };
}

/** The resource status a row holds. */
export function statusFromRow(row: StatusRow): ResourceStatus {
  return {
    address: row.address as Address,
    state: row.state as ResourceState,
    ...(row.object_id === null ? {} : { objectId: row.object_id }),
    ...(row.message === null ? {} : { message: row.message }),
    checks: JSON.parse(row.checks) as CheckResult[],
    ...(row.compliance === null || row.compliance === undefined
      ? {}
      : { compliance: JSON.parse(row.compliance) as ComplianceState }),
    updatedAt: row.updated_at,
  };
}

// ---- Announcements and field claims.

/** An `announcements` row (without the storing-order `seq`). */
export interface AnnouncementRow {
  readonly id: string;
  readonly address: string;
  readonly field: string;
  readonly value: string | null;
  readonly actor: string;
  readonly actor_kind: string | null;
  readonly intent: string | null;
  readonly motivation: string | null;
  readonly note: string | null;
  readonly created_at: string;
  readonly created_ms: number;
  readonly expires_at: string;
  readonly expires_ms: number;
}

/** A `field_claims` row. */
export interface ClaimRow {
  readonly address: string;
  readonly field: string;
  readonly value: string | null;
  readonly actor: string;
  readonly actor_kind: string | null;
  readonly intent: string | null;
  readonly motivation: string | null;
  readonly decision: string;
  readonly rule: string;
  readonly since: string;
  readonly hold_until: string | null;
  readonly then_decide: string | null;
  readonly seq: number | null;
  readonly declared_hash: string | null;
}

/** A value as JSON text; NULL for undefined (which JSON cannot write), so the two never mix. */
function jsonOrNull(value: unknown): string | null {
  return value === undefined ? null : (JSON.stringify(value) ?? null);
}

/** The milliseconds of an ISO time the store orders or filters by; refuses text that is no time. */
function timeMs(what: string, iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) {
    throw new TendError(
      'store.invalid-announcement',
      `${what} ${JSON.stringify(iso)} is not an ISO time; announcements are stored with times such as 2026-11-24T14:00:00.000Z`,
      { phase: 'store' },
    );
  }
  return ms;
}

/** The row holding an announcement. */
export function announcementToRow(a: Announcement): AnnouncementRow {
  return {
    id: a.id,
    address: a.address,
    field: a.field,
    value: jsonOrNull(a.value),
    actor: a.actor,
    actor_kind: a.actorKind ?? null,
    intent: a.intent ?? null,
    motivation: a.motivation === undefined ? null : JSON.stringify(a.motivation),
    note: a.note ?? null,
    created_at: a.createdAt,
    created_ms: timeMs('createdAt', a.createdAt),
    expires_at: a.expiresAt,
    expires_ms: timeMs('expiresAt', a.expiresAt),
  };
}

/** The announcement a row holds. */
export function announcementFromRow(row: AnnouncementRow): Announcement {
  return {
    id: row.id,
    address: row.address as Address,
    field: row.field,
    value: row.value === null ? undefined : (JSON.parse(row.value) as unknown),
    actor: row.actor,
    ...(row.actor_kind === null ? {} : { actorKind: row.actor_kind as ActorKind }),
    ...(row.intent === null ? {} : { intent: row.intent }),
    ...(row.motivation === null ? {} : { motivation: JSON.parse(row.motivation) as Motivation }),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    ...(row.note === null ? {} : { note: row.note }),
  };
}

/** The row holding a field claim. */
export function claimToRow(c: FieldClaim): ClaimRow {
  return {
    address: c.address,
    field: c.field,
    value: jsonOrNull(c.value),
    actor: c.actor,
    actor_kind: c.actorKind ?? null,
    intent: c.intent ?? null,
    motivation: c.motivation === undefined ? null : JSON.stringify(c.motivation),
    decision: c.decision,
    rule: c.rule,
    since: c.since,
    hold_until: c.until ?? null,
    then_decide: c.then ?? null,
    seq: c.seq ?? null,
    declared_hash: c.declaredHash ?? null,
  };
}

/** The field claim a row holds. */
export function claimFromRow(row: ClaimRow): FieldClaim {
  return {
    actor: row.actor,
    ...(row.actor_kind === null ? {} : { actorKind: row.actor_kind as ActorKind }),
    ...(row.intent === null ? {} : { intent: row.intent }),
    ...(row.motivation === null ? {} : { motivation: JSON.parse(row.motivation) as Motivation }),
    address: row.address as Address,
    field: row.field,
    value: row.value === null ? undefined : (JSON.parse(row.value) as unknown),
    decision: row.decision as DecisionKind,
    rule: row.rule,
    since: row.since,
    ...(row.hold_until === null ? {} : { until: row.hold_until }),
    ...(row.then_decide === null ? {} : { then: row.then_decide as Exclude<DecisionKind, 'hold'> }),
    ...(row.seq === null ? {} : { seq: row.seq }),
    ...(row.declared_hash === null ? {} : { declaredHash: row.declared_hash }),
  };
}

/**
 * The milliseconds of an announcement query's `activeAt` (null: no filter); refuses text that is no
 * ISO time (`store.invalid-query`).
 */
export function activeAtMs(query: AnnouncementQuery): number | null {
  if (query.activeAt === undefined) return null;
  const ms = Date.parse(query.activeAt);
  if (Number.isNaN(ms)) {
    throw new TendError(
      'store.invalid-query',
      `activeAt must be an ISO time, got ${JSON.stringify(query.activeAt)}`,
      { phase: 'store' },
    );
  }
  return ms;
}

// ---- Day-2 action runs and their steps.

/** An `action_runs` row (without the storing-order `seq`). */
export interface RunRow {
  readonly id: string;
  readonly address: string;
  readonly type: string;
  readonly action: string;
  readonly params: string;
  readonly actor: string;
  readonly state: string;
  readonly created_at: string;
  readonly finished_at: string | null;
  readonly error: string | null;
  /** The lease epoch the run was last written under (null: without a lease). */
  readonly epoch: number | null;
}

/** An `action_steps` row. */
export interface StepRow {
  readonly run_id: string;
  readonly idx: number;
  readonly name: string;
  readonly state: string;
  readonly attempts: number;
  readonly started_at: string;
  readonly settled_at: string | null;
  readonly message: string | null;
}

/** The row holding a run (its steps are rows of their own: `stepToRow`). */
export function runToRow(run: ActionRun, epoch: number | undefined): RunRow {
  return {
    id: run.id,
    address: run.address,
    type: run.type,
    action: run.action,
    params: JSON.stringify(run.params),
    actor: JSON.stringify(run.actor),
    state: run.state,
    created_at: run.createdAt,
    finished_at: run.finishedAt ?? null,
    error: run.error ?? null,
    epoch: epoch ?? null,
  };
}

/** The run a row holds, with its steps. */
export function runFromRow(row: RunRow, steps: ActionStepRecord[]): ActionRun {
  return {
    id: row.id,
    address: row.address as Address,
    type: row.type,
    action: row.action,
    params: JSON.parse(row.params) as Record<string, string>,
    actor: JSON.parse(row.actor) as ActionActor,
    state: row.state as ActionRun['state'],
    createdAt: row.created_at,
    ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    steps,
  };
}

/** The row holding one step record of run `runId`. */
export function stepToRow(runId: string, s: ActionStepRecord): StepRow {
  return {
    run_id: runId,
    idx: s.index,
    name: s.name,
    state: s.state,
    attempts: s.attempts,
    started_at: s.startedAt,
    settled_at: s.settledAt ?? null,
    message: s.message ?? null,
  };
}

/** The step record a row holds. */
export function stepFromRow(row: StepRow): ActionStepRecord {
  return {
    index: row.idx,
    name: row.name,
    state: row.state as ActionStepRecord['state'],
    attempts: row.attempts,
    startedAt: row.started_at,
    ...(row.settled_at !== null ? { settledAt: row.settled_at } : {}),
    ...(row.message !== null ? { message: row.message } : {}),
  };
}

// ---- Leases.

/** A `leases` row: SQLite holds the times as ISO text, PostgreSQL as `timestamptz` (read as dates). */
export interface LeaseRow {
  readonly workspace: string;
  readonly epoch: number;
  readonly command: string;
  readonly pid: number;
  readonly host: string;
  readonly started_at: string;
  readonly acquired_at: string | Date;
  readonly expires_at: string | Date;
  /** The `tend worker` holding it (PostgreSQL schema version 2), else null or absent. */
  readonly worker?: string | null;
}

/** The lease a row holds. */
export function leaseFromRow(row: LeaseRow): Lease {
  const iso = (t: string | Date): string => (typeof t === 'string' ? t : t.toISOString());
  return {
    workspace: row.workspace,
    epoch: row.epoch,
    holder: {
      command: row.command,
      pid: row.pid,
      host: row.host,
      startedAt: row.started_at,
      ...(typeof row.worker === 'string' ? { worker: row.worker } : {}),
    },
    acquiredAt: iso(row.acquired_at),
    expiresAt: iso(row.expires_at),
  };
}
