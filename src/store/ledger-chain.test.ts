import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewChange } from '../core/index.js';
import { canonicalJson, sha256 } from '../core/index.js';
import type { KeyedRecord, LedgerHead, LedgerRecord, UnkeyedRecord } from './ledger-chain.js';
import { GENESIS_HASH, keyedHash, unkeyedHash, verifyChain } from './ledger-chain.js';
import { ledgerKey } from './ledger-key.js';
import type { LedgerVerification } from './store.js';

const MATERIAL = 'k'.repeat(32);
const KEY = ledgerKey(MATERIAL);
const OTHER = ledgerKey('o'.repeat(32));

function draft(n: number): NewChange {
  return {
    time: `2026-01-01T00:00:0${n}.000Z`,
    actor: 'tend',
    actorKind: 'tend',
    intent: 'consistency',
    motivation: { kind: 'scheduled', ref: `CHG-${n}` },
    source: 'tend',
    address: 'sb.volumes/data',
    type: 'sb.volumes',
    objectId: 'vol-1',
    action: 'update',
    fields: ['size'],
    before: { size: n - 1 },
    after: { size: n },
  };
}

/** The entry a store appends after `prev`, signed with `key`. */
function signed(n: number, prev: LedgerRecord | undefined, key = KEY): KeyedRecord {
  const unhashed = {
    ...draft(n),
    format: 2 as const,
    seq: n,
    keyId: key.id,
    prevHash: prev?.hash ?? GENESIS_HASH,
  };
  return { ...unhashed, hash: keyedHash(key, unhashed) };
}

/** An entry as a store wrote it before the ledger was keyed: motivation as text, plain SHA-256. */
function legacy(n: number, prev: LedgerRecord | undefined): UnkeyedRecord {
  const unhashed = {
    format: 1 as const,
    seq: n,
    time: `2026-01-01T00:00:0${n}.000Z`,
    actor: 'tend',
    motivation: 'scheduled',
    source: 'tend' as const,
    type: 'sb.volumes',
    objectId: 'vol-1',
    action: 'update',
    fields: ['size'],
    after: { size: n },
    prevHash: prev?.hash ?? GENESIS_HASH,
  };
  return { ...unhashed, hash: unkeyedHash(unhashed) };
}

/** A chain of `unkeyed` format-1 entries followed by `keyed` entries signed with `key`. */
function chain(keyed: number, unkeyed = 0, key = KEY): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (let n = 1; n <= unkeyed + keyed; n++) {
    out.push(n <= unkeyed ? legacy(n, out[n - 2]) : signed(n, out[n - 2], key));
  }
  return out;
}

const headOf = (entries: LedgerRecord[]): LedgerHead => ({
  seq: entries.length,
  hash: entries[entries.length - 1]?.hash ?? GENESIS_HASH,
});

/**
 * What an attacker without the key does: edits entry `at`, then recomputes its hash and every later
 * one with plain SHA-256, relinking each entry to the new hash before it.
 */
function rehashedWithoutKey(entries: LedgerRecord[], at: number): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (const e of entries) {
    if (e.seq < at) out.push(e);
    else {
      const { hash: _, ...rest } = e as KeyedRecord;
      const edited = {
        ...rest,
        ...(e.seq === at ? { actor: 'mallory' } : {}),
        prevHash: out[out.length - 1]?.hash ?? GENESIS_HASH,
      };
      out.push({ ...edited, hash: sha256(canonicalJson(edited)) });
    }
  }
  return out;
}

/** The same attack with the attacker's own key (and the entries keeping the real key id). */
function resignedWith(
  entries: LedgerRecord[],
  at: number,
  key: ReturnType<typeof ledgerKey>,
): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (const e of entries) {
    if (e.seq < at) out.push(e);
    else {
      const { hash: _, ...rest } = e as KeyedRecord;
      const edited = {
        ...rest,
        ...(e.seq === at ? { actor: 'mallory' } : {}),
        prevHash: out[out.length - 1]?.hash ?? GENESIS_HASH,
      };
      out.push({ ...edited, hash: keyedHash(key, edited) });
    }
  }
  return out;
}

/** Every entry rewritten as format 1 and re-hashed with SHA-256: what the unkeyed format allows. */
function downgradedAll(entries: LedgerRecord[]): LedgerRecord[] {
  const out: LedgerRecord[] = [];
  for (const e of entries) {
    const { seq, time, actor, source, type, objectId, action, fields, after } = e as KeyedRecord;
    const unhashed = {
      format: 1 as const,
      seq,
      time,
      actor: seq === 2 ? 'mallory' : actor,
      source,
      type,
      objectId,
      action,
      fields,
      ...(after ? { after } : {}),
      prevHash: out[out.length - 1]?.hash ?? GENESIS_HASH,
    };
    out.push({ ...unhashed, hash: unkeyedHash(unhashed) });
  }
  return out;
}

const ok = (
  entries: LedgerRecord[],
  extra: Partial<Extract<LedgerVerification, { ok: true }>> = {},
): LedgerVerification => ({
  ok: true,
  entries: entries.length,
  head: headOf(entries).hash,
  unkeyed: 0,
  unchecked: 0,
  keyId: KEY.id,
  warnings: [],
  ...extra,
});

describe('unkeyedHash (format 1)', () => {
  it('is SHA-256 of the canonical JSON of every format-1 field except hash', () => {
    const entry = legacy(1, undefined);
    const { hash, format: _, ...rest } = entry;
    expect(hash).toBe(sha256(canonicalJson(rest)));
  });

  it('covers seq and prevHash, and ignores members that are not part of a format-1 entry', () => {
    const { hash: _, ...rest } = legacy(1, undefined);
    expect(unkeyedHash({ ...rest, seq: 2 })).not.toBe(unkeyedHash(rest));
    expect(unkeyedHash({ ...rest, prevHash: 'f'.repeat(64) })).not.toBe(unkeyedHash(rest));
    expect(unkeyedHash({ ...rest, hash: 'x', keyId: 'y', decision: 1 } as typeof rest)).toBe(
      unkeyedHash(rest),
    );
  });
});

describe('keyedHash (format 2)', () => {
  const entry = signed(1, undefined);
  const { hash, ...rest } = entry;

  it('is HMAC-SHA-256 under the key of the canonical JSON of every field except hash', () => {
    expect(hash).toBe(
      createHmac('sha256', MATERIAL)
        .update(canonicalJson({ ...rest, format: 2 }))
        .digest('hex'),
    );
    expect(hash).not.toBe(sha256(canonicalJson(rest)));
  });

  it.each([
    ['seq', { seq: 2 }],
    ['prevHash', { prevHash: 'f'.repeat(64) }],
    ['keyId', { keyId: OTHER.id }],
    ['actorKind', { actorKind: 'human' as const }],
    ['motivation', { motivation: { kind: 'incident' } }],
    [
      'decision',
      { decision: { decision: 'enforce' as const, rule: 'default#1', reason: 'r', fields: [] } },
    ],
  ])('covers %s', (_, change) => {
    expect(keyedHash(KEY, { ...rest, ...change })).not.toBe(hash);
  });

  it('ignores a hash member and members that are not part of an entry', () => {
    expect(keyedHash(KEY, { ...rest, hash: 'x' } as typeof rest)).toBe(hash);
    expect(keyedHash(KEY, { ...rest, extra: 1 } as typeof rest)).toBe(hash);
  });

  it('differs under another key', () => {
    expect(keyedHash(OTHER, rest)).not.toBe(hash);
  });
});

describe('verifyChain', () => {
  const good = chain(4);
  const mixed = chain(2, 2);
  const cases: {
    name: string;
    reason: string;
    entries: LedgerRecord[];
    head?: LedgerHead;
    checkpoint?: LedgerHead;
    key?: ReturnType<typeof ledgerKey> | null;
    want: LedgerVerification;
  }[] = [
    {
      name: 'empty ledger',
      reason: 'nothing appended is a valid ledger',
      entries: [],
      head: { seq: 0, hash: GENESIS_HASH },
      want: ok([]),
    },
    {
      name: 'intact keyed chain with its head',
      reason: 'every link and signature holds',
      entries: good,
      head: headOf(good),
      want: ok(good),
    },
    {
      name: 'intact keyed chain without a head',
      reason: 'the head is optional evidence',
      entries: good,
      want: ok(good),
    },
    {
      name: 'keyed chain checked without a key',
      reason: 'links are followed, signatures cannot be checked, and the result says so',
      entries: good,
      head: headOf(good),
      key: null,
      want: {
        ok: true,
        entries: 4,
        head: headOf(good).hash,
        unkeyed: 0,
        unchecked: 4,
        warnings: [
          'entries 1–4 were not checked against the ledger key (none was given): the links hold, but an edit re-hashed without the key would not show',
        ],
      },
    },
    {
      name: 'a ledger from before the keyed ledger',
      reason: 'format-1 entries verify by the old rule, and are reported as unprotected',
      entries: chain(0, 3),
      head: headOf(chain(0, 3)),
      want: ok(chain(0, 3), {
        unkeyed: 3,
        warnings: [
          'entries 1–3 predate the keyed ledger: an edit there followed by re-hashing cannot be detected',
        ],
      }),
    },
    {
      name: 'a single old entry',
      reason: 'the sentence is in the singular',
      entries: chain(0, 1),
      want: ok(chain(0, 1), {
        unkeyed: 1,
        warnings: [
          'entry 1 predates the keyed ledger: an edit there followed by re-hashing cannot be detected',
        ],
      }),
    },
    {
      name: 'keyed entries continuing an old ledger',
      reason: 'the chain crosses the boundary: the first keyed prevHash is the last old hash',
      entries: mixed,
      head: headOf(mixed),
      want: ok(mixed, {
        unkeyed: 2,
        warnings: [
          'entries 1–2 predate the keyed ledger: an edit there followed by re-hashing cannot be detected',
        ],
      }),
    },
    {
      name: 'a checkpoint the ledger still holds',
      reason: 'the entry at the checkpoint has the checkpoint hash, and the ledger grew since',
      entries: good,
      checkpoint: { seq: 2, hash: good[1]!.hash },
      want: ok(good),
    },
    {
      name: 'a checkpoint of the empty ledger',
      reason: 'seq 0 anchors nothing but is not a failure',
      entries: good,
      checkpoint: { seq: 0, hash: GENESIS_HASH },
      want: ok(good),
    },
    {
      name: 'edited keyed entry',
      reason: 'the signature no longer matches the contents',
      entries: good.map((c) => (c.seq === 2 ? { ...c, actor: 'mallory' } : c)),
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'edited',
        reason:
          'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
      },
    },
    {
      name: 'edited decision',
      reason: 'the decision is signed too',
      entries: good.map((c) =>
        c.seq === 3
          ? {
              ...c,
              decision: { decision: 'yield', rule: 'forged', reason: 'r', fields: ['size'] },
            }
          : c,
      ),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'edited',
        reason:
          'entry 3 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
      },
    },
    {
      name: 're-hashed without the key',
      reason:
        'an edit whose hash and every later hash (and the head) were recomputed with plain SHA-256 shows at the edited entry',
      entries: rehashedWithoutKey(good, 2),
      head: headOf(rehashedWithoutKey(good, 2)),
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'edited',
        reason:
          'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
      },
    },
    {
      name: 're-signed with another key under the real key id',
      reason: 'a signature made with any other key does not match either',
      entries: resignedWith(good, 3, OTHER),
      head: headOf(resignedWith(good, 3, OTHER)),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'edited',
        reason:
          'entry 3 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
      },
    },
    {
      name: 'verified with another key',
      reason: 'says which key wrote the entries rather than calling them tampered',
      entries: good,
      head: headOf(good),
      key: OTHER,
      want: {
        ok: false,
        brokenAt: 1,
        problem: 'wrong-key',
        reason: `the keyed entries, from entry 1, were written with key id ${KEY.id}; you gave key id ${OTHER.id}`,
      },
    },
    {
      name: 'verified with another key after old entries',
      reason: 'the first keyed entry is where the key matters',
      entries: mixed,
      key: OTHER,
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'wrong-key',
        reason: `the keyed entries, from entry 3, were written with key id ${KEY.id}; you gave key id ${OTHER.id}`,
      },
    },
    {
      name: 'the key changes in the middle',
      reason: 'entries after verified ones name another key: a key change or a forgery',
      entries: (() => {
        const first = chain(2);
        const third = signed(3, first[1], OTHER);
        return [...first, third, signed(4, third, OTHER)];
      })(),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'key-changed',
        reason: `entry 3 was written with key id ${OTHER.id}, but entries 1–2 with key id ${KEY.id} (the key you gave): the key changed at entry 3, or the entry was forged with another key`,
      },
    },
    {
      name: 'edited old entry',
      reason: 'a format-1 edit without re-hashing still shows',
      entries: mixed.map((c) => (c.seq === 1 ? { ...c, actor: 'mallory' } : c)),
      want: {
        ok: false,
        brokenAt: 1,
        problem: 'edited',
        reason: 'entry 1 was edited after it was written: its hash does not match its contents',
      },
    },
    {
      name: 'a keyed entry rewritten in the old format',
      reason: 'an unkeyed entry after keyed ones is a downgrade',
      entries: (() => {
        const first = chain(2);
        const forged = legacy(3, first[1]);
        return [...first, forged, signed(4, forged)];
      })(),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'downgrade',
        reason:
          'entry 3 is in the old unkeyed format but follows keyed entries: unkeyed entries only come before the keyed ledger (the entry was rewritten without the key)',
      },
    },
    {
      name: 'a whole ledger rewritten in the old format',
      reason:
        'nothing keyed is left to contradict it: only the unprotected warning says so (a checkpoint catches it, below)',
      entries: downgradedAll(good),
      head: headOf(downgradedAll(good)),
      want: ok(downgradedAll(good), {
        unkeyed: 4,
        warnings: [
          'entries 1–4 predate the keyed ledger: an edit there followed by re-hashing cannot be detected',
        ],
      }),
    },
    {
      name: 'a whole ledger rewritten in the old format, against a checkpoint',
      reason: 'the checkpoint remembers the signed hash of its entry',
      entries: downgradedAll(good),
      head: headOf(downgradedAll(good)),
      checkpoint: { seq: 3, hash: good[2]!.hash },
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'checkpoint',
        reason:
          'entry 3 differs from the checkpoint: the checkpoint records another hash for it (the ledger was rewritten up to there)',
      },
    },
    {
      name: 'a ledger rewritten with the key, against a checkpoint',
      reason: 'someone holding the key can re-sign everything; only an outside checkpoint shows it',
      entries: resignedWith(good, 2, KEY),
      head: headOf(resignedWith(good, 2, KEY)),
      checkpoint: { seq: 4, hash: good[3]!.hash },
      want: {
        ok: false,
        brokenAt: 4,
        problem: 'checkpoint',
        reason:
          'entry 4 differs from the checkpoint: the checkpoint records another hash for it (the ledger was rewritten up to there)',
      },
    },
    {
      name: 'an entry of an unknown format',
      reason: 'no Tend writes it, so only an edit made it',
      entries: [good[0]!, { format: 'foreign', stored: 7, seq: 2, prevHash: 'x', hash: 'y' }],
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'unknown-format',
        reason: 'entry 2 has format 7, which no Tend writes (the entry was edited)',
      },
    },
    {
      name: 'first entry not chained to genesis',
      reason: 'the first prevHash must be 64 zeros',
      entries: [{ ...good[0]!, prevHash: 'f'.repeat(64) }],
      want: {
        ok: false,
        brokenAt: 1,
        problem: 'broken-link',
        reason: 'entry 1 does not start the chain: its prevHash is not 64 zeros',
      },
    },
    {
      name: 'gap',
      reason: 'a deleted entry leaves a hole in seq',
      entries: good.filter((c) => c.seq !== 3),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'missing',
        reason: 'entry 3 is missing: the ledger jumps from 2 to 4 (an entry was deleted)',
      },
    },
    {
      name: 'a deleted entry and the rest renumbered',
      reason: 'the entry after the hole no longer follows the one before it',
      entries: [good[0]!, { ...good[2]!, seq: 2 }, { ...good[3]!, seq: 3 }],
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'broken-link',
        reason:
          "entry 2 does not follow entry 1: its prevHash differs from that entry's hash (an earlier entry was edited or replaced)",
      },
    },
    {
      name: 'an entry inserted in the middle',
      reason: 'it cannot be signed without the key',
      entries: (() => {
        const inserted = { ...good[1]!, actor: 'mallory' };
        return [good[0]!, inserted, ...good.slice(1).map((c) => ({ ...c, seq: c.seq + 1 }))];
      })(),
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'edited',
        reason:
          'entry 2 was edited after it was written: its hash does not match its contents under the ledger key (a hash recomputed without the key never does)',
      },
    },
    {
      name: 'out of order',
      reason: 'a reader must see entries in seq order',
      entries: [good[0]!, good[0]!],
      want: {
        ok: false,
        brokenAt: 2,
        problem: 'reordered',
        reason: 'entry 2 is out of order: found seq 1',
      },
    },
    {
      name: 'truncated tail',
      reason: 'the head remembers more entries than remain',
      entries: good.slice(0, 2),
      head: headOf(good),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'missing',
        reason:
          'entries 3 to 4 are missing: the ledger ends at 2 but its head records 4 (entries were deleted)',
      },
    },
    {
      name: 'truncated tail with the head moved back, against a checkpoint',
      reason: 'the head is in the same file; the checkpoint is not',
      entries: good.slice(0, 2),
      head: headOf(good.slice(0, 2)),
      checkpoint: headOf(good),
      want: {
        ok: false,
        brokenAt: 3,
        problem: 'missing',
        reason:
          'entries 3–4 are missing: the ledger ends at 2 but the checkpoint records 4 (entries were deleted)',
      },
    },
    {
      name: 'the last entry deleted, against a checkpoint',
      reason: 'the sentence is in the singular',
      entries: good.slice(0, 3),
      checkpoint: headOf(good),
      want: {
        ok: false,
        brokenAt: 4,
        problem: 'missing',
        reason:
          'entry 4 is missing: the ledger ends at 3 but the checkpoint records 4 (entries were deleted)',
      },
    },
    {
      name: 'entries beyond the head',
      reason: 'an entry the store never appended',
      entries: good,
      head: headOf(good.slice(0, 3)),
      want: {
        ok: false,
        brokenAt: 4,
        problem: 'inserted',
        reason:
          'entry 4 was not appended by the store: the ledger head records 3 entries (entries were inserted)',
      },
    },
    {
      name: 'last entry replaced by another valid one',
      reason: 'the head remembers the hash of the entry the store appended',
      entries: good,
      head: { seq: 4, hash: 'a'.repeat(64) },
      want: {
        ok: false,
        brokenAt: 4,
        problem: 'replaced',
        reason: 'entry 4 differs from the recorded ledger head (the entry was replaced)',
      },
    },
  ];

  it.each(cases)('$name: $reason', ({ entries, head, checkpoint, key, want }) => {
    const options = {
      ...(key === null ? {} : { key: key ?? KEY }),
      ...(head ? { head } : {}),
      ...(checkpoint ? { checkpoint } : {}),
    };
    expect(verifyChain(entries, options)).toEqual(want);
  });
});
