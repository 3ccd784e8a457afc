import type { Address, Announcement, FieldClaim } from '../../core/index.js';
import type { AnnouncementQuery } from '../store.js';
import {
  activeAtMs,
  announcementFromRow,
  announcementToRow,
  claimFromRow,
  claimToRow,
} from '../rows.js';
import type { AnnouncementRow, ClaimRow } from '../rows.js';
import type { PgQueryable } from './postgres-client.js';
import { run } from './postgres-client.js';

// Announcements and field claims on PostgreSQL, scoped by workspace: the statements. The rows are
// the shared ones (../rows.ts), so a value reads back on either store exactly as it was written.

/** Stores an announcement; the same id again is a no-op (it is a hash of content and time). */
export async function putAnnouncement(
  db: PgQueryable,
  workspace: string,
  a: Announcement,
): Promise<void> {
  const r = announcementToRow(a);
  await run(
    db,
    `INSERT INTO tend.announcements (workspace, id, address, field, value, actor, actor_kind, intent,
       motivation, note, created_at, created_ms, expires_at, expires_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (workspace, id) DO NOTHING`,
    [
      workspace,
      r.id,
      r.address,
      r.field,
      r.value,
      r.actor,
      r.actor_kind,
      r.intent,
      r.motivation,
      r.note,
      r.created_at,
      r.created_ms,
      r.expires_at,
      r.expires_ms,
    ],
  );
}

/** The announcements a query selects, oldest first (by time made, then storing order). */
export async function announcements(
  db: PgQueryable,
  workspace: string,
  query: AnnouncementQuery,
): Promise<Announcement[]> {
  const { rows } = await run<AnnouncementRow>(
    db,
    `SELECT * FROM tend.announcements
     WHERE workspace = $1 AND ($2::text IS NULL OR address = $2) AND ($3::bigint IS NULL OR expires_ms > $3)
     ORDER BY created_ms, seq`,
    [workspace, query.address ?? null, activeAtMs(query)],
  );
  return rows.map(announcementFromRow);
}

/** Puts a claim, replacing the one on the same address and field. */
export async function putClaim(db: PgQueryable, workspace: string, c: FieldClaim): Promise<void> {
  const r = claimToRow(c);
  await run(
    db,
    `INSERT INTO tend.field_claims (workspace, address, field, value, actor, actor_kind, intent,
       motivation, decision, rule, since, hold_until, then_decide, seq, declared_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (workspace, address, field) DO UPDATE SET value = excluded.value,
       actor = excluded.actor, actor_kind = excluded.actor_kind, intent = excluded.intent,
       motivation = excluded.motivation, decision = excluded.decision, rule = excluded.rule,
       since = excluded.since, hold_until = excluded.hold_until, then_decide = excluded.then_decide,
       seq = excluded.seq, declared_hash = excluded.declared_hash`,
    [
      workspace,
      r.address,
      r.field,
      r.value,
      r.actor,
      r.actor_kind,
      r.intent,
      r.motivation,
      r.decision,
      r.rule,
      r.since,
      r.hold_until,
      r.then_decide,
      r.seq,
      r.declared_hash,
    ],
  );
}

/** Removes a claim; a missing one is a no-op. */
export async function deleteClaim(
  db: PgQueryable,
  workspace: string,
  address: Address,
  field: string,
): Promise<void> {
  await run(
    db,
    'DELETE FROM tend.field_claims WHERE workspace = $1 AND address = $2 AND field = $3',
    [workspace, address, field],
  );
}

/** Every claim (of one address), ordered by address, then field. */
export async function claims(
  db: PgQueryable,
  workspace: string,
  address: Address | undefined,
): Promise<FieldClaim[]> {
  const { rows } = await run<ClaimRow>(
    db,
    `SELECT * FROM tend.field_claims WHERE workspace = $1 AND ($2::text IS NULL OR address = $2)
     ORDER BY address, field`,
    [workspace, address ?? null],
  );
  return rows.map(claimFromRow);
}
