import type { Change } from '../core/index.js';
import { canonicalJson, sha256 } from '../core/index.js';
import type { LedgerKey } from './ledger-key.js';
import type { LedgerProblem, LedgerVerification } from './store.js';

/** The `prevHash` of the first ledger entry: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** The format the store writes today: entries signed with the ledger key (HMAC-SHA-256). */
export const LEDGER_FORMAT = 2;

/**
 * A position in the ledger and the hash of the entry there. The store keeps the last one it
 * appended beside the ledger (its head): the chain alone cannot show that its newest entries were
 * deleted; comparing it with the head can. A checkpoint kept outside the store is one too.
 */
export interface LedgerHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * An entry written before the ledger was keyed (format 1): hashed with plain SHA-256, motivation as
 * free text, no actor kind, decision or key id. Kept exactly as written so its hash still verifies.
 */
export interface UnkeyedRecord extends Omit<
  Change,
  'actorKind' | 'motivation' | 'decision' | 'origin' | 'compliance' | 'keyId' | 'action'
> {
  readonly format: 1;
  readonly motivation?: string;
  readonly action: string;
}

/** An entry of the keyed ledger (format 2): signed with the key named by `keyId`. */
export interface KeyedRecord extends Change {
  readonly format: 2;
  readonly keyId: string;
}

/** An entry whose stored format this Tend does not know (only an edit produces one). */
export interface ForeignRecord {
  readonly format: 'foreign';
  /** The format as stored. */
  readonly stored: unknown;
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
}

/** A ledger entry as the store keeps it, in the format it was written in. */
export type LedgerRecord = UnkeyedRecord | KeyedRecord | ForeignRecord;

/**
 * The hash of a format-1 entry: SHA-256 of the canonical JSON of every format-1 field except `hash`
 * (so `seq` and `prevHash` are covered). Anyone can recompute it, so it shows an edit only when the
 * editor did not re-hash; it is kept to verify ledgers written before the keyed ledger.
 */
export function unkeyedHash(entry: Omit<UnkeyedRecord, 'hash' | 'format'>): string {
  // Rebuilt field by field so that members that are not part of the entry are never hashed.
  const { seq, time, actor, intent, motivation, source, address, type, objectId } = entry;
  const { action, fields, before, after, prevHash } = entry;
  return sha256(
    canonicalJson({
      seq,
      time,
      actor,
      intent,
      motivation,
      source,
      address,
      type,
      objectId,
      action,
      fields,
      before,
      after,
      prevHash,
    }),
  );
}

/**
 * The hash of a keyed entry: HMAC-SHA-256 under the ledger key of the canonical JSON of every field
 * of the entry except `hash` — the format, `seq`, `prevHash` and `keyId` included. Without the key it
 * cannot be recomputed, so an edit shows even when every later hash was recomputed. Every store
 * computes it the same way, so a ledger can be verified whichever store wrote it.
 */
export function keyedHash(key: LedgerKey, entry: Omit<KeyedRecord, 'hash'>): string {
  const { seq, time, actor, actorKind, intent, motivation, source, address, type } = entry;
  const { objectId, action, fields, before, after, decision, origin, keyId, prevHash } = entry;
  const { compliance } = entry;
  return key.sign(
    canonicalJson({
      format: LEDGER_FORMAT,
      seq,
      time,
      actor,
      actorKind,
      intent,
      motivation,
      source,
      address,
      type,
      objectId,
      action,
      fields,
      before,
      after,
      decision,
      // Absent on entries without one (every entry before git workspaces): their hash is unchanged.
      origin,
      // Absent on entries that are not verdicts (every entry before policies): unchanged hash.
      compliance,
      keyId,
      prevHash,
    }),
  );
}

/**
 * The canonical JSON text of each member of a keyed entry as it reads back (for a string, its
 * `JSON.stringify`; for a structured member, `storedCanonicalJson` of it), absent for a member the
 * entry does not have. What a store that writes each member's canonical text once hashes.
 */
export type KeyedEntryText = Readonly<
  Record<Exclude<keyof KeyedRecord, 'hash'>, string | undefined>
>;

/**
 * `keyedHash` of the entry whose members read back as `text`, without building the entry: the
 * canonical JSON of the entry is assembled from its members' texts (sorted by name, absent ones
 * dropped, exactly as `canonicalJson` writes the whole entry), then signed.
 */
export function keyedHashOfText(key: LedgerKey, text: KeyedEntryText): string {
  const members: string[] = [];
  for (const name of Object.keys(text).sort()) {
    const member = text[name as keyof KeyedEntryText];
    if (member !== undefined) members.push(`${JSON.stringify(name)}:${member}`);
  }
  return key.sign(`{${members.join(',')}}`);
}

/** What a chain is checked against besides itself. */
export interface VerifyChainOptions {
  /**
   * The key keyed entries are checked with. Without one, their links are followed but their hashes
   * cannot be checked (the result says how many were not).
   */
  readonly key?: LedgerKey;
  /** The last entry the store recorded appending. */
  readonly head?: LedgerHead;
  /**
   * A checkpoint kept outside the store: the entry at its seq must still have its hash, and the
   * ledger must reach that far.
   */
  readonly checkpoint?: LedgerHead;
}

/** `entry 3` or `entries 3–7`. */
function span(from: number, to: number): string {
  return from === to ? `entry ${from}` : `entries ${from}–${to}`;
}

/**
 * Checks a ledger read oldest first: seqs run 1, 2, 3… without gaps; each entry's `prevHash` is the
 * previous entry's `hash` (64 zeros for the first); unkeyed entries (format 1) come only before keyed
 * ones; each hash matches the entry's contents (keyed ones under `key`, written with that key); the
 * last entry is the recorded head; and the ledger still holds the checkpoint's entry unchanged.
 * Reports the first seq where any of this fails and why, or what the check could not cover.
 */
export function verifyChain(
  entries: Iterable<LedgerRecord>,
  options: VerifyChainOptions = {},
): LedgerVerification {
  const { key, head, checkpoint } = options;
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  let unkeyed = 0;
  let firstKeyed: number | undefined;
  let unchecked = 0;
  for (const entry of entries) {
    const seq = entry.seq;
    if (seq !== expectedSeq) {
      return seq > expectedSeq
        ? broken(
            expectedSeq,
            'missing',
            `entry ${expectedSeq} is missing: the ledger jumps from ${expectedSeq - 1} to ${seq} (an entry was deleted)`,
          )
        : broken(
            expectedSeq,
            'reordered',
            `entry ${expectedSeq} is out of order: found seq ${seq}`,
          );
    }
    if (entry.format === 'foreign') {
      return broken(
        seq,
        'unknown-format',
        `entry ${seq} has format ${JSON.stringify(entry.stored)}, which no Tend writes (the entry was edited)`,
      );
    }
    if (entry.format === 1 && firstKeyed !== undefined) {
      return broken(
        seq,
        'downgrade',
        `entry ${seq} is in the old unkeyed format but follows keyed entries: unkeyed entries only come before the keyed ledger (the entry was rewritten without the key)`,
      );
    }
    if (entry.prevHash !== prevHash) {
      return seq === 1
        ? broken(1, 'broken-link', 'entry 1 does not start the chain: its prevHash is not 64 zeros')
        : broken(
            seq,
            'broken-link',
            `entry ${seq} does not follow entry ${seq - 1}: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)`,
          );
    }
    if (entry.format === 1) {
      unkeyed = seq;
      if (unkeyedHash(entry) !== entry.hash) {
        return broken(
          seq,
          'edited',
          `entry ${seq} was edited after it was written: its hash does not match its contents`,
        );
      }
    } else {
      firstKeyed ??= seq;
      if (key === undefined) unchecked += 1;
      else if (entry.keyId !== key.id) {
        return firstKeyed === seq
          ? broken(
              seq,
              'wrong-key',
              `the keyed entries, from entry ${seq}, were written with key id ${entry.keyId || '(none)'}; you gave key id ${key.id}`,
            )
          : broken(
              seq,
              'key-changed',
              `entry ${seq} was written with key id ${entry.keyId || '(none)'}, but ${span(firstKeyed, seq - 1)} with key id ${key.id} (the key you gave): the key changed at entry ${seq}, or the entry was forged with another key`,
            );
      } else if (keyedHash(key, entry) !== entry.hash) {
        return broken(
          seq,
          'edited',
          `entry ${seq} was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)`,
        );
      }
    }
    if (checkpoint && seq === checkpoint.seq && entry.hash !== checkpoint.hash) {
      return broken(
        seq,
        'checkpoint',
        `entry ${seq} differs from the checkpoint: the checkpoint records another hash for it (the ledger was rewritten up to there)`,
      );
    }
    prevHash = entry.hash;
    expectedSeq += 1;
  }
  const last = expectedSeq - 1;
  if (head && head.seq > last) {
    return broken(
      last + 1,
      'missing',
      `entries ${last + 1} to ${head.seq} are missing: the ledger ends at ${last} but its head records ${head.seq} (entries were deleted)`,
    );
  }
  if (head && head.seq < last) {
    return broken(
      head.seq + 1,
      'inserted',
      `entry ${head.seq + 1} was not appended by the store: the ledger head records ${head.seq} entries (entries were inserted)`,
    );
  }
  if (head && head.hash !== prevHash) {
    return broken(
      last,
      'replaced',
      `entry ${last} differs from the recorded ledger head (the entry was replaced)`,
    );
  }
  if (checkpoint && checkpoint.seq > last) {
    return broken(
      last + 1,
      'missing',
      `${span(last + 1, checkpoint.seq)} ${last + 1 === checkpoint.seq ? 'is' : 'are'} missing: the ledger ends at ${last} but the checkpoint records ${checkpoint.seq} (entries were deleted)`,
    );
  }
  const warnings: string[] = [];
  if (unkeyed > 0) {
    warnings.push(
      `${span(1, unkeyed)} ${unkeyed === 1 ? 'predates' : 'predate'} the keyed ledger: an edit there followed by re-hashing cannot be detected`,
    );
  }
  if (unchecked > 0) {
    warnings.push(
      `${span(last - unchecked + 1, last)} ${unchecked === 1 ? 'was' : 'were'} not checked against the ledger key (none was given): the links hold, but an edit re-hashed without the key would not show`,
    );
  }
  return {
    ok: true,
    entries: last,
    head: prevHash,
    unkeyed,
    unchecked,
    ...(key ? { keyId: key.id } : {}),
    warnings,
  };
}

function broken(brokenAt: number, problem: LedgerProblem, reason: string): LedgerVerification {
  return { ok: false, brokenAt, problem, reason };
}
