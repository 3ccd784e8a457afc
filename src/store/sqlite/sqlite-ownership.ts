import type {
  ActorKind,
  Address,
  Announcement,
  DecisionKind,
  FieldClaim,
  Motivation,
} from '../../core/index.js';
import { TendError } from '../../core/index.js';
import type { AnnouncementQuery } from '../store.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

// Announcements and field claims on SQLite (migration 4): their rows and statements, kept apart from
// the twin, the journal and the ledger. Like sqlite-rows.ts, reading a row builds an object without
// the absent optional members, so that a value read back is exactly the value written.

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
 * The statements of announcements and claims, prepared once on a migrated database. Each method runs
 * one statement; the store decides when (queued, fenced writes; reads after the queued writes).
 */
export class OwnershipStatements {
  readonly #insertAnnouncement: SqliteStatement;
  readonly #announcements: SqliteStatement;
  readonly #putClaim: SqliteStatement;
  readonly #deleteClaim: SqliteStatement;
  readonly #claims: SqliteStatement;
  readonly #claimsFor: SqliteStatement;

  constructor(db: SqliteDatabase) {
    const p = (sql: string): SqliteStatement => db.prepare(sql);
    // The same id is the same announcement (a hash of its content and time): storing it again is a no-op.
    this.#insertAnnouncement = p(
      `INSERT INTO announcements (id, address, field, value, actor, actor_kind, intent, motivation,
         note, created_at, created_ms, expires_at, expires_ms)
       VALUES (@id, @address, @field, @value, @actor, @actor_kind, @intent, @motivation,
         @note, @created_at, @created_ms, @expires_at, @expires_ms)
       ON CONFLICT (id) DO NOTHING`,
    );
    // NULL parameters match everything: one statement serves every combination of filters.
    this.#announcements = p(
      `SELECT * FROM announcements
       WHERE (@address IS NULL OR address = @address) AND (@active_ms IS NULL OR expires_ms > @active_ms)
       ORDER BY created_ms, seq`,
    );
    this.#putClaim = p(
      `INSERT OR REPLACE INTO field_claims (address, field, value, actor, actor_kind, intent, motivation,
         decision, rule, since, hold_until, then_decide, seq, declared_hash)
       VALUES (@address, @field, @value, @actor, @actor_kind, @intent, @motivation,
         @decision, @rule, @since, @hold_until, @then_decide, @seq, @declared_hash)`,
    );
    this.#deleteClaim = p('DELETE FROM field_claims WHERE address = ? AND field = ?');
    this.#claims = p('SELECT * FROM field_claims ORDER BY address, field');
    this.#claimsFor = p('SELECT * FROM field_claims WHERE address = ? ORDER BY field');
  }

  putAnnouncement(a: Announcement): void {
    this.#insertAnnouncement.run(announcementToRow(a));
  }

  announcements(query: AnnouncementQuery): Announcement[] {
    let activeMs: number | null = null;
    if (query.activeAt !== undefined) {
      activeMs = Date.parse(query.activeAt);
      if (Number.isNaN(activeMs)) {
        throw new TendError(
          'store.invalid-query',
          `activeAt must be an ISO time, got ${JSON.stringify(query.activeAt)}`,
          { phase: 'store' },
        );
      }
    }
    const rows = this.#announcements.all({
      address: query.address ?? null,
      active_ms: activeMs,
    }) as AnnouncementRow[];
    return rows.map(announcementFromRow);
  }

  putClaim(claim: FieldClaim): void {
    this.#putClaim.run(claimToRow(claim));
  }

  deleteClaim(address: Address, field: string): void {
    this.#deleteClaim.run(address, field);
  }

  claims(address: Address | undefined): FieldClaim[] {
    const rows = address === undefined ? this.#claims.all() : this.#claimsFor.all(address);
    return (rows as ClaimRow[]).map(claimFromRow);
  }
}
