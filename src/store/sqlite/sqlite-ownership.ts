import type { Address, Announcement, FieldClaim } from '../../core/index.js';
import {
  activeAtMs,
  announcementFromRow,
  announcementToRow,
  claimFromRow,
  claimToRow,
} from '../rows.js';
import type { AnnouncementRow, ClaimRow } from '../rows.js';
import type { AnnouncementQuery } from '../store.js';
import type { SqliteDatabase, SqliteStatement } from './sqlite-database.js';

// Announcements and field claims on SQLite (migration 4): their statements, kept apart from the twin,
// the journal and the ledger. The rows are the shared ones (../rows.ts).

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
    const rows = this.#announcements.all({
      address: query.address ?? null,
      active_ms: activeAtMs(query),
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
