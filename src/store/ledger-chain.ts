import type { Change } from '../core/index.js';
import { canonicalJson, sha256 } from '../core/index.js';
import type { LedgerVerification } from './store.js';

/** The `prevHash` of the first ledger entry: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * The last entry the store appended, kept beside the ledger. The chain alone cannot show that its
 * newest entries were deleted; comparing it with the head can.
 */
export interface LedgerHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * The hash of one ledger entry: SHA-256 of the canonical JSON of every field of the entry except
 * `hash` itself (so `seq` and `prevHash` are covered). Every store computes it the same way, so a
 * ledger can be verified whichever store wrote it.
 */
export function changeHash(entry: Omit<Change, 'hash'>): string {
  // Rebuilt field by field so that a `hash` member passed at run time is never hashed.
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
 * Checks a ledger read oldest first: seqs run 1, 2, 3… without gaps, each entry's `prevHash` is the
 * previous entry's `hash` (64 zeros for the first), each `hash` matches the entry's contents, and the
 * last entry is the recorded head. Reports the first seq where any of this fails and why.
 */
export function verifyChain(entries: Iterable<Change>, head?: LedgerHead): LedgerVerification {
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  for (const entry of entries) {
    if (entry.seq !== expectedSeq) {
      return entry.seq > expectedSeq
        ? broken(
            expectedSeq,
            `entry ${expectedSeq} is missing: the ledger jumps from ${expectedSeq - 1} to ${entry.seq} (an entry was deleted)`,
          )
        : broken(expectedSeq, `entry ${expectedSeq} is out of order: found seq ${entry.seq}`);
    }
    if (entry.prevHash !== prevHash && entry.seq === 1) {
      return broken(1, 'entry 1 does not start the chain: its prevHash is not 64 zeros');
    }
    if (entry.prevHash !== prevHash) {
      return broken(
        entry.seq,
        `entry ${entry.seq} does not follow entry ${entry.seq - 1}: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)`,
      );
    }
    if (changeHash(entry) !== entry.hash) {
      return broken(
        entry.seq,
        `entry ${entry.seq} was edited after it was written: its hash does not match its contents`,
      );
    }
    prevHash = entry.hash;
    expectedSeq += 1;
  }
  const last = expectedSeq - 1;
  if (head && head.seq > last) {
    return broken(
      last + 1,
      `entries ${last + 1} to ${head.seq} are missing: the ledger ends at ${last} but its head records ${head.seq} (entries were deleted)`,
    );
  }
  if (head && head.seq < last) {
    return broken(
      head.seq + 1,
      `entry ${head.seq + 1} was not appended by the store: the ledger head records ${head.seq} entries (entries were inserted)`,
    );
  }
  if (head && head.seq === last && head.hash !== prevHash) {
    return broken(
      last,
      `entry ${last} differs from the recorded ledger head (the entry was replaced)`,
    );
  }
  return { ok: true, entries: last };
}

function broken(brokenAt: number, reason: string): LedgerVerification {
  return { ok: false, brokenAt, reason };
}
