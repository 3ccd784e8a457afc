import type { Change, NewChange } from '../core/index.js';
import { storedCanonicalJson } from '../core/index.js';
import { keyedHashOfText, LEDGER_FORMAT } from './ledger-chain.js';
import type { LedgerHead } from './ledger-chain.js';
import type { LedgerKey } from './ledger-key.js';
import type { ChangeRow } from './rows.js';

/** A signed ledger entry: the row every store writes (JSON members as text) and the entry it returns. */
export interface SignedEntry {
  readonly row: ChangeRow;
  readonly entry: Change;
}

/**
 * Signs `change` (already redacted) as the entry after `head`: the next seq, linked to the head's
 * hash, HMAC'd with `key`. Each structured member is written once, as canonical JSON: that text is
 * both the column and the member's part of the hashed text, so the entry is hashed exactly as it
 * reads back (`keyedHash` of `recordFromRow` of the row) without serialising, parsing and sorting
 * copies. Every store appends through this, so every store hashes the same way.
 */
export function signChange(clean: NewChange, key: LedgerKey, head: LedgerHead): SignedEntry {
  const json = (value: unknown): string | null =>
    value === undefined ? null : (storedCanonicalJson(value) as string);
  const unsigned: ChangeRow = {
    seq: head.seq + 1,
    time: clean.time,
    actor: clean.actor,
    actor_kind: clean.actorKind ?? null,
    intent: clean.intent ?? null,
    motivation: json(clean.motivation),
    source: clean.source,
    address: clean.address ?? null,
    type: clean.type,
    object_id: clean.objectId,
    action: clean.action,
    fields: storedCanonicalJson(clean.fields) as string,
    before: json(clean.before),
    after: json(clean.after),
    decision: json(clean.decision),
    origin: json(clean.origin),
    compliance: json(clean.compliance),
    key_id: key.id,
    format: LEDGER_FORMAT,
    prev_hash: head.hash,
    hash: '',
  };
  const str = (value: string | null | undefined): string | undefined =>
    value === null || value === undefined ? undefined : JSON.stringify(value);
  const row: ChangeRow = {
    ...unsigned,
    hash: keyedHashOfText(key, {
      format: JSON.stringify(LEDGER_FORMAT),
      seq: JSON.stringify(unsigned.seq),
      time: str(unsigned.time),
      actor: str(unsigned.actor),
      actorKind: str(unsigned.actor_kind),
      intent: str(unsigned.intent),
      motivation: unsigned.motivation ?? undefined,
      source: str(unsigned.source),
      address: str(unsigned.address),
      type: str(unsigned.type),
      objectId: str(unsigned.object_id),
      action: str(unsigned.action),
      fields: unsigned.fields,
      before: unsigned.before ?? undefined,
      after: unsigned.after ?? undefined,
      decision: unsigned.decision ?? undefined,
      origin: unsigned.origin ?? undefined,
      compliance: unsigned.compliance ?? undefined,
      keyId: str(unsigned.key_id),
      prevHash: str(unsigned.prev_hash),
    }),
  };
  // The entry as the caller's values: equal as data to what reads back (JSON-shaped members; a -0
  // stays -0 here and reads back as 0, the same JSON).
  const entry: Change = {
    seq: row.seq,
    time: clean.time,
    actor: clean.actor,
    ...(clean.intent === undefined ? {} : { intent: clean.intent }),
    source: clean.source,
    ...(clean.address === undefined ? {} : { address: clean.address }),
    type: clean.type,
    objectId: clean.objectId,
    fields: clean.fields,
    ...(clean.before === undefined ? {} : { before: clean.before }),
    ...(clean.after === undefined ? {} : { after: clean.after }),
    prevHash: head.hash,
    hash: row.hash,
    ...(clean.actorKind === undefined ? {} : { actorKind: clean.actorKind }),
    ...(clean.motivation === undefined ? {} : { motivation: clean.motivation }),
    action: clean.action,
    ...(clean.decision === undefined ? {} : { decision: clean.decision }),
    ...(clean.origin === undefined ? {} : { origin: clean.origin }),
    ...(clean.compliance === undefined ? {} : { compliance: clean.compliance }),
    keyId: key.id,
  };
  return { row, entry };
}
