import { describe, expect, it } from 'vitest';
import type { Change, NewChange } from '../core/index.js';
import { canonicalJson, sha256 } from '../core/index.js';
import type { LedgerHead } from './ledger-chain.js';
import { GENESIS_HASH, changeHash, verifyChain } from './ledger-chain.js';

function draft(n: number): NewChange {
  return {
    time: `2026-01-01T00:00:0${n}.000Z`,
    actor: 'tend',
    source: 'tend',
    address: 'sb.volumes/data',
    type: 'sb.volumes',
    objectId: 'vol-1',
    action: 'update',
    fields: ['size'],
    after: { size: n },
  };
}

/** A valid chain of `count` entries, built the way a store builds one. */
function chain(count: number): Change[] {
  const out: Change[] = [];
  for (let n = 1; n <= count; n++) {
    const unhashed = { ...draft(n), seq: n, prevHash: out[n - 2]?.hash ?? GENESIS_HASH };
    out.push({ ...unhashed, hash: changeHash(unhashed) });
  }
  return out;
}

const head = (entries: Change[]): LedgerHead => ({
  seq: entries.length,
  hash: entries[entries.length - 1]?.hash ?? GENESIS_HASH,
});

describe('changeHash', () => {
  it('is SHA-256 of the canonical JSON of every field except hash', () => {
    const [entry] = chain(1);
    const { hash, ...rest } = entry!;
    expect(hash).toBe(sha256(canonicalJson(rest)));
  });

  it('covers seq and prevHash, and ignores a hash member', () => {
    const [entry] = chain(1);
    const { hash: _, ...rest } = entry!;
    expect(changeHash({ ...rest, seq: 2 })).not.toBe(changeHash(rest));
    expect(changeHash({ ...rest, prevHash: 'f'.repeat(64) })).not.toBe(changeHash(rest));
    expect(changeHash({ ...rest, hash: 'x' } as Change)).toBe(changeHash(rest));
  });

  it('ignores members that are not part of an entry', () => {
    const [entry] = chain(1);
    const { hash: _, ...rest } = entry!;
    expect(changeHash({ ...rest, extra: 1 } as Omit<Change, 'hash'>)).toBe(changeHash(rest));
  });
});

describe('verifyChain', () => {
  const good = chain(4);
  const cases: {
    name: string;
    reason: string;
    entries: Change[];
    head?: LedgerHead;
    want: ReturnType<typeof verifyChain>;
  }[] = [
    {
      name: 'empty ledger',
      reason: 'nothing appended is a valid ledger',
      entries: [],
      head: { seq: 0, hash: GENESIS_HASH },
      want: { ok: true, entries: 0 },
    },
    {
      name: 'intact chain with its head',
      reason: 'every link and hash holds',
      entries: good,
      head: head(good),
      want: { ok: true, entries: 4 },
    },
    {
      name: 'intact chain without a head',
      reason: 'the head is optional evidence',
      entries: good,
      want: { ok: true, entries: 4 },
    },
    {
      name: 'edited field',
      reason: 'the stored hash no longer matches the contents',
      entries: good.map((c) => (c.seq === 2 ? { ...c, actor: 'mallory' } : c)),
      want: {
        ok: false,
        brokenAt: 2,
        reason: 'entry 2 was edited after it was written: its hash does not match its contents',
      },
    },
    {
      name: 'first entry not chained to genesis',
      reason: 'the first prevHash must be 64 zeros',
      entries: [{ ...good[0]!, prevHash: 'f'.repeat(64) }],
      want: {
        ok: false,
        brokenAt: 1,
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
        reason: 'entry 3 is missing: the ledger jumps from 2 to 4 (an entry was deleted)',
      },
    },
    {
      name: 'out of order',
      reason: 'a reader must see entries in seq order',
      entries: [good[0]!, good[0]!],
      want: { ok: false, brokenAt: 2, reason: 'entry 2 is out of order: found seq 1' },
    },
    {
      name: 'truncated tail',
      reason: 'the head remembers more entries than remain',
      entries: good.slice(0, 2),
      head: head(good),
      want: {
        ok: false,
        brokenAt: 3,
        reason:
          'entries 3 to 4 are missing: the ledger ends at 2 but its head records 4 (entries were deleted)',
      },
    },
    {
      name: 'entries beyond the head',
      reason: 'an entry the store never appended',
      entries: good,
      head: head(good.slice(0, 3)),
      want: {
        ok: false,
        brokenAt: 4,
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
        reason: 'entry 4 differs from the recorded ledger head (the entry was replaced)',
      },
    },
  ];

  it.each(cases)('$name: $reason', ({ entries, head: h, want }) => {
    expect(verifyChain(entries, h)).toEqual(want);
  });
});
